"""The sybil attack generators' ground truth, coretex's detector on the generated small suite and on the hand-written
held-out corpus (no model: the MiniLM columns come from committed files, of which a sample is recomputed here), the
duplicates policy, and the evidence across rounds."""
import json, random, re
from collections import Counter
from pathlib import Path
import numpy as np
import pytest
from coretex.consensus.sybil import (Attack, EDIT_LEVELS, EmbeddingCache, GeneratorError, attack_suite, edit_copy, honest_answer,
                                     make_scenario, words)
from coretex.consensus.sybil_detector import (SYBIL_RULE_SETS, TextDetector, coretex_emissions, detect_copies, in_order_share,
                                              overlap_copies, seed_emissions, unit_alignment, units, word_containment, word_overlap)
from coretex.consensus.sybil_corpus import (INSEPARABLE, KIND_ORDER, concat, corpus_suite, honest_case, jaccard, load_corpus, paraphrase, reorder,
                                            short, truncate70)
from coretex.consensus.sybil_heldout import SEPARABLE, honest_rows, pair_rows, policy_rows, pooled, score_cases
from coretex.consensus.sybil_rounds import (RoundRules, build_campaign, campaign_evidence, entity_pairs, jitter_cost, pair_percentiles,
                                            residual_log_times, time_correlation)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sybil" / "minilm-small.npz"


@pytest.fixture(scope="module")
def small(): return attack_suite("small")


@pytest.fixture(scope="module")
def embed():
    e = EmbeddingCache(FIXTURE)
    yield e
    assert e.misses == 0, "fixtures/sybil/minilm-small.npz is stale: regenerate it (see its README)"


def levenshtein(a: list, b: list) -> int:
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1): prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


def bigrams(text: str) -> Counter:
    w = re.findall(r"[a-z0-9']+", text.lower())
    return Counter(zip(w, w[1:]))


def test_generator_is_deterministic_in_its_seed(small):
    assert attack_suite("small") == small
    other = attack_suite("small", seed=1)
    assert [s.name for s in other] == [s.name for s in small]
    assert sum(a.texts != b.texts for a, b in zip(small, other)) == len(small)


def test_an_edited_copy_differs_by_about_k_of_its_tokens():
    rng = random.Random(11)
    for k in (0.05, 0.1, 0.2, 0.3, 0.4):
        dist = []
        for _ in range(30):
            src = honest_answer(rng.choice(["sky", "hash", "photo"]), rng).split()
            dist.append(levenshtein(src, edit_copy(" ".join(src), k, rng, reorder=False).split()) / len(src))
        assert abs(sum(dist) / len(dist) - k) < 0.04, (k, sum(dist) / len(dist))
        assert all(k - 0.04 <= x <= k + 0.15 for x in dist), (k, min(dist), max(dist))


def test_ground_truth_of_the_suite(small):
    for s in small:
        by = {r.miner: r for r in s.responses}
        assert [r.role for r in s.responses].count("sybil") == sum(len(g) for g in s.groups)
        for g, a in zip(s.groups, s.attacks):
            src, copies = by[g[0]], [by[m] for m in g[1:]]
            assert src.edit == 0 and all(c.edit == a.edit for c in copies) and len(g) == a.size
            if a.edit == 0: assert all(c.text == src.text for c in copies)
            else:   # a shuffle moves sentences, so compare bags of words: m = round(k n) edits change each side by m / 2 to m words
                n, bag = len(src.text.split()), Counter(src.text.split())
                m = round(a.edit * n)
                diff = [(sum((bag - Counter(c.text.split())).values()) + sum((Counter(c.text.split()) - bag).values())) / 2 for c in copies]
                assert all(0.4 * m <= d <= m + 0.1 * n for d in diff), (s.name, a.edit, m, diff)
            if a.spread == "shared": assert len({(by[m].ip, by[m].coldkey) for m in g}) == 1
            if a.spread == "own": assert len({by[m].ip for m in g}) == len({by[m].coldkey for m in g}) == len(g)


def test_honest_answers_are_not_near_duplicates(small):
    for s in small:
        written = [r.text for r in s.responses if r.role == "honest"] + [r.text for r in s.responses if r.miner in {g[0] for g in s.groups}]
        for i, a in enumerate(written):
            for b in written[:i]:
                A, B = bigrams(a), bigrams(b)
                assert sum((A & B).values()) < 0.4 * min(sum(A.values()), sum(B.values()))
                if s.kind == "honest": assert levenshtein(a.split(), b.split()) > 0.4 * max(len(a.split()), len(b.split()))


