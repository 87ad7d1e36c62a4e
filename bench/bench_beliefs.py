"""Belief retrieval: per-case latency on the Tenure suites, and a scale curve against bm25s, in one run.

1. BM25 per case: the time from a user message to its assembled context (coretex.beliefs.build_context: pinned
   facts, open questions, search, relation participants, budget), for the paper's 60 static cases and 12 session
   turns (a session's writes update the index when they are made, between turns, as the reference waits for
   Atlas to index them), under the paper's rules and today's; first timing and best of --repeats per case. Peer: the reference's published p50 of 9.77 ms (MongoDB Atlas Local with Atlas Search; not
   runnable here, so the published figure is the one quoted).
2. Vector suite per case: the 72 cases with MiniLM, cold (empty embedding cache, model already loaded: the store's
   beliefs and the suite's messages are embedded in length-sorted batches, then the cases run) and warm (every
   text already embedded, cached by content hash). Peer: the same suite, cold, with the same model embedding each
   text in its own forward pass (as coretex embedded every message before batching). Best and median of
   --vector-repeats cold runs of each, interleaved, so a busy machine's load falls on both alike.
3. Scale curve: a seeded generated store of N beliefs in the reference's schema (N // 100 users; types, scopes,
   pins, supersession, relations with participants), stored in MongoDB (unordered insert_many in batches). For
   each N: the index built from the collection; its snapshot saved, and a new store object starting from it (a
   restart); the build from the same documents in memory and the memory it holds (tracemalloc), beside bm25s
   (Lucene BM25) indexing the same texts (canonical name + aliases) in the same run; query p50/p95 of the
   filtered top-20 search (the first time each query is seen) and of the whole context, beside bm25s answering
   the same queries top-20, unfiltered; ratios coretex / bm25s.
Run: python bench/bench_beliefs.py [--sizes 10000 100000 1000000] [--queries 200] [--no-vector] [--in-memory-only] [--torch-threads 1] [--vector-repeats 3]
"""
import argparse, itertools, math, os, random, statistics, tempfile, time, tracemalloc
from pathlib import Path
import numpy as np
from datetime import datetime, timedelta, timezone
from _util import timed
from coretex.beliefs.store import BeliefIndex, BeliefStore, save_index, BM25Backend, Budget, Reference, build_context, belief_embed_text, clean_query, tenure_fixture
from coretex.beliefs import store as beliefs_module
from coretex.network.store import open_db
from coretex.beliefs.tenure import EVAL_USER, EVAL_PERSONAS, apply_turn_writes, run_suite

PUBLISHED_P50_MS = 9.77   # the reference's BM25 retrieval p50 on Atlas Local


def pct(xs, p):
    "The p-th value of the sorted list at rank ceil(p n), as the reference's report takes it."
    return sorted(xs)[max(0, math.ceil(p * len(xs)) - 1)]


def case_latencies(db, ref, repeats):
    """Per case (static, then session turns), `repeats` timings in ms of build_context with BM25 on the paper's set; and
    the ms each index update took. The index is brought up to date when the store is written (seeded, or a turn's
    writes), as Atlas indexes between turns in the reference, so a case's time is retrieval alone."""
    store = BeliefStore(db, f"latency_{ref.value}")
    bm, seed = BM25Backend(store), tenure_fixture("beliefs.seed.json")
    out, updates = [], []
    def one(user, scope, msg, budget):
        ms = []
        for _ in range(repeats):   # retrieval does not change the store, so every repeat sees the same state
            t = time.perf_counter()
            build_context(store, bm, user, scope, msg, budget, EVAL_PERSONAS, ref)
            ms.append(1000 * (time.perf_counter() - t))
        out.append(ms)
    def written():
        t = time.perf_counter(); bm.index(); updates.append(1000 * (time.perf_counter() - t))
    store.reset(seed); written()
    for c in tenure_fixture("retrieval.cases.json"):
        one(c.get("userId", EVAL_USER), c["scope"], c["query"], Budget.from_case(c.get("budget")))
    store.reset(seed); written()
    for s in tenure_fixture("session-retrieval.cases.json"):
        for t in s["turns"]:
            one(EVAL_USER, t["scope"], t["userMessage"], Budget())
            apply_turn_writes(store, t); written()
    return out, updates


