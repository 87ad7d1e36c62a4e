"""coretex's evaluator against the reference's answers (shared/vectors/coretex/evaluator): stage 1, every
(state, query) a sampled case needs (reranker cap, rendered texts, scores, final top 10, per-query metrics),
every state's structural validity, and per pack the five components, ppm, delta and acceptance, and the verdict.

Every one of the 310 cases runs by default (about two CPU-minutes); CORETEX_VECTOR_CASES=sample runs a fixed sample
(every 10th case and every accepted one) for a quick check. bench/bench_evaluator_vectors.py prints the agreement rates."""
import gzip, json
from functools import lru_cache
import pytest
from helpers import ROOT, sampled
from coretex.evaluator.corpus import load_corpus
from coretex.evaluator.evaluate import Evaluator, ranked, query_metrics, run_pack, evaluate_patch, seed_inputs_for
from coretex.core.keccak import from_hex, to_hex
from coretex.core.patch import apply_patch
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.core.state import GENESIS

VEC = ROOT.parent / "shared" / "vectors" / "coretex" / "evaluator"
pytestmark = pytest.mark.skipif(not (VEC / "cases.json.gz").exists(), reason="../shared/vectors is not beside the checkout")
SAMPLE = 10   # CORETEX_VECTOR_CASES=sample: every 10th case, plus every accepted one


@lru_cache(None)
def data():
    cases = json.load(gzip.open(VEC / "cases.json.gz"))
    return load_corpus(VEC / "corpus.json.gz"), cases


@lru_cache(None)
def evaluator():
    return Evaluator(data()[0], reranker=TokenOverlapReranker())


@lru_cache(None)
def state(root: str) -> tuple:
    "A state rebuilt the way the vectors say it was built: a parent's chain from genesis, or parent + patch."
    st = data()[1]["states"][root]
    if st["role"] == "parent":
        words = list(GENESIS)
        for p in st["buildChain"]: words = list(apply_patch(words, from_hex(p), "r5").words)
    else: words = list(apply_patch(state(st["parent"]), from_hex(st["patch"]), "r5").words)
    return tuple(words)


def sampled_cases():
    return sampled(data()[1]["cases"], SAMPLE)


def test_corpus_root_and_states_rebuild():
    corpus, cases = data()
    assert to_hex(corpus.root) == cases["corpus"]["corpusRoot"]
    for root, st in cases["states"].items():
        words = state(root)
        assert {str(i): "0x" + format(w, "064x") for i, w in enumerate(words) if w} == st["words"], root


def test_stage1_every_pack_query():
    corpus, cases = data()
    ev = evaluator()
    got = {q: [corpus.doc_ids[i] for i in ev.fs.retrieve(corpus.by_id[q])] for q in cases["stage1"]}
    assert got == cases["stage1"]


def test_structural_validity_every_state():
    cases = data()[1]
    ev = evaluator()
    off = {r: (ev.view(state(r)).structural_validity, st["decode"]["structuralValidity"]) for r, st in cases["states"].items()
           if abs(ev.view(state(r)).structural_validity - st["decode"]["structuralValidity"]) > 1e-12}
    assert off == {}


def _query_diffs(root: str, qid: str, rec: dict) -> list:
    corpus, cases = data()
    ev = evaluator()
    view, r = ranked(ev, state(root), corpus.by_id[qid])
    ref = cases["rankings"][rec["ranking"]]
    out = []
    if [row[0] for row in r.cap] != [row[0] for row in ref["cap"]]: return ["cap ids"]
    for mine, theirs in zip(r.cap, ref["cap"]):
        if "+".join(mine[1]) != theirs[1]: out.append(f"sources {theirs[0]}")
        if mine[7] != (theirs[7] if theirs[7] is not None else corpus.docs[theirs[0]]): out.append(f"rendered text {theirs[0]}")
        if mine[6] != theirs[6]: out.append(f"reranker score {theirs[0]}")
        if any(abs(a - b) > 1e-12 for a, b in zip(mine[2:6], theirs[2:6])): out.append(f"pre-rank components {theirs[0]}")
    if [row[0] for row in r.order[:10]] != [row[0] for row in ref["top20"][:10]]: out.append("final top 10")
    m = query_metrics(ev, view, corpus.by_id[qid], r)
    for ours, key in ((m.ndcg10, "nDCG10"), (m.mrr10, "mrr10"), (m.recall10, "recall10"), (m.temporal_hit, "temporalHit"),
                      (m.multi_hop_hit, "multiHopHit"), (m.category_lens_hit, "categoryLensRelationHit"), (m.abstention_hit, "abstentionHit")):
        if (ours is None) != (rec[key] is None) or (ours is not None and abs(float(ours) - float(rec[key])) > 1e-12): out.append(key)
    if r.abstained != rec.get("policyAbstain", False): out.append("policyAbstain")
    return out


def test_every_query_of_sampled_cases():
    cases = data()[1]
    needed = {(c[k], q) for c in sampled_cases() for w in ("gate", "confirm") for k in ("parent", "child") for q in c[w]["pack"]}
    diffs = {(root, q): d for root, q in sorted(needed) if (d := _query_diffs(root, q, cases["queryResults"][root][q]))}
    assert not diffs, f"{len(diffs)}/{len(needed)} (state, query) records differ, e.g. {next(iter(diffs.items()))}"


def test_packs_and_verdicts_of_sampled_cases():
    corpus, cases = data()
    ev, si = evaluator(), cases["seedInputs"]
    wrong = []
    for c in sampled_cases():
        s = seed_inputs_for(ev, from_hex(si["epochSecret"]), from_hex(si["blockhash"]), si["epochId"], from_hex(c["patchHash"]), from_hex(c["parent"]))
        for which in ("gate", "confirm"):
            p, ref = run_pack(ev, which, s, state(c["parent"]), state(c["child"])), c[which]
            comps = [(p.before, ref["parent"]), (p.after, ref["child"])]
            if to_hex(p.seed) != ref["seed"] or list(p.pack) != ref["pack"]: wrong.append((c["id"], which, "seed/pack"))
            elif any(abs(mine.to_json()[k] - theirs[k]) > 1e-9 for mine, theirs in comps for k in mine.to_json()): wrong.append((c["id"], which, "components"))
            elif (p.before_ppm, p.after_ppm) != (ref["parent"]["ppm"], ref["child"]["ppm"]): wrong.append((c["id"], which, "ppm"))
            elif (p.delta_ppm, p.accepted, p.reason) != (ref["patchEval"]["deltaPpm"], ref["patchEval"]["accepted"], ref["patchEval"].get("reason")):
                wrong.append((c["id"], which, "pack verdict"))
        rep = evaluate_patch(ev, list(state(c["parent"])), from_hex(c["patch"]), from_hex(si["blockhash"]), from_hex(si["epochSecret"]), si["epochId"])
        v = c["verdict"]
        want = f"{v['code']}:{v['innerRejectionReason']}" if v["outcome"] == "REJECT" else None
        if (rep.outcome, rep.reason, bool(rep.confirm)) != (v["outcome"], want, "confirm" in v["packsScored"]): wrong.append((c["id"], "verdict"))
        if to_hex(rep.child_root) != c["child"] or to_hex(rep.patch_hash) != c["patchHash"]: wrong.append((c["id"], "roots"))
    assert not wrong, f"{len(wrong)} differences, e.g. {wrong[:5]}"
