"""coretex's evaluator against the reference, on every case of the differential vectors (../shared/vectors/coretex/evaluator):
agreement per level (stage-1 lists, reranker caps, final top 10, per-query metrics, states' components and ppm, packs, verdicts)
and coretex's time per patch. The peer is the reference itself: its recorded answers are what each agreement rate is measured
against, and its recorded verdict for every patch. Timing: the first patch on a fresh evaluator (cold: every (state, query)
ranked anew) and the mean over all 310 (warm: a validator's steady state, where a parent's rankings are reused), as a ratio.
Run: python bench/bench_evaluator_vectors.py [--cases N]
"""
import argparse, gzip, json, time
from collections import Counter
from pathlib import Path
from coretex.evaluator.corpus import load_corpus
from coretex.evaluator.evaluate import Evaluator, ranked, query_metrics, run_pack, evaluate_patch, seed_inputs_for
from coretex.core.keccak import from_hex, to_hex
from coretex.core.patch import apply_patch
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.core.state import GENESIS

VEC = Path(__file__).resolve().parents[2] / "shared" / "vectors" / "coretex" / "evaluator"


def rebuild(states: dict) -> dict:
    out = {}
    def build(root):
        if root not in out:
            st = states[root]
            if st["role"] == "parent":
                w = list(GENESIS)
                for p in st["buildChain"]: w = list(apply_patch(w, from_hex(p), "r5").words)
            else: w = list(apply_patch(build(st["parent"]), from_hex(st["patch"]), "r5").words)
            out[root] = w
        return out[root]
    for r in states: build(r)
    return out


def query_levels(ev, corpus, cases, words, root, qid) -> dict:
    "Agreement of one (state, query) record at each level."
    rec = cases["queryResults"][root][qid]
    view, r = ranked(ev, words, corpus.by_id[qid])
    ref = cases["rankings"][rec["ranking"]]
    cap_ok = [row[0] for row in r.cap] == [row[0] for row in ref["cap"]]
    detail = cap_ok and all("+".join(a[1]) == b[1] and a[7] == (b[7] if b[7] is not None else corpus.docs[b[0]]) and a[6] == b[6]
                            and all(abs(x - y) <= 1e-12 for x, y in zip(a[2:6], b[2:6])) for a, b in zip(r.cap, ref["cap"]))
    m = query_metrics(ev, view, corpus.by_id[qid], r)
    mets = all((x is None) == (rec[k] is None) and (x is None or abs(float(x) - float(rec[k])) <= 1e-12) for x, k in (
        (m.ndcg10, "nDCG10"), (m.mrr10, "mrr10"), (m.recall10, "recall10"), (m.temporal_hit, "temporalHit"), (m.multi_hop_hit, "multiHopHit"),
        (m.category_lens_hit, "categoryLensRelationHit"), (m.abstention_hit, "abstentionHit"))) and r.abstained == rec.get("policyAbstain", False)
    return {"reranker cap ids": cap_ok, "cap sources, texts, scores, pre-rank": detail,
            "final top 10": [x[0] for x in r.order[:10]] == [x[0] for x in ref["top20"][:10]], "per-query metrics": mets}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=0, help="only the first N cases (default: all)")
    a = ap.parse_args()
    corpus, cases = load_corpus(VEC / "corpus.json.gz"), json.load(gzip.open(VEC / "cases.json.gz"))
    todo = cases["cases"][:a.cases or None]
    si = cases["seedInputs"]
    words = rebuild(cases["states"])
    ev = Evaluator(corpus, reranker=TokenOverlapReranker())
    ok, n = Counter(), Counter()
    times = []
    for c in todo:   # the verdict first, timed, on caches only earlier patches filled
        t0 = time.perf_counter()
        rep = evaluate_patch(ev, words[c["parent"]], from_hex(c["patch"]), from_hex(si["blockhash"]), from_hex(si["epochSecret"]), si["epochId"])
        times.append(time.perf_counter() - t0)
        v = c["verdict"]
        want = f"{v['code']}:{v['innerRejectionReason']}" if v["outcome"] == "REJECT" else None
        n["verdicts (outcome, reason, packs scored)"] += 1
        ok["verdicts (outcome, reason, packs scored)"] += (rep.outcome, rep.reason, bool(rep.confirm)) == (v["outcome"], want, "confirm" in v["packsScored"])
    stage1 = sum([corpus.doc_ids[i] for i in ev.fs.retrieve(corpus.by_id[q])] == ids for q, ids in cases["stage1"].items())
    ok["stage-1 lists"], n["stage-1 lists"] = stage1, len(cases["stage1"])
    states_seen = set()
    for c in todo:
        s = seed_inputs_for(ev, from_hex(si["epochSecret"]), from_hex(si["blockhash"]), si["epochId"], from_hex(c["patchHash"]), from_hex(c["parent"]))
        for which in ("gate", "confirm"):
            p, ref = run_pack(ev, which, s, words[c["parent"]], words[c["child"]]), c[which]
            for mine, theirs in ((p.before, ref["parent"]), (p.after, ref["child"])):
                n["states on packs (5 components to 1e-9)"] += 1
                ok["states on packs (5 components to 1e-9)"] += all(abs(v - theirs[k]) <= 1e-9 for k, v in mine.to_json().items())
            n["states on packs (composite ppm)"] += 2
            ok["states on packs (composite ppm)"] += (p.before_ppm == ref["parent"]["ppm"]) + (p.after_ppm == ref["child"]["ppm"])
            n["packs (delta ppm, accepted, reason)"] += 1
            ok["packs (delta ppm, accepted, reason)"] += (p.delta_ppm, p.accepted, p.reason) == (
                ref["patchEval"]["deltaPpm"], ref["patchEval"]["accepted"], ref["patchEval"].get("reason"))
            for root in (c["parent"], c["child"]):
                for q in ref["pack"]:
                    if (root, q) in states_seen: continue
                    states_seen.add((root, q))
                    for level, good in query_levels(ev, corpus, cases, words[root], root, q).items(): n[level] += 1; ok[level] += good
    print(f"differential vectors: {len(todo)} cases, {len(states_seen)} (state, query) records; peer: the reference's recorded answers")
    for level in ("stage-1 lists", "reranker cap ids", "cap sources, texts, scores, pre-rank", "final top 10", "per-query metrics",
                  "states on packs (5 components to 1e-9)", "states on packs (composite ppm)", "packs (delta ppm, accepted, reason)",
                  "verdicts (outcome, reason, packs scored)"):
        print(f"  {level:<42} {ok[level]:>6}/{n[level]:<6} {100 * ok[level] / max(n[level], 1):6.2f}% agree")
    warm = sum(times) / len(times)
    print(f"coretex time per patch: first (cold caches) {times[0]:.2f}s; mean over {len(times)} {warm:.3f}s; cold/warm {times[0] / warm:.1f}x")


if __name__ == "__main__":
    main()
