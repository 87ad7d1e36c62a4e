"CI renders the documentation: every notebook converts to HTML with nbconvert (Quarto cannot be installed here)."
import re
import pytest
import nbformat
from nbconvert import HTMLExporter
from helpers import ROOT

NOTEBOOKS = sorted((ROOT / "nbs").glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_renders_to_html(nb, tmp_path):
    node = nbformat.read(nb, as_version=4)
    title = next(c.source for c in node.cells if c.cell_type == "markdown").splitlines()[0].lstrip("# ").replace("`", "").strip()
    html, _ = HTMLExporter().from_notebook_node(node)
    (tmp_path / f"{nb.stem}.html").write_text(html)
    assert title and title in re.sub(r"<[^>]+>", "", html) and "<pre" in html


def test_every_module_has_its_notebook():
    mods = {p.stem for p in (ROOT / "coretex").glob("*.py")} - {"__init__", "_modidx"}
    exported = {line.split()[-1] for nb in NOTEBOOKS for c in nbformat.read(nb, as_version=4).cells
                for line in c.source.splitlines() if line.startswith("#| default_exp")}
    assert mods == exported
