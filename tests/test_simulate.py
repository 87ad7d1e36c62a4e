"The network simulator (nbs/81_simulate): determinism, the reducer/controller wiring, the copycat, the trajectory on disk, the CLI."
import json, subprocess
from dataclasses import replace
import pytest
from coretex.economy.difficulty import next_min_improvement_ppm
from coretex.evaluator.evaluate import Evaluator
from coretex.core.patch import decode_patch
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.simulate import SimConfig, Simulation, run_epoch, simulate, read_trajectory, STRATEGIES
from coretex.core.keccak import to_hex
from coretex.core.state import GENESIS, state_root

CFG = SimConfig(epochs=3, miners=4, seed=5, patches_per_epoch=5)


@pytest.fixture(scope="module")
def ev(): return Evaluator(reranker=TokenOverlapReranker())


@pytest.fixture(scope="module")
def run(ev, tmp_path_factory):
    "One short run, written to a folder, with every submission kept."
    out, subs = tmp_path_factory.mktemp("sim"), []
    sim = Simulation(ev, CFG)
    submit = sim.submit
    def spy(m, e, n, data, work):
        s = submit(m, e, n, data, work)
        subs.append((e, m.strategy, data, s))
        return s
    sim.submit = spy
    records = [run_epoch(sim) for _ in range(CFG.epochs)]
    return out, records, subs, simulate(ev, CFG, out)


def timeless(records): return [replace(r, seconds=0) for r in records]


def test_same_seed_same_run(run):
    "The seed fixes the run: two runs of one configuration agree on every epoch (only the wall time differs)."
    _, records, _, again = run
    assert timeless(records) == timeless(again.records)


def test_another_seed_another_run(ev):
    "A different seed draws other patches: the coordinator's verdict cache (keyed by dedupKey) holds other submissions."
    a, b = Simulation(ev, replace(CFG, seed=6)), Simulation(ev, replace(CFG, seed=7))
    run_epoch(a); run_epoch(b)
    assert a.verdicts and b.verdicts and set(a.verdicts) != set(b.verdicts)


def test_threshold_follows_controller(run):
    "Epoch e+1 runs at next_min_improvement_ppm of epoch e's threshold, advances, target and screener passes."
    _, records, _, _ = run
    assert records[0].threshold_ppm == CFG.start_threshold_ppm
    for prev, cur in zip(records, records[1:]):
        expect = next_min_improvement_ppm(prev.threshold_ppm, prev.advances, CFG.target_advances, prev.screener_passes).next
        assert prev.next_threshold_ppm == expect and cur.threshold_ppm == expect


def test_counts_match_submissions(run):
    "Each record's advances and screener passes are its submissions' outcomes, and an advance moves the live root."
    _, records, subs, _ = run
    for r in records:
        mine = [s for e, _, _, s in subs if e == r.epoch]
        assert r.advances == sum(s.outcome == "ADVANCE" for s in mine)
        assert r.screener_passes == sum(s.outcome in ("ADVANCE", "SCREENER_PASS") for s in mine)
        assert sum(s.work_units_bps for s in mine) == sum(r.work_units_by_strategy.values())
    roots = [to_hex(state_root(GENESIS))] + [r.state_root for r in records]
    assert all((before != r.state_root) == (r.advances > 0) for before, r in zip(roots, records))


def test_copycat_never_earns_for_a_duplicate(ev):
    "A copycat resubmitting another miner's accepted patch gets the cached verdict (same parent) or E05 (its writes already live): no work."
    cfg = SimConfig(epochs=3, miners=2, strategies=("spam", "copycat"), seed=2, patches_per_epoch=6)
    sim, copies = Simulation(ev, cfg), []
    submit = sim.submit
    def spy(m, e, n, data, work):
        live = sim.words
        s = submit(m, e, n, data, work)
        if m.strategy == "copycat": copies.append((live, data, s))
        return s
    sim.submit = spy
    for _ in range(cfg.epochs): run_epoch(sim)
    dup = [s for live, data, s in copies
           if s.outcome == "DUPLICATE" or all(live[i] == w for i, w in zip(decode_patch(data).indices, decode_patch(data).new_words))]
    assert dup, "the run should contain duplicates for the check to mean anything"
    assert all(s.work_units_bps == 0 and s.outcome in ("DUPLICATE", "REFUSED") for s in dup)


def test_trajectory_written_per_epoch(ev, tmp_path):
    "trajectory.jsonl holds one line per finished epoch as soon as it closes, and reads back as the run's records."
    import coretex.simulate as S
    seen = []
    write = S.Trajectory.write
    def spy(self, rec, point):
        write(self, rec, point)
        seen.append(len((tmp_path / "trajectory.jsonl").read_text().splitlines()))
    S.Trajectory.write = spy
    try: run = simulate(ev, replace(CFG, epochs=3), tmp_path)
    finally: S.Trajectory.write = write
    assert seen == [1, 2, 3]
    assert read_trajectory(tmp_path) == run.records
    assert json.loads((tmp_path / "config.json").read_text())["epochs"] == 3


def test_cli_simulate_runs(tmp_path):
    "The installed `coretex simulate --epochs 2 --miners 3` runs, prints its summary and writes its files."
    r = subprocess.run(["coretex", "simulate", "--epochs", "2", "--miners", "3", "--out", str(tmp_path), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["epochs"] == 2 and set(summary["rewards_by_strategy"]) == set(STRATEGIES[:3])
    assert len(read_trajectory(tmp_path)) == 2 and (tmp_path / "trajectory.png").stat().st_size > 0


def test_cli_refuses_bad_strategy():
    r = subprocess.run(["coretex", "simulate", "--strategies", "greedy,lucky"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "lucky" in r.stderr


def test_resume_continues_the_same_run(ev, run, tmp_path):
    "A run stopped after two epochs and resumed for a third (with a stray line past its checkpoint) equals the uninterrupted run."
    _, records, _, _ = run
    simulate(ev, replace(CFG, epochs=2), tmp_path)
    with open(tmp_path / "trajectory.jsonl", "a") as f: f.write(json.dumps(records[2].to_json()) + "\n")   # a crash after the line, before the checkpoint
    resumed = simulate(ev, CFG, tmp_path, resume=True)
    assert timeless(resumed.records) == timeless(records) == timeless(read_trajectory(tmp_path))
    with pytest.raises(ValueError, match="another configuration"): simulate(ev, replace(CFG, seed=9), tmp_path, resume=True)


def test_cli_resume_without_a_run_is_refused(tmp_path):
    r = subprocess.run(["coretex", "simulate", "--resume", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nothing to resume" in r.stderr
