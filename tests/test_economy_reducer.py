"""coretex's reducer, funding transaction and verify-epoch against every case of the reference's economy vectors,
and the Python contract of the vectors' README importable from coretex.economy."""
import re
import pytest
from economy_vectors import VECTORS, VECTORS_PRESENT, args, agree, check, data, params, raises_as
from coretex.patch import decode_patch
from coretex import funding, reducer, verify_epoch as ve

pytestmark = VECTORS_PRESENT


def evaluator(spec: dict):
    "The vectors' marginal evaluators: the stub returns the wire score delta, const a fixed gain."
    if spec["kind"] == "stub": return lambda words, patch: patch.score_delta
    return lambda words, patch, gain=int(spec["gain"]): gain


def offered(items: list) -> list:
    "A case's patches as the reducer lanes take them: decoded, with their evaluator."
    return [{**x, "patch": decode_patch(bytes.fromhex(x["patch_bytes"][2:])),
             "marginal_evaluator": evaluator(x["marginal_evaluator"])} for x in items]


@params("evaluate_and_apply_onto_current")
def test_accept_step(case):
    a = args(case)
    a["patch"] = decode_patch(bytes.fromhex(a.pop("patch_bytes")[2:]))
    agree(reducer.evaluate_and_apply_onto_current(**{**a, "marginal_evaluator": evaluator(a["marginal_evaluator"])}),
          case["expect"])


@params("reduce")
def test_reduce(case):
    a = args(case)
    agree(reducer.reduce(**{**a, "patches": offered(a["patches"])}), case["expect"])


@params("advance_epoch_state")
def test_advance_epoch_state(case):
    a = args(case)
    a["patches"] = offered(a["patches"])
    if "error" in case:
        with raises_as(case["error"]): reducer.advance_epoch_state(**a)
    else: agree(reducer.advance_epoch_state(**a), case["expect"])


@pytest.mark.parametrize("name", ["compute_patch_set_root"])
def test_patch_set_root(name):
    for case in data()["functions"][name]: check(reducer.compute_patch_set_root, case)


@pytest.mark.parametrize("name", ["compute_leaf_hash", "compute_bonus_merkle_root", "build_fund_epoch_calldata",
                                  "build_miner_claim_proof", "verify_miner_claim_proof"])
def test_funding(name):
    for case in data()["functions"][name]: check(getattr(funding, name), case)


def test_fund_epoch_strict():
    "strict=True refuses exactly the cases where the reference wraps a negative amount or reads a non-hex address."
    for case in data()["functions"]["build_fund_epoch_calldata"]:
        a = args(case)
        wraps = not 0 <= a["epoch"] < 2**64 or any(
            min(l["bonus_botcoin"], l["cap_botcoin"]) < 0 or not re.fullmatch(r"(0[xX])?[0-9a-fA-F]{40}", l["miner"])
            for l in a["leaves"])
        if "error" in case or wraps:
            with pytest.raises(ValueError): funding.build_fund_epoch_calldata(**a, strict=True)
        else: agree(funding.build_fund_epoch_calldata(**a, strict=True), case["expect"])


@pytest.mark.parametrize("name", ["decode_patch_accepted_log", "decode_epoch_finalized_log", "decode_state_snapshot_log"])
def test_log_decoders(name):
    for case in data()["functions"][name]: check(getattr(ve, name), case)


@params("verify_epoch")
def test_verify_epoch(case):
    expect = {k: v for k, v in case["expect"].items() if k != "message"}  # the README compares the code, not the text
    agree(ve.verify_epoch(**args(case)), expect)


# the tampers the reference lets through (README, "Looked like bugs" 11), each caught by a strict check
SKIPPED_BY_REFERENCE = {"other-fields-changed": "finalized parent_state_root", "scoredelta-raised": "patch_set_root",
                        "epoch-field-changed": "from epoch 999"}


@params("verify_epoch")
def test_verify_epoch_strict(case):
    result = ve.verify_epoch(**args(case), strict=True)
    if not result.ok: return
    tamper = next((t for t in SKIPPED_BY_REFERENCE if case["id"].endswith(t)), None)
    if tamper: assert case["expect"]["match"] and any(SKIPPED_BY_REFERENCE[tamper] in f for f in result.strict_failures)
    elif case["expect"]["match"] and not re.search(r"miner-changed|evalreport-changed", case["id"]):
        assert result.strict_failures == (), result.strict_failures


def contract_names() -> list:
    "Every function the README's Python contract names."
    readme = (VECTORS.parent / "README.md").read_text()
    block = readme.split("## Python contract")[1].split("```")[1]
    return sorted(set(re.findall(r"(?:^|;\s+)([a-z_]+)\(", block, re.M)))


def test_contract_imports_from_economy():
    import coretex.economy as economy
    names = contract_names()
    assert len(names) >= 26 and "verify_epoch" in names
    assert [n for n in names if not callable(getattr(economy, n, None))] == []
