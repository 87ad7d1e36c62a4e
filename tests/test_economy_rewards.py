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
