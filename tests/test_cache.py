"""Caches never change a verdict: cached and uncached evaluation of a sample of the differential vectors' patches give
byte-identical EvalReport.to_json(), and patches on one parent reuse the parent's rankings and reranker scores."""
import json
import pytest
from test_evaluator_vectors import VEC, data, state
from coretex.evaluator.cache import EvalCache
from coretex.evaluator.evaluate import Evaluator, evaluate_patch, order_query, rank_query, ranked, ranking_key
from coretex.core.layout import encode_memory_slot, encode_temporal
from coretex.core.state import GENESIS
from coretex.core.keccak import from_hex
from coretex.evaluator.rerank import TokenOverlapReranker

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
    assert ev.cache.rankings.hits - hits >= shared + within   # at least what a whole-state key reuses
    naive = len(packs(rep2)) * 2 * ev.profile.reranker_input_top_k   # every (query, state) sends its full cap
    assert ev.cache.scores.misses - pairs <= naive // 2


def test_a_cache_serves_one_context():
    corpus = data()[0]
    c = EvalCache.sized()
    Evaluator(corpus, reranker=TokenOverlapReranker(), cache=c)
    with pytest.raises(ValueError, match="another corpus"): Evaluator(corpus, cache=c)   # the embedded reranker: another context


def test_a_patch_recomputes_exactly_the_queries_whose_key_it_changes(monkeypatch):
    """A parent with one marked temporal slot; one patch adds a second marked slot (temporal queries' marks change),
    another a policy-anchor slot in the scope window (queries with subjects change). Queries whose key moved are
    ordered anew, the others are reused, and every ranking equals an uncached one."""
    corpus = data()[0]
    ev = Evaluator(corpus, reranker=TokenOverlapReranker())
    bare = Evaluator(corpus, reranker=TokenOverlapReranker(), cache=EvalCache.none())
    parent = list(GENESIS)
    parent[40] = encode_memory_slot("mem_p000003_org_old", "temporal")
    parent[800] = encode_temporal(8)                       # any_marks is already True on the parent
    marked, anchored = list(parent), list(parent)
    marked[41], marked[801] = encode_memory_slot("mem_p000003_org_new", "temporal"), encode_temporal(9)
    anchored[32 + 200] = encode_memory_slot("mem_p000000_city", "multi_hop_relation", policy_anchor=True)
    queries = corpus.hidden_events
    for q in queries: ranked(ev, parent, q)
    ordered = []
    monkeypatch.setattr("coretex.evaluator.evaluate.order_query", lambda e, v, q: ordered.append((e is ev, q["id"])) or order_query(e, v, q))
    for child in (marked, anchored):
        pv, cv = ev.view(parent), ev.view(child)
        moved = {q["id"] for q in queries if ranking_key(ev, pv, q) != ranking_key(ev, cv, q)}
        assert 0 < len(moved) < len(queries)
        ordered.clear()
        for q in queries: assert ranked(ev, child, q)[1] == rank_query(bare, bare.view(child), q)
        anew = [i for kept, i in ordered if kept]
        assert set(anew) == moved and len(anew) == len(moved)
    temporal = {q["id"] for q in queries if q["family"] == "temporal"}
    assert moved != temporal and {q["id"] for q in queries if ranking_key(ev, ev.view(parent), q) != ranking_key(ev, ev.view(marked), q)} == temporal
    ordered.clear()
    for q in queries[:10]: ranked(bare, marked, q)
    assert ordered == [(False, q["id"]) for q in queries[:10]] and bare.cache.rankings.hits == 0   # EvalCache.none() reuses nothing