def test_word_overlap_is_the_multiset_jaccard():
    rng = random.Random(3)
    texts = [honest_answer("seasons", rng) for _ in range(6)]
    J = word_overlap(texts)
    for i, a in enumerate(texts):
        for j, b in enumerate(texts):
            A, B = (Counter(re.findall(r"[a-z0-9']+", t.lower())) for t in (a, b))
            assert abs(J[i, j] - sum((A & B).values()) / sum((A | B).values())) < 1e-6


@pytest.mark.parametrize("rule", ["coretex", "coretex-0.48"])
def test_detectors_meet_their_targets_and_group_no_honest_answers(small, embed, rule):
    "coretex: every copy up to 15% edits; coretex 0.2 (word overlap alone): >= 0.95 up to 20%. Neither groups an honest answer."
    found, true = Counter(), Counter()
    for s in small:
        f = detect_copies(s.texts, s.miners) if rule == "coretex" else overlap_copies(s.texts, s.miners, embed)
        role, edit = {r.miner: r.role for r in s.responses}, {r.miner: r.edit for r in s.responses}
        same = {frozenset((a, b)) for g in f.groups for a in g for b in g if a != b}
        assert all(sum(role[m] == "honest" for m in g) < 2 for g in f.groups), (s.name, f.groups)
        if s.kind == "honest": assert f.groups == [] and f.pairs == []
        for g in s.groups:
            for i, a in enumerate(g):
                for b in g[i + 1:]:
                    k = max(edit[a], edit[b]); true[k] += 1; found[k] += frozenset((a, b)) in same
        assert not [p for p in f.pairs if role[p[0]] == "honest" and role[p[1]] == "honest"]
    for k in EDIT_LEVELS:
        if rule == "coretex" and k <= 0.15: assert found[k] == true[k], (k, found[k], true[k])
        if rule == "coretex-0.48" and k <= 0.2: assert found[k] / true[k] >= 0.95, (k, found[k], true[k])


def test_a_detected_group_is_paid_as_one_answer(small, embed):
    for s in (s for s in small if s.kind == "emission" and s.topic == "ice"):
        paid = coretex_emissions(s, embed)
        group = sum(paid[m] for m in s.groups[0]) / sum(paid.values())
        honest = [paid[r.miner] for r in s.responses if r.role == "honest"]
        assert group <= 1.5 * max(honest) / sum(paid.values()), (s.name, group)


def test_bad_attacks_are_refused():
    with pytest.raises(GeneratorError, match="bad attack"): Attack(3, 0.9)
    with pytest.raises(GeneratorError, match="need more than"): make_scenario("x", "near", "ice", 4, (Attack(3, 0.1), Attack(3, 0.1)))


# ---------------------------------------------------------------- coretex's text detector on the hand-written corpora

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sybil"
SAMPLE = ("heldout-H01-short0", "heldout-H12-concat", "heldout-H21-honest_same_model")


@pytest.fixture(scope="module")
def heldout(): return corpus_suite("heldout")


@pytest.fixture(scope="module")
def scores_file(): return json.loads((FIXTURES / "heldout-scores.json").read_text())


def lcs(a: list, b: list) -> int:
    "Longest common subsequence, by dynamic programming."
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1): cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def test_in_order_share_is_a_close_lower_bound_of_the_lcs():
    c = load_corpus("tuning")
    U = [words(u) for p in c.values() for a in p["answers"] for u in units(a["text"])]
    rng, equal = random.Random(5), 0
    for _ in range(1500):
        u, v = rng.choice(U), rng.choice(U)
        if rng.random() < 0.5: v = [w for w in u if rng.random() > 0.2] + v[:3]          # a near-copy, sometimes
        share, exact = in_order_share(u, v), lcs(u, v) / len(u)
        assert share <= exact + 1e-12
        equal += abs(share - exact) < 1e-12
    assert equal >= 0.9 * 1500


