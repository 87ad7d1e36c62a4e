"Fuzzing the patch entry points: only typed errors ever escape, valid patches round-trip, and the incremental child (root and faults) equals a full rebuild."
import random
from hypothesis import given, settings, strategies as st, HealthCheck
from coretex.core.fuzz import drive, fuzz_cases, mutate
from coretex.core.layout import first_fault, state_faults
from coretex.core.patch import MAX_WORDS, PATCH_TYPES, Patch, PatchError, apply_to, decode_patch, encode_patch, prepare, type_refusal
from coretex.core.state import GENESIS, WORD_COUNT, state_root

GENESIS_PARENT = prepare(GENESIS)
ROOT = GENESIS_PARENT.root
seeds = st.integers(0, 2**32 - 1)


@settings(max_examples=3000, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_patch_error(data):
    assert drive(GENESIS_PARENT, data) == []


@settings(max_examples=60, deadline=None)
@given(seeds)
def test_seeded_cases_only_raise_patch_error(seed):
    for parent, data in fuzz_cases(seed, 40, states=3):
        assert drive(parent, data) == [], data.hex()


indices = st.integers(0, WORD_COUNT - 1)
words = st.one_of(st.integers(0, 2**256 - 1), st.integers(0, 2**16 - 1).map(lambda w: w << 240), st.just(0))
patches = st.builds(lambda t, d, idx, ws, root: Patch(t, d, root, tuple(idx), tuple(ws[:len(idx)] + [1] * (len(idx) - len(ws)))),
                    st.sampled_from([*PATCH_TYPES, 0x08, 0x00]), st.integers(0, 2**63 - 1),
                    st.lists(indices, min_size=0, max_size=5), st.lists(words, max_size=5), st.sampled_from([ROOT, b"\x01" * 32]))


@settings(max_examples=1500, deadline=None)
@given(patches)
def test_encode_decode_round_trip(p):
    data = encode_patch(p)
    if 1 <= p.word_count <= MAX_WORDS and type_refusal(p.patch_type, p.indices) is None:
        assert decode_patch(data) == p and encode_patch(decode_patch(data)) == data and len(data) <= 178
    else:
        try: decode_patch(data); assert False, "decoded a patch the reference refuses"
        except PatchError as e: assert e.code == "DECODE"


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patches, seeds)
def test_mutated_patches_only_raise_patch_error(p, seed):
    assert drive(GENESIS_PARENT, mutate(random.Random(seed), encode_patch(p))) == []


@settings(max_examples=40, deadline=None)
@given(seeds)
def test_incremental_child_equals_full_rebuild(seed):
    for parent, data in fuzz_cases(seed, 40, states=3):
        for pipeline in ("r4", "r5"):
            try: a = apply_to(parent, data, pipeline)
            except PatchError as e:
                if not e.reason.startswith("cell "): continue      # refused before the child was built
                p, child = decode_patch(data), list(parent.words)
                for i, w in zip(p.indices, p.new_words): child[i] = w
                assert first_fault(state_faults(child), pipeline)[1].code == e.code
                continue
            assert a.root == state_root(a.words) and first_fault(state_faults(a.words), pipeline) is None


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(32, 383), st.integers(1, 2**256 - 1), min_size=1, max_size=4), st.integers(0, 2**63 - 1))
def test_score_delta_does_not_change_patch_hash(changes, delta):
    p = Patch(0x02, delta, ROOT, tuple(changes), tuple(changes.values()))
    a, b = apply_to(GENESIS_PARENT, encode_patch(p), "r5"), apply_to(GENESIS_PARENT, Patch(0x02, 0, ROOT, p.indices, p.new_words), "r5")
    assert a.patch_hash == b.patch_hash and a.root == b.root == state_root(a.words)
