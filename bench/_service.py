"""Scenarios of the coordinator as a service, each with real processes: the embedded MongoDB server in its own
process, `coretex coordinator serve` / `work` as subprocesses, real HTTP on loopback, a JSON-RPC node on
loopback. Shared by `bench/bench_service.py` (full counts) and `tests/test_faults.py` (small counts); each
scenario returns its figures as a dict."""
from collections import Counter
import http.client, json, os, random, signal, socket, subprocess, threading, time, urllib.error, urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root
from coretex.network.store import EmbeddedMongo, free_port

ROOT_G = state_root(GENESIS)
LENS = make_patch(ROOT_G, {672: encode_relation("supersedes")}, 0x04).hex()


def patch_for(i: int) -> str:
    "The i-th of many distinct patches valid on the genesis state (one MemoryIndex word each)."
    return make_patch(ROOT_G, {32 + i % 352: (i // 352 + 1) << 128}, 0x02).hex()


def miner(i: int) -> str: return f"0x{i:040x}"


def call(url: str, body=None, method=None, timeout: float = 30):
    "(status, JSON body) of one HTTP request."
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r: return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e: return e.code, json.loads(e.read())


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
    return float("nan")


def pct(xs, q) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def env_for(data, **extra) -> dict:
    env = {**os.environ, "CORETEX_DATA": str(data), **extra}
    for k in ("CORETEX_RPC_URL", "CORETEX_SIGNING_KEY", "CORETEX_MONGODB_URI"):
        if k not in extra: env.pop(k, None)
    return env


@dataclass
class Served:
    "A running `coretex coordinator serve`: its base URL, process, database server and output lines."
    base: str
    proc: subprocess.Popen
    db: EmbeddedMongo
    lines: list = field(default_factory=list)


@contextmanager
def served(tmp: Path, *args, port: int|None = None, db_port: int|None = None):
    "`coretex coordinator serve` on a database server of its own (both stopped at the end)."
    with EmbeddedMongo(tmp / "db", db_port) as db:
        port = port or free_port()
        p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--mongodb-uri", db.uri, *map(str, args)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env_for(tmp / "data"))
        s = Served(f"http://127.0.0.1:{port}", p, db)
        while not any("listening" in l for l in s.lines):
            line = p.stdout.readline()
            if not line: raise RuntimeError("serve did not start: " + "".join(s.lines))
            s.lines.append(line)
        threading.Thread(target=lambda: [s.lines.append(l) for l in p.stdout], daemon=True).start()
        try: yield s
        finally:
            p.terminate()
            try: p.wait(30)
            except subprocess.TimeoutExpired: p.kill(); p.wait()
            p.stdout.close()


def client(s: Served):
    import pymongo
    return pymongo.MongoClient(s.db.uri, tz_aware=True)


def _parallel(fn, items, threads: int) -> list:
    "fn(item) for every item on `threads` threads, results in order."
    out, it, lock = [None] * len(items), iter(range(len(items))), threading.Lock()
    def run():
        while True:
            with lock: i = next(it, None)
            if i is None: return
            out[i] = fn(items[i])
    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    return out


def same_patch(s: Served, n: int = 100) -> dict:
    "n concurrent submissions of one patch (n miners, released together): one job, n - 1 duplicate answers."
    gate, patch = threading.Barrier(n), patch_for(10**6)   # a patch that cannot advance the epoch under the later scenarios
    def submit(i):
        gate.wait(); t0 = time.perf_counter()
        status, body = call(f"{s.base}/v1/patches", {"miner": miner(10_000 + i), "patch": patch, "epochId": 1})
        return status, body.get("error"), time.perf_counter() - t0
    res = _parallel(submit, list(range(n)), n)
    with client(s) as c: jobs = c.coretex.jobs.count_documents({"patch": "0x" + patch})
    ms = [r[2] * 1000 for r in res]
    return {"n": n, "accepted": sum(r[0] == 202 for r in res), "duplicate_in_flight": sum(r[1] == "duplicate_in_flight" for r in res),
            "cached": sum(r[0] == 200 for r in res), "other": sum(r[0] not in (200, 202, 409) for r in res), "jobs": jobs,
            "p50_ms": pct(ms, 0.5), "p99_ms": pct(ms, 0.99)}


def distinct(s: Served, n: int = 1000, threads: int = 16) -> dict:
    "n distinct patches from n miners: every one queued (202, a job in the database), none lost; intake rate vs GET rate."
    t0 = time.perf_counter()
    res = _parallel(lambda i: call(f"{s.base}/v1/patches", {"miner": miner(i), "patch": patch_for(i), "epochId": 1}), list(range(n)), threads)
    post_s = time.perf_counter() - t0
    ids, codes = [b["jobId"] for st, b in res if st == 202], {}
    for st, b in res: codes[f"{st} {b.get('error', '')}".strip()] = codes.get(f"{st} {b.get('error', '')}".strip(), 0) + 1
    t0 = time.perf_counter()
    got = _parallel(lambda j: call(f"{s.base}/v1/jobs/{j}")[0], ids, threads)
    get_s = time.perf_counter() - t0
    with client(s) as c: stored = c.coretex.jobs.count_documents({"_id": {"$in": ids}})
    return {"n": n, "codes": codes, "accepted": len(ids), "distinct_ids": len(set(ids)), "stored": stored, "readable": sum(g == 200 for g in got),
            "post_per_s": n / post_s, "get_per_s": len(ids) / get_s if ids else float("nan")}


def _latencies(url: str, k: int) -> list:
    out = []
    for _ in range(k):
        t0 = time.perf_counter(); call(url, timeout=30); out.append(time.perf_counter() - t0)
    return out


def slow_clients(s: Served, n: int = 50, k: int = 20) -> dict:
    "A fast client's latency alone, then with n clients that each sent one byte of a promised 100 and wait."
    url = f"{s.base}/v1/jobs/none"
    alone = _latencies(url, k)
    socks = []
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", int(s.base.rsplit(":", 1)[1])))
        c.sendall(b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        socks.append(c)
    try: crowded = _latencies(url, k)
    finally:
        for c in socks: c.close()
    return {"slow_clients": n, "alone_max_ms": max(alone) * 1000, "with_slow_max_ms": max(crowded) * 1000,
            "with_slow_median_ms": pct(crowded, 0.5) * 1000, "ratio_median": pct(crowded, 0.5) / pct(alone, 0.5)}


def rejected_flood(s: Served, n: int = 100_000, threads: int = 8, size: int = 15_000) -> dict:
    "RSS of serve before and after n rejected requests: half with unique ~15 KB miner strings, half from unique valid addresses to a closed epoch."
    port = int(s.base.rsplit(":", 1)[1])
    def batch(k):
        conn, codes = http.client.HTTPConnection("127.0.0.1", port, timeout=30), {}
        for i in range(k, n, threads):
            m = f"{i:08d}" + "x" * size if i % 2 == 0 else miner(1_000_000 + i)
            conn.request("POST", "/v1/patches", json.dumps({"miner": m, "patch": LENS, "epochId": 99}), {"Content-Type": "application/json"})
            r = conn.getresponse(); r.read()
            codes[r.status] = codes.get(r.status, 0) + 1
        conn.close()
        return codes
    warm = max(1000, n // 100)
    _parallel(lambda k: call(f"{s.base}/v1/patches", {"miner": "x" * size, "patch": LENS, "epochId": 99}), list(range(warm)), threads)
    before, t0 = rss_mb(s.proc.pid), time.perf_counter()
    codes = {}
    for part in _parallel(batch, list(range(threads)), threads):
        for k, v in part.items(): codes[k] = codes.get(k, 0) + v
    took, after = time.perf_counter() - t0, rss_mb(s.proc.pid)
    return {"n": n, "codes": codes, "rss_before_mb": before, "rss_after_mb": after, "growth_mb": after - before, "ratio": after / before,
            "per_s": n / took}


class FakeNode:
    "A JSON-RPC node on loopback whose head grows with time; block `target` answers `early` until it has 2 confirmations, then `late` (or flaps)."
    def __init__(self, target: int, early: bytes, late: bytes, flap: bool = False, block_time: float = 0.05):
        node, self.t0, self.asked = self, time.monotonic(), []
        self.target, self.early, self.late, self.flap, self.block_time, self.calls = target, early, late, flap, block_time, 0
        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                out = json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": node.answer(req["method"], req.get("params", []))}).encode()
                self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(out)))
                self.end_headers(); self.wfile.write(out)
            def log_message(self, *a): pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def head(self) -> int: return int((time.monotonic() - self.t0) / self.block_time)

    def hash_of(self, n: int) -> bytes:
        if n != self.target: return n.to_bytes(32, "big")
        deep = self.head() >= n + 2
        self.calls += 1
        h = (self.late if not self.flap or self.calls % 2 else self.early) if deep else self.early
        self.asked.append((deep, h))
        return h

    def answer(self, method: str, params: list):
        if method == "eth_chainId": return hex(8453)
        if method == "eth_blockNumber": return hex(self.head())
        if method == "eth_getBlockByNumber":
            n = int(params[0], 16)
            if n > self.head(): return None
            z = "0x" + "00" * 32
            return {"number": hex(n), "hash": "0x" + self.hash_of(n).hex(), "parentHash": z, "nonce": "0x" + "00" * 8, "sha3Uncles": z,
                    "logsBloom": "0x" + "00" * 256, "transactionsRoot": z, "stateRoot": z, "receiptsRoot": z, "miner": "0x" + "00" * 20,
                    "difficulty": "0x0", "totalDifficulty": "0x0", "extraData": "0x", "size": "0x0", "gasLimit": "0x0", "gasUsed": "0x0",
                    "timestamp": hex(n), "transactions": [], "uncles": []}
        raise ValueError(method)

    def close(self): self.server.shutdown(); self.server.server_close()


def rpc_faults(tmp: Path) -> dict:
    "A reorganised block before its confirmations, a node that never agrees with itself, a node that is gone: what gets drawn."
    import pymongo
    from coretex.network.chain import Chain, ChainError
    from coretex.network.coordinator import Coordinator
    from coretex.evaluator.evaluate import Evaluator
    from coretex.network.receipt import Signer
    from web3 import Web3
    ev, out = Evaluator(), {}
    with EmbeddedMongo(tmp / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as c:
        for case in ("reorg", "flap", "gone"):
            node = FakeNode(target=10**9, early=b"\xee" * 32, late=b"\x1a" * 32, flap=case == "flap", block_time=0.1)
            db = c[f"rpc_{case}"]
            coord = Coordinator(db, Chain.connect(node.url), ev, Signer(b"\x07" * 32), confirmations=2, block_timeout=5)
            coord.open_epoch(1, GENESIS, b"\x01" * 32)
            job = coord.intake(miner(1), LENS, 1)
            node.target = job["targetBlock"]
            while node.head() < node.target: time.sleep(0.01)
            node.hash_of(node.target)                                    # what anyone reading the new block sees: the early hash
            if case == "gone": node.close(); coord.chain = Chain(Web3(Web3.HTTPProvider(node.url, request_kwargs={"timeout": 1})))
            t0 = time.monotonic()
            try: drawn, err = coord.draw(job["jobId"]).blockhash, None
            except ChainError as e: drawn, err = None, str(e)
            stored = db.jobs.find_one({"_id": job["jobId"]})
            out[case] = {"drawn": drawn, "error": err, "status": stored["status"], "stored_blockhash": stored["blockhash"],
                         "early_served": any(not deep and h == node.early for deep, h in node.asked), "waited_s": round(time.monotonic() - t0, 2),
                         "inflight_left": db.inflight.count_documents({})}
            if case != "gone": node.close()
    return out


def _wait_for(db, job: str, field: str, p, limit: float = 300) -> bool:
    "Wait until the job has `field` set (True) or the worker has exited (False)."
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and p.poll() is None:
        if db.jobs.find_one({"_id": job}).get(field) is not None: return True
        time.sleep(0.02)
    return False


def kill9(tmp: Path, runs: int = 20, seed: int = 14) -> dict:
    """`coretex coordinator work` killed with SIGKILL at a random moment, then restarted, `runs` times: every job ends
    done, credited once, with the verdict an uninterrupted evaluation gives for its stored draw. The moment is drawn
    from a random phase (start-up, just after the draw is stored, scoring) and a random delay within it, measured on
    an uninterrupted calibration job, so kills land in every phase rather than mostly in start-up."""
    import pymongo
    from coretex.network.chain import Chain
    from coretex.network.coordinator import Coordinator, TIMES
    from coretex.evaluator.evaluate import Evaluator, evaluate_patch
    from coretex.network.store import aware
    from coretex.core.keccak import from_hex
    from coretex.network.receipt import Signer
    rng, key, ev = random.Random(seed), tmp / "coordinator.key", Evaluator()
    signer = Signer.load(key, create=True)
    worker = lambda uri: subprocess.Popen(["coretex", "coordinator", "work", "--once", "--lease", "2", "--mongodb-uri", uri, "--key-file", str(key)],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(tmp / "data"))
    figures = {"runs": runs, "done": 0, "credited_once": 0, "identical_verdicts": 0, "lost": 0, "phases": {}, "killed_after_s": []}
    with EmbeddedMongo(tmp / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as c:
        db = c.coretex
        coord = Coordinator(db, Chain.connect(), ev, signer)
        coord.open_epoch(99, GENESIS, b"\x63" * 32)                                 # calibration: one uninterrupted job
        cal = coord.intake(miner(99), make_patch(ROOT_G, {672: encode_relation("supersedes"), 39: 1 << 128}, 0xFF).hex(), 99)["jobId"]
        t0 = time.monotonic(); p = worker(server.uri); p.communicate(timeout=600)
        j = aware(db.jobs.find_one({"_id": cal}), TIMES)
        scoring = (j["finishedAt"] - j["scoringStartedAt"]).total_seconds()
        startup = max(1.0, time.monotonic() - t0 - scoring)
        figures["calibration_s"] = {"startup": round(startup, 1), "scoring": round(scoring, 1)}
        for r in range(runs):
            secret = bytes([r + 1]) * 32
            coord.open_epoch(100 + r, GENESIS, secret)
            patch = make_patch(ROOT_G, {672: encode_relation("supersedes"), 40: (r + 1) << 128}, 0xFF)
            job = coord.intake(miner(r), patch.hex(), 100 + r)["jobId"]
            p, t0 = worker(server.uri), time.monotonic()
            anchor = rng.choice(["start-up", "drawn", "scoring"])
            if anchor == "start-up": time.sleep(rng.uniform(0.2, startup))
            elif _wait_for(db, job, "drawnAt" if anchor == "drawn" else "scoringStartedAt", p):
                time.sleep(rng.uniform(0.0, 0.3 if anchor == "drawn" else scoring))
            at = time.monotonic() - t0
            p.send_signal(signal.SIGKILL); p.communicate()
            j = db.jobs.find_one({"_id": job})
            phase = "done" if j["status"] == "done" else "scoring" if j["status"] == "running" else "drawn" if j["blockhash"] else "starting"
            figures["phases"][phase] = figures["phases"].get(phase, 0) + 1; figures["killed_after_s"].append(round(at, 1))
            p = worker(server.uri); p.communicate(timeout=600)
            j, ep = db.jobs.find_one({"_id": job}), db.epochs.find_one({"_id": 100 + r})
            if j is None: figures["lost"] += 1; continue
            figures["done"] += j["status"] == "done"
            env = db.results.find_one({"_id": j["dedupKey"]})["envelope"]
            credited = ep["credited"].count(job)
            figures["credited_once"] += credited == (1 if env["outcome"] == "STATE_ADVANCE" else 0)
            ref = evaluate_patch(ev, GENESIS, patch, from_hex(j["blockhash"]), secret, 100 + r)
            figures["identical_verdicts"] += env["evaluation"] == ref.to_json()
        figures["results"], figures["jobs"] = db.results.count_documents({}), db.jobs.count_documents({})
    return figures


def db_restart(tmp: Path, down_s: float = 4.0) -> dict:
    "The database stopped and restarted under a running coordinator: what a miner sees meanwhile, and whether work resumes."
    db_port = free_port()
    with served(tmp, "--rate", 1000, db_port=db_port) as s:
        st, first = call(f"{s.base}/v1/patches", {"miner": miner(1), "patch": LENS, "epochId": 1})
        s.db.stop(); t_down = time.monotonic()
        during = call(f"{s.base}/v1/patches", {"miner": miner(2), "patch": patch_for(5), "epochId": 1}, timeout=60)
        time.sleep(max(0.0, down_s - (time.monotonic() - t_down)))
        s.db.start(); t_up = time.monotonic()
        after = call(f"{s.base}/v1/patches", {"miner": miner(3), "patch": patch_for(6), "epochId": 1}, timeout=60)
        deadline, state = time.monotonic() + 300, None
        while time.monotonic() < deadline:
            state = call(f"{s.base}/v1/jobs/{first['jobId']}")[1].get("status")
            if state == "done": break
            time.sleep(0.5)
        return {"before": st, "during": [during[0], during[1].get("error")], "after": after[0], "first_job": state,
                "down_s": round(t_up - t_down, 1), "resumed_after_s": round(time.monotonic() - t_up, 1), "serve_alive": s.proc.poll() is None,
                "worker_lines": sum("database unavailable" in l or "cannot take a job" in l for l in s.lines)}


def secrets(tmp: Path) -> dict:
    "A full run (serve, a job to its verdict, bad requests, SIGTERM); then every artefact is searched for the signing key and the epoch secret."
    from coretex.network.store import open_db
    key_hex = os.urandom(32).hex()
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "k").write_text(key_hex)
    data = tmp / "data"
    port = free_port()
    p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--key-file", str(tmp / "k")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env_for(data))
    lines = []
    while not any("listening" in l for l in lines): lines.append(p.stdout.readline())
    threading.Thread(target=lambda: [lines.append(l) for l in p.stdout], daemon=True).start()
    base, answers = f"http://127.0.0.1:{port}/v1", []
    job = call(f"{base}/patches", {"miner": miner(1), "patch": LENS, "epochId": 1})[1]; answers.append(job)
    while (j := call(f"{base}/jobs/{job['jobId']}")[1])["status"] != "done": time.sleep(0.5)
    answers += [j, call(f"{base}/results/{job['dedupKey']}")[1]]
    for body in (b"{", b'{"epochId": NaN}', json.dumps({"miner": miner(1), "patch": LENS[:-2], "epochId": 1}).encode(),
                 json.dumps({"miner": miner(1), "patch": patch_for(3), "epochId": 7}).encode()):
        answers.append(call(f"{base}/patches", body))
    answers.append(call(f"{base}/nowhere"))
    p.send_signal(signal.SIGTERM); p.wait(60); time.sleep(0.5); p.stdout.close()
    db, close = open_db(path=data / "mongo")
    dump = json.dumps({c: list(db[c].find()) for c in db.list_collection_names()}, default=str)
    close()
    files = {f: f.read_bytes() for f in data.rglob("*") if f.is_file() and f.name != "coordinator.key"}
    r = subprocess.run(["coretex", "coordinator", "reveal", "--epoch", "1", "--key-file", str(tmp / "k")], capture_output=True, text=True, env=env_for(data))
    secret = json.loads(r.stdout)["epochSecret"][2:]
    texts = {"serve output": "".join(lines), "HTTP answers": json.dumps(answers), "database dump": dump}
    hits = [name for name, t in texts.items() for s in (key_hex, secret) if s in t.lower()]
    hits += [str(f) for f, b in files.items() for s in (key_hex, secret) if s.encode() in b.lower() or bytes.fromhex(s) in b]
    return {"artefacts": len(texts) + len(files), "files": len(files), "hits": hits, "revealed": len(secret) == 64,
            "verdict_read_back": answers[2]["outcome"] in ("REJECT", "SCREENER_PASS", "STATE_ADVANCE")}


def _source(a: int) -> str: return f"127.0.{1 + a // 250}.{1 + a % 250}"   # the a-th loopback address of a crowd


def _crowd(port: int, n: int, body: bool, addresses: int, open_now, q, seconds: float = 0.0, reconnect: bool = False, first: int = 0) -> None:
    """n trickling connections driven by one selector loop (in a process of its own): once a second it writes the next
    byte to every connection still open, and reads answers between. Reports ('ready', connected, failed), then
    ('done', answers, CPU seconds). One loop with no task or timer per connection keeps the peer's own CPU use small, so
    that what is measured is the front, not the load generator competing with it for the 2 cores. It trickles for
    `seconds` (default: the payload's length and two more seconds to hear the last answers); with `reconnect`, a
    connection that ends (answered, closed or reset) is opened again from its address at once. The connections are
    spread evenly over `addresses` loopback addresses, numbered from `first`."""
    import resource, selectors
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard: resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    head = b"POST /v1/patches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    payload, answers, failed = (b"{" + b" " * 99 if body else head)[:100], Counter(), 0
    sel, live = selectors.DefaultSelector(), {}   # live: socket -> [source address, bytes sent of payload]

    def connect(src: str) -> None:
        nonlocal failed
        sk = socket.socket()
        try:
            sk.settimeout(5); sk.bind((src, 0)); sk.connect(("127.0.0.1", port))
            if body: sk.sendall(head)
        except OSError: sk.close(); failed += 1; return
        sk.setblocking(False); sel.register(sk, selectors.EVENT_READ); live[sk] = [src, 0]

    def end(sk, code) -> None:
        answers[code] += 1; sel.unregister(sk); sk.close()
        src = live.pop(sk)[0]
        if reconnect and time.monotonic() < stop_at: connect(src)

    for i in range(n): connect(_source(first + i * addresses // n))
    q.put(("ready", len(live), failed))
    open_now.value = len(live)
    stop_at = time.monotonic() + (seconds or len(payload) + 2)
    while live and time.monotonic() < stop_at:
        tick = time.monotonic() + 1.0
        for sk, st in list(live.items()):
            if st[1] < len(payload):
                try: sk.send(payload[st[1]:st[1] + 1]); st[1] += 1
                except BlockingIOError: pass
                except OSError: end(sk, "reset")
        while (left := min(tick, stop_at) - time.monotonic()) > 0 and live:
            for key, _ in sel.select(left):
                if key.fileobj not in live: continue
                try: line = key.fileobj.recv(4096)
                except OSError: end(key.fileobj, "reset"); continue
                end(key.fileobj, line.split(b" ")[1].decode() if line.startswith(b"HTTP/") else "closed")
        open_now.value = len(live)
    for sk in list(live): answers["unanswered"] += 1; sel.unregister(sk); sk.close()
    use = resource.getrusage(resource.RUSAGE_SELF)
    q.put(("done", dict(answers), use.ru_utime + use.ru_stime, failed))


def trickle_flood(s: Served, n: int, body: bool, k: int = 40, addresses: int|None = None, settle: float = 2.0, seconds: float = 0.0) -> dict:
    """A normal client's GET latency alone, then while n connections from `addresses` loopback addresses 127.0.x.y
    (default: 100 connections an address) send a request 1 byte a second: its head, or its body after a whole head.
    The connections run in a process of their own (one selector loop), so the normal client does not share their
    interpreter.
    Each trickler stops when answered (a 408 at its deadline) or after its 100 bytes; every loop is bounded. GETs in
    the first `settle` seconds, while the front is still accepting the crowd, are reported apart (their max). With
    `seconds`, the crowd trickles that long and every connection that ends is opened again at once from its address
    (the reconnecting crowd), and the normal client GETs until the crowd stops."""
    import multiprocessing as mp
    port, url = int(s.base.rsplit(":", 1)[1]), f"{s.base}/v1/jobs/none"
    ctx = mp.get_context("spawn")
    open_now, q = ctx.Value("i", 0), ctx.Queue()
    def gets(until: float|None = None, count: int = 0) -> tuple:
        "(seconds of each GET answered, how many timed out): `count` of them, or as many as fit before `until`, 50 ms apart."
        took, timeouts = [], 0
        while (time.monotonic() < until) if until else len(took) + timeouts < count:
            t0 = time.perf_counter()
            try: call(url, timeout=15); took.append(time.perf_counter() - t0)
            except OSError: timeouts += 1
            time.sleep(0.05)
        return took, timeouts
    alone = gets(count=k)[0]   # timed as the crowded GETs are: 50 ms apart (back to back, each is ~3x faster, threads still awake)
    addresses = addresses or -(-n // 100)
    child = ctx.Process(target=_crowd, args=(port, n, body, addresses, open_now, q, seconds, bool(seconds)), daemon=True); child.start()
    _, connected, failed = q.get(timeout=180)
    t_ready = time.monotonic()
    # the crowd's connections are complete in the kernel before the front has accepted them all: a GET's connection
    # waits in the accept queue behind them for up to a second; timed apart, then the trickling itself is measured
    burst, burst_timeouts = gets(until=time.monotonic() + settle)
    open_at_start = open_now.value
    crowded, timeouts = gets(until=t_ready + seconds - 1) if seconds else gets(count=k)
    open_at_end = open_now.value
    _, answers, crowd_cpu, failed = q.get(timeout=180); child.join(30)
    return {"n": n, "kind": "body" if body else "head", "connected": connected, "connect_failed": failed,
            "held_during": (open_at_start, open_at_end), "answers": answers, "alone_median_ms": pct(alone, 0.5) * 1000,
            "median_ms": pct(crowded, 0.5) * 1000, "max_ms": max(crowded) * 1000 if crowded else float("nan"),
            "ratio": pct(crowded, 0.5) / pct(alone, 0.5), "timeouts": timeouts + burst_timeouts, "gets": len(crowded) + timeouts + len(burst) + burst_timeouts,
            "max_all_ms": max(crowded + burst) * 1000 if crowded + burst else float("nan"), "addresses": addresses,
            "settle_s": settle, "crowd_cpu_s": round(crowd_cpu, 1), "burst_max_ms": max(burst) * 1000 if burst else float("nan"), "burst_gets": len(burst)}


def post_from(port: int, body: dict, source: str, timeout: float = 30) -> tuple:
    "(status, error code or None) of one submission sent from a chosen loopback source address."
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        conn.request("POST", "/v1/patches", json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse(); b = json.loads(r.read())
        return r.status, b.get("error")
    finally: conn.close()


def limiter_attacks(tmp: Path, flood: int = 10_000) -> dict:
    """The lockout (10 POSTs naming a victim's address for a closed epoch) and the eviction attack (an attacker at its
    limit, then `flood` counted submissions from as many loopback addresses), against serve at 10 a minute."""
    from coretex.core.patch import make_patch
    elsewhere = make_patch(b"\x33" * 32, {40: 1 << 48}, 0x02).hex()   # well-formed, another parent: counted, then refused E01
    with served(tmp, "--rate", 10) as s:
        port, victim, attacker = int(s.base.rsplit(":", 1)[1]), miner(7), "127.0.0.9"
        lockout = [post_from(port, {"miner": victim, "patch": LENS, "epochId": 99}, attacker)[0] for _ in range(10)]
        own = post_from(port, {"miner": victim, "patch": patch_for(77), "epochId": 1}, "127.0.0.10")
        spent = [post_from(port, {"miner": victim, "patch": elsewhere, "epochId": 1}, attacker)[1] for _ in range(11)]
        addrs = [f"127.{1 + i // 62500}.{(i // 250) % 250 + 1}.{i % 250 + 1}" for i in range(flood)]
        t0 = time.perf_counter()
        codes = {}
        for st, err in _parallel(lambda a: post_from(port, {"miner": miner(50_000), "patch": elsewhere, "epochId": 1}, a), addrs, 8):
            codes[f"{st} {err}"] = codes.get(f"{st} {err}", 0) + 1
        took = time.perf_counter() - t0
        after = post_from(port, {"miner": victim, "patch": elsewhere, "epochId": 1}, attacker)
        newcomer = post_from(port, {"miner": miner(8), "patch": patch_for(78), "epochId": 1}, "127.0.0.11")
        return {"lockout_answers": lockout, "victim_after_lockout": own, "attacker_spent": spent, "flood": flood,
                "flood_codes": codes, "flood_s": round(took, 1), "attacker_after_flood": after, "newcomer_after_flood": newcomer}


def abstention_patch(k: int) -> str:
    "A POLICY_UPDATE adding one abstention atom (cell 640 + k) on genesis: STATE_ADVANCE or not by the draw (tests/helpers.py's abstain_patch)."
    from coretex.core.layout import encode_atom
    return make_patch(ROOT_G, {640 + k: encode_atom("missing_evidence", "top1_score", "abstain", "owner", 0xFFFF, budget=80, flags=1)}, 0x07).hex()


def open_epochs(db, key: Path, ids) -> None:
    "Open more epochs on genesis in serve's database, sealed with its key, so that each can credit one advance."
    from coretex.network.coordinator import CoordinatorStore
    from coretex.core.keccak import keccak256
    from coretex.network.receipt import Signer
    store = CoordinatorStore(db, Signer.load(key))
    for e in ids: store.open_epoch(e, GENESIS, keccak256(b"race epoch %d" % e))


def workers_race(tmp: Path, jobs: int = 500, extra: int = 3, kill_every: float|None = None, lease: int = 3, seed: int = 22,
                 advancing: int = 0, per_epoch: int = 3) -> dict:
    """serve (with its own worker) and `extra` `coretex coordinator work` processes on one database, `jobs` distinct
    submissions: evaluations counted per job (the job's `evaluations` field, one per move to running). With
    `kill_every`, a random `work` process is killed with SIGKILL that often and another started; the jobs it held
    at its death (its name on their lease) are the only ones allowed a second evaluation. With `advancing`, as many
    more epochs are opened on genesis and each given `per_epoch` abstention patches among the others (each in a cell of
    its own: the same patch on the same parent would be a cached verdict in another epoch): each epoch credits at most
    one advance (the first to be credited moves its root), and credits are counted per job."""
    assert advancing * per_epoch <= 32, "the abstention region has 32 cells"
    rng, host = random.Random(seed), socket.gethostname()
    with served(tmp, "--rate", 1_000_000, "--requests", 1_000_000, "--lease", lease) as s:
        key = tmp / "data" / "coordinator.key"
        start = lambda: subprocess.Popen(["coretex", "coordinator", "work", "--lease", str(lease), "--mongodb-uri", s.db.uri, "--key-file", str(key)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_for(tmp / "data"))
        epochs = list(range(2, 2 + advancing))
        with client(s) as c: open_epochs(c.coretex, key, epochs)
        workers = [start() for _ in range(extra)]
        bodies = [{"miner": miner(i), "patch": patch_for(2000 + i), "epochId": 1} for i in range(jobs)]
        bodies += [{"miner": miner(100_000 + e), "patch": abstention_patch((e - 2) * per_epoch + k), "epochId": e}
                   for e in epochs for k in range(per_epoch)]
        rng.shuffle(bodies)
        res = _parallel(lambda b: call(f"{s.base}/v1/patches", b), bodies, 16)
        ids = [b["jobId"] for st, b in res if st == 202]
        died_holding, kills, t0 = set(), 0, time.monotonic()
        with client(s) as c:
            db, last_kill = c.coretex, time.monotonic()
            while db.jobs.count_documents({"_id": {"$in": ids}, "status": {"$in": ["done", "failed"]}}) < len(ids) and time.monotonic() - t0 < 3600:
                time.sleep(0.5)
                if kill_every and time.monotonic() - last_kill > kill_every:
                    victim = rng.randrange(len(workers))
                    p = workers[victim]; p.send_signal(signal.SIGKILL); p.wait(); kills += 1
                    died_holding |= {j["_id"] for j in db.jobs.find({"owner": {"$regex": f"^{host}:{p.pid}:"}}, {"_id": 1})}
                    workers[victim], last_kill = start(), time.monotonic()
            took = time.monotonic() - t0
            docs = {j["_id"]: j for j in db.jobs.find({"_id": {"$in": ids}})}
            credited = [j for e in [1, *epochs] for j in db.epochs.find_one({"_id": e})["credited"]]
            outcomes = {d["_id"]: d["envelope"]["outcome"] for d in db.results.find({})}
        for p in workers: p.terminate(); p.wait(60)
    evals = {j: d.get("evaluations", 0) for j, d in docs.items()}
    again = {j for j, e in evals.items() if e > 1}
    return {"jobs": jobs, "accepted": len(ids), "workers": extra + 1, "kills": kills, "seconds": round(took),
            "finished": sum(d["status"] in ("done", "failed") for d in docs.values()), "lost": len(ids) - sum(d["status"] in ("done", "failed") for d in docs.values()),
            "evaluations": sum(evals.values()), "exactly_once": sum(e == 1 for e in evals.values()), "re_evaluated": len(again),
            "re_evaluated_not_held_by_a_dead_worker": len(again - died_holding), "died_holding": len(died_holding),
            "credited": len(credited), "credited_twice": len(credited) - len(set(credited)),
            "advances": sum(outcomes.get(d["dedupKey"]) == "STATE_ADVANCE" for d in docs.values()),
            "epochs_advanced": len({docs[j]["epochId"] for j in docs if outcomes.get(docs[j]["dedupKey"]) == "STATE_ADVANCE"}),
            "epochs_credited_once": sum(sum(docs[j]["epochId"] == e for j in credited if j in docs) == 1 for e in [1, *epochs]),
            "credits_per_job": dict(sorted(Counter(Counter(credited).values()).items())),
            "credited_held_by_killed": len(set(credited) & died_holding),
            "credited_not_advance": sum(outcomes.get(docs[j]["dedupKey"]) != "STATE_ADVANCE" for j in credited if j in docs)}


def submit_latency(s: Served, n: int = 20) -> dict:
    """End-to-end latency of one evaluated submission, the same kind of patch each way, alternating: through the network's
    POST /coretex/submit (which waits for the verdict) and through the job API (POST /v1/patches, then GET /v1/jobs/<id>
    every 50 ms until done, then GET /v1/results/<dedupKey>); and the job API's intake alone (its 202)."""
    root = call(f"{s.base}/coretex/status")[1]["currentStateRoot"]
    coretex, jobs, intake, codes = [], [], [], Counter()
    for i in range(n):
        t0 = time.perf_counter()
        status, out = call(f"{s.base}/coretex/submit", {"patchBytesHex": "0x" + patch_for(2 * i), "parentStateRoot": root, "minerAddress": miner(1)}, timeout=120)
        coretex.append(time.perf_counter() - t0); codes[f"{status} {out.get('code') or out.get('outcome')}"] += 1
        t0 = time.perf_counter()
        status, job = call(f"{s.base}/v1/patches", {"miner": miner(2), "patch": patch_for(2 * i + 1), "epochId": 1})
        intake.append(time.perf_counter() - t0)
        while call(f"{s.base}/v1/jobs/{job['jobId']}")[1]["status"] not in ("done", "failed"): time.sleep(0.05)
        call(f"{s.base}/v1/results/{job['dedupKey']}")
        jobs.append(time.perf_counter() - t0)
    ms = lambda xs, q: 1000 * pct(xs, q)
    return {"n": n, "codes": dict(codes), "coretex_p50_ms": ms(coretex, 0.5), "coretex_p90_ms": ms(coretex, 0.9), "jobs_p50_ms": ms(jobs, 0.5),
            "jobs_p90_ms": ms(jobs, 0.9), "intake_p50_ms": ms(intake, 0.5)}
def serve_output_problems(lines: list) -> dict:
    "What serve printed that an operator would not want: tracebacks, EMFILE lines, and the front's descriptor warnings."
    text = "".join(lines)
    return {"tracebacks": text.count("Traceback"), "emfile_lines": sum("Too many open files" in l or "EMFILE" in l for l in lines),
            "descriptor_warnings": sum("descriptors open" in l for l in lines), "log_bytes": len(text)}


def descriptor_flood(s: Served, n: int = 20_000, addresses: int = 200, seconds: float = 25.0, settle_s: float = 15.0) -> dict:
    """n connections from `addresses` loopback addresses, each sending one byte of a head and then waiting, in two crowd
    processes (each under this machine's open-file limit), while a normal client GETs; serve's RSS before, at its peak
    and `settle_s` after the crowd has gone, and what serve printed meanwhile."""
    import multiprocessing as mp
    port, url, ctx = int(s.base.rsplit(":", 1)[1]), f"{s.base}/v1/jobs/none", mp.get_context("spawn")
    before_lines, rss_before = len(s.lines), rss_mb(s.proc.pid)
    halves, q, crowds, counts = [n // 2, n - n // 2], ctx.Queue(), [], [ctx.Value("i", 0), ctx.Value("i", 0)]   # kept: a child unpickles them
    for h, first, count in zip(halves, (0, addresses // 2), counts):
        crowds.append(ctx.Process(target=_crowd, args=(port, h, False, addresses // 2, count, q, seconds, False, first), daemon=True))
        crowds[-1].start()
    connected = [q.get(timeout=300)[1] for _ in crowds]
    took, timeouts, peak, t_end = [], 0, rss_before, time.monotonic() + seconds
    while time.monotonic() < t_end:
        t0 = time.perf_counter()
        try: call(url, timeout=30); took.append(time.perf_counter() - t0)
        except OSError: timeouts += 1
        peak = max(peak, rss_mb(s.proc.pid)); time.sleep(0.2)
    done = [q.get(timeout=300) for _ in crowds]
    for c in crowds: c.join(30)
    time.sleep(settle_s)
    answers = Counter()
    for d in done: answers.update(d[1])
    return {"n": n, "addresses": addresses, "connected": sum(connected), "answers": dict(answers), "gets": len(took), "timeouts": timeouts,
            "median_ms": pct(took, 0.5) * 1000, "max_ms": max(took) * 1000 if took else float("nan"),
            "rss_before_mb": round(rss_before), "rss_peak_mb": round(peak), "rss_after_mb": round(rss_mb(s.proc.pid)),
            "rss_after_ratio": round(rss_mb(s.proc.pid) / rss_before, 3), **serve_output_problems(s.lines[before_lines:])}


def _serve_proc(port: int, uri: str, data: Path, *args) -> tuple:
    "(process, its output lines) of `coretex coordinator serve` once it listens; its output keeps being read on a thread."
    p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--mongodb-uri", uri, *map(str, args)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env_for(data))
    lines = []
    while not any("listening" in l for l in lines):
        line = p.stdout.readline()
        if not line: raise RuntimeError("serve did not start: " + "".join(lines))
        lines.append(line)
    threading.Thread(target=lambda: [lines.append(l) for l in p.stdout], daemon=True).start()
    return p, lines


def serve_kill9(tmp: Path, kills: int = 10, threads: int = 4, seed: int = 31, pause: float = 0.25) -> dict:
    """`coretex coordinator serve` killed with SIGKILL `kills` times at random moments while `threads` clients submit
    distinct patches (each pausing `pause` s between submissions), and restarted each time on the same database. Then a
    last serve drains the queue, and every patch whose submission reached serve (answered, or cut off by the kill) is
    submitted again: it must be answered from its verdict (evaluated) or accepted anew (answerable again). A patch
    answered 409 then, or a claim left without a job, is stranded."""
    import pymongo
    rng, port, data = random.Random(seed), free_port(), tmp / "data"
    args = ("--rate", 1_000_000, "--requests", 1_000_000, "--lease", 3)
    with EmbeddedMongo(tmp / "db") as db, pymongo.MongoClient(db.uri, tz_aware=True) as c:
        url, up, done, sent, counter = f"http://127.0.0.1:{port}/v1/patches", threading.Event(), threading.Event(), {}, iter(range(10**9))
        def submitter():
            while not done.is_set():
                if not up.wait(0.5): continue
                i = next(counter); body = {"miner": miner(300_000 + i), "patch": patch_for(60_000 + i), "epochId": 1}
                try: st, b = call(url, body, timeout=30); sent[i] = (st, b.get("error"), b.get("jobId"))
                except OSError as e:
                    if isinstance(e, ConnectionRefusedError) or "refused" in str(e): continue   # never reached serve: not submitted
                    sent[i] = (None, type(e).__name__, None)                                  # cut off: serve may have claimed it
                time.sleep(pause)
        ts = [threading.Thread(target=submitter, daemon=True) for _ in range(threads)]
        for t in ts: t.start()
        kill_after, restarts = [], []
        for _ in range(kills):
            t0 = time.monotonic(); p, _ = _serve_proc(port, db.uri, data, *args); restarts.append(round(time.monotonic() - t0, 1))
            up.set(); time.sleep(wait := rng.uniform(0.5, 6.0)); kill_after.append(round(wait, 1))
            p.send_signal(signal.SIGKILL); up.clear(); p.wait(); p.stdout.close()
        done.set()
        for t in ts: t.join(60)
        p, lines = _serve_proc(port, db.uri, data, *args)
        t0, jobs = time.monotonic(), c.coretex.jobs
        while jobs.count_documents({"status": {"$in": ["pending", "running"]}}) and time.monotonic() - t0 < 3600: time.sleep(1)
        drained = round(time.monotonic() - t0)
        claims_left = c.coretex.inflight.count_documents({})
        evals = Counter(d.get("evaluations", 0) for d in jobs.find({}, {"evaluations": 1}))
        again = Counter()
        for i in sorted(sent):
            st, b = call(url, {"miner": miner(300_000 + i), "patch": patch_for(60_000 + i), "epochId": 1}, timeout=60)
            again["evaluated (200 cached)" if st == 200 else "answerable again (202)" if st == 202 else f"{st} {b.get('error')}"] += 1
        p.terminate(); p.wait(60); p.stdout.close()
    first = Counter("cut off by the kill" if st is None else f"{st} {err or ''}".strip() for st, err, _ in sent.values())
    return {"kills": kills, "killed_after_s": kill_after, "restart_s": restarts, "submitted": len(sent), "first_answers": dict(first),
            "drained_s": drained, "claims_left": claims_left, "again": dict(again),
            "stranded": claims_left + sum(v for k, v in again.items() if not k.startswith(("evaluated", "answerable"))),
            "evaluations_per_job": dict(sorted(evals.items())), **serve_output_problems(lines)}


def rotating_flood(tmp: Path, addresses: int = 100, per_address: int = 10, threads: int = 16) -> dict:
    """A flood from `addresses` loopback addresses, `per_address` distinct submissions each (within serve's default
    submission rate, 10 a minute), then one honest miner's submission from another address: how many jobs serve's
    worker starts after the honest job is queued and before it, against the bound of the fair queue (one job per other
    address with jobs waiting, plus the one being evaluated) and the jobs oldest-first would have run first."""
    with served(tmp, "--lease", 3) as s:
        port = int(s.base.rsplit(":", 1)[1])
        bodies = [({"miner": miner(400_000 + a * per_address + k), "patch": patch_for(80_000 + a * per_address + k), "epochId": 1}, _source(a))
                  for k in range(per_address) for a in range(addresses)]
        t0 = time.monotonic()
        codes = Counter(f"{st} {err}" for st, err in _parallel(lambda b: post_from(port, *b), bodies, threads))
        flood_s = round(time.monotonic() - t0, 1)
        with client(s) as c:
            jobs = c.coretex.jobs
            waiting_sources = len(jobs.distinct("source", {"status": {"$in": ["pending", "running"]}}))
            waiting = jobs.count_documents({"status": {"$in": ["pending", "running"]}})
            st, honest = call(f"{s.base}/v1/patches", {"miner": miner(7), "patch": patch_for(99_999), "epochId": 1})
            hid, t_q = honest["jobId"], time.monotonic()
            while (j := jobs.find_one({"_id": hid}))["status"] not in ("done", "failed") and time.monotonic() - t_q < 3600: time.sleep(0.5)
            waited = round(time.monotonic() - t_q, 1)
            created, started = aware_doc(j)["createdAt"], aware_doc(j)["scoringStartedAt"]
            began = [aware_doc(d).get("scoringStartedAt") for d in jobs.find({"_id": {"$ne": hid}}, {"scoringStartedAt": 1})]
            before = sum(1 for t in began if t is not None and created <= t < started)
    return {"addresses": addresses, "per_address": per_address, "flood_codes": dict(codes), "flood_s": flood_s, "waiting_when_queued": waiting,
            "waiting_sources": waiting_sources, "bound": waiting_sources + 1, "started_before_honest": before, "honest_status": j["status"],
            "honest_waited_s": waited}


def aware_doc(d: dict) -> dict:
    from coretex.network.coordinator import TIMES
    from coretex.network.store import aware
    return aware(d, TIMES)
