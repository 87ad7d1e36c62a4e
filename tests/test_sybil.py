"The sybil attack generator's ground truth and coretex's detector on the small suite (embeddings from the fixture, no model)."
import random, re
from collections import Counter
from pathlib import Path
import pytest
from coretex.consensus.sybil import Attack, EDIT_LEVELS, EmbeddingCache, GeneratorError, attack_suite, coretex_emissions, detect_copies, edit_copy, honest_answer, make_scenario, word_overlap

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


def test_detector_meets_its_target_and_groups_no_honest_answers(small, embed):
    found, true = Counter(), Counter()
    for s in small:
        f = detect_copies(s.texts, s.miners, embed)
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
        if k <= 0.2: assert found[k] / true[k] >= 0.95, (k, found[k], true[k])


def test_a_detected_group_is_paid_as_one_answer(small, embed):
    for s in (s for s in small if s.kind == "emission" and s.topic == "ice"):
        paid = coretex_emissions(s, embed)
        group = sum(paid[m] for m in s.groups[0]) / sum(paid.values())
        honest = [paid[r.miner] for r in s.responses if r.role == "honest"]
        assert group <= 1.5 * max(honest) / sum(paid.values()), (s.name, group)


def test_bad_attacks_are_refused():
    with pytest.raises(GeneratorError, match="bad attack"): Attack(3, 0.9)
    with pytest.raises(GeneratorError, match="need more than"): make_scenario("x", "near", "ice", 4, (Attack(3, 0.1), Attack(3, 0.1)))
