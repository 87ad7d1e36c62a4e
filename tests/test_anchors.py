"The golden files coretex ships are unmodified copies of the protocol's anchors."
import pytest
from importlib.resources import files
from helpers import SHARED_ANCHORS

COPIES = {
    "seed-derivation-golden.json": "seed-derivation-golden.json",
    "state-root-vectors.json": "state-root-vectors.json",
    "coretex_schema.json": "coretex_schema.json",
    "bundle-manifest-v16.json": "bundle-manifest-v2-dgen1-policy-r5-atom-v16-300k-enabled.json",
    "evaluator-profile-v16.json": "evaluator-profile-v2-dgen1-policy-r5-atom-v16-300k-enabled.json",
    "coretex-source-commit.txt": "SOURCE_COMMIT.txt",
}


@pytest.mark.parametrize("shipped,anchor", COPIES.items())
def test_fixture_is_anchor_copy(shipped, anchor):
    src = SHARED_ANCHORS / "coretex" / anchor
    if not src.exists(): pytest.skip(f"{src} is not beside this checkout")
    assert files("coretex.fixtures").joinpath(shipped).read_bytes() == src.read_bytes()
