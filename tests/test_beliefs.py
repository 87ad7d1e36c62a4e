"Belief retrieval: clause scores against bm25s, filters against MongoDB's own evaluation of the reference's queries, the index against a rebuild, and the `beliefs eval` command."
import json, random, subprocess, tempfile
from pathlib import Path
import pytest
import bm25s
from helpers import run_cli
from coretex.beliefs.store import BeliefStore, BM25Backend, VectorBackend, Reference, Budget, build_context, clean_query, whole_name_tokens, tenure_fixture
from coretex.beliefs.tenure import FIXTURE_FILES, EVAL_USER
from coretex.network.store import open_db

MIRROR = Path("/work/.mirror/tenurehq+tenure/repo")
CURRENT_COMMIT = "dc348a8f006e7799f4ba0e0e97e1198669fc1752"


@pytest.fixture(scope="module")
def db():
    db, close = open_db(path=tempfile.mkdtemp())
    yield db
    close()


@pytest.fixture(scope="module")
def seeded(db):
    store = BeliefStore(db)
    store.reset(tenure_fixture("beliefs.seed.json"))
    return store


def current_fixture_dir(tmp_path) -> Path:
    "Today's reference fixtures, read from the local mirror of github.com/tenurehq/tenure (not shipped with coretex)."
    out = tmp_path / "current"
    out.mkdir()
    for f in FIXTURE_FILES:
        text = subprocess.run(["git", "-C", str(MIRROR), "show", f"{CURRENT_COMMIT}:src/__fixtures__/{f}"], capture_output=True, text=True, check=True).stdout
        (out / f).write_text(text)
    return out


needs_mirror = pytest.mark.skipif(not MIRROR.exists(), reason="no local mirror of the reference")


def test_exact_alias_clause_matches_bm25s_lucene(seeded):
    "An exact one-word alias scores boost x Lucene BM25, as bm25s computes it over the same alias tokens."
    seed = tenure_fixture("beliefs.seed.json")
    with_aliases = [b for b in seed if b.get("aliases")]
    docs = [[t for a in b["aliases"] for t in whole_name_tokens(a)] for b in with_aliases]
    peer = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    peer.index(docs, show_progress=False)
    bm = BM25Backend(seeded)
    checked = 0
    for term in ["ts", "redis", "database", "pipe", "inheritance", "biome", "gha", "protagonist"]:
        ours = {**bm.score(term, "test-user", lambda m: True, seeded.index()), **bm.score(term, "other-user", lambda m: True, seeded.index())}
        theirs = peer.get_scores([term])
        for b, s in zip(with_aliases, theirs):
            got = sum(c["score"] for c in ours[b["_id"]].clauses if c["path"] == "aliases") if b["_id"] in ours else 0.0
            assert got == pytest.approx(5 * s, rel=1e-5, abs=1e-9), (term, b["_id"])
            checked += s > 0
    assert checked >= 8


# The reference's MongoDB filters, written as it writes them (src/context/beliefsReader.ts at each version), run by the
# database itself: an implementation independent of coretex's in-memory predicates. {"$eq": None} is {field: null}
# (nx-27017 mis-evaluates the short form beside $or or $nin).
ACTIVE = {"resolved_at": {"$eq": None}, "superseded_by": {"$eq": None}}


def reference_pinned(col, user, scope, ref, limit=10):
    q = {"user_id": user, **ACTIVE, "pinned": True, "type": {"$ne": "open_question"}, "scope": {"$nin": ["universal", "user:universal"]}}
    if scope and ref is Reference.CURRENT: q["scope"] = {"$in": scope}
    if scope and ref is Reference.PAPER: q["$or"] = [{"user_edited": True}, {"scope": {"$in": scope}}]
    return [d["_id"] for d in col.find(q).sort([("user_edited", -1), ("last_reinforced_at", -1), ("_seq", 1)]).limit(limit)]


def reference_questions(col, user, scope, limit=15):
    q = {"user_id": user, **ACTIVE, "type": "open_question", "pinned": True}
    if scope: q["scope"] = {"$in": scope}
    return [d["_id"] for d in col.find(q).sort("_seq", 1).limit(limit)]


def reference_participants(col, user, relations, scope, exclude):
    ids = {p for r in col.find({"_id": {"$in": relations}, "type": "relation"}) for p in r.get("participants") or [] if p not in exclude}
    q = {"user_id": user, "_id": {"$in": sorted(ids)}, **ACTIVE, "type": {"$ne": "open_question"}}
    if scope: q["scope"] = {"$in": scope}
    return [d["_id"] for d in col.find(q).sort("_seq", 1)] if ids else []


