"Each protocol field of a coordinator's envelope, tampered with alone, is caught by its own check with the protocol's code."
import copy, dataclasses, tempfile
import pytest
from coretex.network.chain import Chain
from coretex.network.coordinator import Coordinator
from coretex.evaluator.evaluate import Evaluator
from coretex.core.keccak import keccak256, to_hex, from_hex
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.network.receipt import Signer, artifact_hash, decode_calldata, submit_calldata
from coretex.network.replay import ChainBlocks, evaluator_scorer, replay_envelope
from coretex.core.state import GENESIS, state_root
from coretex.network.store import open_db
from helpers import accepted_job

SECRET = keccak256(b"tamper epoch secret")


@pytest.fixture(scope="module")
def signed():
    d = tempfile.mkdtemp()
    db, close = open_db(path=d)
    ev, chain = Evaluator(), Chain.connect()
    coord = Coordinator(db, chain, ev, Signer.load(f"{d}/key", create=True))
    coord.open_epoch(5, GENESIS, SECRET)
    job, env = accepted_job(coord, "0x" + "cd" * 20, 5)
    yield env, chain, ev
    close()


def replay(env, chain, ev, secret=SECRET, signer=None):
    return replay_envelope(env, ChainBlocks(chain), evaluator_scorer(ev, GENESIS, 5), secret, signer)


def test_untouched_envelope_replays(signed):
    env = signed[0]
    assert env["outcome"] == "STATE_ADVANCE" and env["artifact"]["receipt"]["receivedAtBlock"] > 0
    v = replay(*signed)
    assert (v.ok, v.gate_delta_ppm, v.confirm_delta_ppm) == (True, 0, 0)
    assert [c.name for c in v.checks] == ["artifact shape", "artifact hash", "eval report hash", "seed inputs", "threshold",
                                          "epoch secret", "patch hash", "dedup key", "target block", "gate seed", "confirm seed",
                                          "gate score", "confirm score", "receipt binding", "signature"]


def flip(h: str) -> str:
    return h[:-1] + ("0" if h[-1] != "0" else "1")


def rehash(e):
    "Re-hash the artifact after a change, so that the checks after the hash are reached."
    a = e["artifact"]
    a["artifactHash"] = a["evalReportHash"] = to_hex(artifact_hash(a))


def art(path, fn, again=True):
    "Change artifact field `path` (dotted) with `fn`, re-hashing unless `again` is False."
    def tamper(e):
        *outer, last = path.split(".")
        d = e["artifact"]
        for k in outer: d = d[k]
        d[last] = fn(d[last])
        if again: rehash(e)
    return tamper


def both_blockhashes(e):
    forged = to_hex(keccak256(b"another block"))
    e["artifact"]["receipt"]["blockhash"] = e["artifact"]["seedDerivation"]["blockhash"] = forged
    rehash(e)


def patch_bytes(e):
    e["artifact"]["compactPatchBytesHex"] = e["artifact"]["compactPatchBytesHex"][:-2] + "01"
    rehash(e)


def signed_field(e):
    "A signed field changed in the calldata (the work units): the digest no longer recovers to the signer."
    rc, compact, sig = decode_calldata(from_hex(e["transaction"]["data"]), e["artifact"]["minerAddress"])
    e["transaction"]["data"] = to_hex(submit_calldata(dataclasses.replace(rc, work_units_bps=120_000), compact, sig))


def signature(e):
    e["transaction"]["data"] = e["transaction"]["data"][:-66] + "ab" + e["transaction"]["data"][-64:]


