"""The reference's questions, answered by coretex's simulator with their spread over seeds (bench/bench_simulate.py's
default): Ray's start on a loaded machine, an in-loop run at the reference's settings, and the surrogate calibrated
from it for the long horizon, the sweeps and the scenarios."""
import json, os, subprocess, sys, tempfile, time, uuid
from dataclasses import replace
from pathlib import Path
from coretex.simulate.loop import SimConfig, read_trajectory
from coretex.simulate.runs import RunSpec, run_seeds, seed_folder, start_workers, corpus_of
from coretex.simulate.metrics import draw_seeds, interval, reference_metrics, run_metrics, seed_instability
from coretex.simulate.surrogate import Calibration, surrogate_run
from coretex.simulate.tiers import tiered_run

SPEC_MAX_SHARE, SPEC_GINI = 0.0947, 0.5743   # the reducer spec's measured figures over 100 tiered miners x 50 epochs
CAP, GINI_TARGET = 0.25, 0.70                 # its targets


def load() -> str: return " ".join(f"{x:.2f}" for x in os.getloadavg())


def marked(mark: str) -> list:
    "Processes whose environment carries `mark`: every process a Ray started from this one inherits it."
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if mark.encode() in (d / "environ").read_bytes(): out.append(int(d.name))
            except OSError: pass
    return out


