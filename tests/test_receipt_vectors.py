"""Every signed receipt and every eval report artifact of the reference vectors, reproduced byte for byte.

The vectors (../shared/vectors/coretex/receipts/, README there) hold what the CoreTex reference and the
BotcoinMiningV4 contract produced; nothing here is computed by the code under test on both sides.
"""
import json
import pytest
from helpers import ROOT
from coretex.core.keccak import from_hex, to_hex, canonical_json
from coretex.core.patch import apply_patch
from coretex.core.state import GENESIS, state_root
from coretex.network.receipt import from_message, to_message, encode_struct, struct_hash, domain_separator, receipt_digest, Signer, recover_signer, receipt_hash, submit_calldata, decode_calldata, EpochContext, ChainCursor, StateAdvance, PerPatchReceipt, build_artifact, artifact_hash, build_receipt, sign_receipt, public_receipt, secret_commitment

V = json.loads((ROOT.parent / "shared" / "vectors" / "coretex" / "receipts" / "vectors.json").read_text())
KEY = Signer(from_hex(V["testKeys"]["coordinatorSigner"]["privateKey"]))
EC = V["epochContext"]
CTX = EpochContext(EC["epochId"], from_hex(EC["corpusRoot"]), from_hex(EC["coreVersionHash(bundleHash)"]),
                   from_hex(EC["activeFrontierRoot"]), from_hex(EC["hiddenSeedCommit"]), EC["replayTolerancePpm"],
                   EC["targetBlockOffset"], from_hex(EC["workPolicyHash"]), int(V["receipts"][0]["message"]["rulesVersion"]))


def test_counts():
    assert (len(V["receipts"]), len(V["evalReportArtifacts"])) == (30, 10)


@pytest.mark.parametrize("rv", V["receipts"], ids=lambda rv: rv["id"])
def test_receipt_bytes(rv):
    r = from_message(rv["message"])
    assert to_hex(encode_struct(r)) == rv["encodedStruct"]
    assert to_hex(struct_hash(r)) == rv["structHash"]
    assert to_hex(domain_separator()) == rv["domainSeparator"]
    assert to_hex(receipt_digest(r)) == rv["digest"]
    sig = KEY.sign_digest(receipt_digest(r))
    assert (to_hex(sig[:32]), to_hex(sig[32:64]), sig[64], to_hex(sig)) == \
           (rv["signature"]["r"], rv["signature"]["s"], rv["signature"]["v"], rv["signature"]["hex"])
    assert recover_signer(receipt_digest(r), sig) == rv["signerAddress"]
    assert to_hex(receipt_hash(r)) == rv["receiptHash"]
    data = submit_calldata(r, from_hex(rv["compactPatchBytes"]), sig)
    assert to_hex(data) == rv["submitCalldata"]
    assert decode_calldata(data, r.miner) == (r, from_hex(rv["compactPatchBytes"]), sig)


def test_mixed_case_hex_hashes_alike():
    rv = next(rv for rv in V["receipts"] if rv["id"] == "receipt-28")
    assert to_message(from_message(rv["message"])) != rv["message"]           # the vector's case is mixed on purpose
    assert to_hex(struct_hash(from_message(rv["message"]))) == rv["structHash"]


def artifact_parts(a: dict):
    return PerPatchReceipt.from_json(a["receipt"]), a["outcome"], from_hex(a["compactPatchBytesHex"]), a["thresholdPpm"]


@pytest.mark.parametrize("av", V["evalReportArtifacts"], ids=lambda av: av["id"])
def test_artifact_rebuilt_from_typed_parts(av):
    a = build_artifact(*artifact_parts(av["artifact"]), CTX)
    assert canonical_json({k: v for k, v in a.items() if k not in ("artifactHash", "evalReportHash")}) == av["canonicalJson"]
    assert a == av["artifact"] and a["artifactHash"] == a["evalReportHash"] == av["artifactHash"]
    assert to_hex(artifact_hash(av["artifact"])) == av["artifactHash"]


def coordinator_runs():
    "The ten coordinator receipts in signing order, each with the state it was signed on."
    words = GENESIS
    for rv in V["receipts"][:10]:
        yield rv, words
        if rv["message"]["outcome"] == "2":
            words = apply_patch(words, from_hex(rv["compactPatchBytes"])).words


@pytest.mark.parametrize("rv,parent", list(coordinator_runs()), ids=lambda x: x["id"] if isinstance(x, dict) else "")
def test_coordinator_receipt_rebuilt_from_its_inputs(rv, parent):
    "From the artifact, the epoch context, the chain's counters before signing, the clock and (advances) the child root."
    c = rv["coordinator"]
    art = next(x["artifact"] for x in V["evalReportArtifacts"] if x["linkedReceiptId"] == rv["id"])
    assert to_hex(state_root(parent)) == art["receipt"]["parentRoot"]
    cursor = ChainCursor(int(c["chainCountersBefore"]["nextIndex"]), from_hex(c["chainCountersBefore"]["lastReceiptHash"]),
                         int(c["qualifiedScreenerPassesSinceLastStateAdvance"]))
    advance = None
    if art["outcome"] == "STATE_ADVANCE":
        child = apply_patch(parent, from_hex(art["compactPatchBytesHex"]))
        advance = StateAdvance(child.root, int(c["parentScorePpm"]))
    p = build_receipt(art, CTX, cursor, int(c["clockSec"]), 900, advance)
    assert to_message(p.receipt) == rv["message"] and to_hex(p.compact_patch) == rv["compactPatchBytes"]
    s = sign_receipt(p, KEY)
    assert public_receipt(s.receipt, s.compact_patch, s.signature) == c["envelope"]["receipt"]
    assert s.transaction() == c["envelope"]["transaction"]
    assert to_hex(s.receipt_hash) == rv["receiptHash"] == c["evmReplay"]["eventReceiptHash"]


def test_hidden_seed_commit():
    assert to_hex(secret_commitment(from_hex(EC["epochSecret"]))) == EC["hiddenSeedCommit"]
