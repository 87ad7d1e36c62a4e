"""Rule set loosh-1.2.8 against what the Loosh validator's release 1.2.8 returned (../shared/vectors/loosh): all 160
response sets (theta, mu, sigma, quality, scores, emissions to 1e-6; in/out, outlier decisions, clusters, sybil pairs
and groups equal) and all 15 weight-setting scenarios; the installed `coretex consensus` on one set; the seed rules
untouched (tests/test_consensus.py covers them)."""
import gzip, json
from functools import lru_cache
from pathlib import Path
import pytest
from threadpoolctl import threadpool_limits
from helpers import ROOT, run_cli
from coretex.consensus.loosh_evaluate import evaluate_responses
from coretex.consensus.loosh_inputs import VectorTable
from coretex.consensus.loosh_theta import polarity_agreement, polarity_consensus
from coretex.consensus.loosh_weights import set_weights_128, weight_inputs

VEC = ROOT.parent / "shared" / "vectors" / "loosh"
pytestmark = pytest.mark.skipif(not (VEC / "sets.json.gz").exists(), reason="../shared/vectors is not beside the checkout")
EPS = 1e-6


@lru_cache(maxsize=None)
def sets() -> dict:
    with gzip.open(VEC / "sets.json.gz", "rt") as f: return json.load(f)


@lru_cache(maxsize=None)
def table() -> VectorTable: return VectorTable(sets()["embeddings"])


def close(got: dict, want: dict, eps: float = EPS) -> bool:
    return got.keys() == want.keys() and all(abs(got[k] - want[k]) <= eps for k in want)


def evaluate(s):
    # the reference ran with one BLAS thread; ties between identical responses are only repeatable so
    with threadpool_limits(limits=1): return evaluate_responses(s["responses"], s["prompt"], "loosh-1.2.8", table())


def check_sybil(got, want: dict, loose: list):
    "Sybil output equal; for the fields the README marks BLAS-sensitive, what stays clear of a decision line equal."
    assert abs(got.high_threshold - want["high_threshold"]) <= EPS and abs(got.very_high_threshold - want["very_high_threshold"]) <= EPS
    assert got.length_gated_out == want["length_gated_out"]
    pairs = {frozenset((p.a, p.b)): p for p in got.pairs}
    if "sybil.pairs" in loose:   # pairs well above every threshold are found whatever the thread count
        for p in want["pairs"]:
            if p["score"] > want["high_threshold"] + 1e-4: assert frozenset((p["a"], p["b"])) in pairs, p
    else:
        assert [(p.a, p.b, p.method) for p in got.pairs] == [(p["a"], p["b"], p["method"]) for p in want["pairs"]]
        assert all(abs(p.score - q["score"]) <= EPS for p, q in zip(got.pairs, want["pairs"]))
        assert got.detection_method == want["detection_method"]
    groups = [set(g.members) for g in got.groups]
    if "sybil.groups" in loose:   # every group found shares most of its members with one 1.2.8 found, and back
        for a, b in ((groups, [set(g["members"]) for g in want["groups"]]), ([set(g["members"]) for g in want["groups"]], groups)):
            assert all(any(len(g & h) * 2 >= len(g) for h in b) for g in a)
    else:
        assert groups == [set(g["members"]) for g in want["groups"]]
        for g, w in zip(got.groups, want["groups"]): assert abs(g.avg - w["avg"]) <= EPS and abs(g.min - w["min"]) <= EPS and abs(g.max - w["max"]) <= EPS


@pytest.mark.parametrize("i", range(160))
def test_set(i):
    s = sets()["sets"][i]
    x, ev = s["expect"], evaluate(s)
    loose = x.get("blas_sensitive", [])
    assert (ev.path, sorted(ev.test_mode)) == (x["path"], sorted(x["test_mode"]))
    assert abs(ev.theta - x["theta"]) <= EPS and close(ev.emissions, x["emissions"])
    if x["path"] == "single_valid": assert abs(ev.single_prompt_cosine - x["single_prompt_cosine"]) <= EPS
    if x["path"] != "consensus": return
    assert abs(ev.mu - x["mu"]) <= EPS and abs(ev.sigma - x["sigma"]) <= EPS and ev.consensus_achieved == x["consensus_achieved"]
    assert (ev.in_consensus, ev.out_of_consensus) == (x["in"], x["out"])
    assert close(ev.entity_weights, x["entity_weights"], 0) and close(ev.prompt_cosine, x["prompt_cosine"]) and close(ev.quality, x["quality"])
    for m, b in x["quality_breakdown"].items(): assert close({k: getattr(ev.quality_breakdown[m], k) for k in b}, b), m
    assert close(ev.scores, x["scores"]) and close(ev.diversity_bonus, x["diversity_bonus"])
    assert abs(ev.weighted_score - x["weighted_score"]) <= EPS
    assert abs(ev.top_bonus["multiplier"] - x["top_bonus"]["multiplier"]) <= EPS
    if "top_bonus.label" not in loose: assert ev.top_bonus["label"] == x["top_bonus"]["label"]
    assert ev.outlier == x.get("outlier")
    if "cluster" in x:   # the entity-weighted counts are sums of 1/N: their last bit depends on numpy's summation order
        c = dict(ev.cluster); assert close(c.pop("weighted_counts"), x["cluster"]["weighted_counts"], 1e-12)
        assert c == {k: v for k, v in x["cluster"].items() if k != "weighted_counts"}
    else: assert ev.cluster is None
    check_sybil(ev.sybil, x["sybil"], loose)
    if "polarity_variant" in x:   # the engine's polarity rule, which evaluate_responses never switches on
        pv, role = x["polarity_variant"], {r["miner"]: r["role"] for r in s["responses"]}
        share = polarity_agreement([role[m] for m in ev.in_consensus])
        assert abs(share - pv["polarity_agreement"]) <= EPS and polarity_consensus(ev.theta, share) == pv["consensus_achieved"]
        assert pv["in"] == ev.in_consensus and close(pv["scores"], ev.scores) and abs(pv["theta"] - ev.theta) <= EPS


