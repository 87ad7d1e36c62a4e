"Helpers shared by the tests (imported by name: both tests/ and nbs/ have a conftest.py)."
import os, subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_ANCHORS = ROOT.parent / "shared" / "anchors"


def sampled(cases: list, every: int = 10) -> list:
    "All vector cases, or with CORETEX_VECTOR_CASES=sample every `every`-th case plus every accepted one."
    if os.environ.get("CORETEX_VECTOR_CASES") != "sample": return cases
    return [c for i, c in enumerate(cases) if i % every == 0 or c["verdict"]["outcome"] != "REJECT"]


def run_cli(*args, input=None):
    "Run the installed `coretex` console command; returns the CompletedProcess."
    return subprocess.run(["coretex", *map(str, args)], capture_output=True, text=True, input=input, timeout=600)


def abstain_patch(k: int = 0, parent=None) -> bytes:
    """A POLICY_UPDATE that adds one abstention atom (cell 640 + k) on `parent` (default genesis).

    Under the reference's rules it raises the abstention component on a pack that holds an abstention probe and
    costs nothing elsewhere, so the verdict depends on the draw: an honest patch whose outcome varies with the block.
    """
    from coretex.core.layout import encode_atom
    from coretex.core.patch import make_patch
    from coretex.core.state import GENESIS, state_root
    atom = encode_atom("missing_evidence", "top1_score", "abstain", "owner", 0xFFFF, budget=80, flags=1)
    return make_patch(state_root(parent or GENESIS), {640 + k: atom}, 0x07)


def accepted_job(coord, miner: str, epoch_id: int, tries: int = 16) -> tuple:
    "(job, envelope) of the first abstention patch the coordinator accepts; each try is a new patch, so a new draw."
    for k in range(tries):
        job = coord.intake(miner, abstain_patch(k).hex(), epoch_id)
        env = coord.process(job["jobId"])
        if env["status"] == "accepted": return job, env
    raise AssertionError(f"no abstention patch accepted in {tries} draws")
