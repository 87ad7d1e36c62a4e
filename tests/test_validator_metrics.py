"""`validator sync --watch --metrics-port` (issue 40): the /metrics endpoint scraped while the command runs and parsed
with prometheus_client's own parser: the epochs followed and the last verified block agree with the registry, node
reads retried during a short outage are counted; `--log-json` writes every stderr line as a JSON object."""
import json, os, random, signal, socket, subprocess, sys, time, urllib.request
from pathlib import Path
from prometheus_client.parser import text_string_to_metric_families
from rpc_node import RpcNode
from coretex.core.patch import prepare
from coretex.core.state import GENESIS
from coretex.network.registry import RegistryContract, publish_random_epochs

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


def scrape(port: int) -> dict:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text) for s in f.samples}


def test_metrics_and_json_logs(tmp_path):
    n = RpcNode()
    url = n.start()
    reg = RegistryContract.deploy(n.chain)
    publish_random_epochs(reg, 1, 2, 2, prepare(GENESIS), random.Random(5))
    port, err = free_port(), open(tmp_path / "err", "w")
    cmd = [sys.executable, "-c", "import sys; from coretex.cli import main; sys.exit(main())", "validator", "sync", "--rpc", url,
           "--registry", reg.address, "--data", str(tmp_path / "v"), "--confirmations", "0", "--watch", "1", "--retries", "3",
           "--skip-score-replay", "--metrics-port", str(port), "--log-json"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, "PYTHONPATH": str(ROOT)})
    def until(check, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                got = scrape(port)
                if check(got): return got
            except OSError: pass
            time.sleep(0.3)
        raise AssertionError((tmp_path / "err").read_text())
    try:
        m = until(lambda m: m.get(("coretex_validator_epochs_followed", ())) == 2)
        assert m[("coretex_validator_last_verified_block", ())] == n.chain.block_number()
        assert m[("coretex_validator_rpc_retries_total", ())] == 0
        n.stop(); time.sleep(3); n.start()                     # a short outage: reads retried
        m = until(lambda m: m.get(("coretex_validator_rpc_retries_total", ()), 0) >= 1)
        assert m[("coretex_validator_epochs_followed", ())] == 2
    finally:
        p.send_signal(signal.SIGTERM); rc = p.wait(timeout=30); n.stop(); err.close()
    assert rc == 0
    lines = [json.loads(l) for l in (tmp_path / "err").read_text().splitlines()]
    assert all(set(l) == {"ts", "msg"} for l in lines) and any(l["msg"].startswith("epoch 2: 2 advances") for l in lines)
