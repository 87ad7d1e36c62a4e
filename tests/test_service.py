"""The coordinator as a service that survives miners: one test per finding of a first round of attacks, against real processes.

Each test drives `coretex coordinator serve` (or the library's parts) over real HTTP on loopback with the
embedded MongoDB server, and asserts what main's code got wrong: a stalled intake, a leaking and bypassable
rate limiter, epochIds coerced or crashing, HTML errors, a worker that dies silently, an in-flight mark left
behind, an orphaned database, a silent restart on a revealed epoch, mixed datetimes, a log file per command.
"""
import json, os, signal, socket, subprocess, sys, threading, time, urllib.error, urllib.request
from pathlib import Path
import pytest
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root
from coretex.network.store import EmbeddedMongo, free_port

LENS = make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04).hex()
MINER = "0x" + "42" * 20
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _service import call   # (status, JSON body) of one HTTP request; a body that is not JSON fails the test


def env_for(data):
    env = {**os.environ, "CORETEX_DATA": str(data)}
    for k in ("CORETEX_RPC_URL", "CORETEX_SIGNING_KEY", "CORETEX_MONGODB_URI"): env.pop(k, None)
    return env


def start_serve(data, *args):
    "A `coretex coordinator serve` process and its port, once it says it is listening."
    port = free_port()
    p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), *map(str, args)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env_for(data))
    lines = []
    while not any("listening" in l for l in lines):
        line = p.stdout.readline()
        assert line, "".join(lines)
        lines.append(line)
    return p, port


def children(pid: int) -> list:
    "Pids whose parent is `pid` (from /proc)."
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try: stat = (d / "stat").read_text()
            except OSError: continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid: out.append(int(d.name))
    return out


def alive(pid: int) -> bool:
    try: return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError: return False


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    "One coordinator served over a database of its own, for the HTTP findings."
    tmp = tmp_path_factory.mktemp("served")
    with EmbeddedMongo(tmp / "db") as db:
        p, port = start_serve(tmp / "data", "--mongodb-uri", db.uri, "--rate", 10)
        try: yield f"http://127.0.0.1:{port}", port
        finally: p.terminate(); p.wait(20)


