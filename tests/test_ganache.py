"""The same chain code against a real JSON-RPC node: ganache from the npm registry, started and stopped here.

Intake, the wait for the target block with confirmations, Gate and Confirm, a signed receipt, then
`coretex replay --rpc` checking the report against the node, and catching a report whose blockhash was changed.
"""
import json, os, shutil, socket, subprocess, time
from pathlib import Path
import pytest
from helpers import run_cli, accepted_job
from coretex.network.chain import Chain
from coretex.network.coordinator import Coordinator
from coretex.evaluator.evaluate import Evaluator
from coretex.core.keccak import keccak256, to_hex
from coretex.network.receipt import Signer, artifact_hash
from coretex.core.state import GENESIS
from coretex.network.store import open_db

GANACHE = "ganache@7.9.2"


def ganache_bin() -> Path:
    if shutil.which("npm") is None: pytest.skip("npm is not installed, so ganache cannot be fetched from the npm registry")
    prefix = Path(os.environ.get("CORETEX_CACHE", Path.home() / ".cache" / "coretex")) / "ganache"
    exe = prefix / "node_modules" / ".bin" / "ganache"
    if not exe.exists():
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), GANACHE], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"npm install {GANACHE} failed: {r.stderr[-500:]}"
    return exe


@pytest.fixture
def node():
    exe = ganache_bin()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    p = subprocess.Popen([str(exe), "--server.host", "127.0.0.1", "--server.port", str(port), "--miner.blockTime", "0.05",
                          "--logging.quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try: Chain.connect(url); break
        except Exception:
            assert p.poll() is None and time.monotonic() < deadline, "ganache did not start"
            time.sleep(0.2)
    yield url
    p.terminate(); p.wait(10)


def test_coordinator_and_replay_over_json_rpc(node, tmp_path):
    chain = Chain.connect(node)
    assert not chain.embedded and chain.chain_id == 1337
    db, close = open_db(path=tmp_path / "db")
    try:
        coord = Coordinator(db, chain, Evaluator(), Signer.load(tmp_path / "key", create=True), confirmations=3, block_timeout=60)
        secret = keccak256(b"ganache epoch")
        coord.open_epoch(1, GENESIS, secret)
        job, env = accepted_job(coord, "0x" + "99" * 20, 1)
    finally: close()
    sd = env["artifact"]["seedDerivation"]
    assert sd["targetBlock"] == sd["receivedAtBlock"] + 30 and chain.block_number() >= sd["targetBlock"] + 3
    assert sd["blockhash"] == to_hex(chain.block_hash(sd["targetBlock"]))
    report = tmp_path / "report.json"
    report.write_text(json.dumps(env))
    r = run_cli("replay", report, "--rpc", node, "--epoch-secret", to_hex(secret))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("OK  ") == 15 and "replay passed" in r.stdout
    a = env["artifact"]                                   # a forged blockhash, consistently through the re-hashed artifact
    a["receipt"]["blockhash"] = a["seedDerivation"]["blockhash"] = to_hex(keccak256(b"forged"))
    a["artifactHash"] = a["evalReportHash"] = to_hex(artifact_hash(a))
    report.write_text(json.dumps(env))
    r = run_cli("replay", report, "--rpc", node, "--epoch-secret", to_hex(secret))
    assert r.returncode == 1 and "FAIL target block: BLOCKHASH_MISMATCH" in r.stdout
