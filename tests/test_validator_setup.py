"""`coretex validator setup` against a launch a coordinator published to a real HTTP server on loopback: hydrated and
ready (0); resumed from a partial download; each refusal with the reference's status 1 and its line (a wrong artifact
hash, a wrong size, a bundle manifest edited with its claimed bundleHash kept, --verify-only and --no-download on an
empty state folder, a launch manifest of another schema); bad input with 2; and the --help text stating the codes."""
import gzip, json, shutil
from pathlib import Path
import pytest
from coretex.cli import run_command
from coretex.cli.validator import add_validator
from coretex.network.artifacts import LAUNCH_FILE, STATE_FILE, ArtifactServer, artifact_name, publish_launch
from coretex.network.trust import bundle_hash

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def launch(tmp_path):
    "(launch manifest, served folder, base URL) of a small launch on a loopback server."
    small = gzip.decompress((FIXTURES / "corpus-small.json.gz").read_bytes())
    bundle = json.loads((FIXTURES / "bundle-manifest-v16.json").read_text())
    served = tmp_path / "served"
    m = publish_launch(served, small, bytes(range(256)) * 40, json.loads(small)["corpusRoot"], bundle)
    server = ArtifactServer(served)
    yield m, served, server.start()
    server.stop()


def setup(*argv): return run_command(add_validator, "validator", "setup", *argv)


def test_hydrates_and_records_the_state(launch, tmp_path):
    m, served, base = launch
    rc, out, err = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"), "--json")
    recs = [json.loads(l) for l in out.splitlines()]
    assert rc == 0 and [r["ok"] for r in recs[:5]] == [True] * 5 and "READY" in err
    # the last record is the scorer runtime against the bundle's runtimePin: reported, not fatal by default
    from coretex.toolkit.runtime import check_runtime
    bundle = json.loads((tmp_path / "v" / "artifacts" / recs[4]["file"]).read_text())
    assert recs[5]["role"] == "runtime" and recs[5]["drifts"] == check_runtime(bundle).to_json()["drifts"]
    assert [r["action"] for r in recs[:4]] == ["fetched"] * 4
    state = json.loads((tmp_path / "v" / STATE_FILE).read_text())
    assert (state["bundleHash"], state["corpusRoot"], state["setup"]["artifactBaseUrl"]) == (m["bundleHash"], m["corpusRoot"], base)
    rc, out, _ = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"), "--verify-only")
    assert rc == 0 and out.count("(kept)") == 4


def test_resumes_a_partial_download(launch, tmp_path):
    m, served, base = launch
    name = m["payloads"][0]["fileName"]
    (tmp_path / "v" / "artifacts").mkdir(parents=True)
    (tmp_path / "v" / "artifacts" / (name + ".part")).write_bytes((served / name).read_bytes()[:7000])
    rc, out, _ = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"))
    assert rc == 0 and (tmp_path / "v" / "artifacts" / name).read_bytes() == (served / name).read_bytes()


@pytest.mark.parametrize("damage, expect", [
    ("hash", "FAIL corpus coretex-launch-corpus.json: sha256 "),
    ("size", "FAIL embeddings coretex-launch-embeddings.json: download passed 10240 bytes; stopped"),
])
def test_a_wrong_artifact_is_refused_with_1(launch, tmp_path, damage, expect):
    m, served, base = launch
    p = m["payloads"][0 if damage == "hash" else 1]
    data = (served / p["fileName"]).read_bytes()
    (served / p["fileName"]).write_bytes(data[:-1] + bytes([data[-1] ^ 1]) if damage == "hash" else data + b"!")
    rc, out, err = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"))
    assert rc == 1 and expect in out and "HARD FAIL" in err
    assert not (tmp_path / "v" / STATE_FILE).exists()   # nothing recorded for sync
    assert not (tmp_path / "v" / "artifacts" / p["fileName"]).exists()   # nor the wrong file kept


def test_a_tampered_bundle_manifest_is_refused_with_1(launch, tmp_path):
    "pipelineVersion changed, the claimed bundleHash kept and the launch's bundleSha256 updated to the edited file."
    m, served, base = launch
    bpath = served / artifact_name({"path": m["bundlePath"]})
    b = json.loads(bpath.read_text())
    b["evaluator"]["profile"]["pipelineVersion"] = "coretex-retrieval-v2-r4"
    bpath.write_text(json.dumps(b))
    import hashlib
    (served / LAUNCH_FILE).write_text(json.dumps({**m, "bundleSha256": hashlib.sha256(bpath.read_bytes()).hexdigest()}))
    rc, out, err = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"))
    assert rc == 1
    line = out.splitlines()[-1]
    assert line.startswith("FAIL bundle") and f"bundleHash {bundle_hash(b)} (recomputed) != launch pin {m['bundleHash']}" in line


def test_verify_only_and_no_download_fetch_nothing(launch, tmp_path):
    _, _, base = launch
    for flag in ("--verify-only", "--no-download"):
        rc, out, _ = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / flag), flag)
        assert rc == 1 and out.count("missing; download disabled") == 4
        assert not list((tmp_path / flag / "artifacts").iterdir())


def test_a_local_folder_is_a_source(launch, tmp_path):
    _, served, _ = launch
    assert setup("--artifacts", str(served), "--state-dir", str(tmp_path / "v"))[0] == 0


def test_a_manifest_of_another_schema_is_1_and_bad_input_is_2(launch, tmp_path):
    m, served, base = launch
    (served / LAUNCH_FILE).write_text(json.dumps({**m, "schema": "coretex.launch-artifacts.v0"}))
    rc, _, err = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"))
    assert rc == 1 and "LAUNCH_MANIFEST_INVALID: unsupported artifact manifest schema coretex.launch-artifacts.v0" in err
    assert setup("--state-dir", str(tmp_path / "v"))[0] == 2                              # no manifest anywhere
    assert setup("--manifest", str(tmp_path / "absent.json"))[0] == 2                     # unreadable local file
    with pytest.raises(SystemExit) as e: setup("--artifact-base-url", "ftp://x")          # argparse: not a URL
    assert e.value.code == 2


def test_help_states_the_exit_codes():
    from coretex.cli import build_parser
    text = build_parser([add_validator])._subparsers._group_actions[0].choices["validator"]._subparsers._group_actions[0].choices["setup"].format_help()
    assert "Exit status: 0 ready, 1 an artifact or check failed" in " ".join(text.split())


def test_a_runtime_drift_fails_only_when_required(launch, tmp_path):
    from coretex.toolkit.runtime import check_runtime
    m, served, base = launch
    rc, out, _ = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"))
    bundle = json.loads(next((tmp_path / "v" / "artifacts").glob("*bundle*")).read_text())
    drifts = len(check_runtime(bundle).drifts)
    assert rc == 0 and sum(l.startswith("WARN runtime: ") for l in out.splitlines()) == drifts
    rc, _, err = setup("--artifact-base-url", base, "--state-dir", str(tmp_path / "v"), "--require-runtime")
    assert rc == (1 if drifts else 0) and (("runtimePin" in err) == bool(drifts))
