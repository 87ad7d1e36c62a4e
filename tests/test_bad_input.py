"""Every subcommand and HTTP endpoint with malformed input: one line naming the input, exit 2 (1 for a refused
patch) or a JSON 4xx, no traceback, and nothing written to the database. The cases are data in
`bad_input_cases.py`; `docs/bad-input.md` is generated from them and must be current."""

import http.client, json, os, socket, subprocess
from pathlib import Path
import pytest
from bad_input_cases import CLI, EMPTY, HTTP, FILES, markdown
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root
from coretex.network.store import EmbeddedMongo, free_port

ROOT = Path(__file__).resolve().parents[1]
LENS = make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04).hex()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    "The files of the cases, a database server, and a snapshot function of everything stored in it."
    import pymongo
    tmp = tmp_path_factory.mktemp("bad")
    files = {}
    for k, (_, data) in FILES.items():
        files[k] = tmp / k
        if data is None: files[k].mkdir()
        elif data == "fifo": os.mkfifo(files[k])
        elif isinstance(data, dict):   # a folder of links
            files[k].mkdir()
            for name, target in data.items(): (files[k] / name).symlink_to(target)
        else: files[k].write_bytes(data)
    with EmbeddedMongo(tmp / "db") as server, pymongo.MongoClient(server.uri) as client:
        def snapshot():   # documents per collection (an empty collection a read created holds no data)
            counts = {(d, c): client[d][c].count_documents({}) for d in client.list_database_names() for c in client[d].list_collection_names()}
            return {k: n for k, n in counts.items() if n}
        env = {**os.environ, "CORETEX_MONGODB_URI": server.uri, "CORETEX_DATA": str(tmp / "data")}
        for k in ("CORETEX_RPC_URL", "CORETEX_SIGNING_KEY", "CORETEX_NARRATOR_URL"): env.pop(k, None)
        yield {"files": files, "snapshot": snapshot, "env": env, "uri": server.uri, "tmp": tmp}


def cap_memory():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))


@pytest.mark.parametrize("case", CLI, ids=[c.name for c in CLI])
def test_cli_refuses_malformed_input(world, case):
    argv = [a.format(**world["files"]) for a in case.argv]
    before = world["snapshot"]()
    endless = any(a in ("/dev/zero", "/dev/urandom", world["files"]["fifo"].as_posix()) for a in argv)   # read under a 1 GiB address-space cap: a reader that buffers fails
    r = subprocess.run(["coretex", *argv], capture_output=True, text=True, env=world["env"], timeout=60 if endless else 300,
                       stdin=subprocess.DEVNULL, preexec_fn=cap_memory if endless else None)
    said = r.stderr if case.rc == 2 else r.stdout
    assert r.returncode == case.rc, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    says = case.says.replace("{fifo}", str(world["files"]["fifo"]))
    assert "Traceback" not in r.stderr and said.count("\n") == 1 and says in said, said
    assert world["snapshot"]() == before


@pytest.fixture(scope="module")
def served(world):
    p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port := free_port()), "--rate", "1000"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=world["env"])
    lines = []
    while not any("listening" in l for l in lines):
        line = p.stdout.readline()
        assert line, "".join(lines)
        lines.append(line)
    try: yield port
    finally: p.terminate(); p.wait(20)


def exchange(port, case) -> tuple:
    "(status, JSON body) of one case sent over real HTTP (or a raw socket)."
    if case.method == "RAW":
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(case.body)
            data = b""
            while chunk := s.recv(65536): data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), json.loads(body) if body else None
    if case.method == "HEAD":   # no body to read: HEAD's status and length must be the GET's, whose body is checked
        (status, length, empty), (get_status, _, get_body) = (_plain(port, m, case.path) for m in ("HEAD", "GET"))
        assert (status, length, empty) == (get_status, str(len(get_body)), b"")
        return status, json.loads(get_body)
    body = case.body.replace(b"{patch}", LENS.encode()).replace(b"{patch_truncated}", LENS[:-2].encode()) if case.body else None
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        # the server may answer 413 and close before a large body is all sent: the answer is still there to read
        try: conn.request(case.method, case.path, body, {"Content-Type": "application/json"})
        except (BrokenPipeError, ConnectionResetError): pass
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally: conn.close()


def _plain(port, method: str, path: str) -> tuple:
    "(status, Content-Length, body) of one bodiless request."
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path); r = conn.getresponse()
        return r.status, r.getheader("Content-Length"), r.read()
    finally: conn.close()


@pytest.mark.parametrize("case", HTTP, ids=[h.name for h in HTTP])
def test_http_refuses_malformed_input(world, served, case):
    before = world["snapshot"]()
    status, body = exchange(served, case)
    if case.code is EMPTY: assert (status, body) == (case.status, None), body   # the server's own parser refused it: status only
    else:
        assert (status, body["error"]) == (case.status, case.code), body
        assert isinstance(body["message"], str) and "\n" not in body["message"] and "Traceback" not in body["message"]
    assert world["snapshot"]() == before


def test_the_docs_table_is_current():
    assert (ROOT / "docs" / "bad-input.md").read_text() == markdown(), "run: python tests/bad_input_cases.py > docs/bad-input.md"
