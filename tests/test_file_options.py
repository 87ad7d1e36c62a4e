"""Every file or folder option of the CLI, given what is not a file to read: /dev/zero (endless), a FIFO nobody writes
to (opening it to read waits for ever), a directory, a 2 GB sparse file. Each cell must be refused in one line on
stderr, exit 2, no traceback, naming the input, within 5 s, and with less than 512 MB more resident memory than the
test's own process (so nothing read it whole). The options are enumerated from the argparse parsers, and a test checks the matrix still covers them all.
"""
import os, sys, time
from pathlib import Path
import pytest
from coretex.cli import build_parser, subcommands
from coretex.network.store import EmbeddedMongo

H = "0x" + "11" * 32
ADDR = "0x" + "22" * 20
EVAL = ["evaluate", "--state", "{genesis}", "--patch", "ff01", "--blockhash", H]
SYNC = ["validator", "sync", "--rpc", "http://127.0.0.1:9", "--registry", ADDR, "--data", "{tmp}/sync"]
OPTIONS = {   # "command option": its argv, FILE where the input goes ({name}: a valid file of the fixture)
    "state-root state": ["state-root", "FILE"],
    "patch-apply state": ["patch-apply", "FILE", "ff01"],
    "evaluate --state": ["evaluate", "--state", "FILE", "--patch", "ff01", "--blockhash", H],
    "evaluate --corpus": EVAL + ["--corpus", "FILE"],
    "evaluate --reranker": EVAL + ["--reranker", "FILE"],
    "evaluate --bi-encoder": EVAL + ["--bi-encoder", "FILE"],
    "evaluate-batch patches": ["evaluate-batch", "FILE", "--workers", "0"],
    "evaluate-batch --corpus": ["evaluate-batch", "{patches}", "--workers", "0", "--corpus", "FILE"],
    "evaluate-batch --reranker": ["evaluate-batch", "{patches}", "--workers", "0", "--reranker", "FILE"],
    "corpus-pack corpus": ["corpus-pack", "FILE", "{tmp}/never.packed"],
    "verify-epoch events": ["verify-epoch", "FILE"],
    "verify-epoch --genesis": ["verify-epoch", "{events}", "--genesis", "FILE"],
    "claim-proof --verify": ["claim-proof", "--verify", "FILE"],
    "coordinator serve --key-file": ["coordinator", "serve", "--key-file", "FILE"],
    "coordinator serve --state": ["coordinator", "serve", "--state", "FILE"],
    "coordinator work --key-file": ["coordinator", "work", "--once", "--key-file", "FILE"],
    "coordinator reveal --key-file": ["coordinator", "reveal", "--epoch", "1", "--key-file", "FILE"],
    "coordinator finalize --key-file": ["coordinator", "finalize", "--epoch", "1", "--key-file", "FILE"],
    "replay report": ["replay", "FILE", "--epoch-secret", H],
    "replay --state": ["replay", "{unsigned_state}", "--epoch-secret", H, "--state", "FILE"],
    "validator sync --state": SYNC + ["--from-block", "1", "--state", "FILE"],
    "validator sync --bundle-manifest": SYNC + ["--bundle-manifest", "FILE"],
    "validator sync --rescore": SYNC + ["--rescore", "FILE"],
    "consensus responses": ["consensus", "FILE", "--no-store"],
    "consensus --embeddings": ["consensus", "{responses}", "--embeddings", "FILE", "--no-store"],
    "weights --scenario": ["weights", "--reference", "loosh-1.2.8", "--scenario", "FILE"],
    "weights --sybil-scores": ["weights", "--reference", "loosh-1.2.8", "--sybil-scores", "FILE"],
    "consensus-service --sybil-scores": ["consensus-service", "--reference", "loosh-1.2.8", "--sybil-scores", "FILE", "--for", "1s"],
    "beliefs eval --fixtures": ["beliefs", "eval", "--fixtures", "FILE"],
    "simulate --calibration": ["simulate", "--mode", "surrogate", "--calibration", "FILE", "--out", "{tmp}/sim"],
    "simulate --corpus": ["simulate", "--corpus", "FILE", "--out", "{tmp}/sim"],
    "simulate --reranker": ["simulate", "--reranker", "FILE", "--out", "{tmp}/sim"],
    "evaluate-batch --bi-encoder": ["evaluate-batch", "{patches}", "--workers", "0", "--bi-encoder", "FILE"],
    "check-runtime --bundle": ["check-runtime", "--bundle", "FILE"],
    "validator setup --manifest": ["validator", "setup", "--manifest", "FILE", "--state-dir", "{tmp}/setup"],
    "validator setup --artifacts": ["validator", "setup", "--artifacts", "FILE", "--state-dir", "{tmp}/setup"],
    "validator sync --artifacts": SYNC + ["--artifacts", "FILE"],
}
KINDS = ("/dev/zero", "fifo", "dir", "sparse")
# an empty folder is what sync's --rescore and --artifacts take before the coordinator has published into them: those
# cells are valid input, not refusals
CELLS = [(o, k) for o in OPTIONS for k in KINDS if (o, k) not in {("validator sync --rescore", "dir"), ("validator sync --artifacts", "dir")}]
LIMIT = 5.0   # seconds for a refusal (the interpreter's start-up is not counted: each cell is forked from the test's process)


