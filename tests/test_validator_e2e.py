"""Coordinator -> chain + artifact server -> `validator setup` -> `validator sync`, over a JSON-RPC node and an HTTP
artifact server on loopback. The coordinator publishes a launch (corpus, embeddings, bundle manifest, profile) and,
for each epoch, a rotation manifest and corpus delta signed with its own epoch key, and opens each epoch on the
registry with the pins the rotation names, and on the mining contract with its commitment to the epoch's secret
(epoch 1's revealed). A validator sets up and syncs (roots and rotations verified), and each
tampering is caught with its code and status 1: a bundle manifest edited with its claim kept, an artifact of the wrong
hash and of the wrong size, a forged rotation manifest, a coordinator re-keyed (accepted only with
--accept-key-change), a delta chain that skips a delta, a mining contract whose epoch commit is not the registry's
hidden-seed commit, an eval report that does not hash to its event's evalReportHash."""
import gzip, hashlib, json, random, shutil
from pathlib import Path
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from rpc_node import RpcNode
from coretex.cli import run_command
from coretex.cli.validator import add_validator
from coretex.core.patch import prepare
from coretex.core.seeds import split_for
from coretex.core.state import GENESIS
from coretex.network.artifacts import LAUNCH_FILE, ArtifactServer, artifact_name, publish_launch
from coretex.core.keccak import keccak256, to_hex
from coretex.network.mining import MiningContract, commit_epoch, open_epoch
from coretex.network.registry import EpochPins, RegistryContract, random_patch
from coretex.network.rotations import rotation_paths, publish_rotation
from coretex.network.trust import build_corpus_delta

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BI = {"modelId": "coretex/deterministic-bi-encoder", "revision": "r1", "layout": "int8"}


def new_key() -> str:
    k = ec.generate_private_key(ec.SECP256R1())
    return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("net")
    small = gzip.decompress((FIXTURES / "corpus-small.json.gz").read_bytes())
    corpus = {**json.loads(small), "biEncoder": BI}
    record = lambda i: {**corpus["events"][i], "id": f"sx_e2e_{i}", "split": split_for(f"sx_e2e_{i}", 0), "embeddings": {**BI, "query": "3f80" + "00" * 8}}
    served = tmp / "served"
    launch = publish_launch(served, json.dumps(corpus).encode(), bytes(range(256)) * 8, corpus["corpusRoot"],   # the corpus the deltas extend
                            json.loads((FIXTURES / "bundle-manifest-v16.json").read_text()))
    key = new_key()
    d1 = build_corpus_delta(corpus, [record(1)], [], 1, "2026-06-11T00:00:00.000Z")
    after1 = {**corpus, "events": corpus["events"] + [record(1)], "corpusRoot": d1["nextRoot"]}
    d2 = build_corpus_delta(after1, [record(2)], [], 2, "2026-06-12T00:00:00.000Z")
    rotation = lambda e, d: {"schemaVersion": "coretex.epoch-rotation.v1", "epoch": e, "previousCorpusRoot": d["previousRoot"],
                             "nextCorpusRoot": d["nextRoot"], "bundleHash": launch["bundleHash"], "minImprovementPpm": 500}
    for e, d in ((1, d1), (2, d2)): publish_rotation(served, rotation(e, d), d, key, "coordinator")
    node = RpcNode()
    url = node.start()
    reg = RegistryContract.deploy(node.chain)
    mining = MiningContract.deploy(node.chain, reg.address)
    state, rng = prepare(GENESIS), random.Random(7)
    for e, d in ((1, d1), (2, d2)):
        pins = EpochPins(launch["bundleHash"], d["nextRoot"], "0x" + "00" * 32, "0x" + "00" * 32)
        open_epoch(reg, mining, e, state.root, pins, keccak256(f"epoch {e} secret".encode()))
        for _ in range(2):
            raw, child = random_patch(rng, state)
            reg.submit_advance(e, "0x" + rng.getrandbits(160).to_bytes(20, "big").hex(), state.root, child.root, raw, pins)
            state = child
        reg.finalize_epoch(e, state.root, pins)
    mining.reveal(1, keccak256(b"epoch 1 secret"))
    server = ArtifactServer(served)
    base = server.start()
    skip = build_corpus_delta(corpus, [record(1), record(2)], [], 2, "2026-06-12T00:00:00.000Z")   # epoch 1's delta skipped
    assert skip["nextRoot"] == d2["nextRoot"]
    yield {"tmp": tmp, "served": served, "base": base, "url": url, "registry": reg, "mining": mining, "pins": pins, "launch": launch, "key": key, "rotation": rotation,
           "d2": d2, "skip": skip}
    server.stop(); node.stop()


