"`coretex evaluate` from the command line: the JSON contract, determinism, and refusals."
import json
from helpers import run_cli
from coretex.keccak import keccak256
from coretex.layout import encode_relation
from coretex.patch import make_patch
from coretex.state import GENESIS, state_root

BLOCK = "0x" + keccak256(b"cli block").hex()
LENS = make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04).hex()


def test_evaluate_json_is_deterministic_and_complete(genesis_file):
    args = ["evaluate", "--state", genesis_file, "--patch", LENS, "--blockhash", BLOCK, "--epoch-id", "3", "--json"]
    a, b = run_cli(*args), run_cli(*args)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    rep = json.loads(a.stdout)
    assert {"outcome", "gate", "confirm", "reranker"} <= set(rep)
    assert rep["outcome"] in {"STATE_ADVANCE", "SCREENER_PASS", "REJECT"}
    for k in ("before_ppm", "after_ppm", "delta_ppm", "metrics"): assert k in rep["gate"]
    assert rep["gate"]["delta_ppm"] == rep["gate"]["after_ppm"] - rep["gate"]["before_ppm"]
    assert rep["reranker"] == "coretex-embedded-v1"
    assert rep["seedDerivation"]["blockhash"] == BLOCK


def test_evaluate_human_output_and_refusals(genesis_file):
    r = run_cli("evaluate", "--state", genesis_file, "--patch", LENS, "--blockhash", BLOCK)
    assert r.returncode == 0 and r.stdout.startswith("outcome ") and "family (mean nDCG)" in r.stdout
    bad = make_patch(b"\x01" * 32, {672: 1}, 0x04).hex()
    r = run_cli("evaluate", "--state", genesis_file, "--patch", bad, "--blockhash", BLOCK, "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["code"] == "E01"
    r = run_cli("evaluate", "--state", genesis_file, "--patch", LENS, "--blockhash", "0x" + "00" * 32)
    assert r.returncode == 2 and "blockhash is zero" in r.stderr and "Traceback" not in r.stderr