SCOPES = [[], ["domain:code"], ["domain:writing"], ["domain:code", "domain:writing"], ["user:universal"], ["domain:hobby"]]


def seeds(tmp_path):
    yield "paper", tenure_fixture("beliefs.seed.json")
    if MIRROR.exists(): yield "current", json.loads((current_fixture_dir(tmp_path) / "beliefs.seed.json").read_text())


@pytest.mark.parametrize("ref", list(Reference))
def test_pinned_facts_and_questions_match_the_reference_queries(db, tmp_path, ref):
    "Pinned facts (both references) and open questions equal what MongoDB returns for the reference's own filters."
    store, bm = BeliefStore(db, "filters"), None
    for name, seed in seeds(tmp_path):
        store.reset(seed)
        bm = BM25Backend(store)
        for user in ("test-user", "other-user", "brand-new-user"):
            for scope in SCOPES:
                ctx = build_context(store, bm, user, scope, "", Budget(max_beliefs=40), reference=ref)
                assert ctx.pinned == reference_pinned(store.col, user, scope, ref), (name, user, scope)
                assert ctx.questions == reference_questions(store.col, user, scope), (name, user, scope)


def test_current_pinned_facts_keep_to_the_requested_scope(seeded):
    "The paper let a user-edited writing belief into a code request; today's reference does not, and $in replaces $nin."
    bm = BM25Backend(seeded)
    pins = lambda scope, ref: build_context(seeded, bm, "test-user", scope, "", reference=ref).pinned
    assert "b-prose-style-user-edited" in pins(["domain:code"], Reference.PAPER)
    assert "b-prose-style-user-edited" not in pins(["domain:code"], Reference.CURRENT)
    assert "b-prose-style-user-edited" in pins(["domain:writing"], Reference.CURRENT)
    universal = {b["_id"] for b in tenure_fixture("beliefs.seed.json") if "user:universal" in (b.get("scope") or []) and b.get("pinned")
                 and b["user_id"] == "test-user" and b.get("type") != "open_question" and not b.get("superseded_by") and not b.get("resolved_at")}
    assert universal and set(pins(["user:universal"], Reference.CURRENT)) == universal
    assert not universal & set(pins([], Reference.CURRENT)) and not universal & set(pins(["user:universal"], Reference.PAPER))


def hand_made():
    "A relation with participants of every kind the fetch must keep or drop."
    base = {"user_id": "u", "type": "entity", "pinned": False, "superseded_by": None, "resolved_at": None, "scope": ["domain:code"], "aliases": []}
    return [{**base, **b} for b in [
        {"_id": "pin", "canonical_name": "database_choice", "pinned": True},
        {"_id": "redis", "canonical_name": "redis"},
        {"_id": "expert", "canonical_name": "redis_expertise", "subtype": "expertise"},
        {"_id": "question", "canonical_name": "auth_backend", "type": "open_question", "pinned": True},
        {"_id": "old", "canonical_name": "memcached", "superseded_by": "redis"},
        {"_id": "closed", "canonical_name": "sessions", "resolved_at": "2026-01-01T00:00:00Z"},
        {"_id": "writing", "canonical_name": "redis_the_cat", "scope": ["domain:writing"]},
        {"_id": "theirs", "canonical_name": "their_redis", "user_id": "v"},
        {"_id": "direct", "canonical_name": "cache_layer", "aliases": ["backend cache"]},
        {"_id": "rel", "type": "relation", "relation_type": "depends_on", "canonical_name": "auth_depends_on_redis", "aliases": ["auth backend"],
         "participants": ["pin", "redis", "expert", "question", "old", "closed", "writing", "theirs", "direct", "missing"]}]]


@pytest.mark.parametrize("scope", [["domain:code"], [], ["domain:code", "domain:writing"]])
def test_relation_participants(db, scope):
    "Participants: same user, active, no open question, in scope, neither pinned nor retrieved; expertise kept; no score."
    store = BeliefStore(db, "relations")
    store.reset(hand_made())
    bm = BM25Backend(store)
    ctx = build_context(store, bm, "u", scope, "auth backend cache", reference=Reference.CURRENT)
    hits = [h.id for h in ctx.hits]
    assert set(hits) == {"rel", "direct"} and ctx.pinned == ["pin"]
    assert ctx.participants == reference_participants(store.col, "u", hits, scope, set(hits) | {"pin"})
    assert ctx.participants == ["redis", "expert"] + (["writing"] if scope != ["domain:code"] else [])
    assert ctx.relevant == hits + ctx.participants
    assert build_context(store, bm, "u", scope, "auth backend cache", reference=Reference.PAPER).relevant == hits
    assert build_context(store, bm, "u", scope, "auth backend cache", Budget(max_beliefs=3)).relevant == hits[:2]


