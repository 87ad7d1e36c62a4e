"coretex.evaluator.metrics.ndcg_at_k against an independent implementation (ranx) and a hand-computed fractional case."
import math, random
import pytest
from ranx import Qrels, Run, evaluate
from coretex.evaluator.metrics import ndcg_at_k


def test_ndcg_matches_ranx_exponential_gain_on_integer_grades():
    rng = random.Random(11)
    qrels, run, ours = {}, {}, {}
    for q in range(200):
        docs = [f"d{i}" for i in range(30)]
        graded = rng.sample(docs, rng.randint(1, 12))
        qrels[f"q{q}"] = {d: rng.randint(1, 3) for d in graded}
        ranking = rng.sample(docs, 20)
        run[f"q{q}"] = {d: 100.0 - i for i, d in enumerate(ranking)}  # strictly decreasing: no tie ambiguity
        ours[f"q{q}"] = ndcg_at_k(ranking, qrels[f"q{q}"], 10)
    peer = evaluate(Qrels(qrels), Run(run), "ndcg_burges@10", return_mean=False)
    assert list(peer) == pytest.approx([ours[q] for q in sorted(qrels)], abs=1e-9)  # ranx orders queries by id


def test_ndcg_fractional_grades_by_hand():
    qrels = {"answer": 1.0, "near": 0.4, "neighbour": 0.2, "trap": 0.0}
    ranking = ["trap", "near", "answer", "other"]
    dcg = 0 + (2**0.4 - 1) / math.log2(3) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + (2**0.4 - 1) / math.log2(3) + (2**0.2 - 1) / math.log2(4)
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx(dcg / idcg, abs=1e-12)


def test_ndcg_input_checks_raise():
    with pytest.raises(ValueError): ndcg_at_k(["a"], {"a": float("nan")})
    with pytest.raises(ValueError): ndcg_at_k(["a"], {"a": 1}, k=0)
