"The simulator's screens (nbs/81c_loop) are exact: a proposal they reject is one `evaluate_patch` rejects, for the same reason."
import random
import pytest
from coretex.core.patch import PatchError, apply_patch
from coretex.core.state import GENESIS, state_root
from coretex.evaluator.evaluate import Evaluator, evaluate_patch
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.simulate import LEVERS, Frontier, Public, build, local_mutation, pool_evaluator, random_writes, screen


@pytest.fixture(scope="module")
def ev(): return Evaluator(reranker=TokenOverlapReranker())


def states(ev, rng):
    "Genesis, the state after the abstention atom, and one holding six temporal units besides."
    pub = Public(ev.corpus)
    w1 = apply_patch(GENESIS, build("abstention", GENESIS, state_root(GENESIS), rng)).words
    w2 = w1
    for p in pub.candidates("temporal")[:6]: w2 = apply_patch(w2, build("temporal", w2, state_root(w2), rng, [p])).words
    return pub, (GENESIS, w1, w2)


def proposals(rng, pub, words, n):
    "n proposals of every kind the simulator's miners make, on `words`."
    root = state_root(words)
    for _ in range(n):
        kind = rng.choice(("random", "hillclimb", "lever", "lever"))
        if kind == "random": yield random_writes(rng, root)
        elif kind == "hillclimb": yield local_mutation(rng, words, root)
        else:
            fam = rng.choice(sorted(LEVERS))
            yield build(fam, words, root, rng, rng.sample(pub.persons, LEVERS[fam][1]))


@pytest.mark.parametrize("frontier", [False, True], ids=["whole pool", "frontier pool"])
def test_every_screened_proposal_is_rejected_by_the_evaluator_for_the_same_reason(ev, frontier):
    rng = random.Random(11)
    pub, ws = states(ev, rng)
    pool = Frontier(ev.corpus, "static", 10, 120, 10).pool if frontier else ev.corpus.hidden_events
    judge = pool_evaluator(ev, pool)
    screened = judged = 0
    for words in ws:
        for data in proposals(rng, pub, words, 100):
            try: child = apply_patch(words, data)
            except PatchError: continue
            judged += 1
            why = screen(judge, words, child.words, pool)
            if why is None: continue
            rep = evaluate_patch(judge, words, data, rng.randbytes(32), rng.randbytes(32), 2)
            assert (rep.outcome, rep.reason) == ("REJECT", why)
            screened += 1
    assert judged >= 200 and screened >= 80, (judged, screened)
