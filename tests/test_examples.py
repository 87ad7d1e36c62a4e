"""Every Python example a reader may copy runs as printed: each ```python block of the README and each code cell of
the front page, alone, in a fresh interpreter."""
import json, os, re, subprocess, sys
import pytest
from helpers import ROOT


def readme_blocks() -> list:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def front_page_cells() -> list:
    cells = json.loads((ROOT / "nbs" / "index.ipynb").read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and not "".join(c["source"]).startswith("#| hide")]


def examples() -> list:
    "(names, code) of each distinct example: the README's blocks are front-page cells (`#| readme: true`), run once."
    named = {}
    for name, code in [(f"README {i + 1}", c) for i, c in enumerate(readme_blocks())] + \
                      [(f"front page cell {i + 1}", c) for i, c in enumerate(front_page_cells())]:
        named.setdefault(re.sub(r"^#\|.*\n", "", code, flags=re.M).strip(), []).append(name)
    return [(" = ".join(names), code) for code, names in named.items()]


EXAMPLES = examples()


def test_there_are_examples_to_run():
    assert len(readme_blocks()) >= 3 and len(front_page_cells()) >= 3


@pytest.mark.parametrize("name,code", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_an_example_runs_on_its_own(name, code, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}   # plt.show() draws nowhere
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{name} failed:\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr
