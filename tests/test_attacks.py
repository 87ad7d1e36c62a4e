"""The coordinator under attack: one test per finding of two rounds of attacks, each failing on the code before it.

Small numbers show each mechanism (60 trickling connections against a front configured with a small cap and
short deadlines); the large ones (1,010 and 5,000 connections, 500 jobs on 4 worker processes) are in
`bench/bench_service.py`.
"""
import http.client, json, os, signal, socket, subprocess, sys, threading, time
from pathlib import Path
import pytest
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root
from coretex.network.store import EmbeddedMongo, free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _service import call, env_for

LENS = make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04).hex()
ELSEWHERE = make_patch(b"\x33" * 32, {40: 1 << 48}, 0x02).hex()   # well-formed, but declares another parent: refused after the epoch check
VICTIM = "0x" + "42" * 20


def request(port: int, method: str, path: str, body: bytes|None = None, source: str = "127.0.0.1", timeout: float = 5) -> tuple:
    "(status, JSON body) of one request sent from a chosen loopback source address."
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        conn.request(method, path, body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally: conn.close()


def submit(port, miner, patch, epoch, source="127.0.0.1"):
    return request(port, "POST", "/v1/patches", json.dumps({"miner": miner, "patch": patch, "epochId": epoch}).encode(), source)


@pytest.fixture(scope="module")
def front():
    "The HTTP front with a small configuration (4 requests in flight per address, 1.5 s deadlines) over an app with no coordinator."
    from coretex.network.http import HttpIntake, make_app
    srv = HttpIntake(make_app(None), per_address=4, head_timeout=1.5, body_timeout=1.5).start()
    try: yield srv
    finally: srv.stop(); srv._thread.join(10)


def trickle(port: int, sources: list, body: bool) -> list:
    "One connection per source address, each sending its request a byte at a time (every 0.25 s): the head, or a body after a whole head."
    socks = []
    for s in sources:
        c = socket.create_connection(("127.0.0.1", port), source_address=(s, 0), timeout=5)
        c.sendall(b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" if body else b"P")
        socks.append(c)
    return socks


def answers(socks, for_s: float) -> list:
    "Keep trickling a byte every 0.25 s on each connection for `for_s` seconds; then the first line each got back (b'' if none)."
    deadline, got = time.monotonic() + for_s, {}
    while time.monotonic() < deadline:
        for i, c in enumerate(socks):
            if i in got: continue
            try: c.sendall(b"x")
            except OSError: got[i] = None
        time.sleep(0.25)
    out = []
    for c in socks:
        c.settimeout(2)
        try: out.append(c.makefile("rb").readline().strip())
        except OSError: out.append(b"")
        c.close()
    return out


@pytest.mark.parametrize("body", [False, True], ids=["head", "body"])
def test_trickling_clients_do_not_starve_others(front, body):
    # 60 tricklers: 40 from one address, 20 from 5 others (4 each)
    sources = ["127.0.0.2"] * 40 + [f"127.0.1.{k}" for k in range(1, 6) for _ in range(4)]
    socks = trickle(front.port, sources, body)
    try:
        t0 = time.monotonic()
        for _ in range(5): assert request(front.port, "GET", "/nowhere")[1]["error"] == "not_found"
        alone = (time.monotonic() - t0) / 5
        firsts = answers(socks, 2.5)                                        # past the 1.5 s deadlines
    finally:
        for c in socks: c.close()
    deadline = time.monotonic() + 3
    while front.front.open and time.monotonic() < deadline: time.sleep(0.05)
    assert alone < 0.5
    if body:
        assert firsts.count(b"HTTP/1.1 503 Service Unavailable") == 36      # over 127.0.0.2's 4 in flight: refused before their bodies
        assert firsts.count(b"HTTP/1.1 408 Request Timeout") == 24          # held, then cut at the deadline however slowly they sent
    else: assert firsts == [b""] * 60                                       # a head not complete at its deadline: closed, no answer
    assert front.front.open == {}


def test_connections_over_the_budget_wait_in_the_listen_queue_and_are_said_once(caplog):
    from coretex.network.http import HttpIntake, make_app
    small = HttpIntake(make_app(None), connections=8, head_timeout=1.0).start()   # 8 connections at once; this process has more descriptors open
    try:
        socks = trickle(small.port, ["127.0.2.1"] * 8, body=False)            # the whole budget, heads never finished
        t0 = time.monotonic()
        status, body = request(small.port, "GET", "/nowhere", source="127.0.3.1")
        waited = time.monotonic() - t0
        for c in socks: c.close()
        time.sleep(1.2)
    finally: small.stop(); small._thread.join(10)
    assert (status, body["error"]) == (404, "not_found") and 0.8 < waited < 5     # queued in the kernel until the deadline freed a permit
    said = [r.getMessage() for r in caplog.records if "descriptors open" in r.getMessage()]
    assert len(said) == 1 and "(8 for connections)" in said[0], said              # once a minute at most, no traceback
    assert "Traceback" not in caplog.text


def test_a_flood_of_requests_from_one_address_is_limited_and_others_are_not():
    from coretex.network.http import HttpIntake, RequestBudget, make_app
    small = HttpIntake(make_app(None), budget=RequestBudget(rate=0.5, burst=5), body_timeout=0.3).start()
    try:
        t0 = time.monotonic()
        flood = [request(small.port, "GET", "/nowhere", source="127.0.4.1") for _ in range(8)]
        took = time.monotonic() - t0
        other = request(small.port, "GET", "/nowhere", source="127.0.4.2")
    finally: small.stop(); small._thread.join(10)
    assert [(s, b["error"]) for s, b in flood] == [(404, "not_found")] * 5 + [(429, "too_many_requests")] * 3
    assert took >= 3 * 0.3                                   # each refusal held for the body deadline: no faster reconnects
    assert other[0] == 404


def test_a_second_front_cannot_take_a_port_in_use(front):
    from coretex.network.http import HttpIntake, make_app
    with pytest.raises(OSError): HttpIntake(make_app(None), port=front.port)


def test_oversized_declared_length_is_refused_before_100_continue(front):
    with socket.create_connection(("127.0.0.1", front.port), timeout=5) as c:
        c.sendall(b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n")
        head = c.makefile("rb").read().split(b"\r\n\r\n")[0]
    assert head.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in head


def exchange_raw(port: int, raw: bytes, wait: float = 1.0) -> tuple:
    "([(status, error code or None for an empty body), ...] of every response to `raw` on one connection, whether the server closed it within `wait` s)."
    data, closed = b"", False
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as c:
        try:
            c.sendall(raw)
            while True:
                chunk = c.recv(65536)
                if not chunk: closed = True; break
                data += chunk
        except TimeoutError: pass
        except (ConnectionResetError, BrokenPipeError): closed = True
    out = []
    while data.startswith(b"HTTP/"):
        head, _, rest = data.partition(b"\r\n\r\n")
        n = int(next((l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), b"0"))
        out.append((int(head.split()[1]), json.loads(rest[:n])["error"] if n else None)); data = rest[n:]
    return out, closed


from smuggling_cases import SMUGGLING   # the 59 probes: what an attacker sent, the answers it must get, whether the connection closes


@pytest.mark.parametrize("case", list(SMUGGLING))
def test_smuggling_and_malformed_heads_get_one_answer(front, case):
    raw, expected, closes = SMUGGLING[case]
    got, closed = exchange_raw(front.port, raw)
    assert got == expected, got                       # each request answered once, in order: nothing hidden in a body is read as a request
    assert closed == closes


SERVE_FRONT = """
from coretex.network.http import HttpIntake, make_app
srv = HttpIntake(make_app(None), head_timeout=2.0)
print(srv.port, flush=True)
srv.run()
print("stopped", flush=True)
"""


def test_a_front_stopped_at_any_moment_exits_cleanly():
    "SIGTERM at random moments, with nothing open, a body being read, a head trickling: exit 0 every time (Granian's threads left in the interpreter abort it)."
    import random
    rng, waits = random.Random(31), []
    for i in range(9):
        p = subprocess.Popen([sys.executable, "-c", SERVE_FRONT], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        port, held = int(p.stdout.readline()), None
        if i % 3:
            held = socket.create_connection(("127.0.0.1", port), timeout=5)
            held.sendall(b"POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{" if i % 3 == 1 else b"GET /now")
        time.sleep(rng.uniform(0.05, 0.5))
        t0 = time.monotonic(); p.send_signal(signal.SIGTERM)
        if i % 3 == 1: assert held.makefile("rb").readline().startswith(b"HTTP/1.1 503 ")   # the body being read: answered at once
        out = p.communicate(timeout=30)[0]; waits.append(time.monotonic() - t0)
        if held: held.close()
        assert p.returncode == 0 and out.endswith("stopped\n"), out
    assert max(waits) < 2.0 + 2.0, waits                 # a trickling head holds the stop until its deadline, no longer


@pytest.mark.parametrize("method", ["OPTIONS", "PURGE", "TRACE"])
def test_options_and_unknown_methods_are_a_json_405_or_501(front, method):
    "A registered method a route does not take is a 405; one that is not registered (PURGE) a 501, from the head's reader."
    for path in ("/v1/patches", "/v1/jobs/x", "/v1/results/x"):
        status, body = request(front.port, method, path)
        assert (status, body["error"]) == ((501, "not_implemented") if method == "PURGE" else (405, "method_not_allowed"))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    "A database server and one Evaluator for the in-process tests; each test takes a database of its own."
    import pymongo
    from coretex.evaluator.evaluate import Evaluator
    from coretex.network.receipt import Signer
    tmp = tmp_path_factory.mktemp("world")
    with EmbeddedMongo(tmp / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as c:
        yield c, Evaluator(), Signer.load(tmp / "key", create=True)


@pytest.fixture
def coord(world, request):
    "A coordinator on a fresh database with epoch 1 open on the genesis state."
    from coretex.network.chain import Chain
    from coretex.network.coordinator import Coordinator
    c, ev, signer = world
    co = Coordinator(c[request.node.name.replace("[", "_").replace("]", "")[:60]], Chain.connect(), ev, signer)
    co.open_epoch(1, GENESIS, b"\x01" * 32)
    return co


def test_many_new_keys_do_not_free_a_limited_one(coord):
    from coretex.network.http import RateLimiter, make_app
    limiter = RateLimiter(per_minute=2, max_keys=20)
    app = make_app(coord, limiter).test_client()
    post = lambda ip, epoch=1: app.post("/v1/patches", json={"miner": VICTIM, "patch": ELSEWHERE, "epochId": epoch}, environ_base={"REMOTE_ADDR": ip}).status_code
    assert [post("198.51.100.1", 7) for _ in range(5)] == [404] * 5                    # refused before the limiter: nothing counted
    assert [post("198.51.100.1") for _ in range(3)] == [400, 400, 429]                 # counted: well-formed, open epoch (then E01)
    assert {post(f"10.0.0.{i}") for i in range(100)} == {400}                           # 100 new keys, each counted once
    assert (post("198.51.100.1"), len(limiter)) == (429, 20)                            # still limited; memory bounded


def damaged_jobs(coord, n: int) -> list:
    "n queued jobs whose stored patches are damaged, so each fails as soon as it is scored (and counts one evaluation)."
    from coretex.core.keccak import from_hex
    root = from_hex(coord.store.epoch(1).root)
    ids = [coord.intake(VICTIM, make_patch(root, {60 + i: 1 << 48}, 0x02).hex(), 1)["jobId"] for i in range(n)]
    coord.store.db.jobs.update_many({"_id": {"$in": ids}}, {"$set": {"patch": "0x07"}})
    return ids


def test_four_workers_score_each_job_once(coord):
    from coretex.network.chain import Chain
    from coretex.network.coordinator import Coordinator, work
    ids = damaged_jobs(coord, 24)
    peers = [Coordinator(coord.store.db, Chain.connect(), coord.ev, coord.signer) for _ in range(4)]   # a chain client each, as processes have
    ts = [threading.Thread(target=work, args=(p,), kwargs={"log": lambda m: None, "once": True, "poll": 0.05}) for p in peers]
    for t in ts: t.start()
    for t in ts: t.join(120)
    jobs = list(coord.store.db.jobs.find({"_id": {"$in": ids}}))
    assert sorted((j["status"], j["evaluations"], j["owner"]) for j in jobs) == [("failed", 1, None)] * 24


def test_a_dead_workers_lease_runs_out_and_the_job_is_retaken(coord):
    from coretex.network.coordinator import work
    (job,) = damaged_jobs(coord, 1)
    coord.store.db.jobs.update_one({"_id": job}, {"$set": {"owner": "a worker that died", "lease": time.time() + 2}})
    t0 = time.monotonic()
    work(coord, log=lambda m: None, once=True, poll=0.1)
    j = coord.store.db.jobs.find_one({"_id": job})
    assert (j["status"], j["evaluations"], j["owner"], time.monotonic() - t0 >= 2) == ("failed", 1, None, True)   # not before it ran out


def test_sigterm_mid_job_finishes_it_then_closes_the_store(tmp_path):
    import pymongo
    with EmbeddedMongo(tmp_path / "db") as db:
        port = free_port()
        env = {**env_for(tmp_path / "data"), "PYTHONWARNINGS": "always::ResourceWarning"}
        p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--mongodb-uri", db.uri],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        lines = []
        while not any("listening" in l for l in lines):
            line = p.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        job = submit(port, VICTIM, LENS, 1)[1]["jobId"]
        with pymongo.MongoClient(db.uri) as c:
            deadline = time.monotonic() + 120
            while c.coretex.jobs.find_one({"_id": job}).get("scoringStartedAt") is None:
                assert time.monotonic() < deadline and p.poll() is None
                time.sleep(0.05)
            p.send_signal(signal.SIGTERM)
            out = "".join(lines) + p.communicate(timeout=180)[0]
            j = c.coretex.jobs.find_one({"_id": job})
        assert p.returncode == 0 and "coordinator stopped" in out, out
        assert "will retry" not in out and "ResourceWarning" not in out and "Traceback" not in out, out
        assert (j["status"], j["evaluations"], j["owner"]) == ("done", 1, None)


def test_behind_a_trusted_proxy_the_client_is_its_forwarded_address():
    from coretex.network.http import HttpIntake, RequestBudget, make_app
    small = HttpIntake(make_app(None), budget=RequestBudget(rate=0.5, burst=2), trusted_proxies=["127.0.5.1"],
                         body_timeout=0.2).start()
    def get(source, forwarded):
        conn = http.client.HTTPConnection("127.0.0.1", small.port, timeout=5, source_address=(source, 0))
        try: conn.request("GET", "/nowhere", headers={"X-Forwarded-For": forwarded}); return conn.getresponse().status
        finally: conn.close()
    try:
        via_proxy = [get("127.0.5.1", a) for a in ("198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2", "junk")]
        spoofed = [get("127.0.5.2", f"198.51.100.{k}") for k in range(3)]   # not the proxy: its header is not believed
    finally: small.stop(); small._thread.join(10)
    assert via_proxy == [404, 404, 429, 404, 404] and spoofed == [404, 404, 429]
