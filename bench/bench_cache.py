"""Work done once: one patch evaluation with the evaluator's caches (35a_cache) vs the same evaluator keeping nothing
(EvalCache.none(), the peer), on the differential vectors' patches in their file order (26 patches per parent, as an
epoch's queue shares parents). Prints reranker pairs issued per patch against the naive 2 packs x 2 states x pack size
x cap, time per patch both ways, and whether every report is byte-identical.
Run: python bench/bench_cache.py [--cases N]
"""
import argparse, gzip, json, time
from bench_evaluator_vectors import VEC, rebuild
from coretex.evaluator.cache import EvalCache
from coretex.evaluator.corpus import load_corpus
from coretex.evaluator.evaluate import Evaluator, evaluate_patch
from coretex.core.keccak import from_hex
from coretex.evaluator.rerank import TokenOverlapReranker


def run(ev, todo, words, si) -> tuple:
    "(report JSON, seconds, reranker pairs issued) per patch, in order."
    out = []
    for c in todo:
        pairs, t0 = ev.cache.scores.misses, time.perf_counter()
        rep = evaluate_patch(ev, words[c["parent"]], from_hex(c["patch"]), from_hex(si["blockhash"]), from_hex(si["epochSecret"]), si["epochId"])
        out.append((json.dumps(rep.to_json()), time.perf_counter() - t0, ev.cache.scores.misses - pairs))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=52, help="the first N cases (default 52: two parents' queues)")
    a = ap.parse_args()
    corpus, cases = load_corpus(VEC / "corpus.json.gz"), json.load(gzip.open(VEC / "cases.json.gz"))
    todo, si, words = cases["cases"][:a.cases], cases["seedInputs"], rebuild(cases["states"])
    cached = Evaluator(corpus, reranker=TokenOverlapReranker())
    bare = Evaluator(corpus, reranker=TokenOverlapReranker(), cache=EvalCache.none())
    p = cached.profile
    naive = 2 * 2 * p.pack_size * p.reranker_input_top_k
    on, off = run(cached, todo, words, si), run(bare, todo, words, si)
    same = sum(x[0] == y[0] for x, y in zip(on, off))
    n = len(todo)
    mean = lambda rows, i, sl=slice(None): sum(r[i] for r in rows[sl]) / len(rows[sl])
    first = [i for i, c in enumerate(todo) if c["parent"] not in {d["parent"] for d in todo[:i]}]
    later = [i for i in range(n) if i not in first]
    print(f"{n} patches on {len(first)} parents; reports byte-identical cached vs uncached: {same}/{n}")
    print(f"reranker pairs per patch, naive 2 packs x 2 states x {p.pack_size} x cap {p.reranker_input_top_k} = {naive}:")
    print(f"  uncached (peer)                  {mean(off, 2):9.0f}  ({mean(off, 2) / naive:.2f} of naive)")
    print(f"  cached, first patch on a parent  {sum(on[i][2] for i in first) / len(first):9.0f}  ({sum(on[i][2] for i in first) / len(first) / naive:.2f} of naive)")
    if later: print(f"  cached, later patches            {sum(on[i][2] for i in later) / len(later):9.0f}  ({sum(on[i][2] for i in later) / len(later) / naive:.3f} of naive)")
    print(f"  cached, all {n:<4}                 {mean(on, 2):9.0f}  ({mean(on, 2) / naive:.3f} of naive)")
    print(f"time per patch: uncached {mean(off, 1):.3f}s | cached {mean(on, 1):.3f}s | uncached/cached {mean(off, 1) / mean(on, 1):.1f}x")
    for s in cached.cache.stats(): print(f"  {s.store:<12} {s.entries:>7} entries  {s.hits:>9} hits  {s.misses:>9} misses")


if __name__ == "__main__":
    main()
