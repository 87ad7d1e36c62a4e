"""The network simulator's long run (nbs/81_simulate): sustained evaluations per second over an epochs x patches run,
and the evaluator's time per patch with its caches on (as the run uses it) against `EvalCache.none()` (the peer) on
the same patches.

The peer is `EvalCache.none()` with one store kept, the run's own stage-1 store (query vectors and stage-1 lists),
which depend on the corpus and the query only, never on a state. Without it every query is embedded again with the corpus's model for
each pack and state (256 encodes a patch), and that alone is the time: one such patch took 212 s on this machine
under a load of 10, all but 6 s in the encoder. What the simulation changes (the parent after every advance) is
what the other stores (views, rankings, reranker scores, cosines) reuse, so that is the comparison made.

The run: the embedded corpus (or --corpus), the token-overlap reranker, --miners miners of the four strategies,
--patches submissions per epoch, target one advance per epoch. Every evaluation the coordinator makes is recorded
(parent state, patch, blockhash, epoch secret, epoch, report, seconds); afterwards the first --uncached of them are
evaluated again by a fresh Evaluator with the peer's cache, and its reports are checked identical.
Sizes below the default are extrapolated to the default 500 x 20 at the measured sustained rate, and say so.
Run: python bench/bench_simulate.py [--epochs 500] [--patches 20] [--miners 8] [--uncached 40] [--out DIR]
"""
import argparse, sys, time
from dataclasses import replace
from coretex.evaluator.cache import EvalCache, open_corpus
from coretex.evaluator.evaluate import Evaluator, embedded_corpus, evaluate_patch
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.simulate import SimConfig, simulate, draw_run

FULL_EPOCHS, FULL_PATCHES = 500, 20


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=FULL_EPOCHS)
    ap.add_argument("--patches", type=int, default=FULL_PATCHES, help="submissions per epoch")
    ap.add_argument("--miners", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--uncached", type=int, default=40, help="evaluations re-timed by the peer (default 40)")
    ap.add_argument("--corpus", help="production-corpus JSON(.gz) or packed folder (default: the embedded corpus)")
    ap.add_argument("--out", help="folder for the trajectory and its figure")
    a = ap.parse_args()
    if min(a.epochs, a.patches, a.miners) < 1 or a.uncached < 0: ap.error("--epochs, --patches and --miners must be >= 1")
    corpus = open_corpus(a.corpus) if a.corpus else embedded_corpus()
    t0 = time.perf_counter()
    ev = Evaluator(corpus, reranker=TokenOverlapReranker())
    print(f"evaluator ready in {time.perf_counter() - t0:.1f}s ({len(corpus.events)} events, reranker {ev.reranker.name})")
    cfg = SimConfig(epochs=a.epochs, miners=a.miners, seed=a.seed, patches_per_epoch=a.patches)
    jobs = []
    run = simulate(ev, cfg, a.out, progress=True, observe=lambda *job: jobs.append(job))
    if a.out: draw_run(run.records, f"{a.out}/trajectory.png")
    subs = sum(r.submissions for r in run.records)
    print(f"run: {a.epochs} epochs x {a.patches} patches, {a.miners} miners: {subs} submissions, {run.evaluations} evaluations, "
          f"{sum(r.advances for r in run.records)} advances, {sum(r.screener_passes for r in run.records)} screener passes")
    print(f"wall {run.seconds:.1f}s: sustained {run.evaluations_per_second:.2f} evaluations/s, {subs / run.seconds:.2f} submissions/s "
          f"(the rest of the wall time is the hill-climbers' public scoring and the audit pack)")
    first, last = run.records[0], run.records[-1]
    print(f"threshold {first.threshold_ppm} -> {last.next_threshold_ppm} ppm; audit composite {first.audit_ppm} -> {last.audit_ppm} ppm")
    if (a.epochs, a.patches) != (FULL_EPOCHS, FULL_PATCHES):
        late = run.records[len(run.records) // 2:]   # the steady state: the first epochs spend the headroom and load the caches
        per_epoch = sum(r.seconds for r in late) / len(late) * FULL_PATCHES / a.patches
        done = min(a.epochs, FULL_EPOCHS)
        total = sum(r.seconds for r in run.records[:done]) * FULL_PATCHES / a.patches + per_epoch * (FULL_EPOCHS - done)
        print(f"EXTRAPOLATED, not measured: {FULL_EPOCHS} x {FULL_PATCHES} ~ {total / 60:.1f} min (this run's epochs scaled to "
              f"{FULL_PATCHES} patches, then its later half's {per_epoch:.2f}s per epoch for the remaining {FULL_EPOCHS - done})")
    cached = [j[-1] for j in jobs]
    if not cached: return print("no evaluations to time")
    todo = jobs[:a.uncached]
    ev0 = Evaluator(corpus, reranker=TokenOverlapReranker(), embedder=ev.fs.embedder, cache=replace(EvalCache.none(), first_stage=ev.cache.first_stage))
    secs, same = [], True
    for k, (words, data, block, secret, e, rep, _) in enumerate(todo, 1):
        t = time.perf_counter()
        again = evaluate_patch(ev0, words, data, block, secret, e)
        secs.append(time.perf_counter() - t)
        same &= again.to_json() == rep.to_json()
        print(f"uncached: {k}/{len(todo)}", file=sys.stderr, flush=True)
    c = sum(j[-1] for j in todo) / len(todo)
    u = sum(secs) / len(secs)
    print(f"evaluator per patch over all {len(cached)} evaluations, caches on: {sum(cached) / len(cached):.3f}s")
    print(f"on the first {len(todo)}: caches on {c:.3f}s, EvalCache.none() keeping stage 1 (peer) {u:.3f}s: caching is {u / c:.1f}x; "
          f"reports identical: {same}")


if __name__ == "__main__":
    main()
