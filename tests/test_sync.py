"The notebooks are the source: the exported package and the README's test command must agree with them."
import re, shutil, subprocess
import pytest
from helpers import ROOT


def test_ci_runs_the_readme_test_command():
    blocks = re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())
    ci = [l for l in (ROOT / ".ci" / "run").read_text().splitlines() if l and not l.startswith(("#", "set ", "cd "))]
    assert ci == [blocks[1]]


def test_export_is_in_sync(tmp_path):
    if not (ROOT / ".git").exists() or shutil.which("git") is None: pytest.skip("not a git checkout")
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "*.egg-info", "__pycache__", ".hypothesis"))
    subprocess.run(["nbdev-export"], cwd=copy, check=True, capture_output=True)
    for f in (ROOT / "coretex").glob("*.py"):
        assert (copy / "coretex" / f.name).read_text() == f.read_text(), f"{f.name}: run nbdev-export"
