"""coretex's difficulty controller, work units and eligibility/bonus rules against every case the reference
recorded (shared/vectors/coretex/economy): outputs compared as the vectors' README prescribes, and each recorded
error raised as its Python counterpart."""
from economy_vectors import VECTORS_PRESENT, agree, args, cases, check, decode, params
from coretex.difficulty import (MAX_IMPROVEMENT_PPM, MIN_IMPROVEMENT_PPM, difficulty_histogram, difficulty_trajectory,
                                is_major_delta, next_min_improvement_ppm)

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
