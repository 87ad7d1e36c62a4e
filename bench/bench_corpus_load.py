"""Opening a production corpus, the JSON form against the packed form (35a_cache), at 10k, 30k, 100k and 300k events.
Each form is measured in its own fresh process; the corpora store their embeddings.
The corpora are generated, embedded with the deterministic 32-d bi-encoder and written once as production-format JSON
(reused from --folder); each is packed once per run (the pack time printed). The peer is the JSON form: open_corpus +
Evaluator (stored vectors to an array, BM25, registries) the first time (corpusRoot recomputed and checked) and again
(the root read from its verified-root mark), in one process. The packed form, in another: open_corpus on the folder +
Evaluator the first time (every file's BLAKE2b checked, the arrays memory-mapped) and again (the check's mark found:
sizes only). Each process then runs stage 1 on the same 50 queries. RSS: the peak after the opens, and after stage 1.
Ratios, JSON over packed: reopen time, RSS after the opens, stage-1 time per query. Then a linear fit in documents
of the packed curve, extrapolated to the 3.7M-document launch scale.
Run: python bench/bench_corpus_load.py [--sizes 10000,30000,100000,300000] [--folder /tmp/coretex-corpora]
"""
import argparse, json, os, resource, shutil, subprocess, sys, time
from pathlib import Path

LAUNCH_DOCS = 3_700_000
QUERIES = 50


def build(events: int, path: Path) -> None:
    "A generated corpus of about `events` events with stored deterministic embeddings (reused when present)."
    from coretex.evaluator.corpus import generate_corpus, save_corpus
    from coretex.evaluator.retrieval import DeterministicEmbedder, embed_corpus
    if not path.exists(): save_corpus(embed_corpus(generate_corpus(max(2, round(events / 12.23))), DeterministicEmbedder()), path)


def pack_once(path: str, out: str) -> None:
    "In a fresh process: load the JSON corpus, then time pack_corpus into `out`; one JSON line."
    from coretex.evaluator.cache import pack_corpus
    from coretex.evaluator.corpus import load_corpus
    c = load_corpus(path)
    t0 = time.perf_counter(); pack_corpus(c, out); t = time.perf_counter() - t0
    print(json.dumps({"pack": t, "pack_bytes": sum(f.stat().st_size for f in Path(out).iterdir())}))


def stage1(ev) -> float:
    "Seconds per query of stage 1 on the first 50 query ids in id order (the same queries in either form)."
    qs = [ev.corpus.by_id[i] for i in sorted(i for i in ev.corpus.by_id if i.startswith("q_"))[:QUERIES]]
    t0 = time.perf_counter()
    for q in qs: ev.fs.retrieve(q)
    return (time.perf_counter() - t0) / len(qs)


def rss_mb() -> float: return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def opens(path: str) -> dict:
    "In this process: open_corpus + Evaluator twice (the first check, then from its mark), then stage 1 on the second."
    import gc, tempfile
    os.environ["CORETEX_CACHE"] = tempfile.mkdtemp()   # no verified-root or verified-pack mark yet
    from coretex.evaluator.cache import open_corpus
    from coretex.evaluator.evaluate import Evaluator
    from coretex.evaluator.rerank import TokenOverlapReranker
    t0 = time.perf_counter(); ev = Evaluator(open_corpus(path), reranker=TokenOverlapReranker()); t_first = time.perf_counter() - t0
    del ev; gc.collect()
    t0 = time.perf_counter(); ev = Evaluator(open_corpus(path), reranker=TokenOverlapReranker()); t_again = time.perf_counter() - t0
    rss_open = rss_mb()
    return {"events": len(ev.corpus.events), "docs": len(ev.corpus.doc_ids), "first": t_first, "open": t_again, "rss_open": rss_open,
            "stage1": stage1(ev), "rss_mb": rss_mb()}


def fit(xs, ys) -> tuple:
    "Least-squares (intercept, slope)."
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(sum((x - mx) ** 2 for x in xs), 1e-12)
    return my - slope * mx, slope


def child(*args) -> dict:
    "Run this script with `args` in a fresh process; its last stdout line, parsed."
    out = subprocess.run([sys.executable, __file__, *map(str, args)], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,30000,100000,300000")
    ap.add_argument("--folder", default="/tmp/coretex-corpora")
    ap.add_argument("--pack", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--open", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.pack: return pack_once(*a.pack)
    if a.open: return print(json.dumps(opens(a.open)))
    try: sizes = [int(s) for s in a.sizes.split(",")]
    except ValueError: sys.exit(f"--sizes {a.sizes!r}: expected comma-separated event counts")
    folder = Path(a.folder); folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, n in enumerate(sizes, 1):
        path, packed = folder / f"corpus-{n}.json", folder / f"corpus-{n}.packed"
        t0 = time.perf_counter()
        build(n, path)
        shutil.rmtree(packed, ignore_errors=True)
        r = dict(child("--pack", path, packed), **child("--open", path))
        r.update({f"p_{k}": v for k, v in child("--open", packed).items()})
        rows.append(r)
        print(f"[{i}/{len(sizes)}] {r['events']} events measured in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    print(f"{'':>26} {'JSON form (peer)':-^41} {'packed form':-^47} {'JSON / packed':-^20}")
    print(f"{'events':>8} {'docs':>8} {'pack s':>8} {'first s':>7} {'again s':>7} {'open MB':>7} {'peak MB':>7} {'s1 ms':>7} "
          f"{'first s':>7} {'again s':>7} {'open MB':>7} {'peak MB':>7} {'disk MB':>7} {'s1 ms':>7} {'again':>6} {'open MB':>7} {'s1':>5}")
    for r in rows:
        print(f"{r['events']:>8} {r['docs']:>8} {r['pack']:>8.1f} {r['first']:>7.1f} {r['open']:>7.1f} {r['rss_open']:>7.0f} {r['rss_mb']:>7.0f} "
              f"{1000 * r['stage1']:>7.1f} {r['p_first']:>7.2f} {r['p_open']:>7.3f} {r['p_rss_open']:>7.0f} {r['p_rss_mb']:>7.0f} "
              f"{r['pack_bytes'] / 1e6:>7.0f} {1000 * r['p_stage1']:>7.1f} {r['open'] / r['p_open']:>5.0f}x {r['rss_open'] / r['p_rss_open']:>6.1f}x "
              f"{r['stage1'] / r['p_stage1']:>4.2f}x")
    docs = [r["docs"] for r in rows]
    def at_launch(key: str) -> float:
        b0, b1 = fit(docs, [r[key] for r in rows])
        return b0 + b1 * LAUNCH_DOCS
    est = {k: at_launch(k) for k in ("p_first", "p_rss_open", "p_rss_mb", "p_stage1", "pack_bytes", "open", "rss_open")}
    print(f"s1 ms: stage 1 per query; disk MB: the packed folder. Linear in documents, extrapolated to {LAUNCH_DOCS / 1e6:.1f}M documents: "
          f"packed first open {est['p_first']:.0f}s, again flat (at most {1000 * max(r['p_open'] for r in rows):.0f} ms at every size measured), "
          f"RSS after open {est['p_rss_open']:.0f} MB, "
          f"peak {est['p_rss_mb'] / 1024:.1f} GB, stage 1 {1000 * est['p_stage1']:.0f} ms/query, {est['pack_bytes'] / 1e9:.1f} GB on disk; "
          f"JSON again {est['open']:.0f}s, RSS after open {est['rss_open'] / 1024:.1f} GB")


if __name__ == "__main__":
    main()
