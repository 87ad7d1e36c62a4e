"""`coretex validator sync` against a JSON-RPC node on loopback, one exit status at a time: 0 verified, 1 a mismatch
(a tampered bundle manifest; an epoch pinned to another core version), 1 missing input (advances to re-score and no
reports), 1 a node down at start, 2 bad input (an address with no code, refused before any sync), 3 only when score
replay is skipped on request; `BASE_RPC_URL` and `CORETEX_REGISTRY_ADDRESS` in place of the flags; the statuses in
--help. Then `--watch` riding out a node outage of 50 s (the old cut-off was about 16 s) and resuming."""
import json, os, random, signal, subprocess, sys, time
from pathlib import Path
import pytest
from rpc_node import RpcNode
from coretex.cli import run_command
from coretex.cli.validator import add_validator
from coretex.core.patch import prepare
from coretex.core.state import GENESIS
from coretex.network.registry import RegistryContract, publish_random_epochs
from coretex.network.trust import bundle_hash

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def node():
    n = RpcNode()
    url = n.start()
    reg = RegistryContract.deploy(n.chain)
    end = publish_random_epochs(reg, 1, 3, 2, prepare(GENESIS), random.Random(3))
    yield {"node": n, "url": url, "registry": reg, "end": end}
    n.stop()


def sync(node, tmp_path, *more, env=None):
    argv = ["validator", "sync", "--rpc", node["url"], "--registry", node["registry"].address, "--data", str(tmp_path / "v"),
            "--confirmations", "0", "--retries", "1", *more]
    return run_command(add_validator, *[a for a in argv if a is not None])


def test_0_verified_with_advances_waiting_for_their_reports(node, tmp_path):
    (tmp_path / "reports").mkdir()
    rc, _, err = sync(node, tmp_path, "--rescore", str(tmp_path / "reports"))
    assert rc == 0 and "6 advance(s) wait for their report" in err


def test_3_only_when_score_replay_is_skipped(node, tmp_path):
    rc, out, err = sync(node, tmp_path, "--skip-score-replay", "--json")
    assert rc == 3 and json.loads(out.splitlines()[-1])["root"] == node["registry"].view("liveStateRoot", 3)
    assert err.splitlines()[-1].startswith("score replay skipped (--skip-score-replay)")


def test_1_missing_input(node, tmp_path):
    rc, _, err = sync(node, tmp_path)
    assert rc == 1 and err.splitlines()[-1].endswith("missing input")


def test_1_a_tampered_bundle_manifest(node, tmp_path):
    b = json.loads((ROOT / "fixtures" / "bundle-manifest-v16.json").read_text())
    b["evaluator"]["profile"]["pipelineVersion"] = "coretex-retrieval-v2-r4"   # the claim kept
    (tmp_path / "b.json").write_text(json.dumps(b))
    rc, _, err = sync(node, tmp_path, "--bundle-manifest", str(tmp_path / "b.json"), "--skip-score-replay")
    assert rc == 1 and f"FAIL BUNDLE_HASH_MISMATCH: the bundle manifest claims bundleHash {b['bundleHash']} but is {bundle_hash(b)}" in err


def test_1_an_epoch_pinned_to_another_core_version(node, tmp_path):
    rc, _, err = sync(node, tmp_path, "--bundle-manifest", str(ROOT / "fixtures" / "bundle-manifest-v16.json"), "--skip-score-replay")
    assert rc == 1 and "FAIL CORE_VERSION_MISMATCH: epoch 1" in err


def test_1_a_node_down_at_start(node, tmp_path):
    rc, _, err = run_command(add_validator, "validator", "sync", "--rpc", "http://127.0.0.1:9", "--registry", node["registry"].address,
                             "--data", str(tmp_path / "v"))
    assert rc == 1 and err.startswith("coretex validator sync: FAIL RPC: cannot reach the JSON-RPC node")


def test_2_an_address_with_no_code_at_once(node, tmp_path):
    t = time.monotonic()
    rc, _, err = run_command(add_validator, "validator", "sync", "--rpc", node["url"], "--registry", "0x" + "12" * 20,
                             "--data", str(tmp_path / "v"), "--retries", "6")
    assert rc == 2 and "no contract at this address" in err and err.count("\n") == 1
    assert time.monotonic() - t < 5   # not retried as a node fault
    assert not (tmp_path / "v").exists()


def test_2_bad_input(node, tmp_path):
    assert sync(node, tmp_path, "--state", "s.bin")[0] == 2
    rc, _, err = run_command(add_validator, "validator", "sync", "--rpc", node["url"], "--data", str(tmp_path / "v"))
    assert rc == 2 and "CORETEX_REGISTRY_ADDRESS" in err


