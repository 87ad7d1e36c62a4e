"Belief retrieval: clause scores against an independent BM25 (bm25s, Lucene variant) and the `beliefs eval` command."
import json, tempfile
import pytest
import bm25s
from helpers import run_cli
from coretex.beliefs import BeliefStore, BM25Backend, whole_name_tokens, tenure_fixture
from coretex.store import open_db


@pytest.fixture(scope="module")
def seeded():
    db, close = open_db(path=tempfile.mkdtemp())
    store = BeliefStore(db)
    store.reset(tenure_fixture("beliefs.seed.json"))
    yield store
    close()


def test_exact_alias_clause_matches_bm25s_lucene(seeded):
    "An exact one-word alias scores boost x Lucene BM25, as bm25s computes it over the same alias tokens."
    seed = tenure_fixture("beliefs.seed.json")
    with_aliases = [b for b in seed if b.get("aliases")]
    docs = [[t for a in b["aliases"] for t in whole_name_tokens(a)] for b in with_aliases]
    peer = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    peer.index(docs, show_progress=False)
    bm = BM25Backend(seeded)
    idx = bm.index()
    ids = [b["_id"] for b in seed]
    checked = 0
    for term in ["ts", "redis", "database", "pipe", "inheritance", "biome", "gha", "protagonist"]:
        ours = bm.score(term, ids, idx)
        theirs = peer.get_scores([term])
        for b, s in zip(with_aliases, theirs):
            clauses = [c for c in ours.get(b["_id"], None).clauses if c["path"] == "aliases"] if b["_id"] in ours else []
            got = sum(c["score"] for c in clauses)
            assert got == pytest.approx(5 * s, rel=1e-5, abs=1e-9), (term, b["_id"])
            checked += s > 0
    assert checked >= 8


@pytest.mark.parametrize("backend,static,session,drift", [("bm25", [60, 60], [12, 12], {"9": 0.0, "10": 0.0}),
                                                          ("vector", [8, 60], [0, 12], {"9": 0.43, "10": 0.5})])
def test_beliefs_eval_reproduces_the_paper(tmp_path, monkeypatch, backend, static, session, drift):
    monkeypatch.setenv("CORETEX_DATA", str(tmp_path / "data"))
    r = run_cli("beliefs", "eval", "--backend", backend, "--json", "--out", tmp_path / "reports")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["backend"], out["static"], out["session"], out["drift"]) == (backend, static, session, drift)
    assert out["mean_precision"] == (1.0 if backend == "bm25" else 0.13)
    suffix = "" if backend == "bm25" else "-vector"
    rep = json.loads((tmp_path / "reports" / f"retrieval-report{suffix}.json").read_text())
    assert len(rep) == 60 and {"caseId", "expandedQuery", "pinnedBeliefs", "relevantBeliefs", "retrievedQuestions",
                               "searchScores", "retrievalPrecision", "retrievalRecall", "passed", "failures"} <= set(rep[0])
    sess = json.loads((tmp_path / "reports" / f"session-retrieval-report{suffix}.json").read_text())
    assert [e["turnIndex"] for e in sess] == list(range(11)) + [0]
    assert all(("clauses" in s) == (backend == "bm25") for e in rep for s in e["searchScores"])
