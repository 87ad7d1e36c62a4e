"""One challenge of 256 responses end to end, embeddings computed and precomputed: time per stage.

Responses are paraphrase families drawn from a seeded generator (several answer clusters, off-topic
outliers, too-short answers). Stage times come from wrapping the consensus module's stage functions.
Run: python bench/bench_consensus.py [--n 256]
"""
import argparse, random, tempfile
from _util import timed, StageTimer
import coretex.consensus as C

ST = StageTimer()


def responses(n: int, seed: int = 0) -> list:
    r = random.Random(seed)
    base = [t for _, t, _, _ in C.ICE_CHALLENGE]
    out = []
    for i in range(n):
        words = r.choice(base).split()
        for _ in range(r.randint(0, 4)):  # light paraphrase: drop or duplicate a word
            j = r.randrange(len(words))
            words.insert(j, words[j]) if r.random() < 0.5 else words.pop(j) if len(words) > 3 else None
        out.append({"miner": f"m{i:04d}", "text": " ".join(words), "response_time_ms": r.randint(200, 3000),
                    "confidence": round(r.random(), 2)})
    return out


def run(rows, **kw):
    ST.spent.clear()
    res, total = timed(lambda: C.evaluate_challenge(rows, **kw))
    return res, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    a = ap.parse_args()
    rows = responses(a.n)
    emb = C._default_embedder()
    emb.encode(["warm up"])
    for name, fn in (("LOF", "lof_filter"), ("length filter", "length_filter"), ("clustering", "cluster_filter"),
                     ("scores", "individual_score"), ("heatmap", "draw_heatmap"), ("sybil", "sybil_groups")):
        setattr(C, fn, ST.wrap(name, getattr(C, fn)))
    emb.encode = ST.wrap("embedding", emb.encode)
    out = tempfile.mkdtemp()
    vecs, t_vec = timed(lambda: emb.encode([r["text"] for r in rows]))
    for label, kw in (("embeddings computed", {}), ("embeddings precomputed", {"embeddings": vecs})):
        res, total = run(rows, out_dir=out, **kw)
        print(f"{a.n} responses, {label}: {total:.2f}s (theta {res.theta:.3f}, {len(res.in_consensus)} in consensus)")
        print(ST.report(total))


if __name__ == "__main__":
    main()