def test_code_only_message_searches_its_language():
    "Today's query clean-up searches the prose; a message that is all code searches its language."
    code = "```rust\nfn main() { let mut v = Vec::new(); }\n```"
    assert clean_query(code, Reference.PAPER) == "" and clean_query(code) == "Rust"
    assert clean_query("Why?\n```\nconst user = await fetchUser()\n```") == "JavaScript"   # no tag: guessed from the syntax
    assert clean_query("const x = await fetchUser()\nreturn x.name") == "const x = await fetchUser()\nreturn x.name"   # no prose: the whole


def queries():
    cases = tenure_fixture("retrieval.cases.json")
    return [(c.get("userId", EVAL_USER), c["scope"], c["query"]) for c in cases]


@pytest.mark.parametrize("fold_at", [10_000, 0], ids=["delta", "folded"])
def test_index_follows_writes_and_equals_a_rebuild(db, monkeypatch, fold_at):
    "Writes between searches (the sessions' and random ones) are visible at once, and scores equal a rebuild's, bit for bit, whether they wait in the delta or are folded into the arrays at once."
    import coretex.beliefs.index as index_module
    monkeypatch.setattr(index_module, "FOLD_MIN", fold_at)
    monkeypatch.setattr(index_module, "FOLD_SHARE", fold_at)
    store = BeliefStore(db, f"writes_{fold_at}")
    store.reset(tenure_fixture("beliefs.seed.json"))
    bm = BM25Backend(store)
    rng = random.Random(13)
    words = ["redis", "kube", "dead letter", "allkeys-lru", "typescript", "mara", "pipeline", "ci"]
    writes = [lambda: store.add_aliases(rng.choice(ids), [rng.choice(words)]),
              lambda: store.update(rng.choice(ids), {"canonical_name": rng.choice(words).replace(" ", "_")}),
              lambda: store.insert({"_id": f"new-{store.version}", "user_id": EVAL_USER, "type": "entity", "scope": ["domain:code"],
                                    "canonical_name": rng.choice(words), "aliases": [rng.choice(words)], "superseded_by": None, "resolved_at": None})]
    for step in range(12):
        ids = [b["_id"] for b in store.all()]
        rng.choice(writes)()
        rebuilt = BM25Backend(BeliefStore(db, f"writes_{fold_at}"))
        for user, scope, q in queries()[::3]:
            text = clean_query(q)
            got = [(h.id, h.score, h.clauses) for h in bm.search(user, text, scope)]
            assert got == [(h.id, h.score, h.clauses) for h in rebuilt.search(user, text, scope)], (step, q)
    new = {"_id": "brand-new", "user_id": EVAL_USER, "type": "entity", "scope": ["domain:code"], "canonical_name": "zanzibar_gateway",
           "aliases": ["zgw"], "superseded_by": None, "resolved_at": None}
    assert bm.search(EVAL_USER, "zgw", ["domain:code"]) == []
    store.insert(new)
    assert [h.id for h in bm.search(EVAL_USER, "zgw", ["domain:code"])] == ["brand-new"]
    assert (store.index().built == len(store.all())) == (fold_at == 0)   # folded: no delta left


def test_snapshot_loads_while_the_collection_is_unchanged_and_is_rebuilt_when_it_changed(db, tmp_path, monkeypatch):
    "A new process's store loads the saved index instead of reading the collection; a write since makes it rebuild."
    first = BeliefStore(db, "snap", snapshots=tmp_path)
    first.reset(tenure_fixture("beliefs.seed.json"))
    want = [(h.id, h.score, h.clauses) for h in BM25Backend(first).search(EVAL_USER, "typescript strict mode", ["domain:code"])]
    assert first.snapshot_path().exists() and want
    second = BeliefStore(db, "snap", snapshots=tmp_path)
    monkeypatch.setattr(BeliefStore, "scan", lambda self: pytest.fail("read the collection"))
    assert [(h.id, h.score, h.clauses) for h in BM25Backend(second).search(EVAL_USER, "typescript strict mode", ["domain:code"])] == want
    monkeypatch.undo()
    second.add_aliases("b-ts-pref", ["strict typing"])   # a write the snapshot has not seen
    third = BeliefStore(db, "snap", snapshots=tmp_path)
    got = BM25Backend(third).search(EVAL_USER, "strict typing", ["domain:code"])
    assert [h.id for h in got] == ["b-ts-pref"] and [h.id for h in BM25Backend(second).search(EVAL_USER, "strict typing", ["domain:code"])] == ["b-ts-pref"]


