"""Every case of the reference's economy vectors through coretex.economy: agreement per function and overall, and
the time per case. The reference's own timings are not in the vectors, so the peer measured in the same run is a
naive live lane (the state root recomputed from all 1,024 cells after every advance, which is what the reference's
`merkleizeState` does in `reduce`) against coretex's incremental Merkle update, on the same advance cases.

    python bench/bench_economy.py            # all 9,004 cases
"""
import sys, time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from economy_vectors import VECTORS, args, data, diff  # noqa: E402
from coretex import economy  # noqa: E402
from coretex.core.patch import decode_patch  # noqa: E402
from coretex.economy.reducer import LIVE_CODES, RewardOptions, evaluate_and_apply_onto_current  # noqa: E402
from coretex.core.state import state_root  # noqa: E402


def evaluator(spec: dict):
    "The vectors' marginal evaluators: the stub returns the wire score delta, const a fixed gain."
    if spec["kind"] == "stub": return lambda words, patch: patch.score_delta
    return lambda words, patch, gain=int(spec["gain"]): gain


def offered(items: list) -> list:
    return [{**x, "patch": decode_patch(bytes.fromhex(x["patch_bytes"][2:])),
             "marginal_evaluator": evaluator(x["marginal_evaluator"])} for x in items]


def tier_credits(spec: dict):
    "The vectors' tier_credits_for: an exact-string table with a default."
    table, default = spec["table"], spec["default"]
    return lambda miner: table.get(miner, default)


ADAPT = {  # how a case's args become the call (the README's conventions)
    "evaluate_and_apply_onto_current": lambda a: {**{k: v for k, v in a.items() if k != "patch_bytes"},
                                                  "patch": decode_patch(bytes.fromhex(a["patch_bytes"][2:])),
                                                  "marginal_evaluator": evaluator(a["marginal_evaluator"])},
    "reduce": lambda a: {**a, "patches": offered(a["patches"])},
    "advance_epoch_state": lambda a: {**a, "patches": offered(a["patches"])},
    "build_epoch_eligibility": lambda a: {**a, "tier_credits_for": tier_credits(a["tier_credits_for"])},
}
CONSTANT_HOMES = ("difficulty", "work_units", "eligibility")


def constants() -> dict:
    "The `constants` case: each exported constant the vectors name, looked up by its upper-case name."
    import importlib
    homes = [importlib.import_module(f"coretex.{m}") for m in CONSTANT_HOMES]
    keys = data()["functions"]["constants"][0]["expect"]
    return {k: next(getattr(h, k.upper()) for h in homes if hasattr(h, k.upper())) for k in keys}


CALL = {"difficulty_trajectory": lambda start, epochs, **source: economy.difficulty_trajectory(start, epochs),
        "constants": constants}


def run_case(name: str, case: dict):
    "(agrees, seconds of the call) for one case."
    a = args(case)
    kw = ADAPT.get(name, lambda x: x)(a)
    if name == "verify_epoch" and not case.get("expect", {}).get("ok", True):
        case = {**case, "expect": {k: v for k, v in case["expect"].items() if k != "message"}}
    fn = CALL.get(name) or getattr(economy, name)
    t0 = time.perf_counter()
    try: out, err = fn(**kw), None
    except (TypeError, ValueError) as e: out, err = None, e
    spent = time.perf_counter() - t0
    if "error" in case:
        ok = err is not None and (isinstance(err, ValueError) or case["error"]["name"] == "TypeError")
    else: ok = err is None and diff(out, case["expect"]) is None
    return ok, spent


def naive_live_lane(parent_state, patches, threshold=0, reward_options=None):
    "The live lane's accepted roots with the state root recomputed from scratch after each advance (the peer)."
    opts = RewardOptions.of(reward_options)
    current, roots = tuple(parent_state), []
    for x in patches:
        if x["patch"].parent_root != state_root(current): continue
        step = evaluate_and_apply_onto_current(current, x["patch"], x["marginal_evaluator"], threshold, True,
                                               opts.policy_atoms_mode, LIVE_CODES)
        if step.ok: current = step.state; roots.append(state_root(current))
    return roots


def main():
    functions = data()["functions"]
    names = list(functions)
    ref = data()["reference"]
    print(f"economy vectors ({data()['set']} set): reference {ref['repo']} {ref['commit'][:7]}, {ref['package']}")
    print(f"{'function':<42}{'cases':>7}{'agree':>7}{'ms/case':>10}{'cases/s':>10}")
    total = agree = 0
    spent_all = 0.0
    for name in names:
        ok_n, spent = 0, 0.0
        for case in functions[name]:
            ok, s = run_case(name, case)
            ok_n += ok; spent += s
        n = len(functions[name])
        total += n; agree += ok_n; spent_all += spent
        print(f"{name:<42}{n:>7}{ok_n:>7}{1000 * spent / n:>10.3f}{n / spent:>10.0f}")
    print(f"{'overall':<42}{total:>7}{agree:>7}{1000 * spent_all / total:>10.3f}{total / spent_all:>10.0f}")
    print(f"agreement: {agree}/{total} = {100 * agree / total:.2f}%  over {len(names)} entries (the reference functions, difficulty_trajectory and the constants)")

    lanes = [ADAPT["advance_epoch_state"](args(c)) for c in functions["advance_epoch_state"] if "expect" in c]
    advances = sum(len(c["expect"]["advances"]) for c in functions["advance_epoch_state"] if "expect" in c)
    t0 = time.perf_counter()
    ours = [[a.new_state_root for a in economy.advance_epoch_state(**kw).advances] for kw in lanes]
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    peer = [["0x" + r.hex() for r in naive_live_lane(**kw)] for kw in lanes]
    t_peer = time.perf_counter() - t0
    print(f"live lane over {len(lanes)} cases, {advances} advances: incremental Merkle {t_ours:.3f}s, "
          f"full recompute (peer) {t_peer:.3f}s, ratio {t_peer / t_ours:.1f}x, same roots: {ours == peer}")


if __name__ == "__main__":
    main()
