"""`coretex verify-epoch` against the reference's verify_epoch vectors (shared/vectors/coretex/economy): every case
(7 epochs, each with its tampered variants) written as an events file and run through the command, its --json
answer compared with the reference's; the installed command on one passing and one tampered epoch; and the RPC
path: each epoch's events ABI-encoded here (independently of the decoders), emitted as logs on the in-process
chain, served over HTTP JSON-RPC and fetched back with eth_getLogs, giving the same answer as the file."""
import contextlib, gzip, io, json, subprocess, threading
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import pytest
from helpers import ROOT
from coretex.network.chain import Chain
from coretex.cli import main
from coretex.network.finalize import LogEmitter, emit_epoch
from coretex.core.state import state_bytes

VEC = ROOT.parent / "shared" / "vectors" / "coretex" / "economy" / "vectors.json.gz"
pytestmark = pytest.mark.skipif(not VEC.exists(), reason="../shared/vectors is not beside the checkout")


@lru_cache(None)
def vectors() -> dict:
    return json.load(gzip.open(VEC))


def words(name: str) -> tuple:
    w = [0] * 1024
    for i, h in vectors()["states"][name].items(): w[int(i)] = int(h, 16)
    return tuple(w)


def untag(x):
    "A vector's tagged value as plain JSON: bigints as ints, state bytes as hex."
    if isinstance(x, dict):
        if "$bigint" in x: return int(x["$bigint"])
        if "$state_bytes" in x: return "0x" + state_bytes(words(x["$state_bytes"]))[:x.get("length", 32768)].hex()
        return {k: untag(v) for k, v in x.items()}
    return [untag(v) for v in x] if isinstance(x, list) else x


def case_files(case: dict, tmp_path) -> list:
    "The command-line arguments that give verify-epoch this case: its events file, and --genesis / --policy-atoms-mode."
    a = case["args"]
    path = tmp_path / f"{case['id']}.json"
    path.write_text(json.dumps({k: untag(a[k]) for k in ("epoch", "finalized_event", "patch_events", "snapshot_event")}))
    argv = [str(path)]
    if a.get("genesis_state"):
        (tmp_path / "genesis.bin").write_bytes(state_bytes(words(a["genesis_state"])))
        argv += ["--genesis", str(tmp_path / "genesis.bin")]
    return argv + (["--policy-atoms-mode"] if a.get("policy_atoms_mode") else [])


def run(*argv) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): rc = main(["verify-epoch", *argv])
    return rc, out.getvalue(), err.getvalue()


def agrees(mine: dict, expect: dict) -> bool:
    if not expect["ok"]: return (mine["ok"], mine["code"]) == (False, expect["code"])
    return all(str(mine[k]).lower() == str(v).lower() if not isinstance(v, list) else [x.lower() for x in mine[k]] == v for k, v in expect.items())


def test_every_vector_case_through_the_command(tmp_path):
    wrong = []
    for case in vectors()["functions"]["verify_epoch"]:
        rc, out, err = run(*case_files(case, tmp_path), "--json")
        mine, expect = json.loads(out), case["expect"]
        passed = expect["ok"] and expect["match"]
        if not agrees(mine, expect) or rc != (0 if passed else 1) or err: wrong.append((case["id"], rc, err[:80]))
    assert not wrong, f"{len(wrong)} of {len(vectors()['functions']['verify_epoch'])} cases differ, e.g. {wrong[:3]}"


def test_installed_command_on_a_passing_and_a_tampered_epoch(tmp_path):
    cases = {c["id"].split("-", 3)[-1]: c for c in vectors()["functions"]["verify_epoch"] if "epoch134" in c["id"]}
    ok = subprocess.run(["coretex", "verify-epoch", *case_files(cases["epoch134-ok"], tmp_path)], capture_output=True, text=True)
    bad = subprocess.run(["coretex", "verify-epoch", *case_files(cases["epoch134-bytes-word-changed"], tmp_path)], capture_output=True, text=True)
    gone = subprocess.run(["coretex", "verify-epoch", *case_files(cases["epoch134-no-finalized"], tmp_path)], capture_output=True, text=True)
    assert (ok.returncode, ok.stdout.splitlines()[-1]) == (0, "verify-epoch passed") and len(ok.stdout.splitlines()) == 5
    assert (bad.returncode, bad.stdout.splitlines()[-1]) == (1, "verify-epoch failed: ROOT_MISMATCH")
    assert (gone.returncode, gone.stdout.splitlines()) == (1, ["FAIL finalized event: NO_FINALIZED_EVENT No CortexEpochFinalized event for epoch 134",
                                                               "verify-epoch failed: NO_FINALIZED_EVENT"])


