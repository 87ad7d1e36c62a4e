"Helpers shared by the tests (imported by name: both tests/ and nbs/ have a conftest.py)."
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_ANCHORS = ROOT.parent / "shared" / "anchors"


def run_cli(*args, input=None):
    "Run the installed `coretex` console command; returns the CompletedProcess."
    return subprocess.run(["coretex", *map(str, args)], capture_output=True, text=True, input=input, timeout=600)
