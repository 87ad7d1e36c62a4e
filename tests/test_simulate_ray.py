"Seeds on Ray (nbs/81f_runs) write the trajectories the same seeds write one by one in this process, and a run folder resumes."
import json
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
