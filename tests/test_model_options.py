"""Every model option (evaluate/evaluate-batch/simulate --reranker, evaluate/evaluate-batch --bi-encoder) refuses a
path that is no model folder in one line, exit 2, within 5 s, from metadata alone (issue 40): /dev/zero, a FIFO, a 2 GB
sparse file, a folder holding an oversized (sparse) file."""
import os, time
import pytest
from coretex.cli import run_command
from coretex.cli.evaluate import add_evaluate, add_evaluate_batch
from coretex.cli.demo import add_simulate


@pytest.fixture(scope="module")
def bad_paths(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    os.mkfifo(d / "fifo")
    with open(d / "sparse", "wb") as f: f.truncate(2 << 30)
    (d / "big").mkdir()
    (d / "big" / "config.json").write_text("{}")
    with open(d / "big" / "model.safetensors", "wb") as f: f.truncate(9 << 30)   # over the 8 GiB limit, nothing written
    return {"/dev/zero": "a character device", str(d / "fifo"): "a FIFO", str(d / "sparse"): "a regular file",
            str(d / "big"): "over the 8,589,934,592 limit"}


def commands(genesis):
    return {"evaluate": (add_evaluate, ["evaluate", "--state", genesis, "--patch", "00", "--blockhash", "11" * 32]),
            "evaluate-batch": (add_evaluate_batch, ["evaluate-batch", "queue.jsonl", "--workers", "0"]),
            "simulate": (add_simulate, ["simulate", "--epochs", "1"])}


@pytest.mark.parametrize("cmd,opt", [("evaluate", "--reranker"), ("evaluate", "--bi-encoder"), ("evaluate-batch", "--reranker"),
                                     ("evaluate-batch", "--bi-encoder"), ("simulate", "--reranker")])
def test_model_option_refused_in_one_line(cmd, opt, bad_paths, genesis_file):
    add, argv = commands(str(genesis_file))[cmd]
    for path, why in bad_paths.items():
        t = time.perf_counter()
        rc, out, err = run_command(add, *argv, opt, path)
        secs = time.perf_counter() - t
        assert (rc, out, err.count("\n")) == (2, "", 1), (path, rc, err)
        assert err.startswith(f"coretex {cmd}: error: {opt} {path}") and why in err, err
        assert secs < 5, (path, secs)