def busy(n: int) -> list:
    "n busy-loop processes at nice 10 (the machine loaded on purpose, beside whatever else runs on it)."
    return [subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def ray_tries(tries: int, workers: int) -> list:
    "Start a local Ray `tries` times as `--workers` does, run one task, shut it down: (started, seconds, load, left) each."
    from tqdm import tqdm
    rows = []
    for i in range(tries):
        mark = f"coretex-bench-{uuid.uuid4().hex}"
        os.environ["CORETEX_BENCH_MARK"] = mark
        t = time.perf_counter()
        ray, started = start_workers(workers, None, tqdm(disable=True))
        up = time.perf_counter() - t
        ok = bool(ray) and ray.get(ray.remote(lambda: 1).remote()) == 1
        if started: ray.shutdown()
        deadline = time.time() + 15
        while marked(mark) and time.time() < deadline: time.sleep(0.5)
        rows.append({"started": ok, "seconds": round(up, 1), "load": load(), "left": len(marked(mark))})
        print(f"  Ray try {i + 1}: {'started' if ok else 'FELL BACK'} in {up:.1f}s, load {rows[-1]['load']}, "
              f"{rows[-1]['left']} Ray processes left", flush=True)
    os.environ.pop("CORETEX_BENCH_MARK", None)
    return rows


def ci(values: list, digits: int = 3) -> str:
    "mean [95% interval] (sd) of one measure over seeds."
    iv = interval(values)
    f = lambda v: f"{v:,.{digits}f}"
    return f"{f(iv['mean'])} [{f(iv['lo'])}, {f(iv['hi'])}] (sd {f(iv['sd'])})"


def surrogate_seeds(cfg: SimConfig, cal: Calibration, corpus, seeds: list) -> list:
    return [surrogate_run(replace(cfg, seed=s), cal, corpus) for s in seeds]


def questions(a) -> None:
    out = Path(a.out or tempfile.mkdtemp(prefix="bench-questions-"))
    res = Path(a.figures); res.mkdir(parents=True, exist_ok=True)
    seeds, lines, doc = list(range(a.seeds)), [], {}
    say = lambda s="": (print(s, flush=True), lines.append(s))
    prev = json.loads(Path(a.from_results).read_text()) if a.from_results else None
    if prev:   # a reduced run: the Ray tries, the in-loop run and its calibration as that file measured them
        say(f"load before: {load()} on {os.cpu_count()} cores")
        say(f"REUSED, not rerun: the Ray tries and the in-loop run of the results file written at commit {prev['commit']} ({prev['date']}: "
            f"`{prev['command']}`); only the surrogate's runs, sweeps and the dense-credit tables below are this call's")
        for line in prev["table"][:prev["table"].index("")]: say("  " + line)
        tries, cfg, seeds = prev["ray_tries"], SimConfig.from_json(prev["loop"]["config"]), prev["loop"]["seeds"]
        summary, loop_s = {"per_seed": prev["loop"]["per_seed"], "reference": prev["loop"]["reference"]}, prev["loop"]["wall_s"]
        return answers(a, say, lines, res, seeds, tries, cfg, summary, loop_s, Calibration.from_json(prev["calibration"]))
    say(f"load before: {load()} on {os.cpu_count()} cores; {a.load} busy loops (nice 10) added for the Ray tries and the in-loop run")
    loaders = busy(a.load)
    try:
        say(f"Ray: {a.ray_tries} starts of a local Ray with {a.workers} workers, as `--workers {a.workers}` starts it")
        tries = ray_tries(a.ray_tries, a.workers)
        lines += [f"  try {i + 1}: {'started' if r['started'] else 'fell back'} in {r['seconds']}s at load {r['load']}, "
                  f"{r['left']} left" for i, r in enumerate(tries)]
        cfg = SimConfig(epochs=a.loop_epochs, population="mixed-honest", growth="smooth", base_persons=160, start_threshold_ppm=5000)
        spec = RunSpec(corpus=a.corpus)
        say(f"in the loop: {a.seeds} seeds x {a.loop_epochs} epochs, 6 honest + 12 random + 6 hill-climb proposals an epoch, "
            f"{a.corpus} from 160 persons, smooth growth, start 5,000 ppm, target 1, {a.workers} Ray workers; load {load()}")
        t = time.perf_counter()
        summary = run_seeds(cfg, seeds, out, spec, workers=a.workers, progress=True)
        loop_s = time.perf_counter() - t
        say(f"  {loop_s:.0f}s wall (Ray start and model loads included); load after {load()}")
    finally:
        for p in loaders: p.kill(); p.wait()
    loop_recs = [read_trajectory(seed_folder(out, s)) for s in seeds]
    draw_seeds({f"in the loop, {a.loop_epochs} epochs": loop_recs}, res / "simulate-questions-loop.png")
    answers(a, say, lines, res, seeds, tries, cfg, summary, loop_s, Calibration.from_json(json.loads((out / "calibration.json").read_text())))


def answers(a, say, lines, res, seeds, tries, cfg, summary, loop_s, cal) -> None:
    "The tables from the in-loop run's measures and its calibration: the questions, the sweeps, the scenarios, dense credit."
    per, ref = summary["per_seed"], summary["reference"]
    loop_epochs = cfg.epochs
    corpus = corpus_of(a.corpus)
    long = replace(cfg, epochs=a.epochs)
    t = time.perf_counter()
    sur = surrogate_seeds(long, cal, corpus, seeds)
    sref = [reference_metrics(r, replace(long, seed=s)) for s, r in zip(seeds, sur)]
    smet = [run_metrics(r, replace(long, seed=s)) for s, r in zip(seeds, sur)]
    col = lambda ms, k: [m[k] for m in ms]
    rows = [
        ("honest advances per epoch (reference: honest only)", ci(col(ref, "honest_advances_per_epoch")), ci(col(sref, "honest_advances_per_epoch"))),
        ("all advances per epoch (coretex)", ci(col(per, "mean_advances_per_epoch")), ci(col(smet, "mean_advances_per_epoch"))),
        ("longest honest drought, epochs", ci(col(ref, "honest_drought"), 1), ci(col(sref, "honest_drought"), 1)),
        ("family entropy over the reference's 3 families", ci(col(ref, "family_entropy_3")), ci(col(sref, "family_entropy_3"))),
        ("family entropy over coretex's 8 levers", ci(col(per, "family_entropy")), ci(col(smet, "family_entropy"))),
        ("oscillation (threshold direction changes)", ci(col(ref, "oscillation"), 1), ci(col(sref, "oscillation"), 1)),
        ("plateau risk (next = ceiling while advancing > target)", ci(col(ref, "plateau_risk"), 1), ci(col(sref, "plateau_risk"), 1)),
        ("baseline-recompute lag, epochs (mean over deltas)", ci(col(ref, "baseline_lag_mean"), 1), ci(col(sref, "baseline_lag_mean"), 1)),
        ("epochs at the floor", ci(col(per, "epochs_at_floor"), 1), ci(col(smet, "epochs_at_floor"), 1)),
        ("random acceptance (gate: <= 1%)", ci(col(per, "random_acceptance"), 4), "-"),
        ("hill-climb acceptance (gate: <= 1%)", ci(col(per, "hillclimb_acceptance"), 4), "-"),
        ("seed instability (CV of the final threshold)", f"{seed_instability(col(ref, 'final_threshold_ppm')):.3f}",
         f"{seed_instability(col(sref, 'final_threshold_ppm')):.3f}"),
    ]
    say()
    say(f"| question (the reference's definition) | in the loop, {len(seeds)} x {loop_epochs} | surrogate, {len(seeds)} x {a.epochs} |")
    say("|---|---|---|")
    for q, x, y in rows: say(f"| {q} | {x} | {y} |")
    say("values: mean [95% t-interval of the mean] (sample sd) over the seeds")
    gains = sorted(g for c in cal.curves.values() for g in c.gains)
    if gains:
        say(f"gains the loop measured (both packs accepted), every lever: {len(gains)} from {len(set(gains))} distinct values, "
            f"{gains[0]:,} to {gains[-1]:,} ppm, median {gains[len(gains) // 2]:,}")

    def sweep(name, points, base):
        "Each point's surrogate seeds: the table's rows and the figure."
        runs = {label: surrogate_seeds(replace(base, **kw), cal, corpus, seeds) for label, kw in points}
        draw_seeds(runs, res / f"simulate-questions-{name.replace(' ', '-')}.png")
        say()
        say(f"| {name}: point | mean threshold, first 50 epochs | epochs at the floor | honest advances per epoch | final threshold |")
        say("|---|---|---|---|---|")
        for label, recs in runs.items():
            (kw,) = [k for l, k in points if l == label]
            c = replace(base, **kw)
            first = [sum(r.threshold_ppm for r in x[:50]) / 50 for x in recs]
            m = [run_metrics(x, replace(c, seed=s)) for s, x in zip(seeds, recs)]
            rr = [reference_metrics(x, replace(c, seed=s)) for s, x in zip(seeds, recs)]
            say(f"| {label} | {ci(first, 0)} | {ci(col(m, 'epochs_at_floor'), 1)} | {ci(col(rr, 'honest_advances_per_epoch'))} | "
                f"{ci(col(rr, 'final_threshold_ppm'), 0)} |")
        return runs

    d = sweep("decay ratio", [(f"decay {x}", {"decay_ratio": x}) for x in (0.7, 0.85, 0.95)], long)
    firsts = {k: [r.threshold_ppm for r in v[0][:30]] for k, v in d.items()}
    say(f"the decay ratio moves the trajectory: {len({tuple(v) for v in firsts.values()})} distinct threshold paths of 3 (seed 0, first 30 epochs)")
    sweep("controller shape", [("C0: ramp 1.5, decay 0.85, x4 (defaults), target 2", {"target_advances": 2}),
                               ("C3: ramp 1.1, decay 0.8, x1, target 2", {"target_advances": 2, "ramp_up_max_ratio": 1.1, "decay_ratio": 0.8,
                                                                          "quality_high_multiple": 1})], long)
    sweep("mix", [(f"{h} honest + 12 random + 6 hill-climb", {"mix": (("honest", h), ("random", 12), ("hillclimb", 6))}) for h in (3, 6, 12)], long)
    sweep("families", [("all 8 levers", {}), ("temporal only", {"families": ("temporal", "temporal2")}),
                       ("no abstention", {"families": ("temporal", "temporal2", "relation", "mixed", "conflict", "evidence", "anchor")})], long)
    sweep("scenarios", [("finite headroom, replenished (smooth growth)", {}),
                        ("one family exhausted (static: abstention's one atom, then temporal only)", {"growth": "static", "base_persons": None}),
                        ("bursts (strong-burst population, burst growth)", {"population": "strong-burst", "growth": "burst"}),
                        ("growth at an absolute rate (1 person an epoch from 160: all 400 by epoch 240, whatever the run's length)",
                         {"growth": "absolute", "growth_rate": 1.0})], long)
    say()
    say("| growth, comparable across lengths? | honest advances in epochs 1-100, a 100-epoch run | the same epochs of a 500-epoch run |")
    say("|---|---|---|")
    for g in ("smooth", "absolute"):
        n = {e: surrogate_seeds(replace(cfg, epochs=e, growth=g), cal, corpus, seeds) for e in (100, 500)}
        adv = {e: [sum(sum(x[1] == "honest" for x in r.advanced) for r in recs[:100]) for recs in n[e]] for e in n}
        say(f"| {g} | {ci(adv[100], 1)} | {ci(adv[500], 1)} |")
    dense = replace(cfg, epochs=50, population="tiers", miners=100, mix=(("honest", 100),), growth="static", base_persons=None)
    drecs = surrogate_seeds(dense, cal, corpus, seeds)
    dm = [run_metrics(r, replace(dense, seed=s)) for s, r in zip(seeds, drecs)]
    draw_seeds({"dense credit: 100 tiered miners, 100 proposals an epoch": drecs}, res / "simulate-questions-dense.png")
    busy_share = [m["max_miner_share_busy"] for m in dm if m["max_miner_share_busy"] is not None]
    say()
    say("| dense credit: 100 tiered miners (50/30/20 weak/medium/strong), 100 honest proposals an epoch, 50 epochs, surrogate | coretex | reducer spec |")
    say("|---|---|---|")
    say(f"| credited miners per epoch | {ci(col(dm, 'credited_events_per_epoch'))} | (every epoch dense) |")
    say(f"| max miner share of an epoch, epochs with >= 4 credited (cap {CAP:.0%}) | "
        f"{ci(busy_share) if len(busy_share) > 1 else busy_share} | {SPEC_MAX_SHARE:.2%} |")
    say(f"| max miner share of any credited epoch | {ci(col(dm, 'max_miner_share'))} | - |")
    say(f"| Gini of credits over the 50 epochs (target < {GINI_TARGET}) | {ci(col(dm, 'gini_50'))} | {SPEC_GINI} |")
    say(f"| Gini if skill were equal (scarcity's floor) | {ci(col(dm, 'gini_50_equal_skill'))} | - |")
    then, launch = tiered_run(multiplier_bps=15_000), tiered_run()
    gate = [tiered_run(seed=s) for s in range(1, 9)]
    say()
    say("| the spec's own setting (reference Phase 6 gate 7: 100 miners 40/40/20 weak/medium/strong, every screener pass "
        "credited at 1/2/5, 50 epochs, xorshift32), on coretex's eligibility ledger and bonus leaves (nbs/81g_tiers) | coretex | reducer spec |")
    say("|---|---|---|")
    say(f"| max combined-lane share, seed 12345, merge multiplier 1.5x (the gate's then) | {then['max_share']:.2%} | {SPEC_MAX_SHARE:.2%} |")
    say(f"| Gini of the 50 epochs' screener credits, seed 12345 | {then['gini']:.4f} | {SPEC_GINI} |")
    say(f"| max share at the launch multiplier 1.0x, seed 12345 | {launch['max_share']:.2%} | - |")
    say(f"| max share, 1.0x, seeds 1-8 | {ci([r['max_share'] for r in gate], 4)} | - |")
    say(f"| Gini, seeds 1-8 | {ci([r['gini'] for r in gate], 4)} | - |")
    say(f"the spec's figures credit every screener pass ({launch['issuances_per_epoch']:.0f} issuances an epoch, all 100 miners); "
        "under the launch rules only state advances are credited, about one miner an epoch in coretex's market above, "
        "so its epochs' max share is 1 and its Gini higher; coretex's tiers are 50/30/20")
    sur_s = time.perf_counter() - t
    say()
    say(f"surrogate runs and sweeps: {sur_s:.0f}s")
    say(f"load after: {load()}")
    doc = {"command": "python bench/bench_simulate.py " + " ".join(sys.argv[1:]),
           "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cores": os.cpu_count(), "ray_tries": tries,
           "loop": {"config": cfg.to_json(), "seeds": seeds, "per_seed": per, "reference": ref, "wall_s": round(loop_s)},
           "surrogate": {"epochs": a.epochs, "reference": sref, "per_seed": smet}, "dense": dm, "calibration": cal.to_json(),
           "spec_setting": {"then": {k: then[k] for k in ("max_share", "gini")}, "launch": {k: launch[k] for k in ("max_share", "gini")},
                            "seeds_1_8": [{k: r[k] for k in ("max_share", "gini")} for r in gate]},
           "table": lines}
    if a.results: Path(a.results).write_text(json.dumps(doc, indent=1) + "\n"); print(f"results written to {a.results}")
