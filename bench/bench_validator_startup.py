"""A no-op `coretex validator sync`: the start-up cost of the command a cron job runs every few minutes.

A registry and a mining contract on the in-process chain, served over JSON-RPC on loopback (tests/rpc_node.py), with
EPOCHS epochs of two advances each, opened on both contracts with their commitments. One sync catches up; then the
same command is run RUNS times as a fresh process with nothing new to follow (the no-op), each timed from spawn to
exit. The peers, measured in the same run and the same way: `coretex --help` and `python -c pass`. Printed: the
median and fastest seconds of each, the no-op's ratio to `coretex --help`, the load average, and the no-op's own
import time of web3 (`python -X importtime`), which the command only pays where it reads the chain.
Run: python bench/bench_validator_startup.py [--epochs 5] [--runs 7]
"""
import argparse, os, random, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def seconds(cmd: list, runs: int, env: dict) -> list:
    "Wall seconds of `runs` runs of `cmd`, each checked to exit as a no-op sync does (0, or 3 when scores are skipped)."
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        out.append(time.perf_counter() - t0)
        assert r.returncode in (0, 3), r.stderr[-800:]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    from rpc_node import RpcNode
    from coretex.core.keccak import keccak256
    from coretex.core.patch import prepare
    from coretex.core.state import GENESIS
    from coretex.network.mining import MiningContract, open_epoch
    from coretex.network.registry import RegistryContract, publish_random_epochs
    node = RpcNode()
    url = node.start()
    reg = RegistryContract.deploy(node.chain)
    mining = MiningContract.deploy(node.chain, reg.address)
    with node.lock:
        publish_random_epochs(reg, 1, a.epochs, 2, prepare(GENESIS), random.Random(1),
                              lambda e, root, pins: open_epoch(reg, mining, e, root, pins, keccak256(f"secret {e}".encode())))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    data = tempfile.mkdtemp()
    sync = [sys.executable, "-c", "from coretex.cli import main; raise SystemExit(main())", "validator", "sync", "--rpc", url, "--registry",
            reg.address, "--mining-contract", mining.address, "--data", data, "--state-dir", data, "--confirmations", "0",
            "--skip-score-replay"]
    seconds(sync, 1, env)   # the catch-up; every later run finds nothing new
    peers = {"no-op validator sync": sync, "coretex --help": [sys.executable, "-c", "from coretex.cli import main; raise SystemExit(main())", "--help"],
             "python -c pass": [sys.executable, "-c", "pass"]}
    load = os.getloadavg()
    times = {name: seconds(cmd, a.runs, env) for name, cmd in peers.items()}
    for name, t in times.items(): print(f"{name:22s} median {statistics.median(t):.2f} s, fastest {min(t):.2f} s ({a.runs} runs)")
    ratio = statistics.median(times["no-op validator sync"]) / statistics.median(times["coretex --help"])
    print(f"no-op sync / coretex --help: {ratio:.1f}x; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (2 cores)")
    r = subprocess.run([sys.executable, "-X", "importtime", *sync[1:]], capture_output=True, text=True, env=env)
    web3 = [l for l in r.stderr.splitlines() if l.rstrip().endswith("| web3")]
    print("web3 import in the no-op:", (web3[0].split("|")[1].strip() + " us cumulative") if web3 else "not imported")
    node.stop()


if __name__ == "__main__":
    main()