TAMPERS = {
    "version": (art("version", lambda v: v + "x"), "EVAL_ARTIFACT_MALFORMED"),
    "minerAddress": (art("minerAddress", lambda v: "0x" + "ee" * 20), "EVAL_ARTIFACT_MALFORMED"),
    "thresholdPpm (not re-hashed)": (art("thresholdPpm", lambda v: v + 1, again=False), "EVAL_ARTIFACT_HASH_MISMATCH"),
    "artifactHash": (art("artifactHash", flip, again=False), "EVAL_ARTIFACT_HASH_MISMATCH"),
    "evalReportHash": (art("evalReportHash", flip, again=False), "EVAL_REPORT_HASH_MISMATCH"),
    "seedDerivation.targetBlockOffset": (art("seedDerivation.targetBlockOffset", lambda v: v + 1), "EVAL_ARTIFACT_SEED_INPUTS_MISMATCH"),
    "seedDerivation.corpusRoot": (art("seedDerivation.corpusRoot", flip), "EVAL_ARTIFACT_SEED_INPUTS_MISMATCH"),
    "thresholdPpm": (art("thresholdPpm", lambda v: 10 ** 6), "EVAL_ARTIFACT_THRESHOLD_VIOLATION"),
    "receipt.accepted": (art("receipt.accepted", lambda v: False), "EVAL_ARTIFACT_THRESHOLD_VIOLATION"),
    "context.hiddenSeedCommit": (art("context.hiddenSeedCommit", flip), "EPOCH_SECRET_COMMIT_MISMATCH"),
    "compactPatchBytesHex": (patch_bytes, "PATCH_HASH_MISMATCH"),
    "receipt.dedupKey": (art("receipt.dedupKey", flip), "DEDUP_KEY_MISMATCH"),
    "receipt.blockhash": (both_blockhashes, "BLOCKHASH_MISMATCH"),
    "receipt.gateSeed": (art("receipt.gateSeed", flip), "GATE_SEED_MISMATCH"),
    "receipt.confirmSeed": (art("receipt.confirmSeed", flip), "CONFIRM_SEED_MISMATCH"),
    "receipt.gateScorePpm": (art("receipt.gateScorePpm", lambda v: v + 10_000), "GATE_SCORE_BEYOND_TOLERANCE"),
    "receipt.confirmScorePpm": (art("receipt.confirmScorePpm", lambda v: v + 10_000), "CONFIRM_SCORE_BEYOND_TOLERANCE"),
    "signed workUnitsBps": (signed_field, "RECEIPT_SIGNER_MISMATCH"),
    "signature": (signature, "RECEIPT_SIGNER_MISMATCH"),
}


@pytest.mark.parametrize("field", list(TAMPERS))
def test_each_tamper_is_caught_by_its_check(signed, field):
    env, chain, ev = signed
    bad = copy.deepcopy(env)
    fn, code = TAMPERS[field]
    fn(bad)
    v = replay(bad, chain, ev)
    assert (v.ok, v.code) == (False, code), v.detail
    assert v.checks[-1].code == code and all(c.ok for c in v.checks[:-1])


def test_an_artifact_the_receipt_does_not_sign_is_caught(signed):
    "A consistent, re-hashed artifact (a lower threshold) still verifies alone, but the signed receipt names the old hash."
    env, chain, ev = signed
    bad = copy.deepcopy(env)
    art("thresholdPpm", lambda v: v - 1)(bad)
    v = replay(bad, chain, ev)
    assert (v.ok, v.code, v.checks[-1].name) == (False, "RECEIPT_ARTIFACT_MISMATCH", "receipt binding")


def test_wrong_secret_is_caught(signed):
    env, chain, ev = signed
    assert replay(env, chain, ev, secret=keccak256(b"guess")).code == "EPOCH_SECRET_COMMIT_MISMATCH"


def test_unexpected_signer_is_caught(signed):
    env, chain, ev = signed
    assert replay(env, chain, ev, signer="0x" + "00" * 20).code == "RECEIPT_SIGNER_MISMATCH"


def test_cli_replay_reads_the_envelope_and_refuses_bad_input(signed, tmp_path):
    "`coretex replay` in a fresh process: its in-process chain lacks the target block (RPC_ERROR, exit 1); a non-envelope is one line, exit 2."
    import json
    from helpers import run_cli
    env = signed[0]
    f = tmp_path / "env.json"
    f.write_text(json.dumps(env))
    r = run_cli("replay", f, "--epoch-secret", to_hex(SECRET))
    target = env["artifact"]["receipt"]["targetBlock"]
    assert r.returncode == 1 and f"FAIL target block: RPC_ERROR block {target} not found" in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("OK  ") == 8
    f.write_text(json.dumps({"report": {}}))
    r = run_cli("replay", f, "--epoch-secret", to_hex(SECRET))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a signed receipt envelope" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("replay", tmp_path / "missing.json", "--epoch-secret", to_hex(SECRET))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot read report" in r.stderr


def test_a_parent_state_that_is_not_the_receipts_fails_the_rescore(signed):
    "The scorer refuses to rescore on another state: a failed check after the ones that passed, not an exception."
    from coretex.core.patch import apply_patch
    env, chain, ev = signed
    other = apply_patch(GENESIS, make_patch(state_root(GENESIS), {700: encode_relation("supports")}, 0x04)).words
    v = replay_envelope(env, ChainBlocks(chain), evaluator_scorer(ev, other, 5), SECRET)
    assert (v.ok, v.code, v.checks[-1].name) == (False, "ReplayError", "rescore")
    assert [c.name for c in v.checks if c.ok][-1] == "confirm seed"