@lru_cache(maxsize=None)
def scenarios() -> dict:
    with gzip.open(VEC / "weights.json.gz", "rt") as f: return json.load(f)


@pytest.mark.parametrize("i", range(15))
def test_weight_scenario(i):
    sc = scenarios()["scenarios"][i]
    o, r = sc["output"], set_weights_128(weight_inputs({"now": scenarios()["now"], **sc["input"]}))
    assert (r.mode, r.outcome) == (o["mode_inferred"], o["outcome"])
    if "serving" in o: assert (r.serving, r.serving_stats) == (o["serving"]["hotkeys"], o["serving"]["stats"])
    if "ema" in o: assert close(r.ema, o["ema"]["scores"], 1e-12)
    if "freshness" in o:
        assert (r.freshness_hours, r.stale_count) == (o["freshness"]["hours"], o["freshness"]["stale_count"])
        assert close(r.fresh, o["freshness"]["scores"], 1e-12)
    if "sybil_scores_used" in o: assert r.sybil_scores_used == o["sybil_scores_used"]
    if "penalty" in o:
        assert (r.penalized_count, r.safety_triggered) == (o["penalty"]["penalized_count"], o["penalty"]["safety_triggered"])
        assert close(r.penalized, o["penalty"]["scores"], 1e-12)
    # the order of the report follows the EMA dict's, which the vectors' sorted emission keys do not keep
    key = lambda a: a["miner_hotkey"]
    assert sorted(r.penalty_actions, key=key) == sorted(o.get("penalty_actions", []), key=key)
    if "submitted" in o:
        assert r.uids == o["submitted"]["uids"] and close(r.weights, o["weights_by_hotkey"], 1e-12)
        assert list(r.weights.values()) == pytest.approx(o["submitted"]["weights"], abs=1e-12)


def test_installed_consensus_command(tmp_path):
    "The contract: coretex consensus RESPONSES.jsonl --json --no-store --prompt TEXT --reference loosh-1.2.8 --embeddings FILE."
    s = next(x for x in sets()["sets"] if x["id"] == "s154")     # 16 miners, entity caps, outliers, two clusters
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({k: r[k] for k in ("miner", "text", "response_time_ms", "ip", "coldkey")}) + "\n"
                                              for r in s["responses"]))
    (tmp_path / "v.json").write_text(json.dumps({"model": "all-MiniLM-L6-v2", "vectors": {t: sets()["embeddings"][t] for t in s["embed_texts"]}}))
    p = run_cli("consensus", tmp_path / "r.jsonl", "--json", "--no-store", "--prompt", s["prompt"], "--reference", "loosh-1.2.8",
                "--embeddings", tmp_path / "v.json")
    assert p.returncode == 0, p.stderr
    got, x = json.loads(p.stdout), s["expect"]
    assert got["rule_set"] == "loosh-1.2.8"
    assert abs(got["theta"] - x["theta"]) <= EPS and abs(got["mu"] - x["mu"]) <= EPS and abs(got["sigma"] - x["sigma"]) <= EPS
    assert (got["in_consensus"], got["out_of_consensus"]) == (x["in"], x["out"])
    assert close(got["scores"], x["scores"]) and close(got["emissions"], x["emissions"])
    assert [sorted(g["members"]) for g in got["sybil"]["groups"]] == [sorted(g["members"]) for g in x["sybil"]["groups"]]
    assert [(q["a"], q["b"]) for q in got["sybil"]["pairs"]] == [(q["a"], q["b"]) for q in x["sybil"]["pairs"]]
    d = json.loads((tmp_path / "v.json").read_text()); del d["vectors"][s["prompt"]]
    (tmp_path / "v.json").write_text(json.dumps(d))
    p = run_cli("consensus", tmp_path / "r.jsonl", "--no-store", "--prompt", s["prompt"], "--reference", "loosh-1.2.8", "--embeddings", tmp_path / "v.json")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "no vector for the text" in p.stderr and s["prompt"][:30] in p.stderr
