"""The answers the belief index must keep: what coretex's dict-of-dicts index (`BeliefIndex`/`FieldIndex` before the
array index, commit 333cec8) returned, stored so the array index is compared with it, not with itself.

Made by: `PYTHONPATH=$PWD python tests/belief_answers.py` at commit 333cec8 (writes tests/fixtures/belief_answers.json.gz).
Covers: the packaged Tenure suites under both references' rules and a seeded generated store of 10,000 beliefs
with 400 queries, asked before and after a round of writes (inserts, added aliases, renames, supersessions).
"""
import gzip, json, random, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_beliefs import generate_store
from coretex.beliefs.store import BeliefStore, BM25Backend, Reference, build_context, clean_query
from coretex.beliefs.tenure import packaged_fixtures, run_suite

OUT = ROOT / "tests" / "fixtures" / "belief_answers.json.gz"
N_GENERATED, SCOPE = 10_000, ["domain:code"]
VOLATILE = {"retrievalLatencyMs"}   # timings differ run to run


def suite_answers(db, fx) -> dict:
    "reference -> every static and session entry of the BM25 suite, timings left out."
    strip = lambda es: [{k: v for k, v in e.items() if k not in VOLATILE} for e in es]
    return {ref.value: (lambda r: {"static": strip(r.static), "session": strip(r.session)})(run_suite("bm25", db, fixtures=fx, reference=ref))
            for ref in Reference}


def writes(beliefs: list, seed: int = 5) -> list:
    "A seeded round of writes on a generated store: (kind, args) in order."
    rng = random.Random(seed)
    extra, _ = generate_store(100, seed=seed + 1)
    users = sorted({b["user_id"] for b in beliefs})
    out = []
    for i, b in enumerate(extra[:60]):
        out.append(("insert", {**b, "_id": f"w-{i}", "user_id": rng.choice(users), "participants": [], "superseded_by": None}))
    for b in rng.sample(beliefs, 90):
        k = rng.randrange(3)
        if k == 0: out.append(("add_aliases", b["_id"], [rng.choice(beliefs)["canonical_name"].replace("_", " "), "Shared Alias"]))
        elif k == 1: out.append(("update", b["_id"], {"canonical_name": rng.choice(beliefs)["canonical_name"]}))
        else: out.append(("update", b["_id"], {"superseded_by": rng.choice(beliefs)["_id"]}))
    return out


def apply(store, w) -> None:
    getattr(store, w[0])(*w[1:])


def ask(store, queries) -> list:
    "Per query: the hits (id, score, clauses) and the context under each reference."
    bm, out = BM25Backend(store), []
    for user, msg in queries:
        q = clean_query(msg)
        hits = [[h.id, h.score, h.clauses] for h in bm.search(user, q, SCOPE)]
        ctx = {}
        for ref in Reference:
            c = build_context(store, bm, user, SCOPE, msg, reference=ref)
            ctx[ref.value] = [c.pinned, c.relevant, c.questions, c.participants]
        out.append({"user": user, "message": msg, "hits": hits, "context": ctx})
    return out


def generated_answers(db) -> dict:
    beliefs, queries = generate_store(N_GENERATED)
    store = BeliefStore(db, "generated_answers")
    store.reset(beliefs)
    before = ask(store, queries)
    for w in writes(beliefs): apply(store, w)
    return {"n": N_GENERATED, "before": before, "after": ask(store, queries)}


def main():
    from coretex.network.store import open_db
    db, close = open_db(path=tempfile.mkdtemp())
    try:
        data = {"made_by": __doc__.split("\n\n")[1], "tenure": suite_answers(db, packaged_fixtures()),
                "generated": generated_answers(db)}
    finally:
        close()
    OUT.parent.mkdir(exist_ok=True)
    with gzip.open(OUT, "wt", encoding="utf-8") as f: json.dump(data, f, sort_keys=True)
    print(OUT, OUT.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