def test_the_reference_s_environment_variables(node, tmp_path, monkeypatch):
    monkeypatch.setenv("BASE_RPC_URL", node["url"])
    monkeypatch.setenv("CORETEX_REGISTRY_ADDRESS", node["registry"].address)
    monkeypatch.delenv("CORETEX_RPC_URL", raising=False)
    rc, out, _ = run_command(add_validator, "validator", "sync", "--data", str(tmp_path / "v"), "--confirmations", "0",
                             "--skip-score-replay", "--json")
    assert rc == 3 and json.loads(out.splitlines()[-1])["root"] == node["registry"].view("liveStateRoot", 3)


def test_help_states_every_status(capsys):
    from coretex.cli import build_parser
    with pytest.raises(SystemExit): build_parser([add_validator]).parse_args(["validator", "sync", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for status in ("Exit status: 0 verified", "1 a mismatch, a node down, or advances to re-score with no reports (missing input)",
                   "2 bad input", "3 only with --skip-score-replay"):
        assert status in text


def test_watch_rides_out_a_node_outage_of_50_seconds(tmp_path):
    n = RpcNode()
    url = n.start()
    reg = RegistryContract.deploy(n.chain)
    end = publish_random_epochs(reg, 1, 2, 2, prepare(GENESIS), random.Random(5))
    err = open(tmp_path / "err", "w")
    cmd = [sys.executable, "-c", "import sys; from coretex.cli import main; sys.exit(main())", "validator", "sync", "--rpc", url,
           "--registry", reg.address, "--data", str(tmp_path / "v"), "--confirmations", "0", "--watch", "1", "--retries", "1",
           "--skip-score-replay"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, "PYTHONPATH": str(ROOT)})
    text = lambda: (tmp_path / "err").read_text()
    def wait_for(s, timeout):
        deadline = time.monotonic() + timeout
        while s not in text() and p.poll() is None and time.monotonic() < deadline: time.sleep(0.2)
        assert s in text(), text()
    try:
        wait_for("epoch 2: 2 advances", 60)
        n.stop()
        time.sleep(float(os.environ.get("OUTAGE_S", 50)))   # three times the old cut-off
        publish_random_epochs(reg, 3, 3, 2, end, random.Random(6))
        n.start()
        wait_for("node back after", 120)
        assert p.poll() is None
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=30)
        n.stop()
        err.close()
    lines = text().splitlines()
    assert rc == 0
    down = [l for l in lines if l.startswith("node unreachable")]
    back = [l for l in lines if l.startswith("node back after")]
    assert len(down) == 1 and len(back) == 1, "\n".join(lines)
    assert int(back[0].split()[3]) >= 45
    first3 = next(i for i, l in enumerate(lines) if l.startswith("epoch 3:"))
    assert lines.index(down[0]) < first3 < lines.index(back[0])   # the pass that found the node back applied epochs 3-5
    assert not any("retrying in" in l for l in lines)   # no line per retry


def verify_epoch(*argv): 
    from coretex.cli.economy import add_verify_epoch
    return run_command(add_verify_epoch, "verify-epoch", *argv)


def test_verify_epoch_reads_the_deployed_registry(node, monkeypatch):
    "0 verified from CoreTex* events; 1 an epoch not finalized, or the legacy reader on this chain; 2 no code; 1 node down."
    url, reg = node["url"], node["registry"]
    rc, out, _ = verify_epoch("--rpc", url, "--address", reg.address, "--epoch", "2", "--policy-atoms-mode", "--json")
    got = json.loads(out)
    assert rc == 0 and got["match"] and got["expected_state_root"] == reg.view("liveStateRoot", 2)
    assert verify_epoch("--rpc", url, "--address", reg.address, "--epoch", "9")[1].splitlines()[-1] == "verify-epoch failed: NO_FINALIZED_EVENT"
    rc, out, _ = verify_epoch("--rpc", url, "--address", reg.address, "--epoch", "2", "--legacy-events")
    assert rc == 1 and out.splitlines()[-1] == "verify-epoch failed: NO_FINALIZED_EVENT"
    rc, _, err = verify_epoch("--rpc", url, "--address", "0x" + "12" * 20, "--epoch", "2")
    assert rc == 2 and "no contract at this address" in err
    rc, _, err = verify_epoch("--rpc", "http://127.0.0.1:9", "--address", reg.address, "--epoch", "2")
    assert rc == 1 and err.startswith("verify-epoch failed: RPC: cannot reach the JSON-RPC node")
    monkeypatch.setenv("CORETEX_REGISTRY_ADDRESS", reg.address)
    assert verify_epoch("--rpc", url, "--epoch", "3", "--policy-atoms-mode")[0] == 0