def test_embeddings_cached_by_content(seeded):
    "A belief's text is embedded once per process, whichever backend or store asks; a changed text is embedded again."
    from coretex.toolkit.embeddings import Embedder
    seen = []
    class Counting(Embedder):
        def encode(self, texts, progress=False):
            seen.extend(texts)
            return super().encode(texts, progress)
    emb = Counting()
    VectorBackend(seeded, emb).search(EVAL_USER, "redis eviction policy", ["domain:code"])
    first = len(seen)
    VectorBackend(BeliefStore(seeded.col.database, "beliefs"), emb).search(EVAL_USER, "redis eviction policy", ["domain:code"])
    assert first > 1 and len(seen) == first
    seeded.add_aliases("b-redis-code", ["cache of record"])
    VectorBackend(seeded, emb).search(EVAL_USER, "redis eviction policy", ["domain:code"])
    assert len(seen) == first + 1 and "cache of record" in seen[-1]



def test_batched_embeddings_rank_as_one_at_a_time(db):
    "The vector suite embedding in length-sorted batches ranks every case exactly as embedding each text alone does."
    import numpy as np
    from coretex.beliefs import store as beliefs
    from coretex.toolkit.embeddings import Embedder
    from coretex.beliefs.tenure import run_suite
    class Switchable(Embedder):
        "MiniLM that records the size of each encode call and, when `alone`, embeds its texts one per forward pass."
        alone, calls = False, []
        def encode(self, texts, progress=False):
            self.calls.append(len(texts))
            if not self.alone: return super().encode(texts, progress)
            return np.array([super(Switchable, self).encode([t])[0] for t in texts], np.float32).reshape(len(texts), self.dim)
    emb, runs, vectors, calls = Switchable(), {}, {}, {}
    for alone in (False, True):
        beliefs._VECTORS.clear()
        emb.alone, emb.calls = alone, []
        runs[alone] = run_suite("vector", db, embedder=emb)
        vectors[alone], calls[alone] = dict(beliefs._VECTORS), emb.calls
    batched, alone = runs[False], runs[True]
    assert max(calls[False]) > 8 and len(calls[False]) < sum(calls[False]) / 4   # the batched run really batched
    assert vectors[False].keys() == vectors[True].keys()
    assert max(float(np.abs(vectors[False][k] - vectors[True][k]).max()) for k in vectors[False]) < 1e-5
    assert batched.row == alone.row == {**batched.row, "static": [8, 60], "session": [0, 12]}
    for b, a in zip(batched.static + batched.session, alone.static + alone.session):
        assert (b["caseId"], b["pinnedBeliefs"], b["relevantBeliefs"], b["passed"], b["failures"]) == \
               (a["caseId"], a["pinnedBeliefs"], a["relevantBeliefs"], a["passed"], a["failures"])
        assert [s["id"] for s in b["searchScores"]] == [s["id"] for s in a["searchScores"]]
        assert all(abs(x["score"] - y["score"]) <= 0.01 for x, y in zip(b["searchScores"], a["searchScores"]))

@pytest.mark.parametrize("backend,static,session,drift", [("bm25", [60, 60], [12, 12], {"9": 0.0, "10": 0.0}),
                                                          ("vector", [8, 60], [0, 12], {"9": 0.43, "10": 0.5})])
def test_beliefs_eval_reproduces_the_paper(tmp_path, monkeypatch, backend, static, session, drift):
    monkeypatch.setenv("CORETEX_DATA", str(tmp_path / "data"))
    r = run_cli("beliefs", "eval", "--backend", backend, "--json", "--out", tmp_path / "reports")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["backend"], out["static"], out["session"], out["drift"], out["reference"]) == (backend, static, session, drift, "paper")
    assert out["mean_precision"] == (1.0 if backend == "bm25" else 0.13)
    suffix = "" if backend == "bm25" else "-vector"
    rep = json.loads((tmp_path / "reports" / f"retrieval-report{suffix}.json").read_text())
    assert len(rep) == 60 and {"caseId", "expandedQuery", "pinnedBeliefs", "relevantBeliefs", "retrievedQuestions",
                               "searchScores", "retrievalPrecision", "retrievalRecall", "passed", "failures"} <= set(rep[0])
    sess = json.loads((tmp_path / "reports" / f"session-retrieval-report{suffix}.json").read_text())
    assert [e["turnIndex"] for e in sess] == list(range(11)) + [0]
    assert all(("clauses" in s) == (backend == "bm25") for e in rep for s in e["searchScores"])


