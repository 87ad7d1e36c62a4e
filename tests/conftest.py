import json
import pytest


@pytest.fixture
def genesis_file(tmp_path):
    p = tmp_path / "genesis.bin"
    p.write_bytes(bytes(32768))
    return p


@pytest.fixture(scope="session")
def vectors():
    from coretex.layout import fixture_text
    return {v["name"]: v for v in json.loads(fixture_text("state-root-vectors.json"))["vectors"]}