def reads(action) -> bool:
    "Whether an argparse action names a file or folder the command reads (not one it writes: --out, --data)."
    text = f"{action.metavar or ''} {action.help or ''} {action.dest}".lower()
    if action.dest in ("out", "data", "help") or action.dest.endswith("uri"): return False
    return bool(any(w in text for w in ("file", "folder", "directory", ".json", "state", "corpus", "reranker", "bi-encoder",
                                        "calibration", "fixtures", "embeddings", "rescore", "key")) and
                (action.type is None and action.nargs in (None, "?") and not action.const and action.default is not True
                 and not (action.option_strings and action.nargs == 0)))


NOT_READ = {"consensus --challenge-id", "seeds --corpus-root", "simulate --address", "simulate --mode",   # their help names a file, they are not one
            "evaluate --reranker-fallback",                                                         # a choice of scorer
            "validator setup --state-dir", "validator sync --state-dir", "coordinator finalize --publish-dir"}   # folders written, as --data


def test_the_matrix_covers_every_file_option_of_the_cli():
    found = {f"{name} {a.option_strings[-1] if a.option_strings else a.dest}"
             for name, p in subcommands(build_parser()).items() for a in p._actions if reads(a)} - NOT_READ
    assert found - set(OPTIONS) == set(), found - set(OPTIONS)
    assert set(OPTIONS) - found == set(), set(OPTIONS) - found


def in_a_child(argv: list, env: dict, timeout: float = LIMIT + 1) -> tuple:
    "(exit status or None past `timeout`, stderr, seconds, peak resident MB over this process's) of `coretex argv` in a forked child."
    import resource, tempfile, traceback
    from coretex.cli import main
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryFile() as err:
        t0, pid = time.monotonic(), os.fork()
        if pid == 0:   # the child: the command as `coretex` runs it, its stderr kept
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0); os.dup2(null, 1); os.dup2(err.fileno(), 2)
            sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)   # not the test runner's capture
            os.environ.clear(); os.environ.update(env)
            try: rc = main(argv)
            except SystemExit as e: rc = e.code if isinstance(e.code, int) else 1
            except BaseException: traceback.print_exc(); rc = 1
            sys.stderr.flush(); os._exit(rc or 0)
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done: break
            if time.monotonic() - t0 > timeout:
                os.kill(pid, 9); _, status, usage = os.wait4(pid, 0); status = None; break
            time.sleep(0.01)
        seconds = time.monotonic() - t0
        err.seek(0)
        return (None if status is None else os.waitstatus_to_exitcode(status)), err.read().decode(errors="replace"), seconds, usage.ru_maxrss / 1024 - base


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    "(rc, stderr, seconds, MB) of every cell, each in a child forked from this process (no interpreter start-up to time), beside a database server."
    tmp = tmp_path_factory.mktemp("files")
    files = {"/dev/zero": "/dev/zero", "fifo": str(tmp / "fifo"), "dir": str(tmp / "dir"), "sparse": str(tmp / "sparse")}
    os.mkfifo(files["fifo"]); os.mkdir(files["dir"])
    with open(files["sparse"], "wb") as f: f.truncate(2 * 10**9)   # 2 GB, no block written
    valid = {"tmp": str(tmp), "genesis": tmp / "genesis", "patches": tmp / "patches.jsonl", "responses": tmp / "responses.jsonl",
             "events": tmp / "events.json", "unsigned_state": tmp / "unsigned_state.json"}
    valid["genesis"].write_bytes(bytes(32768))
    valid["patches"].write_text("")
    valid["responses"].write_text('{"miner": "a", "text": "Ice floats.", "response_time_ms": 10}\n')
    valid["events"].write_text('{"epoch": 1, "finalized_event": {}, "patch_events": []}')
    valid["unsigned_state"].write_text('{"artifact": {}, "transaction": {}}')
    with EmbeddedMongo(tmp / "db") as server:
        env = {**os.environ, "CORETEX_DATA": str(tmp / "data"), "CORETEX_MONGODB_URI": server.uri}
        for k in ("CORETEX_RPC_URL", "CORETEX_SIGNING_KEY", "CORETEX_NARRATOR_URL"): env.pop(k, None)
        return {(o, k): in_a_child([files[k] if a == "FILE" else a.format(**valid) for a in OPTIONS[o]], env) for o, k in CELLS}


@pytest.mark.parametrize("option,kind", CELLS, ids=[f"{o} {k}" for o, k in CELLS])
def test_a_file_option_refuses_what_is_not_a_file_to_read(answers, option, kind, tmp_path_factory):
    rc, err, seconds, mb = answers[option, kind]
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, (rc, err[-1500:])
    assert "unrecognized arguments" not in err and ("/dev/zero" in err if kind == "/dev/zero" else kind in err), err   # the line names the input
    assert seconds < LIMIT and mb < 512, (seconds, mb)   # refused, not read: a 2 GB read would be resident