def write_set(folder: Path, seed, cases, sessions) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for f, data in zip(FIXTURE_FILES, (seed, cases, sessions)): (folder / f).write_text(json.dumps(data))
    return folder


def test_eval_current_rules_on_the_packaged_set_writes_reference_reports(tmp_path, monkeypatch):
    "Today's rules on the paper's set: the two cases the reference rewrote fail; reports are the reference's objects."
    monkeypatch.setenv("CORETEX_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    r = run_cli("beliefs", "eval", "--reference", "current", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["static"], out["session"], out["fixtures"]) == ([58, 60], [12, 12], "tenure-paper")
    reports = [Path(p) for p in out["reports"]]
    assert all(p.is_relative_to(tmp_path / "data") for p in reports) and not list(tmp_path.glob("*.json"))
    static, session = (json.loads(p.read_text()) for p in reports)
    assert set(static) == {"provider", "retrieval", "cases", "ingestion"} and static["retrieval"]["totalPassed"] == 58
    assert {e["caseId"] for e in static["cases"] if not e["passed"]} == {"user-edited-cross-scope-surfaces", "budget-ceiling-evicts-relevant-beliefs"}
    assert {"category", "pinnedCoverage", "questionPrecision", "questionRecall", "retrievalLatencyMs"} <= set(static["cases"][0])
    assert session["retrieval"]["turnCount"] == 12 and {"retrievedBeliefIds", "pinnedBeliefIds", "driftScore"} <= set(session["cases"][0])
    scored = [s for e in static["cases"] for s in e["searchScores"] if s["clauses"]]
    assert scored and all(abs(sum(c["score"] for c in s["clauses"]) - s["score"]) <= 0.01 * len(s["clauses"]) for s in scored)


def test_eval_hand_made_set_with_unknown_kind(tmp_path, monkeypatch):
    "A set of our own runs under today's rules; an unknown expectation kind fails its case and is listed, unknown fields are ignored."
    monkeypatch.setenv("CORETEX_DATA", str(tmp_path / "data"))
    seed = [{"_id": "q", "user_id": EVAL_USER, "type": "entity", "canonical_name": "job_queue", "aliases": ["bullmq"], "scope": ["domain:code"],
             "superseded_by": None, "resolved_at": None, "pinned": False, "futureField": {"x": 1}}]
    seed += [{**seed[0], "_id": f"f{i}", "canonical_name": f"filler_{i}", "aliases": [f"filler{i}"]} for i in range(9)]  # idf needs a corpus
    cases = [{"caseId": "finds", "scope": ["domain:code"], "query": "bullmq retries", "expect": {"relevantBeliefs": {"shouldOnlyInclude": ["q"]}}},
             {"caseId": "odd", "scope": ["domain:code"], "query": "bullmq retries", "expect": {"relevantBeliefs": {"mustRankFirst": ["q"]}}}]
    sessions = [{"caseId": "s", "turns": [{"turnIndex": 0, "scope": ["domain:code"], "userMessage": "bullmq retries",
                                           "expect": {"relevantBeliefs": {"shouldOnlyInclude": ["q"]}, "vibes": {"good": True}}}]}]
    d = write_set(tmp_path / "mine", seed, cases, sessions)
    r = run_cli("beliefs", "eval", "--fixtures", d, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "1/2" in r.stdout and "0/1" in r.stdout and "published" not in r.stdout
    assert "unknown expectation kind (case failed): odd: relevantBeliefs.mustRankFirst" in r.stdout
    assert "unknown expectation kind (case failed): s turn 0: vibes" in r.stdout
    static = json.loads((tmp_path / "out" / "retrieval-report.json").read_text())
    assert [e["failures"] for e in static["cases"]] == [[], ["unknown expectation kind: relevantBeliefs.mustRankFirst"]]


@pytest.mark.parametrize("breakage,message", [
    (lambda d: (d / "retrieval.cases.json").write_text("[{"), "retrieval.cases.json: not valid JSON"),
    (lambda d: (d / "session-retrieval.cases.json").unlink(), "session-retrieval.cases.json: missing"),
    (lambda d: (d / "beliefs.seed.json").write_text('{"beliefs": []}'), "beliefs.seed.json: expected a JSON array"),
    (lambda d: (d / "beliefs.seed.json").write_text('[{"_id": "x"}]'), "beliefs.seed.json: item 0: needs string _id and user_id"),
    (lambda d: (d / "retrieval.cases.json").write_text('[{"caseId": "c", "scope": "domain:code", "query": "q", "expect": {}}]'),
     "retrieval.cases.json: item 0: scope must be a list of strings"),
])
def test_eval_bad_fixture_file_is_one_line(tmp_path, breakage, message):
    d = write_set(tmp_path / "bad", [], [], [])
    breakage(d)
    r = run_cli("beliefs", "eval", "--fixtures", d)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and message in r.stderr and "Traceback" not in r.stderr, r.stderr


@needs_mirror
def test_eval_today_reference_fixtures(tmp_path, monkeypatch):
    "Today's reference fixtures (35 beliefs, 77 cases with relation expansion) pass under today's rules; the paper's rules miss exactly the changes."
    monkeypatch.setenv("CORETEX_DATA", str(tmp_path / "data"))
    d = current_fixture_dir(tmp_path)
    now = json.loads(run_cli("beliefs", "eval", "--fixtures", d, "--json").stdout)
    assert (now["static"], now["session"], now["unknownExpectations"]) == ([77, 77], [12, 12], [])
    old = run_cli("beliefs", "eval", "--fixtures", d, "--reference", "paper", "--json", "--out", tmp_path / "old")
    assert json.loads(old.stdout)["static"] == [73, 77]
    failed = {e["caseId"] for e in json.loads((tmp_path / "old" / "retrieval-report.json").read_text()) if not e["passed"]}
    assert failed == {"user-edited-cross-scope-surfaces", "relation-type-expands-participants",
                      "relation-participant-open-question-routes-correctly", "budget-one-pinned-wins-over-relevant"}


from hypothesis import given, settings, strategies as st
from coretex.beliefs.store import FieldIndex, expand, edit_distance_le1

WORDS = st.text(alphabet="abc ", min_size=1, max_size=9)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=40), st.lists(WORDS, max_size=10), WORDS)
def test_fuzzy_lookup_equals_a_full_scan(terms, removed, query):
    "The filed fuzzy lookup finds exactly what scanning every term finds (same prefix, one edit), in the built arrays and the delta, also after removals."
    half = len(terms) // 2
    fi = FieldIndex([[t] for t in terms[:half]])
    for i, t in enumerate(terms[half:], half): fi.add(i, [t])
    for i, t in enumerate(terms):
        if t in removed: fi.remove(i)
    live = {t for t in terms if t not in removed}
    scan = sorted(((t, 1.0 if edit_distance_le1(query, t) == 0 else 1 - 1 / min(len(t), len(query))) for t in live
                   if t[:2] == query[:2] and edit_distance_le1(query, t) is not None), key=lambda x: (-x[1], x[0]))
    want = scan[:50] if len(query) > 2 else [(query, 1.0)] if query in live else []
    assert expand(query, fi, True) == want
    assert all(fi.df_of(t) == sum(x == t for x in terms if x not in removed) for t in set(terms))


def test_vector_search_scores_every_live_belief(db):
    "On a store larger than Atlas's 150 candidates, the nearest belief is found even when it was written last."
    import numpy as np
    from coretex.evaluator.retrieval import DeterministicEmbedder
    class Unit(DeterministicEmbedder):
        "The hash embedder, normalised, so that a text's own vector is its unique nearest."
        def encode(self, texts, progress=False):
            v = super().encode(texts)
            return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    base = {"user_id": "u", "type": "entity", "pinned": False, "superseded_by": None, "resolved_at": None, "scope": ["domain:code"], "aliases": []}
    store = BeliefStore(db, "vector_many")
    store.reset([{**base, "_id": f"b{i:03d}", "canonical_name": f"topic_{i:03d}"} for i in range(300)])
    vb = VectorBackend(store, Unit())
    hits = vb.search("u", "topic_299", ["domain:code"], limit=5)
    assert hits[0].id == "b299" and hits[0].score == pytest.approx(1.0)
    assert len(hits) == 5 and len({h.id for h in hits}) == 5
