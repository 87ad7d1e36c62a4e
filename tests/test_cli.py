"The command-line contract of the protocol subcommands, run as a user runs them."
import json, re, subprocess, sys
from helpers import run_cli
from coretex.core.keccak import keccak256, to_hex
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root

GENESIS_ROOT = "0xe026cc5a4aed3c22a58cbd3d2ac754c9352c5436f638042dca99034e83636516"


def test_state_root_raw_and_hex(genesis_file, tmp_path):
    assert run_cli("state-root", genesis_file).stdout.strip() == GENESIS_ROOT
    hexfile = tmp_path / "g.hex"
    hexfile.write_text("0X" + "00" * 32768 + "\n")
    assert run_cli("state-root", hexfile).stdout.strip() == GENESIS_ROOT


def test_state_root_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x01\x02")
    r = run_cli("state-root", bad)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "32768" in r.stderr
    r = run_cli("state-root", tmp_path / "missing")
    assert r.returncode == 2 and "cannot read state" in r.stderr


def test_patch_apply_success_matches_vector(genesis_file, vectors):
    v = vectors["temporal-update"]
    r = run_cli("patch-apply", genesis_file, v["patchBytesHex"].upper().replace("0X", ""))
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["ok"] is True
    assert out["root"] == v["childStateRoot"] and out["patchHash"] == v["patchHash"]
    assert [w["index"] for w in out["words"]] == [32, 33, 800]
    assert out["words"][2]["word"] == "0x" + v["patch"]["newWords"][2][2:].rjust(64, "0")
    assert out["dedupKey"] == to_hex(keccak256(b"coretex-dedup-key-v1", bytes.fromhex(GENESIS_ROOT[2:]), bytes.fromhex(v["patchBytesHex"][2:])))


def test_patch_apply_refusals(genesis_file):
    "Each refusal the command can give, under the default pipeline (r5) and under --pipeline r4."
    root = state_root(GENESIS)
    cases = {  # patch: (code under r5, code under r4; None = accepted)
        make_patch(b"\x01" * 32, {40: 1}): ("E01", "E01"),
        make_patch(root, {2: 1}, 0x06): ("E02", None),                  # r5 freezes the header
        make_patch(root, {384: 1}, 0x07): ("E02", None),                # an invalid atom; r4 key bytes
        make_patch(root, {800: 1}, 0x03): ("E04", "E04"),               # temporal bits 151:0 are reserved
        make_patch(root, {900: 1}, 0x05): ("E04", None),                # r5 keeps 896-991 zero
        make_patch(root, {40: 0}, 0x02): ("E05", "E05"),
        make_patch(root, {i: 1 for i in range(40, 45)}): ("DECODE", "DECODE"),   # wordCount 5 does not decode
        make_patch(root, {1000: 1}): ("DECODE", "DECODE"),              # nor does an index in 992-1023
    }
    for data, codes in cases.items():
        for args, code in (([], codes[0]), (["--pipeline", "r4"], codes[1])):
            r = run_cli("patch-apply", genesis_file, data.hex(), *args)
            out = json.loads(r.stdout)
            assert "Traceback" not in r.stderr, r.stderr
            if code is None: assert (r.returncode, out["ok"]) == (0, True) and out["root"].startswith("0x"), (args, out)
            else:
                assert (r.returncode, out["ok"], out["code"]) == (1, False, code), (args, code, out)
                assert out["reason"]


def test_patch_apply_bad_state_is_one_line(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x01\x02")
    r = run_cli("patch-apply", bad, "ff01")
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and "32768" in r.stderr


def test_patch_apply_malformed_is_decode(genesis_file):
    for bad in ("zz", "0x123", "ff", "ff04" + "00" * 40, "08" + "00" * 41):
        r = run_cli("patch-apply", genesis_file, bad)
        out = json.loads(r.stdout)
        assert (r.returncode, out["code"]) == (1, "DECODE") and out["reason"], (bad, out)
        assert "Traceback" not in r.stderr


GOLDEN_ARGS = ["--epoch-secret", "0x" + "11" * 32, "--blockhash", "22" * 32, "--epoch-id", "1", "--patch-hash",
               "0x" + "33" * 32, "--parent-root", "0x" + "44" * 32, "--corpus-root", "0x" + "66" * 32,
               "--bundle-hash", "0x" + "77" * 32]


def test_seeds_golden_and_case_insensitive():
    r = run_cli("seeds", *GOLDEN_ARGS)
    assert json.loads(r.stdout) == {
        "gateSeed": "0x6c0efb867df8c2f7efe2826cfb8e3b2733cf0bea763145b8c9675abe2aa2109d",
        "confirmSeed": "0xd7c7a8e1bc32c866457175316e90cda982c80e0faf0a8a55169da026285d6034"}
    upper = [a.upper() if a.startswith("0x") or set(a) <= set("0123456789abcdef") else a for a in GOLDEN_ARGS]
    assert run_cli("seeds", *upper).stdout == r.stdout


def test_seeds_refuses_zero_blockhash():
    args = list(GOLDEN_ARGS)
    args[args.index("--blockhash") + 1] = "0x" + "00" * 32
    r = run_cli("seeds", *args)
    assert r.returncode == 2 and r.stdout == "" and "blockhash is zero" in r.stderr and "Traceback" not in r.stderr


def test_seeds_bad_epoch_and_hex():
    args = list(GOLDEN_ARGS)
    args[args.index("--epoch-id") + 1] = str(2**64)
    assert "not a u64" in run_cli("seeds", *args).stderr
    args = list(GOLDEN_ARGS)
    args[args.index("--parent-root") + 1] = "0x1234"
    r = run_cli("seeds", *args)
    assert r.returncode == 2 and "--parent-root: expected 32 bytes, got 2" in r.stderr


def test_demo_runs_and_reproduces_vectors(vectors, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    r = run_cli("demo")
    assert r.returncode == 0, r.stderr
    assert list(tmp_path.rglob("coretex-demo-*")) == list(tmp_path.rglob("*.key")) == []   # no key file or database left behind
    for v in list(vectors.values())[1:]:
        assert v["childStateRoot"] in r.stdout and v["patchHash"] in r.stdout
    assert "0x73172e2bc77e2f066a160bc94a48ae73c5221cf11591c3958c03aa5884793506" in r.stdout


def test_protocol_commands_do_not_import_ml_stack():
    code = ("import sys; import coretex.cli, coretex.core.state, coretex.core.patch, coretex.core.seeds, coretex.core.layout;"
            "print(sorted(m for m in ('torch','transformers','sentence_transformers','sklearn','numpy','web3','pymongo') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


def test_a_long_command_draws_progress_on_stderr_only(tmp_path, monkeypatch):
    "--progress draws counts and a rate on stderr; stdout still carries the one JSON object, and without it stderr is silent."
    monkeypatch.setenv("CORETEX_DATA", str(tmp_path / "data"))
    args = ["beliefs", "eval", "--json", "--out", tmp_path / "reports"]
    shown, quiet = run_cli(*args, "--progress"), run_cli(*args)
    assert shown.returncode == quiet.returncode == 0, shown.stderr + quiet.stderr
    assert json.loads(shown.stdout)["static"] == [60, 60] and shown.stdout == quiet.stdout
    bars = shown.stderr.replace("\r", "\n")
    assert re.search(r"static cases: 100%.*60/60 \[.*(case/s|s/case)\]", bars) and re.search(r"sessions: 100%.*2/2 ", bars), bars
    assert quiet.stderr == ""
