"""Every case of the registry vectors (../shared/vectors/coretex/registry, made by the reference's replayCoreTexFromLogs
and its two decoders): the replay's ok, code, transitions and both roots, every decoded field of every log, and a
ValueError wherever the reference threw. Compared as the vectors' README says (messages are not compared).
Then the strict replay: on every log the contract could have emitted with one field tampered, the same code."""
import gzip, json
from collections import Counter
from pathlib import Path
import pytest
from coretex.core.keccak import to_hex
from coretex.core.state import WORD_COUNT
from coretex.economy.registry import (REGISTRY_EVENT_TOPICS, decode_epoch_finalized_log, decode_state_advanced_log,
                                      replay_registry_logs)

VECTORS = Path(__file__).resolve().parents[2] / "shared" / "vectors" / "coretex" / "registry" / "registry-replay.json.gz"
INT_FIELDS = {"epoch", "transition_index", "improvement_credits"}
RESULT_FIELDS = ("ok", "code", "transitions", "reproduced_final_root", "on_chain_final_root")


@pytest.fixture(scope="module")
def vectors():
    if not VECTORS.exists(): pytest.skip(f"the registry vectors are not beside this checkout ({VECTORS})")
    with gzip.open(VECTORS, "rt") as f: d = json.load(f)
    states = {name: tuple(int(s.get(str(i), "0x0"), 16) for i in range(WORD_COUNT)) for name, s in d["states"].items()}
    return d, states, d["functions"]["replay_registry_logs"]


def same_value(key: str, got, want) -> bool:
    "Whether an output field equals the recorded one under the README's encoding rules."
    if want is None or got is None: return got is None and want is None
    if isinstance(want, dict) and "$number" in want: return float(got) == float(int(want["$number"]))
    if key in INT_FIELDS: return int(got) == int(want)
    if isinstance(got, (bytes, bytearray)): got = to_hex(got)
    if isinstance(want, str): return isinstance(got, str) and got.lower() == want.lower()
    return type(got) is type(want) and got == want


def raises_value_error(fn, *a, **kw) -> bool:
    try: fn(*a, **kw)
    except ValueError: return True
    return False


def decode_mismatches(log: dict, rec: dict, kind: str, fn) -> list:
    if f"{kind}_error" in rec: return [] if raises_value_error(fn, log) else [f"{kind}: expected ValueError"]
    got, want = fn(log), rec[kind]
    if want is None or got is None: return [] if got is want is None else [f"{kind}: got {got!r:.80} want {want!r:.80}"]
    if set(got) != set(want): return [f"{kind}: keys {sorted(set(got) ^ set(want))}"]
    return [f"{kind}.{k}: got {got[k]!r:.80} want {want[k]!r:.80}" for k in want if not same_value(k, got[k], want[k])]


def kwargs(args: dict, states: dict) -> dict:
    "replay_registry_logs' arguments for a case, the per-epoch table wrapped as the lookup the README prescribes."
    kw = {k: v for k, v in args.items() if k not in ("parent_state", "expected_pins_for_epoch")}
    table = args.get("expected_pins_for_epoch")
    if table is not None: kw["expected_pins_for_epoch"] = lambda e, t=table: t.get(str(e))
    return {"parent_state": states[args["parent_state"]], **kw}


def case_mismatches(case: dict, states: dict) -> list:
    kw = kwargs(case["args"], states)
    if "error" in case: out = [] if raises_value_error(replay_registry_logs, **kw) else ["replay: expected ValueError"]
    else:
        res, want = replay_registry_logs(**kw), case["expect"]
        out = [f"replay.{k}: got {getattr(res, k)!r} want {want[k]!r}" for k in RESULT_FIELDS if not same_value(k, getattr(res, k), want[k])]
    for i, (log, rec) in enumerate(zip(case["args"]["logs"], case["decoded"], strict=True)):
        out += [f"log {i} {m}" for kind, fn in (("state_advanced", decode_state_advanced_log), ("epoch_finalized", decode_epoch_finalized_log))
                for m in decode_mismatches(log, rec, kind, fn)]
    return out


def strict_outcome(case: dict, states: dict) -> str:
    try: r = replay_registry_logs(**kwargs(case["args"], states), strict=True)
    except ValueError: return "THROW"
    return "OK" if r.ok else r.code


def test_topics_are_the_signatures_keccak(vectors):
    d, _, _ = vectors
    assert d["topics"] == REGISTRY_EVENT_TOPICS


def test_every_case_agrees_with_the_reference(vectors):
    _, states, cases = vectors
    assert len(cases) == 427 and sum(len(c["args"]["logs"]) for c in cases) == 2168
    bad = {c["id"]: m for c in cases if (m := case_mismatches(c, states))}
    assert not bad, f"{len(bad)} cases differ: " + "; ".join(f"{k}: {v[:3]}" for k, v in list(bad.items())[:5])


def test_the_checker_can_fail(vectors):
    "A word count off by one in every decoded advance is caught (the comparison is not vacuous)."
    _, states, cases = vectors
    c = next(c for c in cases if c["group"] == "valid-single" and any(r.get("state_advanced") for r in c["decoded"]))
    i = next(i for i, r in enumerate(c["decoded"]) if r.get("state_advanced"))
    rec = {**c["decoded"][i], "state_advanced": {**c["decoded"][i]["state_advanced"], "word_count": c["decoded"][i]["state_advanced"]["word_count"] + 1}}
    assert decode_mismatches(c["args"]["logs"][i], rec, "state_advanced", decode_state_advanced_log)


def test_strict_replays_keep_every_tamper_code_and_differ_only_where_the_reference_looks_wrong(vectors):
    _, states, cases = vectors
    differ = [(c, s) for c in cases if (s := strict_outcome(c, states)) != c["outcome"]]
    changed = Counter((c["group"], c["outcome"], s) for c, s in differ)
    assert not [k for k in changed if k[0] in ("tamper", "forged-r5", "other-topics")], changed
    # a valid window differs only where an empty per-epoch entry hid wrong flat pins: strict keeps the flat pins
    valid = [c for c, _ in differ if c["group"].startswith("valid")]
    assert all({} in (c["args"].get("expected_pins_for_epoch") or {}).values() for c in valid if "all-but-last" not in c["id"] and c["outcome"] == "OK")
    assert changed[("undecodable-patch", "THROW", "APPLY_FAILED")] == 12
    assert changed[("quirk", "OK", "WORD_COUNT_MISMATCH")] == 2
    assert changed[("quirk", "FINAL_ROOT_MISMATCH", "OK")] == 2          # finalized-older-epoch-only
    assert changed[("valid-multi", "FINAL_ROOT_MISMATCH", "OK")] == 7    # all-but-last: a live epoch behind finalized ones
    assert changed[("quirk", "OK", "BASELINE_MANIFEST_HASH_MISMATCH")] == 5   # an older finalized event's pin, never read
    assert {k[0] for k in changed} <= {"undecodable-patch", "quirk", "valid-single", "valid-multi", "malformed", "uppercase"}
