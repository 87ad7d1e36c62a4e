"""Every subcommand and HTTP endpoint with malformed input: one line naming the input, exit 2 (1 for a refused
patch) or a JSON 4xx, no traceback, and nothing written to the database. The cases are data in
`bad_input_cases.py`; `docs/bad-input.md` is generated from them and must be current."""

import json, os, socket, subprocess, time
from pathlib import Path
import pytest
from bad_input_cases import CLI, EMPTY, EMPTY_HEAD, HTTP, FILES, markdown, raw
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root
from coretex.network.store import EmbeddedMongo, free_port

ROOT = Path(__file__).resolve().parents[1]
LENS = make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04).hex()
ROOT_HEX = "0x" + state_root(GENESIS).hex()   # the root of the epoch `serve` opens on the genesis state


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


def request_bytes(case) -> bytes:
    "The bytes a case sends: its raw bytes as they are, or its method, path and body (its tokens filled) as one request that asks to close."
    if case.method == "RAW": return case.body
    body = b"" if case.body is None and case.method in ("POST", "PUT", "PATCH") else case.body
    if body: body = body.replace(b"{patch}", LENS.encode()).replace(b"{patch_truncated}", LENS[:-2].encode()).replace(b"{root}", ROOT_HEX.encode())
    return raw(case.method, case.path, body=body)


def answers(port, data: bytes, method: str) -> list:
    "[(status, headers, body), ...] of every final response to `data` on one connection, read until the server closes it."
    got = b""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:   # over the body deadline: one case waits it out
        try: s.sendall(data)
        except (BrokenPipeError, ConnectionResetError): pass   # answered (a 413) and closed before all of a large body was sent
        try:
            while chunk := s.recv(65536): got += chunk
        except ConnectionResetError: pass
    out = []
    while got:
        head, sep, rest = got.partition(b"\r\n\r\n")
        assert sep and head.startswith(b"HTTP/1."), got[:300]   # nothing but whole responses
        lines = head.split(b"\r\n")
        fields = {k.strip().lower().decode(): v.strip().decode("latin-1") for k, _, v in (l.partition(b":") for l in lines[1:])}
        status, n = int(lines[0].split()[1]), 0 if method == "HEAD" else int(fields.get("content-length", len(rest)))
        if not 100 <= status < 200: out.append((status, fields, rest[:n]))
        got = rest[n:]
    return out


def code_of(body: dict):
    "The stable code of an answer: coretex's `error`, or a rejected envelope's `code` (or its bare `status` where it has none)."
    return body.get("error") or body.get("code") or body.get("status")


def wrong(port, case) -> str|None:
    "Why the answer to `case` is not the one its contract gives (None when it is): one answer, its status, its code, a one-line message."
    method = case.path.split()[0] if case.method == "RAW" else case.method
    t0 = time.monotonic()
    got = answers(port, request_bytes(case), method)
    if len(got) != 1: return f"{len(got)} answers: {[g[0] for g in got]}"
    if time.monotonic() - t0 > 5 and case.status != 408: return f"the connection was held {time.monotonic() - t0:.1f} s"   # not waiting out a deadline
    status, fields, body = got[0]
    if status == 405 and (not fields.get("allow") or method in fields["allow"]): return f"a 405 with Allow {fields.get('allow')!r}"
    if case.method == "HEAD":   # no body: HEAD's status and length must be the GET's, whose body is checked
        (get_status, _, get_body), = answers(port, raw("GET", case.path), "GET")
        if (status, fields.get("content-length"), body) != (get_status, str(len(get_body)), b""): return "HEAD is not the GET without its body"
        body = get_body
    if case.code in (EMPTY, EMPTY_HEAD): return None if (status, body) == (case.status, b"") else f"{status} {body[:200]!r}"
    doc = json.loads(body)
    said = doc.get("message", doc.get("reason"))
    if (status, code_of(doc)) != (case.status, case.code): return f"{status} {doc}"
    if said is not None and (not isinstance(said, str) or "\n" in said or "Traceback" in said): return f"message {said!r}"
    return None


@pytest.mark.parametrize("case", HTTP, ids=[h.name for h in HTTP])
def test_http_refuses_malformed_input(world, served, case):
    before = world["snapshot"]()
    assert wrong(served, case) is None, wrong(served, case)
    assert world["snapshot"]() == before


def test_the_http_cases_are_distinct_and_many():
    "The issue asks for 149 bad requests: each case a request of its own, under a name of its own."
    assert len(HTTP) >= 149 and len({h.name for h in HTTP}) == len(HTTP) == len({request_bytes(h) for h in HTTP})


def test_the_docs_table_is_current():
    assert (ROOT / "docs" / "bad-input.md").read_text() == markdown(), "run: python tests/bad_input_cases.py > docs/bad-input.md"
