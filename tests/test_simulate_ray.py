"Seeds on Ray (nbs/81f_runs) write the trajectories the same seeds write one by one in this process, and a run folder resumes."
import json, os, time, uuid
import pytest
from coretex.simulate import RunSpec, SimConfig, read_trajectory, run_seeds, seed_folder

CFG = SimConfig(epochs=2, population="mixed-honest")


def lines(out, seed):
    "A seed's trajectory as JSON lines, wall times aside."
    return [json.dumps({**r.to_json(), "seconds": 0}, sort_keys=True) for r in read_trajectory(seed_folder(out, seed))]


def test_two_ray_workers_write_the_sequential_trajectories(tmp_path):
    pytest.importorskip("ray")
    seq, ray = run_seeds(CFG, [0, 1], tmp_path / "seq"), run_seeds(CFG, [0, 1], tmp_path / "ray", workers=2)
    for s in (0, 1):
        assert lines(tmp_path / "seq", s) == lines(tmp_path / "ray", s) and len(lines(tmp_path / "seq", s)) == 2
    assert seq["per_seed"] == [{**m, "seconds": a["seconds"]} for m, a in zip(ray["per_seed"], seq["per_seed"])]


def test_a_run_folder_finishes_what_is_missing(tmp_path):
    "Run one seed for one epoch, then the same run for two seeds of two epochs: the first seed resumes, the second starts."
    run_seeds(SimConfig(epochs=1, population="mixed-honest"), [0], tmp_path)
    again = run_seeds(CFG, [0, 1], tmp_path)
    assert [len(lines(tmp_path, s)) for s in (0, 1)] == [2, 2]
    fresh = run_seeds(CFG, [0, 1], tmp_path / "fresh")
    assert [lines(tmp_path, s) for s in (0, 1)] == [lines(tmp_path / "fresh", s) for s in (0, 1)]
    assert [a["evaluations"] for a in again["spent"]][1] == [a["evaluations"] for a in fresh["spent"]][1]


def marked_processes(mark: str) -> list:
    "Processes whose environment carries `mark` (every process a Ray started from this one inherits it), from /proc."
    from pathlib import Path
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid(): continue
        try:
            if mark.encode() in (d / "environ").read_bytes(): out.append((int(d.name), (d / "cmdline").read_bytes().replace(b"\0", b" ")[:80]))
        except OSError: pass   # gone, or not ours
    return out


@pytest.fixture
def mark(monkeypatch):
    "A marker in this process's environment, which every process it starts inherits."
    if not os.path.isdir("/proc"): pytest.skip("needs /proc")
    m = f"coretex-ray-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("CORETEX_TEST_MARK", m)
    return m


def test_no_ray_process_is_left_after_a_run(tmp_path, mark):
    "A run on a local Ray shuts it down: no process it started (raylet, GCS, agents, workers) outlives the run."
    pytest.importorskip("ray")
    run_seeds(SimConfig(epochs=1, population="mixed-honest"), [0, 1], tmp_path, workers=2)
    deadline = time.time() + 10   # Ray's shutdown signals its processes; give them a moment to exit
    while marked_processes(mark) and time.time() < deadline: time.sleep(0.5)
    assert marked_processes(mark) == []


def test_a_local_ray_that_cannot_start_falls_back_to_this_process(tmp_path, mark, monkeypatch, capsys):
    "When a local Ray does not come up, one line says so and the seeds run here: the trajectories the sequential path writes, and nothing left behind."
    import coretex.evaluator.batch as batch
    def refuse(ray, address, workers): raise batch.BatchError("Ray did not start: The current node timed out during startup.")
    monkeypatch.setattr(batch, "start_ray", refuse)
    run_seeds(CFG, [0], tmp_path / "fallback", workers=2)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "running the seeds in this process" in err and "Traceback" not in err
    run_seeds(CFG, [0], tmp_path / "seq")
    assert lines(tmp_path / "fallback", 0) == lines(tmp_path / "seq", 0)
    assert marked_processes(mark) == []
