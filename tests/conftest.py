import os
# The references' float32 answers (the Loosh vectors above all: cosine ties between identical answers decide sybil
# pairs and the top-bonus label) were computed under OpenBLAS's Haswell kernel. On an AVX-512 host OpenBLAS picks its
# SkylakeX kernel, which rounds those dot products differently and flips exact ties (49 of 176 Loosh cases). The
# kernel is read once, when numpy loads, so it is chosen here, before any worker or notebook kernel starts; a value
# the machine already sets is kept.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
import json, os, re, shutil, subprocess, tempfile, time, uuid
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _checkout_files() -> set:
    "Every untracked or ignored path git sees in the checkout, build caches aside."
    if shutil.which("git") is None or not (ROOT / ".git").exists(): return set()
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=ROOT,
                         capture_output=True, text=True).stdout.splitlines()
    # _docs/ is where the docs command (and the browser test) writes the site, as the README says
    return {l[3:] for l in out if l[:2] in ("??", "!!") and not re.search(r"__pycache__|\.egg-info|^.. _docs/", l)}


SESSION = f"CORETEX_TEST_SESSION={uuid.uuid4().hex}".encode()


def _embedded_servers() -> set:
    "Pids of running nx-27017 servers (coretex's embedded MongoDB) started by this test session."
    pids = set()
    for d in Path("/proc").glob("[0-9]*"):
        try:
            if b"nx_27017" not in (d / "cmdline").read_bytes() or SESSION not in (d / "environ").read_bytes(): continue
            if (d / "stat").read_text().split()[2] != "Z": pids.add(int(d.name))
        except OSError: continue
    return pids


def pytest_configure(config):
    # Everything the suite stores goes to a temporary data folder, not the user's ~/.local/share/coretex;
    # the commands the tests start inherit it.
    config._coretex_data = tempfile.mkdtemp(prefix="coretex-tests-")
    os.environ.setdefault("CORETEX_DATA", config._coretex_data)
    # every process the suite starts carries this mark, so the leftover check below sees only its own servers
    os.environ["CORETEX_TEST_SESSION"] = SESSION.split(b"=")[1].decode()
    # hypothesis keeps its example database under the data folder, not in the checkout
    from hypothesis import configuration
    configuration.set_hypothesis_home_dir(os.path.join(config._coretex_data, "hypothesis"))
    config._coretex_before = (_checkout_files(), _embedded_servers())


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if not hasattr(config, "_coretex_before"): return
    files, servers = config._coretex_before
    deadline = time.monotonic() + 10
    while (left := _embedded_servers() - servers) and time.monotonic() < deadline: time.sleep(0.2)
    stray = sorted(_checkout_files() - files)
    shutil.rmtree(config._coretex_data, ignore_errors=True)
    problems = ([f"embedded MongoDB servers still running after the suite: pids {sorted(left)}"] if left else []) + \
               ([f"the suite left files in the checkout: {stray}"] if stray else [])
    if problems:
        print("\n" + "\n".join(problems))
        session.exitstatus = 1


@pytest.fixture
def genesis_file(tmp_path):
    p = tmp_path / "genesis.bin"
    p.write_bytes(bytes(32768))
    return p


@pytest.fixture(scope="session")
def vectors():
    from coretex.core.layout import fixture_text
    return {v["name"]: v for v in json.loads(fixture_text("state-root-vectors.json"))["vectors"]}
