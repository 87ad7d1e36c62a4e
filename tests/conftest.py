import json, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_ANCHORS = ROOT.parent / "shared" / "anchors"


def run_cli(*args, input=None):
    "Run the installed `coretex` console command; returns the CompletedProcess."
    return subprocess.run(["coretex", *map(str, args)], capture_output=True, text=True, input=input, timeout=600)


@pytest.fixture
def genesis_file(tmp_path):
    p = tmp_path / "genesis.bin"
    p.write_bytes(bytes(32768))
    return p


@pytest.fixture(scope="session")
def vectors():
    from coretex.layout import fixture_text
    return {v["name"]: v for v in json.loads(fixture_text("state-root-vectors.json"))["vectors"]}
