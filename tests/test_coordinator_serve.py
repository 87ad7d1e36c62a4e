"`coretex coordinator serve` as a miner meets it: JSON over HTTP on loopback, a job evaluated in the background."
import json, os, subprocess, time, urllib.error, urllib.request
from coretex.core.state import GENESIS
from coretex.network.store import EmbeddedMongo, free_port
from helpers import abstain_patch


def call(url, body=None):
    req = urllib.request.Request(url, json.dumps(body).encode() if body is not None else None, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r: return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e: return e.code, json.loads(e.read())


def test_serve_accepts_evaluates_and_refuses(tmp_path):
    port = free_port()
    with EmbeddedMongo(tmp_path / "db") as server:
        env = {**os.environ, "CORETEX_DATA": str(tmp_path / "data")}
        env.pop("CORETEX_RPC_URL", None); env.pop("CORETEX_SIGNING_KEY", None)
        p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--mongodb-uri", server.uri],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        try:
            lines = []
            while not any("listening" in l for l in lines):
                line = p.stdout.readline()
                assert line, "".join(lines)
                lines.append(line)
            assert "secret commitment 0x" in "".join(lines) and "secret 0x" not in "".join(lines).replace("secret commitment", "")
            base = f"http://127.0.0.1:{port}/v1"
            patch = abstain_patch().hex()
            status, job = call(f"{base}/patches", {"miner": "0x" + "42" * 20, "patch": patch, "epochId": 1})
            assert status == 202 and job["targetBlock"] == job["receivedAtBlock"] + 30
            deadline = time.monotonic() + 180
            while call(f"{base}/jobs/{job['jobId']}")[1]["status"] != "done":
                assert time.monotonic() < deadline and p.poll() is None
                time.sleep(0.5)
            status, envl = call(f"{base}/results/{job['dedupKey']}")
            assert status == 200 and envl["outcome"] in ("REJECT", "SCREENER_PASS", "STATE_ADVANCE")
            # the protocol signs only what it accepts
            assert (envl["status"] == "accepted") == (envl["outcome"] != "REJECT") == envl.get("receipt", {}).get("signature", "").startswith("0x")
            assert call(f"{base}/patches", {"miner": "0x" + "42" * 20, "patch": patch, "epochId": 1})[0] == 200   # cached
            assert call(f"{base}/patches", {"miner": "0x" + "42" * 20, "patch": patch[:-2], "epochId": 1})[1]["error"] == "DECODE"
            assert call(f"{base}/patches", {"miner": "0x" + "42" * 20, "patch": patch, "epochId": 2})[0] == 404
            assert call(f"{base}/jobs/nope")[0] == 404
        finally:
            p.terminate(); p.wait(20)


def test_building_the_evaluator_loads_no_model_runtime():
    """A coordinator builds its Evaluator at start; the bi-encoder is loaded when a query without a stored vector is
    first embedded, so `serve` is up in seconds (importing sentence-transformers alone is most of a cold start)."""
    import subprocess, sys
    probe = ("import sys; from coretex import Evaluator; ev = Evaluator(); "
             "print(ev.fs.embedder.name, [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert r.stdout.strip() == "all-MiniLM-L6-v2 []", r.stdout + r.stderr[-2000:]
