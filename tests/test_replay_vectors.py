"""The reference's verdicts on every per-patch proof and every eval report artifact, accepted and tampered.

The block source and the scorer are the vectors' own fakes, rebuilt from their data (README §2 of
../shared/vectors/coretex/receipts/): known blocks hash to keccak("rcptvec-fake-base-blockhash:<n>"), others are
not found; the scorer looks each seed up in the vector's table.
"""
import json, re
import pytest
from helpers import ROOT
from coretex.core.keccak import keccak256, from_hex, to_hex, canonical_json
from coretex.network.receipt import PerPatchReceipt, artifact_hash
from coretex.network.replay import ReplayDeps, TableBlocks, verify_per_patch, verify_artifact
from coretex.core.seeds import SeedError

V = json.loads((ROOT.parent / "shared" / "vectors" / "coretex" / "receipts" / "vectors.json").read_text())


def fake_blocks(rpc: dict) -> TableBlocks:
    says = rpc["returns"]
    if says.startswith("always throws"): return TableBlocks({}, error=re.search(r'Error\("(.*)"\)', says).group(1))
    if says.startswith("0x" + "0" * 64): return TableBlocks({}, every=bytes(32))
    return TableBlocks({n: keccak256(f"rcptvec-fake-base-blockhash:{n}".encode()) for n in rpc["knownBlocks"]})


class FakeScorer:
    "The vector's seed -> score table, recording which packs were asked for."
    def __init__(self, table: dict): self.table, self.calls = {from_hex(k): v for k, v in table.items()}, []
    def __call__(self, req):
        self.calls.append(req.which)
        return self.table[req.eval_seed]


def as_reference(v) -> dict:
    if v.ok: return {"ok": True, "gateDeltaPpm": v.gate_delta_ppm, "confirmDeltaPpm": v.confirm_delta_ppm}
    return {"ok": False, "code": v.code, "detail": v.detail}


def test_counts():
    assert [len(V[k]) for k in ("perPatchReceipts", "perPatchReceiptsTampered", "evalReportArtifacts", "evalReportArtifactsTampered")] == [10, 28, 10, 22]


@pytest.mark.parametrize("x", V["perPatchReceipts"] + V["perPatchReceiptsTampered"], ids=lambda x: x["id"])
def test_per_patch(x):
    d, f, expected = x["verify"]["deps"], x["verify"]["fakes"], x["verify"]["expected"]
    scorer = FakeScorer(f["scorer"]["byEvalSeed"])
    deps = ReplayDeps(fake_blocks(f["rpcClient.getBlockHash"]), scorer, from_hex(d["epochSecret"]), from_hex(d["corpusRoot"]),
                      from_hex(d["bundleHash"]), from_hex(d["normalizedPatchBytes"]), d["replayTolerancePpm"])
    r = PerPatchReceipt.from_json(x["receipt"])
    if "throws" in expected:                              # a zero blockhash cannot seed a pack: the reference throws, no code
        with pytest.raises(SeedError, match="blockhash is zero"): verify_per_patch(r, deps)
    else: assert as_reference(verify_per_patch(r, deps)) == expected
    assert scorer.calls == x["verify"]["scorerCallsMade"]


@pytest.mark.parametrize("x", V["evalReportArtifacts"] + V["evalReportArtifactsTampered"], ids=lambda x: x["id"])
def test_artifact(x):
    f, expected = x["verify"]["fakes"], x["verify"]["expected"]
    v = verify_artifact(x["artifact"], fake_blocks(f["rpcClient.getBlockHash"]), FakeScorer(f["scorer"]["byEvalSeed"]),
                        from_hex(f["epochSecret"]))
    got = as_reference(v) | ({"artifactHash": v.artifact_hash} if v.ok else {})
    assert got == expected


@pytest.mark.parametrize("x", V["evalReportArtifactsTampered"], ids=lambda x: x["id"])
def test_tampered_artifact_bytes(x):
    "The hash preimage and hash of each tampered artifact, as the reference computed them."
    body = {k: v for k, v in x["artifact"].items() if k not in ("artifactHash", "evalReportHash")}
    assert canonical_json(body) == x["canonicalJson"]
    assert to_hex(artifact_hash(x["artifact"])) == x["recomputedHash"]
