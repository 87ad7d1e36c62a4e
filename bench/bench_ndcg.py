"""nDCG@10 over many queries: coretex.evaluator.metrics.ndcg_at_k vs ranx (ndcg_burges@10, same exponential gain), same run.
Run: python bench/bench_ndcg.py [--queries 100000]
"""
import argparse, random
import numpy as np
from _util import peer_library, timed
from coretex.evaluator.metrics import ndcg_at_k


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    a = ap.parse_args()
    ranx = peer_library("ranx"); Qrels, Run, evaluate = ranx.Qrels, ranx.Run, ranx.evaluate
    rng = random.Random(0)
    qrels, runs = {}, {}
    for i in range(a.queries):
        docs = [f"d{j}" for j in rng.sample(range(200), 40)]
        qrels[f"q{i}"] = {d: rng.randint(1, 3) for d in docs[:rng.randint(1, 10)]}
        runs[f"q{i}"] = docs[5:35]
    ours, t_ours = timed(lambda: [ndcg_at_k(r, qrels[q], 10) for q, r in runs.items()])
    run = {q: {d: float(100 - i) for i, d in enumerate(r)} for q, r in runs.items()}
    (q_ranx, r_ranx), t_build = timed(lambda: (Qrels(qrels), Run(run)))
    evaluate(q_ranx, r_ranx, "ndcg_burges@10")  # compile numba kernels before timing
    peer, t_peer = timed(lambda: evaluate(q_ranx, r_ranx, "ndcg_burges@10", return_mean=False))
    diff = np.max(np.abs(np.array(peer) - np.array([ours[i] for i in np.argsort(list(runs))])))
    print(f"nDCG@10 over {a.queries} queries: coretex {a.queries / t_ours:10.0f} q/s | ranx {a.queries / t_peer:10.0f} q/s "
          f"(ratio {t_peer / t_ours:.2f}x; ranx with Qrels/Run construction {a.queries / (t_peer + t_build):.0f} q/s, "
          f"ratio {(t_peer + t_build) / t_ours:.2f}x) | max |diff| {diff:.1e}")


if __name__ == "__main__":
    main()
