"`coretex evaluate` from the command line: the JSON contract (on the embedded default and on a vectors case), determinism, and refusals."
import gzip, json
import pytest
from helpers import run_cli, ROOT
from coretex.core.keccak import keccak256
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root

BLOCK = "0x" + keccak256(b"cli block").hex()
LENS = make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04).hex()
VEC = ROOT.parent / "shared" / "vectors" / "coretex" / "evaluator"
WIRE = {"nDCG10", "temporal", "multiHopRecall10", "abstention", "structuralValidity"}


def test_evaluate_json_is_deterministic_and_complete(genesis_file):
    args = ["evaluate", "--state", genesis_file, "--patch", LENS, "--blockhash", BLOCK, "--epoch-id", "3", "--json"]
    a, b = run_cli(*args), run_cli(*args)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    rep = json.loads(a.stdout)
    assert rep["outcome"] in {"STATE_ADVANCE", "SCREENER_PASS", "REJECT"}
    for k in ("seed", "pack", "before_ppm", "after_ppm", "delta_ppm", "before", "after"): assert k in rep["gate"]
    assert set(rep["gate"]["before"]) == WIRE and len(rep["gate"]["pack"]) == 64
    assert rep["reranker"] == "coretex-embedded-v1"
    assert (rep["confirm"] is None) == (not rep["gate"]["accepted"])


@pytest.mark.skipif(not (VEC / "cases.json.gz").exists(), reason="../shared/vectors is not beside the checkout")
def test_evaluate_a_vectors_case_through_the_installed_command(tmp_path):
    cases = json.load(gzip.open(VEC / "cases.json.gz"))
    case = next(c for c in cases["cases"] if c["verdict"]["outcome"] == "STATE_ADVANCE" and cases["states"][c["parent"]]["name"] == "genesis")
    si = cases["seedInputs"]
    state = tmp_path / "parent.bin"; state.write_bytes(bytes(32768))
    r = run_cli("evaluate", "--corpus", VEC / "corpus.json.gz", "--state", state, "--patch", case["patch"], "--blockhash", si["blockhash"],
                "--epoch-secret", si["epochSecret"], "--epoch-id", si["epochId"], "--reranker", "token-overlap", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["outcome"] == case["verdict"]["outcome"] and rep["reranker"] == "token-overlap"
    for which in ("gate", "confirm"):
        mine, ref = rep[which], case[which]
        assert (mine["seed"], mine["pack"]) == (ref["seed"], ref["pack"])
        assert (mine["before_ppm"], mine["after_ppm"], mine["delta_ppm"]) == (ref["parent"]["ppm"], ref["child"]["ppm"], ref["patchEval"]["deltaPpm"])
        for k in WIRE: assert abs(mine["after"][k] - ref["child"][k]) <= 1e-9
    other = run_cli("evaluate", "--corpus", VEC / "corpus.json.gz", "--state", state, "--patch", case["patch"], "--blockhash", si["blockhash"],
                    "--epoch-secret", si["epochSecret"], "--epoch-id", si["epochId"], "--reranker", "token-overlap", "--json",
                    "--bundle-hash", "0x" + "11" * 32)
    assert json.loads(other.stdout)["gate"]["seed"] != rep["gate"]["seed"]   # the bundleHash seeds the packs


def test_evaluate_human_output_and_refusals(genesis_file, tmp_path):
    r = run_cli("evaluate", "--state", genesis_file, "--patch", LENS, "--blockhash", BLOCK)
    assert r.returncode == 0 and r.stdout.startswith("outcome ") and "nDCG10" in r.stdout
    bad = make_patch(b"\x01" * 32, {672: 1}, 0x04).hex()
    r = run_cli("evaluate", "--state", genesis_file, "--patch", bad, "--blockhash", BLOCK, "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["code"] == "E01"
    r = run_cli("evaluate", "--state", genesis_file, "--patch", LENS, "--blockhash", "0x" + "00" * 32)
    assert r.returncode == 2 and "blockhash is zero" in r.stderr and "Traceback" not in r.stderr
    for name, content in (("empty.json", b""), ("shape.json", b'{"events": {"a": 1}}'), ("noevents.json", b'[1, 2]')):
        (tmp_path / name).write_bytes(content)
        r = run_cli("evaluate", "--corpus", tmp_path / name, "--state", genesis_file, "--patch", LENS, "--blockhash", BLOCK)
        assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    (tmp_path / "rr").mkdir()
    r = run_cli("evaluate", "--state", genesis_file, "--patch", LENS, "--blockhash", BLOCK, "--reranker", tmp_path / "rr")
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