def test_one_idle_client_does_not_stall_the_intake(served):
    base, port = served
    idle = socket.create_connection(("127.0.0.1", port))
    idle.sendall(b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    try:
        t0 = time.monotonic()
        assert call(f"{base}/v1/jobs/x", timeout=5) == (404, {"error": "unknown_job", "message": "no job 'x'"})
        assert time.monotonic() - t0 < 2
    finally: idle.close()


@pytest.mark.parametrize("raw,code", [
    (b'{"miner": "%s", "patch": "%s", "epochId": Infinity}', "bad_json"),
    (b'{"miner": "%s", "patch": "%s", "epochId": -Infinity}', "bad_json"),
    (b'{"miner": "%s", "patch": "%s", "epochId": NaN}', "bad_json"),
    (b'{"miner": "%s", "patch": "%s", "epochId": 1e400}', "bad_epoch"),
    (b'{"miner": "%s", "patch": "%s", "epochId": 9223372036854775808}', "bad_epoch"),
    (b'{"miner": "%s", "patch": "%s", "epochId": 1180591620717411303424}', "bad_epoch"),
    (b'{"miner": "%s", "patch": "%s", "epochId": 1.9}', "bad_epoch"),
    (b'{"miner": "%s", "patch": "%s", "epochId": "1"}', "bad_epoch"),
    (b'{"miner": "%s", "patch": "%s", "epochId": true}', "bad_epoch"),
])
def test_epoch_id_is_a_json_integer_in_range(served, raw, code):
    status, body = call(f"{served[0]}/v1/patches", raw % (MINER.encode(), LENS.encode()))
    assert (status, body["error"]) == (400, code), body


def test_unknown_routes_and_methods_answer_json(served):
    base = served[0]
    assert call(f"{base}/nowhere")[0:1] == (404,) and call(f"{base}/nowhere")[1]["error"] == "not_found"
    assert call(f"{base}/v1/patches") == (405, {"error": "method_not_allowed",
                                                  "message": "The method is not allowed for the requested URL."})
    assert call(f"{base}/v1/jobs/x", b"{}")[0] == 405


def test_the_rate_limiter_counts_client_addresses_not_miners(served):
    import http.client
    base, port, other = served[0], served[1], "cd" * 20
    padded = [{"miner": " " * k + "0x" + other, "patch": LENS, "epochId": 7} for k in range(1, 41)]
    assert {call(f"{base}/v1/patches", b)[1]["error"] for b in padded} == {"bad_miner"}      # padding is not an address
    elsewhere = make_patch(b"\x33" * 32, {40: 1 << 48}, 0x02).hex()                        # well-formed; refused (E01) after the epoch check
    def post(miner, epoch, source="127.0.0.5"):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
        conn.request("POST", "/v1/patches", json.dumps({"miner": miner, "patch": elsewhere, "epochId": epoch}))
        r = conn.getresponse(); status = r.status; r.read(); conn.close()
        return status
    assert [post("0x" + other, 7) for _ in range(12)] == [404] * 12                           # a closed epoch counts nothing
    assert [post(f"0x{i:040x}", 1) for i in range(12)] == [400] * 10 + [429] * 2              # one address, however many miners
    assert post("0x" + other, 1, source="127.0.0.6") == 400                                   # another address is not limited


def test_a_patch_with_spaces_is_refused_like_a_miner_with_spaces(served):
    for padded in (" " + LENS, LENS + " ", "0x " + LENS, LENS + "\n"):
        assert call(f"{served[0]}/v1/patches", {"miner": MINER, "patch": padded, "epochId": 1})[1]["error"] == "malformed_hex"


def test_rejected_requests_leave_the_rate_limiter_bounded(tmp_path):
    from coretex.network.http import HttpIntake, RateLimiter, RequestBudget, make_app
    limiter = RateLimiter(per_minute=10, max_keys=100)
    srv = HttpIntake(make_app(None, limiter), budget=RequestBudget(10**6, 10**6)).start()   # refused before any coordinator is asked (the front's own limit lifted)
    try:
        base = f"http://127.0.0.1:{srv.port}/v1/patches"
        for i in range(2000):
            assert call(base, {"miner": f"{i:05d}" + "x" * 15_000, "patch": LENS, "epochId": 1})[1]["error"] == "bad_miner"
        assert len(limiter) == 0
        for i in range(300): limiter.allow(f"0x{i:040x}")
        assert len(limiter) == 100
    finally: srv.stop()


@pytest.fixture
def coordinator(tmp_path):
    "An in-process coordinator over a database server of its own."
    import pymongo
    from coretex.network.chain import Chain
    from coretex.network.coordinator import Coordinator
    from coretex.evaluator.evaluate import Evaluator
    from coretex.network.receipt import Signer
    with EmbeddedMongo(tmp_path / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        coord = Coordinator(client.coretex, Chain.connect(), Evaluator(), Signer.load(tmp_path / "key", create=True))
        coord.open_epoch(1, GENESIS, b"\x01" * 32)
        yield coord, client.coretex


def test_intake_with_the_chain_down_leaves_no_in_flight_mark(coordinator):
    from web3 import Web3
    from coretex.network.chain import Chain
    from coretex.network.intake import IntakeError
    coord, db = coordinator
    live, coord.chain = coord.chain, Chain(Web3(Web3.HTTPProvider("http://127.0.0.1:1", request_kwargs={"timeout": 1})))
    with pytest.raises(IntakeError, match="chain_unavailable"): coord.intake(MINER, LENS, 1)
    assert db.inflight.count_documents({}) == 0 and db.jobs.count_documents({}) == 0
    coord.chain = live
    assert coord.intake(MINER, LENS, 1)["status"] == "pending"


def test_the_worker_records_any_exception_and_goes_on(coordinator):
    from coretex.network.coordinator import work, TIMES
    coord, db = coordinator
    broken = coord.intake(MINER, make_patch(state_root(GENESIS), {40: 1 << 48}, 0x02).hex(), 1)["jobId"]
    db.jobs.update_one({"_id": broken}, {"$set": {"patch": "0xzz"}})          # a corrupted record: not a chain or patch error
    good = coord.intake(MINER, LENS, 1)["jobId"]
    lines = []
    work(coord, log=lines.append, once=True)
    failed, done = db.jobs.find_one({"_id": broken}), db.jobs.find_one({"_id": good})
    assert failed["status"] == "failed" and failed["error"].startswith("HexError") and done["status"] == "done"
    assert any(l.startswith(f"job {broken} failed: HexError") for l in lines)
    assert db.inflight.count_documents({}) == 0
    shown = coord.store.job_json(good)
    assert all(shown[k].endswith("+00:00") for k in TIMES if k != "failedAt")   # inserted and $set times alike


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_stopping_serve_stops_its_database(tmp_path, sig):
    p, _ = start_serve(tmp_path / "data")
    kids = children(p.pid)
    assert kids, "serve started no embedded database"
    p.send_signal(sig); p.wait(30)
    if sig != signal.SIGKILL: assert p.returncode == 0 and "coordinator stopped" in p.stdout.read()
    deadline = time.monotonic() + 10
    while any(alive(k) for k in kids) and time.monotonic() < deadline: time.sleep(0.1)
    assert not any(alive(k) for k in kids), "the embedded MongoDB outlived serve"


def test_serve_after_reveal_says_the_epoch_is_closed(tmp_path):
    p, _ = start_serve(tmp_path / "data")
    p.terminate(); p.wait(30)
    r = subprocess.run(["coretex", "coordinator", "reveal", "--epoch", "1"], capture_output=True, text=True, env=env_for(tmp_path / "data"))
    assert r.returncode == 0 and json.loads(r.stdout)["epochSecret"].startswith("0x")
    r = subprocess.run(["coretex", "coordinator", "serve", "--port", str(free_port())], capture_output=True, text=True,
                       env=env_for(tmp_path / "data"), timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "epoch 1 is closed" in r.stderr and "--epoch N" in r.stderr


def test_one_database_log_per_data_folder(tmp_path):
    for _ in range(3):
        r = subprocess.run(["coretex", "weights"], capture_output=True, text=True, env=env_for(tmp_path))
        assert r.returncode == 0, r.stderr
    assert [f.name for f in (tmp_path / "mongo").glob("*.log")] == ["nx-27017.log"]


def test_an_internal_error_is_a_json_500_and_logged(caplog):
    from coretex.network.http import HttpIntake, make_app
    srv = HttpIntake(make_app(None)).start()                      # no coordinator behind it: every read fails inside the app
    try: assert call(f"http://127.0.0.1:{srv.port}/v1/jobs/x") == (500, {"error": "internal", "message": "internal error (logged by the coordinator)"})
    finally: srv.stop()
    assert "unhandled AttributeError in GET /v1/jobs/x" in caplog.text
