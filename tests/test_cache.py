"""Caches never change a verdict: cached and uncached evaluation of a sample of the differential vectors' patches give
byte-identical EvalReport.to_json(), and patches on one parent reuse the parent's rankings and reranker scores."""
import json
import pytest
from test_evaluator_vectors import VEC, data, state
from coretex.cache import EvalCache
from coretex.evaluate import Evaluator, evaluate_patch
from coretex.keccak import from_hex
from coretex.rerank import TokenOverlapReranker

pytestmark = pytest.mark.skipif(not (VEC / "cases.json.gz").exists(), reason="../shared/vectors is not beside the checkout")


def sample() -> list:
    "Three patches on the parent of the first accepted case (that one first), and the first patch of two other parents."
    cases = data()[1]["cases"]
    first = next(c for c in cases if c["verdict"]["outcome"] != "REJECT")
    same = [c for c in cases if c["parent"] == first["parent"] and c is not first][:2]
    others = list({c["parent"]: c for c in reversed(cases) if c["parent"] != first["parent"]}.values())[:2]
    return [first, *same, *others]


def report(ev, c):
    si = data()[1]["seedInputs"]
    return evaluate_patch(ev, list(state(c["parent"])), from_hex(c["patch"]), from_hex(si["blockhash"]), from_hex(si["epochSecret"]), si["epochId"])


def test_cached_and_uncached_reports_are_identical():
    corpus = data()[0]
    kept = Evaluator(corpus, reranker=TokenOverlapReranker())
    bare = Evaluator(corpus, reranker=TokenOverlapReranker(), cache=EvalCache.none())
    cached = [json.dumps(report(kept, c).to_json()) for c in sample()]
    uncached = [json.dumps(report(bare, c).to_json()) for c in sample()]
    assert cached == uncached
    assert kept.cache.rankings.hits > 0 and bare.cache.rankings.hits == 0


def test_patches_on_one_parent_reuse_its_rankings_and_scores():
    first, second = sample()[:2]
    ev = Evaluator(data()[0], reranker=TokenOverlapReranker())
    rep1 = report(ev, first)
    hits, pairs = ev.cache.rankings.hits, ev.cache.scores.misses
    rep2 = report(ev, second)
    packs = lambda r: [q for p in (r.gate, r.confirm) if p for q in p.pack]
    shared = len(set(packs(rep2)) & set(packs(rep1)))
    within = 2 * (len(packs(rep2)) - len(set(packs(rep2))))
    assert shared > 0
    assert ev.cache.rankings.hits - hits == shared + within
    naive = len(packs(rep2)) * 2 * ev.profile.reranker_input_top_k   # every (query, state) sends its full cap
    assert ev.cache.scores.misses - pairs <= naive // 2


def test_a_cache_serves_one_context():
    corpus = data()[0]
    c = EvalCache.sized()
    Evaluator(corpus, reranker=TokenOverlapReranker(), cache=c)
    with pytest.raises(ValueError, match="another corpus"): Evaluator(corpus, cache=c)   # the embedded reranker: another context
