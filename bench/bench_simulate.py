"""The network simulator as a research instrument (nbs/81_simulate): --seeds x --epochs of the reference's 6 honest,
12 random and 6 hill-climb proposals an epoch, in the loop (coretex's evaluator judges every proposal an exact screen
does not decide), seeds as Ray tasks on --workers local CPUs; then the protocol's metrics table, the evaluations per
second the run sustained, and the peer.

The peer is the same simulator with its screens off (`screens=False`: every proposal the patch rules admit goes to
`evaluate_patch`), on one seed for --peer-epochs epochs, measured in the same session: the ratio of their times per
epoch, and whether the two trajectories agree on every verdict (they must: the screens are exact). Beside it, the
surrogate (nbs/81e_surrogate) calibrated from the run's own samples runs the same configuration and seeds: its
metrics table beside the in-loop one, and its time.

The default configuration is a generated corpus of 400 persons (`generate_corpus(400, distractors=6)`: 330 hidden
queries, each employer query with 0 to 6 lexical distractors, so a fix's gain is graded, not a fixed step; the stored
8 x 500 throughput run predates it and names its corpus, `generated:400`, in its file) with the token-overlap reranker, 160 persons active at the start (the fewest whose hidden queries fill a pack's quotas, and the
embedded corpus's size) and the other 240 onboarded on the reference's smooth schedule (a delta is published, and the
controller held for an epoch, each time it adds 10 hidden queries), target one advance an epoch, start threshold 500 ppm (the protocol's floor, as `coretex coordinator finalize` starts).
Sizes below 8 x 500 are extrapolated to 8 x 500 at the measured rate, and say so.
--results writes the JSON the notebook reads (per-seed measures, per-epoch series, the surrogate's calibration, provenance).
Run: nice python bench/bench_simulate.py --throughput [--seeds 8] [--epochs 500] [--workers 2] [--out DIR] [--results FILE]

Without --throughput (the default) it answers the reference's questions (bench/_questions.py): --ray-tries starts of a
local Ray with --load busy loops added, an in-loop run of --seeds x --loop-epochs at the reference's settings, then the
surrogate calibrated from it for --epochs: the table, each value with its 95% interval over the seeds, and a figure per
multi-seed run and sweep in --figures.
Run: nice python bench/bench_simulate.py [--seeds 8] [--loop-epochs 100] [--epochs 500] [--ray-tries 10] [--load 2]
A reduced call, --from-results FILE, reuses FILE's Ray tries, in-loop run and calibration (and says so) and reruns
only the surrogate's runs, sweeps and the dense-credit tables (a few minutes).
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
from dataclasses import replace
from pathlib import Path
from coretex.simulate.loop import SimConfig, simulate, read_trajectory
from coretex.simulate.runs import RunSpec, epochs_written, evaluator_for, run_seeds, seed_folder
from coretex.simulate.metrics import metrics_table, run_metrics
from coretex.simulate.headroom import HONEST_ORACLE
from coretex.simulate.surrogate import Calibration, surrogate_run

FULL_SEEDS, FULL_EPOCHS = 8, 500


def load() -> str:
    "The machine's load averages, as uptime prints them."
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def series(out, seeds) -> dict:
    "Per seed, per epoch: threshold, advances (all, honest, by strategy), major delta, honest headroom, pool: what the notebook's figures draw."
    rows = {}
    for s in seeds:
        recs = read_trajectory(seed_folder(out, s))
        rows[s] = {"threshold": [r.threshold_ppm for r in recs], "advances": [r.advances for r in recs],
                   "honest": [sum(a[1] == "honest" for a in r.advanced) for r in recs], "major": [int(r.major_delta) for r in recs],
                   "headroom": [sum(r.headroom.get(k, 0) for k in HONEST_ORACLE) for r in recs], "pool": [r.pool for r in recs],
                   "advances_by_strategy": {k: [r.by_strategy.get(k, [0, 0, 0])[2] for r in recs] for k in sorted({k for r in recs for k in r.by_strategy})}}
    return rows


def peer(cfg: SimConfig, spec: RunSpec, epochs: int) -> dict:
    "The same seed with screens on and off, each on a fresh evaluator (cold caches both): CPU and wall seconds, and whether every verdict agrees."
    from coretex.evaluator.evaluate import Evaluator
    from coretex.evaluator.rerank import make_reranker
    out, recs = {}, {}
    for name, c in (("screens", replace(cfg, epochs=epochs)), ("no_screens", replace(cfg, epochs=epochs, screens=False))):
        ev = Evaluator(evaluator_for(spec).corpus, reranker=make_reranker(spec.reranker, None))
        t, cpu = time.perf_counter(), time.process_time()
        run = simulate(ev, c)
        out |= {f"{name}_s": time.perf_counter() - t, f"{name}_cpu_s": time.process_time() - cpu, f"{name}_evaluations": run.evaluations}
        recs[name] = run.records
        if name == "screens": out["screened"] = run.screened
    key = lambda r: (r.threshold_ppm, r.next_threshold_ppm, r.advances, r.quality_attempts, r.state_root, r.outcomes, r.advanced, r.credits)
    return {"epochs": epochs, **out, "identical": [key(r) for r in recs["screens"]] == [key(r) for r in recs["no_screens"]]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=FULL_SEEDS)
    ap.add_argument("--epochs", type=int, default=FULL_EPOCHS, help="epochs (questions: of the surrogate's runs)")
    ap.add_argument("--workers", type=int, default=2, help="Ray workers (0: the seeds one by one in this process)")
    ap.add_argument("--growth", default="smooth")
    ap.add_argument("--base-persons", type=int, default=160, help="persons active at the start (0: all)")
    ap.add_argument("--corpus", default="generated:400:0:6", help="generated:<persons>:<seed>:<distractors>, embedded or a file")
    ap.add_argument("--mix", default="honest=6,random=12,hillclimb=6", help="proposals per epoch by kind")
    ap.add_argument("--peer-epochs", type=int, default=30)
    ap.add_argument("--out", help="run folder (default: a temporary one); an interrupted run resumes from it")
    ap.add_argument("--results", help="write the results JSON here")
    ap.add_argument("--throughput", action="store_true", help="the 8 x 500 in-loop run the notebook reads, timed, with its peer")
    ap.add_argument("--loop-epochs", type=int, default=100, help="questions: epochs of the in-loop run")
    ap.add_argument("--ray-tries", type=int, default=10, help="questions: local Ray starts tried")
    ap.add_argument("--load", type=int, default=2, help="questions: busy loops added during the Ray tries and the in-loop run")
    ap.add_argument("--figures", default="bench/results", help="questions: where the figures go")
    ap.add_argument("--from-results", help="questions, reduced: take the Ray tries, the in-loop run and its calibration from this "
                    "results JSON (as an earlier call wrote it) and rerun only the surrogate's tables")
    a = ap.parse_args()
    if not a.throughput:
        from _questions import questions
        return questions(a)
    out = Path(a.out or tempfile.mkdtemp(prefix="bench-simulate-"))
    mix = tuple((k, int(n)) for k, n in (p.split("=") for p in a.mix.split(",")))
    cfg = SimConfig(epochs=a.epochs, population="mixed-honest", mix=mix, growth=a.growth, base_persons=a.base_persons or None)
    spec, seeds = RunSpec(corpus=a.corpus), list(range(a.seeds))
    print(f"load before: {load()} on {os.cpu_count()} cores; {a.seeds} seeds x {a.epochs} epochs, mix {dict(cfg.mix)}, "
          f"growth {a.growth} from {a.base_persons} persons, corpus {a.corpus}, {a.workers} workers, folder {out}", flush=True)
    t0 = time.perf_counter()
    evaluator_for(spec)   # the corpus's document vectors land in the disk cache once, before the workers start
    before = epochs_written([seed_folder(out, s) for s in seeds])   # an interrupted run resumes: count only what this call runs
    summary = run_seeds(cfg, seeds, out, spec, workers=a.workers, progress=True)
    wall = time.perf_counter() - t0
    per, spent = summary["per_seed"], summary["spent"]
    ran = a.seeds * a.epochs - before
    old = json.loads(Path(a.results).read_text()) if a.results and Path(a.results).exists() else None
    if ran == 0:   # the folder held the whole run: keep the measured call's provenance, refresh the rest
        print("the folder holds the whole run already: nothing to time" + (f"; the measured call was: {old['provenance']}" if old else ""))
    evals, screened = sum(x["evaluations"] for x in spent), sum(x["screened"] for x in spent)
    busy, cpu = sum(x["seconds"] for x in spent), sum(x["cpu_seconds"] for x in spent)
    print(f"load after: {load()}")
    k = max(1, a.workers)
    if ran:
        print(f"wall {wall:.0f}s ({wall / 60:.1f} min) for {ran} epochs ({before} were in the folder already) on {a.workers} workers, "
              f"Ray start and model loads included")
        print(f"this call: {evals:,} evaluations, sustained {evals / busy:.2f}/s per worker ({evals / cpu:.2f} per CPU second), "
              f"{evals / wall:.2f}/s over the wall; {screened:,} screened")
        print(f"per epoch on one worker: {busy / ran:.3f}s of wall, {cpu / ran:.3f}s of CPU (the load shares the cores: CPU time is "
              f"what an idle core would take)")
    for s, m in zip(seeds, per):
        print(f"  seed {s}: {m['advances']} advances {m['advances_by_family']}, {m['major_deltas']} major deltas, "
              f"{m['evaluations']} evaluations, {m['screened']} screened, {m['seconds']:.0f}s")
    print(metrics_table({"in-loop": per}))
    if ran:
        idle = cpu / ran * FULL_SEEDS * FULL_EPOCHS / k
        print(f"EXTRAPOLATED from CPU time, not measured as wall time: {FULL_SEEDS} x {FULL_EPOCHS} on {k} idle cores ~ {idle / 60:.1f} min "
              f"of seeds ({cpu / ran:.3f} CPU s an epoch x {FULL_SEEDS * FULL_EPOCHS} / {k}), plus the start-up (Ray, one evaluator a worker)")
    cal = Calibration.from_json(json.loads((out / "calibration.json").read_text()))
    t, twin = time.perf_counter(), [run_metrics(surrogate_run(replace(cfg, seed=s), cal, evaluator_for(spec).corpus), replace(cfg, seed=s)) for s in seeds]
    twin_s = time.perf_counter() - t
    print(f"the surrogate on the same configuration and seeds, calibrated from these runs: {twin_s:.1f}s for {a.seeds} x {a.epochs} epochs "
          f"({busy / max(twin_s, 1e-9):,.0f}x faster than the in-loop seeds' {busy:.0f}s of worker time this call)" if ran else
          f"the surrogate on the same configuration and seeds, calibrated from these runs: {twin_s:.1f}s")
    print(metrics_table({"in-loop": per, "surrogate": twin}))
    p = peer(cfg, spec, a.peer_epochs)
    print(f"peer (seed 0, {p['epochs']} epochs, each on a fresh evaluator): screens on {p['screens_cpu_s']:.1f} CPU s "
          f"({p['screens_evaluations']} evaluations, {p['screened']} screened), screens off {p['no_screens_cpu_s']:.1f} CPU s "
          f"({p['no_screens_evaluations']} evaluations): the screens are {p['no_screens_cpu_s'] / p['screens_cpu_s']:.2f}x; "
          f"every verdict identical: {p['identical']}")
    if a.results:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        measured = {"command": "python bench/bench_simulate.py " + " ".join(sys.argv[1:]), "commit": commit,
                    "date": time.strftime("%Y-%m-%d"), "load_after": load(), "cores": os.cpu_count(), "wall_s": round(wall),
                    "workers": a.workers, "epochs_this_call": ran, "cpu_s_this_call": round(cpu),
                    "evaluations_this_call": evals, "screened_this_call": screened}
        doc = {"provenance": measured if ran or not old else old["provenance"],
               "config": cfg.to_json(), "spec": summary["spec"], "seeds": seeds, "per_seed": per, "aggregate": summary["aggregate"],
               "series": series(out, seeds), "calibration": cal.to_json(), "surrogate": twin, "surrogate_s": round(twin_s, 2), "peer": p}
        Path(a.results).write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")
        print(f"results written to {a.results}")
    if not a.out: shutil.rmtree(out)


if __name__ == "__main__":
    main()
