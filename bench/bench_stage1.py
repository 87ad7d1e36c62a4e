"""Stage-1 retrieval at corpus scale: BM25 top-100 and dense top-k, each against named peers in the same run.

BM25: coretex.evaluator.retrieval.BM25Index (sparse matrix product) vs bm25s and rank-bm25 (BM25Okapi), top-100 over
the documents of a generated corpus. Dense: numpy matrix-vector + argpartition (coretex.evaluator.retrieval.top_k) vs
faiss-cpu IndexFlatIP, top-100 over N x 384 normalised float32 vectors.
Run: python bench/bench_stage1.py [--docs 300000] [--queries 200]
"""
import argparse, time
import numpy as np
from _util import peer_library, timed
from coretex.evaluator.corpus import generate_corpus
from coretex.evaluator.retrieval import BM25Index, tokenize, top_k


def corpus_texts(n_docs: int):
    "At least n_docs document texts and the queries of a generated corpus."
    c = generate_corpus(max(2, n_docs // 7 + 1))
    return [c.docs[d] for d in c.doc_ids][:n_docs], [e["queryText"] for e in c.queries() if e["queryText"]]


def bench_bm25(texts, queries, k):
    import bm25s
    from rank_bm25 import BM25Okapi
    ours, t_ours_idx = timed(lambda: BM25Index(texts))
    peer = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    _, t_peer_idx = timed(lambda: peer.index([tokenize(t) for t in texts], show_progress=False))
    print(f"BM25 index build over {len(texts)} docs: coretex {t_ours_idx:.1f}s, bm25s {t_peer_idx:.1f}s")
    _, t_ours = timed(lambda: [top_k(ours.scores(q), k) for q in queries])
    _, t_peer = timed(lambda: peer.retrieve([tokenize(q) for q in queries], k=k, show_progress=False, n_threads=1))
    # generated texts tie often, so top-10 *sets* may differ by tie order; the top-10 *scores* must agree
    agree = max(float(np.max(np.abs(np.sort(ours.scores(q))[-10:] - np.sort(peer.get_scores(tokenize(q)))[-10:] * (1.2 + 1))))
                for q in queries[:20])
    n_rank = max(3, len(queries) // 20)
    okapi = BM25Okapi([tokenize(t) for t in texts], k1=1.2, b=0.75)
    _, t_okapi = timed(lambda: [np.argsort(-okapi.get_scores(tokenize(q)))[:k] for q in queries[:n_rank]])
    qps, qps_peer, qps_okapi = len(queries) / t_ours, len(queries) / t_peer, n_rank / t_okapi
    print(f"BM25 top-{k}: coretex {qps:8.1f} q/s | bm25s {qps_peer:8.1f} q/s (ratio {qps / qps_peer:.2f}x) | "
          f"rank-bm25 {qps_okapi:8.2f} q/s (ratio {qps / qps_okapi:.0f}x) | max top-10 score difference vs bm25s {agree:.1e}")


def bench_dense(n, queries, k, dim=384):
    faiss = peer_library("faiss")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, dim), dtype=np.float32); x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = rng.standard_normal((queries, dim), dtype=np.float32); q /= np.linalg.norm(q, axis=1, keepdims=True)
    faiss.omp_set_num_threads(1)  # one query at a time, one thread each, as the evaluator runs
    index = faiss.IndexFlatIP(dim); index.add(x)
    _, t_ours = timed(lambda: [top_k(x @ v, k) for v in q])
    _, t_peer = timed(lambda: [index.search(v[None], k) for v in q])
    same = np.mean([set(top_k(x @ v, k)) == set(index.search(v[None], k)[1][0]) for v in q[:20]])
    print(f"dense top-{k} over {n} x {dim}, one query at a time: coretex {queries / t_ours:8.1f} q/s | faiss IndexFlatIP "
          f"{queries / t_peer:8.1f} q/s (ratio {t_peer / t_ours:.2f}x) | identical top-{k} sets {same:.2f}")
    packs = [q[i:i + 64] for i in range(0, len(q), 64)]  # the evaluator scores a pack of 64 queries in one matrix product
    _, t_ours_b = timed(lambda: [[top_k(col, k) for col in (x @ p.T).T] for p in packs])
    _, t_peer_b = timed(lambda: [index.search(p, k) for p in packs])
    print(f"dense top-{k} over {n} x {dim}, packs of 64 queries: coretex {queries / t_ours_b:8.1f} q/s | faiss IndexFlatIP "
          f"{queries / t_peer_b:8.1f} q/s (ratio {t_peer_b / t_ours_b:.2f}x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=300_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=100)
    a = ap.parse_args()
    t0 = time.perf_counter()
    texts, queries = corpus_texts(a.docs)
    print(f"generated {len(texts)} documents in {time.perf_counter() - t0:.1f}s")
    bench_bm25(texts, queries[:a.queries], a.k)
    bench_dense(a.docs, a.queries, a.k)


if __name__ == "__main__":
    main()