def bench_cases(db, repeats):
    for ref in Reference:
        case_latencies(db, ref, 1)   # warm-up: first-call costs (imports, regex compilation) are not per-case costs
        runs, updates = case_latencies(db, ref, repeats)
        first, best = [r[0] for r in runs], [min(r) for r in runs]
        print(f"BM25 per case, {ref.value} rules, {len(runs)} cases: p50 {pct(first, 0.5):.3f} ms, p95 {pct(first, 0.95):.3f} ms "
              f"(best of {repeats} per case: p50 {pct(best, 0.5):.3f} ms, p95 {pct(best, 0.95):.3f} ms) | reference (Atlas Local, "
              f"published) p50 {PUBLISHED_P50_MS} ms | ratio {PUBLISHED_P50_MS / pct(first, 0.5):.0f}x faster at p50")
        print(f"  index brought up to date on {len(updates)} writes (2 seedings, then each session turn's writes): "
              f"seeding {max(updates[0], updates[1]):.2f} ms, a turn's writes p50 {pct(updates[2:], 0.5):.3f} ms, max {max(updates[2:]):.3f} ms")


TARGET_VECTOR_MS = 20.0   # the target: the vector suite under 20 ms per case, cold


class OneAtATime:
    "The peer embedder: the same model, every text in its own forward pass."
    def __init__(self, emb): self.emb, self.name, self.dim = emb, emb.name, emb.dim

    def encode(self, texts, progress=False):
        return np.array([self.emb.encode([t])[0] for t in texts], np.float32).reshape(len(texts), self.dim)


def suite_ms(db, emb, cold):
    "(ms per case, the run) of the vector suite; cold empties the embedding cache first."
    if cold: beliefs_module._VECTORS.clear()
    run, t = timed(lambda: run_suite("vector", db, embedder=emb))
    return 1000 * t / (len(run.static) + len(run.session)), run


def bench_vector(db, repeats):
    import torch
    from coretex.toolkit.embeddings import Embedder
    emb, t_load = timed(Embedder)
    print(f"vector: MiniLM loaded in {t_load:.1f}s (once per process, not counted below); {torch.get_num_threads()} torch thread(s), "
          f"machine load {os.getloadavg()[0]:.1f} (1-minute average) on {os.cpu_count()} cores")
    suite_ms(db, emb, cold=True)   # warm-up: first-call costs of torch and the tokenizer are not per-case costs
    ours, peer = [], []
    for _ in range(repeats):
        ms, run = suite_ms(db, emb, cold=True); ours.append(ms)
        peer.append(suite_ms(db, OneAtATime(emb), cold=True)[0])
    warm, _ = suite_ms(db, emb, cold=False)
    n = len(run.static) + len(run.session)
    print(f"vector suite cold (empty cache), batched: best {min(ours):.1f} ms/case, median {statistics.median(ours):.1f} over {repeats} runs "
          f"of {n} cases (static {run.row['static'][0]}/{run.row['static'][1]}, session {run.row['session'][0]}/{run.row['session'][1]})")
    print(f"vector suite cold, each text embedded alone (peer): best {min(peer):.1f} ms/case, median {statistics.median(peer):.1f} | "
          f"ratio {statistics.median(peer) / statistics.median(ours):.1f}x faster batched (medians)")
    print(f"vector suite warm (cached by content): {warm:.1f} ms/case | target: cold under {TARGET_VECTOR_MS:.0f} ms/case, "
          f"{'met' if statistics.median(ours) < TARGET_VECTOR_MS else 'NOT met'} (median {statistics.median(ours):.1f})")


# ---- generated store ------------------------------------------------------------------------------------------
SYL = [c + v for c in "bdfghjklmnprstvwyz" for v in "aeiou"]   # 90 syllables: 90 two-letter prefixes