def test_unit_alignment_prunes_nothing_that_counts(heldout):
    "The alignment skips units that cannot reach the lowest share and stops at the highest: the counts equal a brute force."
    for c in heldout[::50]:
        U = [units(t) or [t] for t in c.texts]
        C = word_containment(c.texts)
        A70, A85 = unit_alignment(U, C)
        for i in range(len(U)):
            for j in range(len(U)):
                if i == j: continue
                best = [max(in_order_share(words(u), words(v)) for v in U[j]) for u in U[i]]
                want = (np.mean([b >= 0.7 for b in best]), np.mean([b >= 0.85 for b in best])) if C[i, j] >= 0.4 else (0.0, 0.0)
                assert (A70[i, j], A85[i, j]) == pytest.approx(want), (c.name, i, j)


def test_detector_reproduces_the_committed_heldout_results_and_meets_the_separable_target(heldout, scores_file):
    scores, sets = score_cases(heldout, tuple(r for r in SYBIL_RULE_SETS if r.name == "coretex"), embed=None)
    got, want = scores["coretex"], scores_file["kinds"]["coretex"]
    assert {k: {x: y for x, y in v.items() if x != "ms"} for k, v in got.items()} == {k: {x: y for x, y in v.items() if x != "ms"} for k, v in want.items()}
    assert sets["coretex"] == scores_file["sets"]["coretex"]
    rec, prec, true, found, false = pooled(got, SEPARABLE)
    assert rec >= 0.95 and prec >= 0.99 and got["honest"]["flagged_sets"] == 0 and got["honest"]["false"] == 0
    assert got["honest_same_model"]["false"] == 0                 # only same-model duplicates are ever paired there
    for k in INSEPARABLE: assert pooled(got, [k])[0] <= 0.05, k
    assert pooled(got, KIND_ORDER)[0] < 0.95                      # the overall target is not met, as the notebook says


def test_no_honest_pair_of_either_corpus_reaches_a_rule(heldout):
    "The thresholds were chosen on the tuning corpus; no distinct honest pair of either corpus reaches any of the three rules."
    d = TextDetector()
    tuning = [honest_case("tuning", p, random.Random(0), False) for p in load_corpus("tuning").values()]
    for sets in ([c for c in heldout if c.attack == "honest"], tuning):
        H = honest_rows(pair_rows(sets))
        assert len(H) > 1000
        assert max(r["J"] for r in H if r["shorter"] >= d.min_words) < d.overlap
        assert max(r["A85"] for r in H) < d.contained
        assert max(r["J"] for r in H if r["shorter"] >= d.exact_min_words) < d.near_exact
        assert max(r["J"] for r in H if r["shorter"] >= 8) >= 0.48     # coretex 0.2's rule would pair some


def test_what_text_cannot_separate_sits_inside_the_honest_range(heldout):
    rows = pair_rows([c for c in heldout if c.attack in ("honest", "para_hand", "short")])
    H = [r for r in honest_rows(rows) if r["shorter"] >= 25]
    hand = [r for r in rows if r["label"] == "true_src" and r["attack"] == "para_hand"]
    for s in ("J", "C", "A85"): assert max(r[s] for r in hand) < max(r[s] for r in H), s
    short = [r for r in rows if r["label"] == "true_src" and r["attack"] == "short"]
    honest_short = [r for r in honest_rows(rows) if r["shorter"] < 8 and r["same"]]
    assert all(r["shorter"] < 8 for r in short) and len(honest_short) > 20      # honest short answers coincide too


def test_minilm_columns_recompute_from_the_sample_vectors(heldout, scores_file):
    "The seed rules', 1.2.8's and coretex 0.2's counts of three committed sets, from their committed MiniLM vectors."
    sample = EmbeddingCache(FIXTURES / "minilm-heldout-sample.npz")
    cases = [c for c in heldout if c.name in SAMPLE]
    assert len(cases) == 3
    _, sets = score_cases(cases, tuple(r for r in SYBIL_RULE_SETS if r.name != "coretex"), sample)
    for r, v in sets.items():
        for name in SAMPLE: assert v[name] == scores_file["sets"][r][name], (r, name)
    assert sample.misses == 0
    same_model = next(c for c in cases if c.dups)            # the policy numbers of its same-model cluster, recomputed
    policy = policy_rows([same_model], sample)["same_model"]
    committed = [r for r in scores_file["policy"]["same_model"] if (r["k"], r["n"]) == (policy[0]["k"], policy[0]["n"])]
    assert any(all(r[x] == pytest.approx(policy[0][x], abs=1e-9) for x in ("each", "one", "short_too")) for r in committed)


