"Fuzzing the patch codec: malformed bytes only ever raise the typed error; valid patches round-trip."
from hypothesis import given, settings, strategies as st, HealthCheck
from coretex.patch import PatchError, apply_patch, decode_patch, encode_patch, make_patch, Patch
from coretex.state import GENESIS, WORD_COUNT, merkle_levels, state_root

ROOT = state_root(GENESIS)
LEVELS = merkle_levels(GENESIS)
CODES = {"DECODE", "E01", "E02", "E03", "E04", "E05"}


def _apply(data, pipeline="r5"):
    try: return apply_patch(GENESIS, data, pipeline, LEVELS)
    except PatchError as e:
        assert e.code in CODES and e.reason
        return e


@settings(max_examples=3000, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_patch_error(data):
    _apply(data)


indices = st.integers(0, WORD_COUNT - 1)
words = st.one_of(st.integers(0, 2**256 - 1), st.integers(0, 2**16 - 1).map(lambda w: w << 240), st.just(0))
patches = st.builds(lambda t, d, idx, ws, root: Patch(t, d, root, tuple(idx), tuple(ws[:len(idx)] + [1] * (len(idx) - len(ws)))),
                    st.sampled_from([1, 2, 3, 4, 5, 6, 255]), st.integers(0, 2**63 - 1),
                    st.lists(indices, min_size=0, max_size=5), st.lists(words, max_size=5), st.sampled_from([ROOT, b"\x01" * 32]))


@settings(max_examples=1500, deadline=None)
@given(patches)
def test_encode_decode_round_trip(p):
    data = encode_patch(p)
    assert decode_patch(data) == p
    assert encode_patch(decode_patch(data)) == data
    if p.word_count <= 4: assert len(data) <= 178


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patches, st.lists(st.tuples(st.integers(0, 177), st.integers(0, 255)), max_size=4), st.integers(0, 8))
def test_mutated_patches_only_raise_patch_error(p, flips, cut):
    data = bytearray(encode_patch(p))
    for pos, val in flips:
        if pos < len(data): data[pos] = val
    data = bytes(data[:len(data) - cut]) if cut else bytes(data)
    _apply(data, "r5"), _apply(data, "r4")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(32, 383), st.integers(1, 2**256 - 1).map(lambda w: w & ~(((1 << 13) - 1) << 51)).filter(bool),
                       min_size=1, max_size=4), st.integers(0, 2**63 - 1))
def test_applied_root_equals_full_rebuild(changes, delta):
    a = apply_patch(GENESIS, make_patch(ROOT, changes, 0x02, delta), "r4", LEVELS)
    assert a.root == state_root(a.words)
    assert a.patch_hash == apply_patch(GENESIS, make_patch(ROOT, changes, 0x02, 0), "r4").patch_hash
