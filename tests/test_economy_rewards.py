"""coretex's difficulty controller, work units and eligibility/bonus rules against every case the reference
recorded (shared/vectors/coretex/economy): outputs compared as the vectors' README prescribes, and each recorded
error raised as its Python counterpart."""
from economy_vectors import VECTORS_PRESENT, agree, args, cases, check, decode, params
from coretex.difficulty import (MAX_IMPROVEMENT_PPM, MIN_IMPROVEMENT_PPM, difficulty_histogram, difficulty_trajectory,
                                is_major_delta, next_min_improvement_ppm)
from coretex.work_units import (CORETEX_WORK_RULES_VERSION, DEFAULT_CORETEX_WORK_POLICY_HASH, LANE_CORETEX,
                                OUTCOME_CORETEX_SCREENER_PASS, OUTCOME_CORETEX_STATE_ADVANCE, WORK_BPS_DIVISOR,
                                assert_valid_core_tex_work_policy, compute_core_tex_screener_threshold_ppm,
                                compute_core_tex_work_units_bps, core_tex_work_policy_hash,
                                evaluate_core_tex_work_qualification)
from coretex.eligibility import (BPS_DIVISOR, MERGE_MULTIPLIER_BPS, assert_bonus_within_cap, build_epoch_bonus_leaves,
                                 build_epoch_eligibility, compute_epoch_total_bonus, compute_miner_bonus,
                                 miner_has_merge, miner_screener_credits)

pytestmark = VECTORS_PRESENT


@params("next_min_improvement_ppm")
def test_next_min_improvement_ppm(case): check(next_min_improvement_ppm, case)

@params("difficulty_histogram")
def test_difficulty_histogram(case): check(difficulty_histogram, case)

@params("difficulty_trajectory")
def test_difficulty_trajectory(case):
    a = args(case)
    agree(difficulty_trajectory(a["start"], a["epochs"]), case["expect"])

@params("is_major_delta")
def test_is_major_delta(case): check(is_major_delta, case)


@params("core_tex_work_policy_hash")
def test_core_tex_work_policy_hash(case): check(core_tex_work_policy_hash, case)

@params("assert_valid_core_tex_work_policy")
def test_assert_valid_core_tex_work_policy(case): check(assert_valid_core_tex_work_policy, case)

@params("compute_core_tex_work_units_bps")
def test_compute_core_tex_work_units_bps(case): check(compute_core_tex_work_units_bps, case)

@params("compute_core_tex_screener_threshold_ppm")
def test_compute_core_tex_screener_threshold_ppm(case): check(compute_core_tex_screener_threshold_ppm, case)

@params("evaluate_core_tex_work_qualification")
def test_evaluate_core_tex_work_qualification(case): check(evaluate_core_tex_work_qualification, case)


def tier_table(spec: dict):
    "The vectors' tier_credits_for: an exact-string lookup with a default."
    return lambda miner: spec["table"].get(miner, spec["default"])

@params("build_epoch_eligibility")
def test_build_epoch_eligibility(case):
    check(build_epoch_eligibility, case, tier_credits_for=tier_table(args(case)["tier_credits_for"]))

@params("miner_screener_credits")
def test_miner_screener_credits(case): check(miner_screener_credits, case)

@params("miner_has_merge")
def test_miner_has_merge(case): check(miner_has_merge, case)

@params("compute_miner_bonus")
def test_compute_miner_bonus(case): check(compute_miner_bonus, case)

@params("build_epoch_bonus_leaves")
def test_build_epoch_bonus_leaves(case): check(build_epoch_bonus_leaves, case)

@params("compute_epoch_total_bonus")
def test_compute_epoch_total_bonus(case): check(compute_epoch_total_bonus, case)

@params("assert_bonus_within_cap")
def test_assert_bonus_within_cap(case): check(assert_bonus_within_cap, case)

@params("constants")
def test_constants(case):
    agree(dict(min_improvement_ppm=MIN_IMPROVEMENT_PPM, max_improvement_ppm=MAX_IMPROVEMENT_PPM,
               work_bps_divisor=WORK_BPS_DIVISOR, lane_coretex=LANE_CORETEX,
               outcome_coretex_screener_pass=OUTCOME_CORETEX_SCREENER_PASS,
               outcome_coretex_state_advance=OUTCOME_CORETEX_STATE_ADVANCE,
               coretex_work_rules_version=CORETEX_WORK_RULES_VERSION, merge_multiplier_bps=MERGE_MULTIPLIER_BPS,
               bps_divisor=BPS_DIVISOR, default_coretex_work_policy_hash=DEFAULT_CORETEX_WORK_POLICY_HASH), case["expect"])
