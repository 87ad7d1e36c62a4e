"The notebooks are the source: the exported package and the README's commands must agree with them."
import re, shutil, subprocess
import pytest
from helpers import ROOT


def readme_commands() -> list:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())[:2]


def test_ci_runs_the_readme_commands_in_fresh_environments():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    run, test = readme_commands()
    assert run.endswith("coretex demo") and test.endswith("pytest")
    # each README command is a line of its own, run inside the venv that the line above it activates
    for cmd, venv in ((run, "run"), (test, "test")):
        i = ci.index(cmd)
        assert ci[i - 1] == f'( source "$venvs/{venv}/bin/activate"', ci[i - 1]
        assert f'python3 -m venv "$venvs/{venv}"' in ci[:i]
    assert 'venvs=$(mktemp -d)' in ci


def test_export_is_in_sync(tmp_path):
    if not (ROOT / ".git").exists() or shutil.which("git") is None: pytest.skip("not a git checkout")
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", "*.egg-info", "__pycache__", ".hypothesis"))
    subprocess.run(["nbdev-export"], cwd=copy, check=True, capture_output=True)
    files = sorted(p.relative_to(ROOT) for p in (ROOT / "coretex").rglob("*.py"))
    assert sorted(p.relative_to(copy) for p in (copy / "coretex").rglob("*.py")) == files, "run nbdev-export: a module was added or removed"
    for f in files:
        assert (copy / f).read_text() == (ROOT / f).read_text(), f"{f}: run nbdev-export"


def test_readme_is_the_front_page():
    from coretex.docs import readme_from_index
    assert (ROOT / "README.md").read_text() == readme_from_index(ROOT / "nbs" / "index.ipynb"), "run: coretex docs"