def vocabulary(rng, n):
    "n distinct made-up words of 2 to 4 syllables."
    words = set()
    while len(words) < n: words.add("".join(rng.choice(SYL) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def generate_store(n, seed=13):
    "n beliefs in the reference's schema, over n // 100 users, with a Zipf-like word choice."
    rng = random.Random(seed)
    vocab = vocabulary(rng, max(500, n // 4))
    cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))   # cumulative, so each draw is a bisection
    word = lambda: rng.choices(vocab, cum_weights=cum)[0]
    users = [f"user-{i}" for i in range(max(1, n // 100))]
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    out, by_user = [], {}
    for i in range(n):
        u = rng.choice(users)
        typ = rng.choices(["entity", "preference", "decision", "relation", "open_question"], [40, 25, 15, 10, 10])[0]
        mine = by_user.setdefault(u, [])
        b = {"_id": f"g-{i}", "user_id": u, "agent_id": None, "type": typ, "subtype": rng.choices([None, "expertise", "style"], [85, 10, 5])[0],
             "canonical_name": "_".join(word() for _ in range(rng.randint(1, 3))),
             "aliases": [" ".join(word() for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(0, 4))],
             "content": " ".join(word() for _ in range(rng.randint(8, 30))), "why_it_matters": "generated",
             "scope": [rng.choices(["domain:code", "domain:writing", "user:universal"], [50, 30, 20])[0]],
             "epistemic_status": "active", "confidence": round(rng.random(), 2), "reinforcement_count": rng.randint(0, 20),
             "last_reinforced_at": t0 + timedelta(minutes=rng.randint(0, 500000)), "pinned": rng.random() < 0.1,
             "user_edited": rng.random() < 0.05, "superseded_by": mine[-1] if mine and rng.random() < 0.05 else None,
             "resolved_at": t0 if rng.random() < 0.03 else None, "change_log": [],
             "provenance": {"extracted_at": t0, "source_model": "generated"}, "created_at": t0, "updated_at": t0}
        if typ == "relation" and len(mine) >= 2:
            b.update(participants=rng.sample(mine, 2), relation_type=rng.choice(["depends_on", "uses", "replaces"]))
        mine.append(b["_id"]); out.append(b)
    queries = []
    for _ in range(400):
        b = rng.choice(out)
        terms = [b["canonical_name"].replace("_", " ")] + b["aliases"] + [word(), word()]
        q = " ".join(rng.sample(terms, min(3, len(terms))))
        if rng.random() < 0.3:   # a typo: one dropped character
            k = rng.randrange(len(q)); q = q[:k] + q[k + 1:]
        queries.append((b["user_id"], f"how do we handle {q} these days?"))
    return out, queries


def traced(fn):
    "(result, bytes allocated and still held) of one call, under tracemalloc."
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        out = fn()
        return out, tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def query_latencies(store, queries, texts):
    "ms of the filtered top-20 search (the first time each query is seen), then of the whole context, per query."
    bm, search_ms, ctx_ms = BM25Backend(store), [], []
    for (user, _), text in zip(queries, texts):
        t = time.perf_counter(); bm.search(user, text, ["domain:code"]); search_ms.append(1000 * (time.perf_counter() - t))
        t = time.perf_counter(); build_context(store, bm, user, ["domain:code"], text); ctx_ms.append(1000 * (time.perf_counter() - t))
    return search_ms, ctx_ms


class InMemory:
    "A store stand-in holding an index built from documents in memory (all that search and build_context read of a store)."
    def __init__(self, idx): self.idx = idx
    def index(self): return self.idx


def bench_in_memory(n, n_queries):
    "Query latency alone at n beliefs: the index built in memory, no MongoDB, no peer (a quick look at one size)."
    beliefs, queries = generate_store(n)
    for i, b in enumerate(beliefs): b["_seq"] = i
    idx, t_build = timed(lambda: BeliefIndex(beliefs))
    del beliefs
    queries = queries[:n_queries]
    (s50, s95), (c50, c95) = [(pct(xs, 0.5), pct(xs, 0.95)) for xs in query_latencies(InMemory(idx), queries, [clean_query(q) for _, q in queries])]
    print(f"{n:>9,} beliefs | build in memory {t_build:6.2f}s | query p50/p95: coretex search {s50:.3f}/{s95:.3f} ms, "
          f"whole context {c50:.3f}/{c95:.3f} ms | load average {os.getloadavg()[0]:.1f}", flush=True)


def bench_scale(db, n, n_queries, snapshots):
    import bm25s
    beliefs, queries = generate_store(n)
    for i, b in enumerate(beliefs): b["_seq"] = i   # as the store numbers them, so the in-memory build reads what MongoDB holds
    queries = queries[:n_queries]
    store = BeliefStore(db, f"scale_{n}")
    _, t_store = timed(lambda: store.reset(beliefs))                 # unordered insert_many in batches of BATCH
    idx, t_build = timed(store.index)                                # read back from MongoDB (the index's fields), analysed, indexed
    path = snapshots / f"scale_{n}.index.npz"
    _, t_save = timed(lambda: save_index(idx, path, store.check()))
    loaded, t_load = timed(lambda: BeliefStore(db, f"scale_{n}", snapshots=snapshots).index())   # what a restart does
    assert loaded.built == n, "the snapshot was not used"
    del loaded
    _, t_index_only = timed(lambda: BeliefIndex(beliefs))            # the same, from documents already in memory
    _, mem = traced(lambda: BeliefIndex(beliefs))
    texts = [clean_query(q) for _, q in queries]
    search_ms, ctx_ms = query_latencies(store, queries, texts)
    corpus = [belief_embed_text(b).replace("_", " ") for b in beliefs]
    def peer_build():
        p = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        p.index(bm25s.tokenize(corpus, stopwords=None, show_progress=False), show_progress=False)
        return p
    peer, t_peer_build = timed(peer_build)
    _, peer_mem = traced(peer_build)
    peer_ms = []
    for text in texts:
        t = time.perf_counter()
        peer.retrieve(bm25s.tokenize([text], stopwords=None, show_progress=False), k=20, show_progress=False, n_threads=1)
        peer_ms.append(1000 * (time.perf_counter() - t))
    p = lambda xs: (pct(xs, 0.5), pct(xs, 0.95))
    (s50, s95), (c50, c95), (b50, b95) = p(search_ms), p(ctx_ms), p(peer_ms)
    print(f"{n:>9,} beliefs | store in MongoDB {t_store:7.1f}s ({n / t_store:,.0f}/s) | index from MongoDB {t_build:6.1f}s "
          f"({n / t_build:,.0f}/s), snapshot save {t_save:5.2f}s, start-up from snapshot {t_load:5.2f}s ({path.stat().st_size / 2**20:.0f} MiB on disk)")
    print(f"{'':>9}          build in memory: coretex {t_index_only:6.2f}s, bm25s {t_peer_build:6.2f}s (ratio {t_index_only / t_peer_build:4.2f}x) | "
          f"memory held: coretex {mem / 2**20:6.1f} MiB, bm25s {peer_mem / 2**20:6.1f} MiB (ratio {mem / peer_mem:4.2f}x)")
    print(f"{'':>9}          query p50/p95: coretex search {s50:.3f}/{s95:.3f} ms, whole context {c50:.3f}/{c95:.3f} ms | "
          f"bm25s top-20 {b50:.3f}/{b95:.3f} ms | search ratio p50 {s50 / b50:.2f}x, p95 {s95 / b95:.2f}x | "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5, help="timings per Tenure case (a busy machine's scheduler adds outliers)")
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch CPU threads for the embedder (on a busy 2-core machine a second thread waits on a busy core: "
                         "the batched vector suite ran about 4x slower with 2)")
    ap.add_argument("--vector-repeats", type=int, default=3, help="cold runs of the vector suite, ours and the peer's each")
    ap.add_argument("--no-vector", action="store_true", help="skip the vector suite (no model load)")
    ap.add_argument("--in-memory-only", action="store_true",
                    help="only the scale curve's query latency, the index built in memory (no MongoDB, no cases, no peer)")
    a = ap.parse_args()
    if a.in_memory_only:
        for n in a.sizes: bench_in_memory(n, a.queries)
        return
    import torch
    torch.set_num_threads(a.torch_threads)
    db, close = open_db(path=tempfile.mkdtemp())
    try:
        bench_cases(db, a.repeats)
        if not a.no_vector: bench_vector(db, a.vector_repeats)
        print(f"scale curve ({a.queries} queries, scope domain:code, top-20):")
        with tempfile.TemporaryDirectory() as snapshots:
            for n in a.sizes: bench_scale(db, n, a.queries, Path(snapshots))
    finally:
        close()


if __name__ == "__main__":
    main()
