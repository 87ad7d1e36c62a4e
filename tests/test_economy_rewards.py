"""coretex's difficulty controller, work units and eligibility/bonus rules against every case the reference
recorded (shared/vectors/coretex/economy): outputs compared as the vectors' README prescribes, and each recorded
error raised as its Python counterpart. One test per function runs all of its cases."""
import json, os, random, shutil, subprocess
import pytest
from economy_vectors import VECTORS_PRESENT, agree, all_agree, args, cases
from coretex.economy.difficulty import MAX_IMPROVEMENT_PPM, MIN_IMPROVEMENT_PPM, difficulty_histogram, difficulty_trajectory, is_major_delta, next_min_improvement_ppm
from coretex.economy.work_units import CORETEX_WORK_RULES_VERSION, DEFAULT_CORETEX_WORK_POLICY_HASH, LANE_CORETEX, OUTCOME_CORETEX_SCREENER_PASS, OUTCOME_CORETEX_STATE_ADVANCE, WORK_BPS_DIVISOR, assert_valid_core_tex_work_policy, compute_core_tex_screener_threshold_ppm, compute_core_tex_work_units_bps, core_tex_work_policy_hash, evaluate_core_tex_work_qualification
from coretex.economy.eligibility import BPS_DIVISOR, MERGE_MULTIPLIER_BPS, assert_bonus_within_cap, build_epoch_bonus_leaves, build_epoch_eligibility, compute_epoch_total_bonus, compute_miner_bonus, locale_compare_key, miner_has_merge, miner_screener_credits

pytestmark = VECTORS_PRESENT


def tier_table(spec: dict):
    "The vectors' tier_credits_for: an exact-string lookup with a default."
    return lambda miner: spec["table"].get(miner, spec["default"])


FUNCTIONS = {f.__name__: f for f in (
    next_min_improvement_ppm, difficulty_histogram, difficulty_trajectory, is_major_delta, core_tex_work_policy_hash,
    assert_valid_core_tex_work_policy, compute_core_tex_work_units_bps, compute_core_tex_screener_threshold_ppm,
    evaluate_core_tex_work_qualification, build_epoch_eligibility, miner_screener_credits, miner_has_merge,
    compute_miner_bonus, build_epoch_bonus_leaves, compute_epoch_total_bonus, assert_bonus_within_cap)}
EXTRA = {"build_epoch_eligibility": lambda case: {"tier_credits_for": tier_table(args(case)["tier_credits_for"])},
         "difficulty_trajectory": lambda case: {"source": None}}  # provenance only, not an input


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_case_agrees(name):
    fn = FUNCTIONS[name]
    if name == "difficulty_trajectory": fn = lambda start, epochs, source: difficulty_trajectory(start, epochs)
    all_agree(name, fn, EXTRA.get(name, lambda case: {}))


def test_constants():
    agree(dict(min_improvement_ppm=MIN_IMPROVEMENT_PPM, max_improvement_ppm=MAX_IMPROVEMENT_PPM,
               work_bps_divisor=WORK_BPS_DIVISOR, lane_coretex=LANE_CORETEX,
               outcome_coretex_screener_pass=OUTCOME_CORETEX_SCREENER_PASS,
               outcome_coretex_state_advance=OUTCOME_CORETEX_STATE_ADVANCE,
               coretex_work_rules_version=CORETEX_WORK_RULES_VERSION, merge_multiplier_bps=MERGE_MULTIPLIER_BPS,
               bps_divisor=BPS_DIVISOR, default_coretex_work_policy_hash=DEFAULT_CORETEX_WORK_POLICY_HASH),
          cases("constants")[0]["expect"])


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_locale_compare_key_orders_as_node():
    "The leaf order beyond the vectors' one sort case: 4,000 random ASCII strings sorted by node's localeCompare."
    rng = random.Random(5)
    alphabet = [chr(c) for c in range(32, 127)] + ["\t", "\n", "\x01", "\x7f"]
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(2000)]
    names += ["0x" + "".join(rng.choice("0123456789abcdefABCDEF_") for _ in range(rng.randint(0, 5))) for _ in range(2000)]
    js = "const a = JSON.parse(require('fs').readFileSync(0, 'utf8')); a.sort((x, y) => x.localeCompare(y)); console.log(JSON.stringify(a))"
    by_node = json.loads(subprocess.run(["node", "-e", js], input=json.dumps(names), capture_output=True, text=True,
                                        check=True, env={**os.environ, "LANG": "en_US.UTF-8"}).stdout)
    assert sorted(names, key=locale_compare_key) == by_node
