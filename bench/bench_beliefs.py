"""The whole Tenure suite (60 static cases + 12 session turns), both backends, on the embedded MongoDB.

Reports the time to the first case (server start, seeding, index statistics) and per suite, and a named
peer in the same run: rank-bm25's BM25Okapi scoring the same 72 queries over the same belief texts
(canonical name + aliases, no per-field boosts, no fuzzy terms), i.e. what Lucene-faithful scoring costs
over a plain BM25. The reference needs a Docker pull, a container start and an Atlas Search index build
(it waits up to 90 s for readiness) before its first case; that cannot run here and is not timed.
Run: python bench/bench_beliefs.py
"""
import tempfile
from _util import timed
from coretex.beliefs import BeliefStore, BM25Backend, belief_embed_text, clean_query, tenure_fixture
from coretex.store import open_db
from coretex.tenure import run_suite, EVAL_USER
from coretex.retrieval import tokenize


def main():
    (db, close), t_start = timed(lambda: open_db(path=tempfile.mkdtemp()))
    seed = tenure_fixture("beliefs.seed.json")
    cases, sessions = tenure_fixture("retrieval.cases.json"), tenure_fixture("session-retrieval.cases.json")
    queries = [c["query"] for c in cases] + [t["userMessage"] for s in sessions for t in s["turns"]]
    store = BeliefStore(db, "first_case")
    _, t_seed = timed(lambda: store.reset(seed))
    bm = BM25Backend(store)
    _, t_first = timed(lambda: bm.search(EVAL_USER, clean_query(queries[0]), cases[0]["scope"]))
    print(f"time to first case: server start {t_start:.2f}s + seeding {t_seed:.2f}s + first search {t_first:.3f}s "
          f"= {t_start + t_seed + t_first:.2f}s")
    for name in ("bm25", "vector"):
        (row, st, se), t = timed(lambda: run_suite(name, db))
        print(f"{name:<7} suite: {t:6.2f}s for {len(st) + len(se)} cases ({1000 * t / (len(st) + len(se)):.0f} ms/case); "
              f"static {row['static'][0]}/{row['static'][1]}, session {row['session'][0]}/{row['session'][1]}")
    from rank_bm25 import BM25Okapi
    peer = BM25Okapi([tokenize(belief_embed_text(b).replace("_", " ")) for b in seed])
    _, t_peer = timed(lambda: [peer.get_scores(tokenize(clean_query(q))) for q in queries])
    ids = [b["_id"] for b in seed]
    idx, t_idx = timed(lambda: bm.index())
    _, t_ours = timed(lambda: [bm.score(clean_query(q), ids, idx) for q in queries])
    print(f"scoring the 72 queries over all 29 beliefs: coretex (4 clauses, fuzzy, Lucene BM25) {1000 * t_ours / 72:.2f} ms/query | "
          f"rank-bm25 BM25Okapi (one field, exact terms) {1000 * t_peer / 72:.3f} ms/query | ratio {t_ours / t_peer:.1f}x slower; "
          f"index statistics {1000 * t_idx:.1f} ms")
    close()


if __name__ == "__main__":
    main()