def validator(net, state, *more, command="sync"):
    if command == "setup": return run_command(add_validator, "validator", "setup", "--state-dir", str(state), *more)
    return run_command(add_validator, "validator", "sync", "--rpc", net["url"], "--registry", net["registry"].address,
                       "--mining-contract", net["mining"].address, "--data", str(state / "data"), "--state-dir", str(state),
                       "--confirmations", "0", "--retries", "1", "--skip-score-replay", *more)


def copy_of(net, name) -> tuple:
    "(folder, base URL, server) serving a copy of the coordinator's artifacts, to be tampered with."
    folder = net["tmp"] / name
    shutil.copytree(net["served"], folder)
    server = ArtifactServer(folder)
    return folder, server.start(), server


def test_setup_then_sync_verifies_roots_and_rotations(net, tmp_path):
    rc, out, err = validator(net, tmp_path, "--artifact-base-url", net["base"], command="setup")
    assert rc == 0, err
    rc, _, err = validator(net, tmp_path)   # the artifact base comes from setup's record
    assert rc == 3, err
    assert [l.split(":")[0] for l in err.splitlines() if "rotation" in l and "verified" in l] == ["epoch 1", "epoch 2"]
    commit = net["registry"].view("epochHiddenSeedCommit", 2)
    assert f"epoch 2: V4 epochCommit = registry hiddenSeedCommit {commit}; awaiting_epoch_secret_reveal" in err
    state = json.loads((tmp_path / "validator-sync-state.json").read_text())
    assert state["corpusRoot"] == net["d2"]["nextRoot"] and sorted(state["rotations"]) == ["1", "2"]


def test_a_tampered_bundle_manifest(net, tmp_path):
    folder, base, server = copy_of(net, "tampered-bundle")
    try:
        m = net["launch"]
        bpath = folder / artifact_name({"path": m["bundlePath"]})
        b = json.loads(bpath.read_text()); b["evaluator"]["profile"]["pipelineVersion"] = "coretex-retrieval-v2-r4"
        bpath.write_text(json.dumps(b))
        (folder / LAUNCH_FILE).write_text(json.dumps({**m, "bundleSha256": hashlib.sha256(bpath.read_bytes()).hexdigest()}))
        rc, out, err = validator(net, tmp_path, "--artifact-base-url", base, command="setup")
        assert rc == 1 and out.splitlines()[-1].startswith("FAIL bundle") and "(recomputed) != launch pin" in out
    finally: server.stop()


@pytest.mark.parametrize("damage", ["hash", "size"])
def test_a_wrong_artifact(net, tmp_path, damage):
    folder, base, server = copy_of(net, f"wrong-{damage}")
    try:
        f = folder / net["launch"]["payloads"][1]["fileName"]
        data = f.read_bytes()
        f.write_bytes(data[:-1] + b"\x00" if damage == "hash" else data + b"\x00")
        rc, out, _ = validator(net, tmp_path, "--artifact-base-url", base, command="setup")
        want = "sha256 " if damage == "hash" else "download passed 2048 bytes"
        assert rc == 1 and f"FAIL embeddings {f.name}: {want}" in out
    finally: server.stop()


def test_a_forged_rotation_manifest(net, tmp_path):
    folder, base, server = copy_of(net, "forged")
    try:
        p = folder / rotation_paths(2)[0]
        p.write_text(json.dumps({**json.loads(p.read_text()), "minImprovementPpm": 1}))   # signed value changed
        assert validator(net, tmp_path, "--artifact-base-url", base, command="setup")[0] == 0
        rc, _, err = validator(net, tmp_path, "--artifact-base-url", base)
        assert rc == 1 and "FAIL ROTATION_SIGNATURE_INVALID: rotation manifest signature invalid" in err
        assert "rotations" not in json.loads((tmp_path / "validator-sync-state.json").read_text())   # epoch 1 not committed either
    finally: server.stop()


def test_a_re_keyed_coordinator(net, tmp_path):
    assert validator(net, tmp_path, "--artifact-base-url", net["base"], command="setup")[0] == 0
    assert validator(net, tmp_path, "--artifact-base-url", net["base"])[0] == 3   # the key is pinned
    folder, base, server = copy_of(net, "re-keyed")
    try:
        publish_rotation(folder, net["rotation"](2, net["d2"]), net["d2"], new_key(), "coordinator-2")
        rc, _, err = validator(net, tmp_path, "--artifact-base-url", base)
        assert rc == 1 and "FAIL KEY_PIN_MISMATCH: TOFU key pin mismatch" in err
        rc, _, err = validator(net, tmp_path, "--artifact-base-url", base, "--accept-key-change")
        assert rc == 3 and "epoch signing key changed: accepted" in err
        assert validator(net, tmp_path, "--artifact-base-url", base)[0] == 3   # the new key is the pin now
    finally: server.stop()


