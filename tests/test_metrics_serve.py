"""`coretex coordinator serve --metrics-port N --log-json`: Prometheus scrapes /metrics (parsed here with
prometheus-client's own parser), and every line serve writes is one JSON object."""
import json, socket, subprocess, sys, time, urllib.request
from pathlib import Path
from coretex.network.store import EmbeddedMongo, free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _service import call, env_for, LENS


def scrape(port: int) -> dict:
    from prometheus_client.parser import text_string_to_metric_families
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r: text = r.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text) for s in f.samples}


def test_serve_exposes_its_metrics_and_logs_json(tmp_path):
    with EmbeddedMongo(tmp_path / "db") as db:
        port, mport = free_port(), free_port()
        p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--mongodb-uri", db.uri,
                              "--metrics-port", str(mport), "--log-json"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env_for(tmp_path / "data"))
        lines = []
        try:
            while not any("listening" in l for l in lines):
                line = p.stdout.readline()
                assert line, "".join(lines)
                lines.append(line)
            status, body = call(f"http://127.0.0.1:{port}/v1/patches", {"miner": "0x" + "42" * 20, "patch": LENS, "epochId": 1})
            assert status == 202, body
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:   # one refusal by the head's reader
                c.sendall(b"get /v1/jobs/x HTTP/1.1\r\nHost: x\r\n\r\n"); c.recv(4096)
            call(f"http://127.0.0.1:{port}/v1/jobs/nope")                          # and one by the app
            deadline = time.monotonic() + 180
            while (m := scrape(mport))[("coretex_coordinator_jobs", (("status", "done"),))] < 1:
                assert time.monotonic() < deadline, m
                time.sleep(0.2)
        finally:
            p.terminate(); lines += p.communicate(timeout=60)[0].splitlines(keepends=True)
    assert m[("coretex_coordinator_jobs_queued", ())] == 0 and m[("coretex_coordinator_evaluations_total", ())] == 1
    assert sum(v for (name, _), v in m.items() if name == "coretex_coordinator_verdicts_total") == 1
    assert m[("coretex_coordinator_refusals_total", (("reason", "not_implemented"),))] == 1
    assert m[("coretex_coordinator_refusals_total", (("reason", "unknown_job"),))] == 1
    assert all(k[0].startswith("coretex_coordinator_") for k in m)
    def record(line: str):
        try: return json.loads(line)
        except ValueError: return None
    assert [l for l in lines if l.strip() and record(l) is None] == [], "".join(lines)   # every line is JSON
    logged = [record(l) for l in lines if l.strip()]
    assert {"time", "level", "logger", "message"} <= set(logged[0]) and logged[-1]["message"] == "coordinator stopped"
