"""Qwen3 reranker throughput: coretex's length-bucketed batches vs one pair per forward pass (the naive peer).

Uses the pinned Qwen/Qwen3-Reranker-0.6B when its weights are on disk (or --model DIR), else a tiny random
Qwen3 built from a config with the real Qwen tokenizer (the code path is the same, the numbers are not the
production model's). Float32 on the CPU, as the network's reranker runner scores; for the real 0.6B shape against
the machine's FLOPs bound see bench_production_models.py.
Run: python bench/bench_rerank.py [--model DIR|qwen] [--pairs 256]
"""
import argparse, random, tempfile
from _util import timed
from coretex.evaluator.corpus import generate_corpus
from coretex.evaluator.rerank import QwenReranker, RerankerUnavailable, build_tiny_qwen3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen")
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8, help="prompts per forward (the runner's RERANKER_INNER_BATCH)")
    a = ap.parse_args()
    try: rr = QwenReranker(batch_size=a.batch) if a.model == "qwen" else QwenReranker(a.model, batch_size=a.batch)
    except RerankerUnavailable as e:
        print(f"{e}\nfalling back to a tiny random Qwen3 (same code path, not the production model's speed)")
        rr = QwenReranker(build_tiny_qwen3(tempfile.mkdtemp(), hidden=256, layers=4), batch_size=a.batch)
    c = generate_corpus(200)
    r = random.Random(0)
    docs = [c.docs[d] for d in c.doc_ids]
    docs = [" ".join([x] * r.randint(1, 6)) for x in r.sample(docs, a.pairs)]  # lengths vary, as candidate lists do
    q = "Where does Ana Moreno work now?"
    rr.score(q, docs[:4])  # warm up
    batched, t_b = timed(lambda: rr.score(q, docs))
    one, t_o = timed(lambda: [rr.score(q, [d])[0] for d in docs])
    diff = max(abs(x - y) for x, y in zip(batched, one))
    print(f"{rr.name} on the CPU: bucketed batches of {a.batch}: {a.pairs / t_b:8.1f} pairs/s | one pair per pass: "
          f"{a.pairs / t_o:8.1f} pairs/s | ratio {t_o / t_b:.1f}x | max score difference {diff:.1e}")


if __name__ == "__main__":
    main()
