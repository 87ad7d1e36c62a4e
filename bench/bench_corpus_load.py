"""Opening a production-format corpus (embeddings stored in the file): the growth curve at 10k, 30k, 100k and 300k events
(generated, embedded with the deterministic 32-d bi-encoder, written once as JSON). Each size opens in a fresh process:
open_corpus + Evaluator (stored vectors to an array, BM25, registries) the first time (corpusRoot recomputed and checked)
and again (the root read from the verified-root mark of the same bytes); wall times, peak RSS, stage-1 latency per query. The peer is the same file's bare json.loads in the same process, the floor of any
loader that keeps this file format. Then a linear fit in documents, extrapolated to the 3.7M-document launch scale.
Run: python bench/bench_corpus_load.py [--sizes 10000,30000,100000,300000] [--folder /tmp/coretex-corpora]
"""
import argparse, json, os, resource, subprocess, sys, time
from pathlib import Path

LAUNCH_DOCS = 3_700_000


def build(events: int, path: Path) -> None:
    "A generated corpus of about `events` events with stored deterministic embeddings (reused when present)."
    from coretex.corpus import generate_corpus, save_corpus
    from coretex.retrieval import DeterministicEmbedder, embed_corpus
    if not path.exists(): save_corpus(embed_corpus(generate_corpus(max(2, round(events / 12.23))), DeterministicEmbedder()), path)


def open_once(path: str) -> None:
    "In a fresh process: the bare JSON parse, then the evaluator's first open (corpusRoot checked) and its reopen; one JSON line."
    import gc, tempfile
    os.environ["CORETEX_CACHE"] = tempfile.mkdtemp()   # no verified-root mark yet
    from coretex.cache import open_corpus
    from coretex.evaluate import Evaluator
    from coretex.rerank import TokenOverlapReranker
    t0 = time.perf_counter(); json.loads(Path(path).read_bytes()); t_json = time.perf_counter() - t0
    t0 = time.perf_counter(); ev = Evaluator(open_corpus(path), reranker=TokenOverlapReranker()); t_first = time.perf_counter() - t0
    del ev; gc.collect()
    t0 = time.perf_counter(); ev = Evaluator(open_corpus(path), reranker=TokenOverlapReranker()); t_again = time.perf_counter() - t0
    qs = ev.corpus.queries()[:50]
    t0 = time.perf_counter()
    for q in qs: ev.fs.retrieve(q)
    t_q = (time.perf_counter() - t0) / len(qs)
    print(json.dumps({"events": len(ev.corpus.events), "docs": len(ev.corpus.doc_ids), "json": t_json, "first": t_first, "open": t_again,
                      "stage1": t_q, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "bytes": os.path.getsize(path)}))


def fit(xs, ys) -> tuple:
    "Least-squares (intercept, slope)."
    n, mx, my = len(xs), sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(sum((x - mx) ** 2 for x in xs), 1e-12)
    return my - slope * mx, slope


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,30000,100000,300000")
    ap.add_argument("--folder", default="/tmp/coretex-corpora")
    ap.add_argument("--open", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.open: return open_once(a.open)
    folder = Path(a.folder); folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in map(int, a.sizes.split(",")):
        path = folder / f"corpus-{n}.json"
        build(n, path)
        out = subprocess.run([sys.executable, __file__, "--open", str(path)], capture_output=True, text=True, check=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    print(f"{'events':>8} {'docs':>8} {'file MB':>8} {'json.loads s':>12} {'first open s':>12} {'reopen s':>8} {'reopen/json':>11} "
          f"{'peak RSS MB':>11} {'stage-1 ms/query':>16}")
    for r in rows:
        print(f"{r['events']:>8} {r['docs']:>8} {r['bytes'] / 1e6:>8.0f} {r['json']:>12.1f} {r['first']:>12.1f} {r['open']:>8.1f} "
              f"{r['open'] / r['json']:>11.1f} {r['rss_mb']:>11.0f} {1000 * r['stage1']:>16.1f}")
    docs = [r["docs"] for r in rows]
    est = {}
    for k in ("first", "open", "rss_mb", "stage1"):
        b0, b1 = fit(docs, [r[k] for r in rows])
        est[k] = b0 + b1 * LAUNCH_DOCS
    print(f"linear in documents, extrapolated to {LAUNCH_DOCS / 1e6:.1f}M documents: first open {est['first']:.0f}s, reopen {est['open']:.0f}s, "
          f"peak RSS {est['rss_mb'] / 1024:.1f} GB, stage 1 {1000 * est['stage1']:.0f} ms/query")


if __name__ == "__main__":
    main()
