"""coretex's reducer, funding transaction and verify-epoch against every case of the reference's economy vectors
(one test item per function), and the Python contract of the vectors' README importable from coretex.economy."""
import importlib, re
import pytest
from economy_vectors import VECTORS, VECTORS_PRESENT, agree, all_agree, args, cases, diff
from coretex.core.patch import decode_patch
from coretex.economy import funding, reducer
ve = importlib.import_module("coretex.economy.verify_epoch")   # the package's `verify_epoch` is the function

pytestmark = VECTORS_PRESENT


def evaluator(spec: dict):
    "The vectors' marginal evaluators: the stub returns the wire score delta, const a fixed gain."
    if spec["kind"] == "stub": return lambda words, patch: patch.score_delta
    return lambda words, patch, gain=int(spec["gain"]): gain


def offered(case: dict) -> dict:
    "A case's patches as the reducer lanes take them: decoded, with their evaluator."
    return {"patches": [{**x, "patch": decode_patch(bytes.fromhex(x["patch_bytes"][2:])),
                         "marginal_evaluator": evaluator(x["marginal_evaluator"])} for x in args(case)["patches"]]}


def accept_step(patch_bytes, marginal_evaluator, **kw):
    "The accept step called as the vectors record it: wire bytes and an evaluator spec."
    return reducer.evaluate_and_apply_onto_current(patch=decode_patch(bytes.fromhex(patch_bytes[2:])),
                                                   marginal_evaluator=evaluator(marginal_evaluator), **kw)


def test_accept_step(): all_agree("evaluate_and_apply_onto_current", accept_step)
def test_reduce(): all_agree("reduce", reducer.reduce, offered)
def test_advance_epoch_state(): all_agree("advance_epoch_state", reducer.advance_epoch_state, offered)
def test_patch_set_root(): all_agree("compute_patch_set_root", reducer.compute_patch_set_root)


@pytest.mark.parametrize("name", ["compute_leaf_hash", "compute_bonus_merkle_root", "build_fund_epoch_calldata",
                                  "build_miner_claim_proof", "verify_miner_claim_proof"])
def test_funding(name): all_agree(name, getattr(funding, name))


@pytest.mark.parametrize("name", ["decode_patch_accepted_log", "decode_epoch_finalized_log", "decode_state_snapshot_log"])
def test_log_decoders(name): all_agree(name, getattr(ve, name))


def test_fund_epoch_strict():
    "strict=True refuses exactly the cases where the reference wraps a negative amount or reads a non-hex address."
    for case in cases("build_fund_epoch_calldata"):
        a = args(case)
        wraps = not 0 <= a["epoch"] < 2**64 or any(
            min(l["bonus_botcoin"], l["cap_botcoin"]) < 0 or not re.fullmatch(r"(0[xX])?[0-9a-fA-F]{40}", l["miner"])
            for l in a["leaves"])
        if "error" in case or wraps:
            with pytest.raises(ValueError): funding.build_fund_epoch_calldata(**a, strict=True)
        else: agree(funding.build_fund_epoch_calldata(**a, strict=True), case["expect"])


def test_verify_epoch():
    "Every verify-epoch case, comparing the code but not the message (as the README says)."
    bad = [(c["id"], d) for c in cases("verify_epoch")
           if (d := diff(ve.verify_epoch(**args(c)), {k: v for k, v in c["expect"].items() if k != "message"}))]
    assert not bad, bad[:3]


# the tampers the reference lets through (README, "Looked like bugs" 11), each caught by a strict check
SKIPPED_BY_REFERENCE = {"other-fields-changed": "finalized parent_state_root", "scoredelta-raised": "patch_set_root",
                        "epoch-field-changed": "from epoch 999"}


def test_verify_epoch_strict():
    "strict=True names each tamper the reference lets match, and finds nothing in the untampered epochs."
    for case in cases("verify_epoch"):
        result = ve.verify_epoch(**args(case), strict=True)
        if not result.ok: continue
        tamper = next((t for t in SKIPPED_BY_REFERENCE if case["id"].endswith(t)), None)
        if tamper: assert case["expect"]["match"] and any(SKIPPED_BY_REFERENCE[tamper] in f for f in result.strict_failures), case["id"]
        elif case["expect"]["match"] and not re.search(r"miner-changed|evalreport-changed", case["id"]):
            assert result.strict_failures == (), (case["id"], result.strict_failures)


