"coretex.evaluator.metrics.ndcg_at_k against an independent implementation (scikit-learn's ndcg_score) and a hand-computed fractional case."
import math, random
import pytest
from sklearn.metrics import ndcg_score
from coretex.evaluator.metrics import ndcg_at_k


def test_ndcg_matches_scikit_learn_on_exponential_gains_of_integer_grades():
    # scikit-learn's nDCG takes the gains as given, so the network's exponential gain 2^grade - 1 is handed to it; the
    # ranking is scored strictly decreasing (no ties to average) and every graded document outside it scores below it
    rng = random.Random(11)
    docs = [f"d{i}" for i in range(30)]
    gains, scores, ours = [], [], []
    for q in range(200):
        grades = {d: rng.randint(1, 3) for d in rng.sample(docs, rng.randint(1, 12))}
        ranking = rng.sample(docs, 20)
        place = {d: i for i, d in enumerate(ranking)}
        gains.append([2.0 ** grades.get(d, 0) - 1 for d in docs])
        scores.append([100.0 - place[d] if d in place else -float(i) for i, d in enumerate(docs)])
        ours.append(ndcg_at_k(ranking, grades, 10))
    peer = [ndcg_score([g], [s], k=10) for g, s in zip(gains, scores)]
    assert ours == pytest.approx(peer, abs=1e-9)
    assert len({round(x, 6) for x in ours}) > 100   # the cases differ: a constant answer could not pass


def test_ndcg_fractional_grades_by_hand():
    qrels = {"answer": 1.0, "near": 0.4, "neighbour": 0.2, "trap": 0.0}
    ranking = ["trap", "near", "answer", "other"]
    dcg = 0 + (2**0.4 - 1) / math.log2(3) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + (2**0.4 - 1) / math.log2(3) + (2**0.2 - 1) / math.log2(4)
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx(dcg / idcg, abs=1e-12)


def test_ndcg_input_checks_raise():
    with pytest.raises(ValueError): ndcg_at_k(["a"], {"a": float("nan")})
    with pytest.raises(ValueError): ndcg_at_k(["a"], {"a": 1}, k=0)
