"""The array index answers as the dict-of-dicts index did: rankings, scores (to the last bit) and clause attributions, and
the assembled contexts, on the Tenure suites and a generated
store of 10,000 beliefs before and after a round of writes. The peer's answers were stored by tests/belief_answers.py
from the old implementation (tests/fixtures/belief_answers.json.gz says how)."""
import gzip, json, tempfile
import pytest
from belief_answers import OUT, generated_answers, suite_answers
from coretex.beliefs.tenure import packaged_fixtures
from coretex.network.store import open_db


@pytest.fixture(scope="module")
def db():
    db, close = open_db(path=tempfile.mkdtemp())
    yield db
    close()


@pytest.fixture(scope="module")
def stored():
    with gzip.open(OUT, "rt", encoding="utf-8") as f: return json.load(f)


def as_stored(x):
    "x as it reads back from the JSON file (tuples become lists; floats round-trip exactly)."
    return json.loads(json.dumps(x, sort_keys=True))


def differing(got: list, want: list) -> list:
    return [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w][:3]


def test_tenure_suites_answer_as_before(db, stored):
    got = as_stored(suite_answers(db, packaged_fixtures()))
    for ref in ("paper", "current"):
        for part in ("static", "session"):
            assert len(got[ref][part]) == len(stored["tenure"][ref][part]) > 0
            assert not differing(got[ref][part], stored["tenure"][ref][part]), (ref, part)


def test_generated_store_answers_as_before(db, stored):
    got, want = as_stored(generated_answers(db)), stored["generated"]
    for when in ("before", "after"):
        assert sum(len(q["hits"]) for q in want[when]) > 1000   # the queries do find beliefs
        assert not differing(got[when], want[when]), when