def test_the_sample_vectors_are_minilm():
    "A few of the committed vectors against the packaged model, embedded now."
    from coretex.toolkit.embeddings import Embedder
    with np.load(FIXTURES / "minilm-heldout-sample.npz") as z: texts, vectors = z["texts"].tolist(), z["vectors"]
    pick = [0, len(texts) // 3, len(texts) // 2, len(texts) - 1]
    fresh = Embedder().encode([texts[i] for i in pick])
    assert np.abs(fresh - vectors[pick]).max() < 1e-4


def test_attack_kinds_keep_their_promises():
    c, rng = load_corpus("heldout"), random.Random(8)
    long = [a["text"] for p in c.values() for a in p["answers"] if a["n_words"] >= 25]
    for src in long[::7]:
        assert Counter(words(reorder(src, rng, {}))) == Counter(words(src))
        cut = truncate70(src, rng, {})
        assert src.startswith(cut[:-1].rstrip(".")) and abs(len(cut.split()) - round(0.7 * len(src.split()))) <= 1
        spare = long[(long.index(src) + 1) % len(long)]
        assert src in concat(src, rng, {"spare": [spare]})
        copy, j = paraphrase(src, rng)
        assert j == pytest.approx(jaccard(src, copy)) and copy != src
    shorts = [a["text"] for p in c.values() for a in p["answers"] if a["kind"] == "short"]
    assert all(" ".join(words(short(t, rng, {}))) == " ".join(words(t)) for t in shorts)


def test_duplicates_policy_each_is_the_seed_pipeline(heldout):
    sample = EmbeddingCache(FIXTURES / "minilm-heldout-sample.npz")
    c = next(c for c in heldout if c.name == "heldout-H21-honest_same_model")
    assert coretex_emissions(c, sample, "each") == seed_emissions(c, sample)
    one, groups = coretex_emissions(c, sample, "one"), detect_copies(c.texts, c.miners).groups
    assert [sorted(g) for g in groups] == [sorted(d) for d in c.dups if len(words(c.texts[c.miners.index(d[0])])) >= 8]
    for g in groups: assert len({round(one[m], 12) for m in g}) == 1       # the group splits one answer's pay
    with pytest.raises(ValueError, match="duplicates="): coretex_emissions(c, sample, "half")


# ---------------------------------------------------------------- evidence beyond the text

def test_entity_pairs_are_where_loosh_caps_a_vote():
    from coretex.consensus.loosh_inputs import entity_caps
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(2, 9)
        ips = [rng.choice(["", "0", "0.0.0.0", "1.1.1.1", "2.2.2.2", f"3.3.3.{k}"]) for k in range(n)]
        cks = [rng.choice(["", "ck-a", "ck-b", f"ck-{k}"]) for k in range(n)]
        E = entity_pairs(ips, cks)
        caps = entity_caps([f"m{i}" for i in range(n)], {f"m{i}": (ip, ck) for i, (ip, ck) in enumerate(zip(ips, cks))})
        assert [caps[f"m{i}"] < 1 for i in range(n)] == E.any(1).tolist()
        assert (E == E.T).all() and not E.diagonal().any()


def test_pair_percentiles_are_average_ranks():
    from scipy.stats import rankdata          # scikit-learn's dependency: an independent ranking
    rng = np.random.default_rng(1)
    for _ in range(20):
        X = np.round(rng.random((7, 7)), 1); X = (X + X.T) / 2
        iu = np.triu_indices(7, 1)
        assert pair_percentiles(X)[iu] == pytest.approx((rankdata(X[iu]) - 1) / (len(iu[0]) - 1))


def test_timing_catches_copies_sent_at_once_and_no_honest_pair():
    ev = campaign_evidence(build_campaign("heldout", "exact", seed=0), text=False)
    rules = RoundRules()
    sybil = [r for r in ev if r["label"] == "sybil"]
    assert all(r["rho"] >= rules.timing and r["persistence"] >= rules.persistence for r in sybil)
    assert not any(r["rho"] >= rules.timing for r in ev if r["label"] in ("honest", "twin") and r["rounds"] >= rules.min_rounds)
    R = residual_log_times(np.array([[1.0, 2, 4, 8], [2, 2, 2, 2], [1, 3, 3, 9], [4, 2, 1, 1], [1, 1, 1, 2], [3, 1, 2, 2]]))
    C = time_correlation(R)
    assert C[0, 2] == pytest.approx(np.corrcoef(R[:, 0], R[:, 2])[0, 1])
    assert jitter_cost(10000, trials=300) < jitter_cost(0, trials=300) < 1.0
