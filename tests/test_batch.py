"""coretex evaluate-batch: a queue of the differential vectors' patches on a local Ray with 2 workers gives the same lines,
in the same order, as the sequential path; bad lines and a missing Ray are one-line errors."""
import json, sys
import pytest
from helpers import run_cli
from test_evaluator_vectors import VEC, data, state
from coretex.core.state import state_bytes

pytestmark = pytest.mark.skipif(not (VEC / "cases.json.gz").exists(), reason="../shared/vectors is not beside the checkout")


@pytest.fixture(scope="module")
def queue(tmp_path_factory):
    "Three patches on each of two parents (one parent a file, one inline hex), then a patch the protocol refuses."
    cases, si = data()[1]["cases"], data()[1]["seedInputs"]
    parents = list(dict.fromkeys(c["parent"] for c in cases))[:2]
    d = tmp_path_factory.mktemp("batch")
    (d / "p0.state").write_bytes(state_bytes(state(parents[0])))
    where = {parents[0]: "p0.state", parents[1]: "0x" + state_bytes(state(parents[1])).hex()}
    picked = [c for p in parents for c in [c for c in cases if c["parent"] == p][:3]]
    rows = [{"parent": where[c["parent"]], "patch": c["patch"], "blockhash": si["blockhash"], "epochSecret": si["epochSecret"],
             "epochId": si["epochId"]} for c in picked]
    rows.append(dict(rows[0], patch="0x00"))
    (d / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return d / "q.jsonl", picked


def batch(path, workers):
    r = run_cli("evaluate-batch", path, "--workers", workers, "--corpus", VEC / "corpus.json.gz", "--reranker", "token-overlap")
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_two_ray_workers_match_the_sequential_path(queue):
    path, picked = queue
    sequential, on_ray = batch(path, 0), batch(path, 2)
    assert on_ray == sequential
    got = [json.loads(x) for x in on_ray]
    assert [g["line"] for g in got] == list(range(1, len(picked) + 2))
    assert [g["outcome"] for g in got[:-1]] == [c["verdict"]["outcome"] for c in picked]
    assert got[-1]["code"] in ("DECODE", "E01", "E02", "E03", "E04", "E05") and "gate" not in got[-1]


def test_a_bad_line_is_one_line_naming_it(queue):
    path, _ = queue
    lines = path.read_text().splitlines()
    bad = path.parent / "bad.jsonl"   # beside the queue: its first line names p0.state there
    bad.write_text("\n".join([lines[0], lines[1].replace('"blockhash": "0x', '"blockhash": "0xzz')]) + "\n")
    r = run_cli("evaluate-batch", bad, "--workers", 0)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and "bad.jsonl:2: " in r.stderr and "blockhash" in r.stderr


def test_without_ray_the_refusal_says_how_to_install_it(queue, monkeypatch, capsys):
    from coretex.cli import main
    monkeypatch.setitem(sys.modules, "ray", None)   # import ray now raises ImportError
    assert main(["evaluate-batch", str(queue[0]), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install "coretex[batch]"' in err
