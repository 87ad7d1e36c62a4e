"The graded corpus option: old corpora unchanged; employer (temporal) queries with a varying number of competing distractors."
from coretex.evaluator.corpus import generate_corpus, NEG_RELEVANCE
from coretex.simulate.runs import corpus_of

def test_default_corpus_unchanged():
    old, graded = generate_corpus(40, seed=1), generate_corpus(40, seed=1, distractors=6)
    assert generate_corpus(40, seed=1, distractors=0).root == old.root
    assert graded.root != old.root
    by_id = {e["id"]: e for e in graded.events}
    assert [e["id"] for e in old.events] == [e["id"] for e in graded.events]
    for e in old.events:   # only the employer (temporal) queries' hard negatives and qrels grow; every other event is the old one
        g = by_id[e["id"]]
        if e["id"].endswith("_org") and e["id"].startswith("q_"):
            assert g["hardNegatives"][:len(e["hardNegatives"])] == e["hardNegatives"]
            assert g["truthDocuments"] == e["truthDocuments"] and g["queryText"] == e["queryText"]
        else: assert g == e

def test_distractor_counts_vary():
    c = generate_corpus(60, seed=3, distractors=6)
    extra = [sum(n["id"].split("_")[-1].startswith("visit") for n in e["hardNegatives"])
             for e in c.events if e["id"].startswith("q_") and e["id"].endswith("_org")]
    assert len(extra) == 60 and max(extra) <= 6 and len(set(extra)) >= 5
    e = next(e for e in c.events if e["id"].startswith("q_") and e["id"].endswith("_org") and len(e["hardNegatives"]) > 3)
    q = {x["documentId"]: x["relevance"] for x in e["qrels"]}
    assert all(q[n["id"]] == NEG_RELEVANCE["lexical_distractor"] for n in e["hardNegatives"][3:])

def test_simulator_spec():
    assert corpus_of("generated:30:2:5").root == generate_corpus(30, 2, distractors=5).root
    assert corpus_of("generated:30:2").root == generate_corpus(30, 2).root


def lever_gains(distractors: int) -> set:
    "nDCG@10 gains of the honest temporal levers on each hidden employer query, through coretex's evaluator."
    import random
    from coretex.core.patch import prepare
    from coretex.core.state import GENESIS
    from coretex.evaluator.evaluate import score_state
    from coretex.simulate.headroom import lever_states
    from coretex.simulate.runs import RunSpec, evaluator_for
    ev = evaluator_for(RunSpec(corpus=f"generated:200:0:{distractors}"))
    parent, rng, gains = prepare(GENESIS), random.Random(0), set()
    for q in [q for q in ev.corpus.hidden_events if q["family"] == "temporal"][:40]:
        before = score_state(ev, [q], GENESIS).per_query[0].ndcg10
        after = max(score_state(ev, [q], w).per_query[0].ndcg10
                    for fam in ("temporal", "temporal2") for w in lever_states(ev, parent, fam, q, rng))
        if after > before: gains.add(round(after - before, 6))
    return gains

def test_a_fix_gains_a_graded_amount():
    old, graded = lever_gains(0), lever_gains(6)
    assert len(old) == 1          # the old corpus: one step for every employer query
    assert len(graded) >= 10      # graded: as many amounts as there are distractor shapes the fix passes