def test_bad_input_is_one_line_exit_2(tmp_path):
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "noepoch.json").write_text('{"patch_events": []}')
    for argv, says in (([str(tmp_path / "list.json")], "not a JSON object"), ([str(tmp_path / "noepoch.json")], "names no `epoch`"),
                       (["--rpc", "http://127.0.0.1:9", "--epoch", "1"], "--rpc needs --address")):
        rc, out, err = run(*argv)
        assert (rc, out, err.count("\n"), says in err) == (2, "", 1, True), (argv, err)


# --- the RPC path -------------------------------------------------------------------------------------------------
def word(h: str) -> bytes: return bytes.fromhex(h[2:]).rjust(32, b"\0")


def dynamic(raw: bytes) -> bytes: return len(raw).to_bytes(32, "big") + raw + bytes(-len(raw) % 32)


def logs_of(args: dict) -> dict:
    "An epoch's events ABI-encoded as the registry's logs (the file's `logs` form)."
    topic = lambda n: "0x" + n.to_bytes(32, "big").hex()
    p = lambda e: {"topics": ["0x" + "00" * 32, topic(e["epoch"]), "0x" + word(e["miner"]).hex()],
                   "data": "0x" + (b"".join(word(e[k]) for k in ("parent_state_root", "patch_hash", "eval_report_hash"))
                                   + (128).to_bytes(32, "big") + dynamic(bytes.fromhex(e["compact_patch_bytes"][2:]))).hex()}
    f, s = args["finalized_event"], args["snapshot_event"]
    return {"patches": [p(e) for e in args["patch_events"]],
            "finalized": f and {"topics": ["0x" + "00" * 32, topic(f["epoch"])], "data": "0x" + b"".join(word(f[k]) for k in (
                "parent_state_root", "patch_set_root", "new_state_root", "core_version_hash", "experience_corpus_root")).hex()},
            "snapshot": s and {"topics": ["0x" + "00" * 32, topic(s["epoch"])],
                               "data": "0x" + (word(s["state_root"]) + (64).to_bytes(32, "big") + dynamic(bytes.fromhex(s["full_state_bytes"][2:]))).hex()}}


def eth_tester_params(method: str, params: list) -> list:
    "JSON-RPC params as eth-tester's provider takes them below web3's formatters (eth_getLogs: snake_case block numbers)."
    if method != "eth_getLogs": return params
    block = lambda v: int(v, 16) if v.startswith("0x") else v
    return [{{"fromBlock": "from_block", "toBlock": "to_block"}.get(k, k): block(v) if k.endswith("Block") else v for k, v in params[0].items()}]


@pytest.fixture(scope="module")
def rpc():
    "The in-process chain served over HTTP JSON-RPC on a loopback port: (chain, url)."
    chain = Chain.connect()
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            res = chain.w3.provider.make_request(req["method"], eth_tester_params(req["method"], req["params"]))
            body = json.dumps({**res, "id": req["id"]}, default=lambda b: "0x" + bytes(b).hex()).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body)))
            self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield chain, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown(); server.server_close()


RPC_VARIANTS = ("ok", "newroot-changed", "bytes-word-changed", "snapshot-truncated", "no-finalized", "duplicate-event", "no-snapshot-no-genesis")


def test_rpc_gives_what_the_file_gives(rpc, tmp_path):
    chain, url = rpc
    chosen = [c for c in vectors()["functions"]["verify_epoch"] if c["id"].endswith("-ok") or "epoch135" in c["id"] and c["id"].split("epoch135-")[1] in RPC_VARIANTS]
    assert len(chosen) == 7 + len(RPC_VARIANTS) - 1
    for case in chosen:
        args, emitter = untag(case["args"]), LogEmitter(chain)
        emit_epoch(emitter, logs_of(args))
        extra = case_files(case, tmp_path)[1:]
        by_file = run(*case_files(case, tmp_path), "--json")
        by_rpc = run("--rpc", url, "--address", emitter.address, "--epoch", str(args["epoch"]), "--from-block", str(emitter.block), "--legacy-events", *extra, "--json")
        assert by_rpc == by_file, case["id"]
        assert agrees(json.loads(by_rpc[1]), case["expect"]), case["id"]