def test_a_broken_delta_chain(net, tmp_path):
    folder, base, server = copy_of(net, "broken")
    try:
        skip = net["skip"]
        publish_rotation(folder, {**net["rotation"](2, skip)}, skip, net["key"], "coordinator")
        assert validator(net, tmp_path, "--artifact-base-url", base, command="setup")[0] == 0
        rc, _, err = validator(net, tmp_path, "--artifact-base-url", base)
        assert rc == 1 and f"FAIL CORPUS_CONTINUITY: corpus-delta continuity: delta.previousRoot {skip['previousRoot']}" in err
    finally: server.stop()


def test_an_eval_report_not_matching_its_event(net, tmp_path):
    "The coordinator publishes, under an advance's evalReportHash, a report that hashes to something else."
    folder, base, server = copy_of(net, "wrong-report")
    try:
        from coretex.network.rescore import report_paths
        (folder / "eval-reports").mkdir()
        path = folder / report_paths("0x" + "00" * 32, 1)[0]   # these advances carry a zero evalReportHash
        path.write_text(json.dumps({"evalReportHash": "0x" + "00" * 32, "transaction": {}, "artifact": {"version": "x", "epochId": 1}}))
        assert validator(net, tmp_path, "--artifact-base-url", base, command="setup")[0] == 0
        rc, _, err = run_command(add_validator, "validator", "sync", "--rpc", net["url"], "--registry", net["registry"].address,
                                 "--data", str(tmp_path / "data"), "--state-dir", str(tmp_path), "--confirmations", "0", "--retries", "1")
        assert rc == 1 and "FAIL REPORT_EVENT_MISMATCH: eval-reports/0x" in err and "not the event's evalReportHash" in err
    finally: server.stop()


def test_a_wrong_epoch_commit(net, tmp_path):
    "A mining contract (pointing at the same registry) whose commit for the current epoch is not the registry's."
    chain = net["registry"].chain
    wrong = MiningContract.deploy(chain, net["registry"].address)
    other = keccak256(b"not the registry's commit")
    commit_epoch(wrong, 2, bytes(32), net["pins"], other)
    wrong.set_epoch(2)
    assert validator(net, tmp_path, "--artifact-base-url", net["base"], command="setup")[0] == 0
    rc, _, err = validator(net, tmp_path, "--mining-contract", wrong.address)
    registry_commit = net["registry"].view("epochHiddenSeedCommit", 2)
    assert rc == 1 and f"FAIL HIDDEN_SEED_COMMIT_MISMATCH: V4 epochCommit {to_hex(other)} != registry hiddenSeedCommit {registry_commit}" in err


def test_a_no_op_sync_never_imports_torch(net, tmp_path):
    "A sync with nothing new to follow loads no model runtime (torch alone is seconds of a cold start)."
    import subprocess, sys
    from helpers import ROOT
    assert validator(net, tmp_path)[0] == 3   # caught up
    probe = ("import sys; from coretex.cli import main; rc = main(); "
             "print(rc, 'torch' in sys.modules, 'transformers' in sys.modules)")
    argv = ["validator", "sync", "--rpc", net["url"], "--registry", net["registry"].address, "--mining-contract", net["mining"].address,
            "--data", str(tmp_path / "data"), "--state-dir", str(tmp_path), "--confirmations", "0", "--skip-score-replay"]
    r = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.split() == ["3", "False", "False"], r.stdout + r.stderr


def test_each_epoch_rescored_on_its_own_corpus(net, tmp_path):
    """After setup and a sync that verified both rotations, the corpus an advance of each epoch is re-scored on is the
    one its epoch pins: setup's launch corpus walked through the kept deltas (corpus_at), loaded once per root."""
    from coretex.network.rescore import corpus_evaluators
    from coretex.network.trust import TrustError
    assert validator(net, tmp_path, "--artifact-base-url", net["base"], command="setup")[0] == 0
    assert validator(net, tmp_path)[0] == 3
    corpus_of = corpus_evaluators(tmp_path, make=lambda corpus: corpus)
    pinned = {e: net["registry"].view("epochCorpusRoot", e) for e in (1, 2)}
    got = {e: "0x" + corpus_of({"corpus_root": root}).root.hex() for e, root in pinned.items()}
    assert got == pinned and pinned[2] == net["d2"]["nextRoot"]
    assert len(corpus_of({"corpus_root": pinned[2]}).events) == len(corpus_of({"corpus_root": net["launch"]["corpusRoot"]}).events) + 2
    with pytest.raises(TrustError): corpus_of({"corpus_root": "0x" + "ab" * 32})
