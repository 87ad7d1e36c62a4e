"The protocol reference's own answers on 20,000 random (state, patch) cases, in both modes: the library on every case, the installed command on a sample."
import gzip, json
from collections import Counter
import pytest
from helpers import ROOT, run_cli
from coretex.core.keccak import to_hex
from coretex.core.patch import PatchError, apply_to, parse_patch_hex, prepare
from coretex.core.state import parse_state

VECTORS = ROOT.parent / "shared" / "vectors" / "coretex" / "patch-apply.json.gz"


@pytest.fixture(scope="module")
def reference():
    with gzip.open(VECTORS) as f: return json.load(f)


@pytest.fixture(scope="module")
def parents(reference):
    return [prepare(parse_state(s.encode())) for s in reference["states"]]


def answer(parent, patch_hex, pipeline):
    "What coretex answers, in the vectors' form."
    try: return {"ok": True, "root": to_hex(apply_to(parent, parse_patch_hex(patch_hex), pipeline).root)}
    except PatchError as e: return {"ok": False, "code": e.code}


@pytest.mark.parametrize("pipeline", ["r4", "r5"])
def test_every_case_agrees(reference, parents, pipeline):
    outcomes, wrong = Counter(), []
    for k, case in enumerate(reference["cases"]):
        got, want = answer(parents[case["state"]], case["patch"], pipeline), case["expect"][pipeline]
        outcomes[want.get("code", "ok")] += 1
        if got != want: wrong.append((k, want, got))
    print(f"{pipeline}: {len(reference['cases']) - len(wrong)}/{len(reference['cases'])} agree; reference outcomes {dict(sorted(outcomes.items()))}")
    assert len(reference["cases"]) == 20_000
    assert wrong == [], f"{len(wrong)} disagree, first: {wrong[:5]}"


def cli_sample(cases, n=50):
    "n cases spread over every (r4, r5) outcome pair, in a fixed order."
    by_pair = {}
    for case in cases:
        by_pair.setdefault((case["expect"]["r4"].get("code", "ok"), case["expect"]["r5"].get("code", "ok")), []).append(case)
    groups = [by_pair[p] for p in sorted(by_pair)]
    return [g[k] for k in range(n) for g in groups if k < len(g)][:n]


def test_cli_sample_agrees(reference, tmp_path):
    sample = cli_sample(reference["cases"])
    assert len(sample) == 50 and len({(c["expect"]["r4"].get("code"), c["expect"]["r5"].get("code")) for c in sample}) == 9
    for k, case in enumerate(sample):
        state = tmp_path / f"state{case['state']}.hex"
        if not state.exists(): state.write_text(reference["states"][case["state"]])
        pipeline = "r4" if k % 2 else "r5"
        args = ["--pipeline", "r4"] if pipeline == "r4" else []   # r5 is the default
        r = run_cli("patch-apply", state, case["patch"], *args)
        out, want = json.loads(r.stdout), case["expect"][pipeline]
        assert r.returncode == (0 if want["ok"] else 1) and "Traceback" not in r.stderr, (k, r.stderr)
        assert {k2: out[k2] for k2 in want} == want, (k, pipeline, out, want)