def contract_names() -> list:
    "Every function the README's Python contract names."
    block = (VECTORS.parent / "README.md").read_text().split("## Python contract")[1].split("```")[1]
    return sorted(set(re.findall(r"(?:^|;\s+)([a-z_]+)\(", block, re.M)))


def test_contract_imports_from_economy():
    import coretex.economy as economy
    names = contract_names()
    assert len(names) == 28 and "verify_epoch" in names
    assert [n for n in names if not callable(getattr(economy, n, None))] == []
    assert set(names) <= set(economy.__all__)


def random_epoch(rng, parent):
    "Patches on `parent` over a small pool of cells (overlaps, no-ops, reserved-bit writes, ties), some on another root."
    from coretex.core.patch import make_patch
    from coretex.core.state import state_root
    root, pool = state_root(parent), [11, 40, 41, 42, 100, 101, 700, 701]
    wires = []
    for _ in range(rng.randint(0, 12)):
        cells = rng.sample(pool, rng.randint(1, 3))
        wires.append(make_patch(root if rng.random() < 0.85 else rng.randbytes(32),
                                {c: rng.choice([0, 1, 2, rng.getrandbits(64)]) for c in cells}, score_delta=rng.choice([0, 5, 5, 9, rng.randint(0, 99)])))
    return wires


def stub_offer(wire: bytes) -> dict:
    "A patch offered to the reducer with the stub evaluator and its own score delta."
    p = decode_patch(wire)
    return dict(patch=p, patch_bytes=wire, score_delta=p.score_delta, marginal_evaluator=evaluator({"kind": "stub"}))


def test_every_reduced_epoch_verifies():
    "An epoch finalized by the reducer (stub gains, threshold 0) is reproduced by verify_epoch, strict checks included."
    import random
    from coretex.core.keccak import to_hex
    from coretex.core.patch import patch_hash
    from coretex.core.state import GENESIS, state_root
    rng, codes, kept = random.Random(23), set(), 0
    for n in range(60):
        parent = GENESIS if n % 2 else reducer.reduce(GENESIS, list(map(stub_offer, random_epoch(rng, GENESIS)))).new_state
        wires = random_epoch(rng, parent)
        out = reducer.reduce(parent, list(map(stub_offer, wires)))
        codes.update(r.reason for r in out.rejected); kept += len(out.accepted)
        finalized = dict(epoch=n, parent_state_root=to_hex(state_root(parent)), patch_set_root=to_hex(out.patch_set_root),
                         new_state_root=to_hex(out.new_state_root), core_version_hash="0x", experience_corpus_root="0x")
        events = [dict(epoch=n, miner="0x" + "01" * 20, parent_state_root=to_hex(decode_patch(w).parent_root),
                       patch_hash=to_hex(patch_hash(w)), eval_report_hash="0x", compact_patch_bytes=w) for w in reversed(wires)]
        result = ve.verify_epoch(n, finalized, events, None, genesis_state=parent, strict=True)
        assert (result.match, result.strict_failures) == (True, ()), n
        assert result.accepted_patch_hashes == [to_hex(patch_hash(a.patch_bytes)) for a in out.accepted]
    assert kept > 60 and codes == {"R01_TARGET_OVERLAP", "R02_SEMANTIC_CONFLICT", "R03_WRONG_PARENT_ROOT", "R05_RESERVED_BIT_SET"}


def test_every_claim_proof_verifies():
    "For 1-40 leaves, every miner's proof folds to the funded root, and a changed amount does not."
    import random
    rng = random.Random(24)
    for n in range(1, 41):
        leaves = [dict(miner="0x" + rng.randbytes(20).hex(), bonus_botcoin=b, cap_botcoin=b + rng.randint(0, 5))
                  for b in (rng.getrandbits(70) for _ in range(n))]
        root = funding.build_fund_epoch_calldata(n, leaves).merkle_root
        for leaf in leaves:
            claim = funding.build_miner_claim_proof(leaves, leaf["miner"].upper().replace("0X", "0x"))
            assert funding.verify_miner_claim_proof(leaf, claim.proof, root)
            assert not funding.verify_miner_claim_proof({**leaf, "bonus_botcoin": leaf["bonus_botcoin"] + 1}, claim.proof, root)
