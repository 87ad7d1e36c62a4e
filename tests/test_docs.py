"The notebooks as documentation, checked without a browser: stored outputs, docstrings, the top-level API and its import time."
import importlib, inspect, json, re, subprocess, sys, time
import pytest
import nbformat
from helpers import ROOT

NOTEBOOKS = sorted((ROOT / "nbs").glob("[0-9]*.ipynb"))


def shows_something(src: str) -> bool:
    "A cell that prints, displays or draws, or whose last line is a bare name (the notebook shows its value)."
    lines = src.strip().splitlines()
    return bool(re.search(r"^\s*(print|display)\(|plt\.show\(", src, re.M)
                or lines and re.fullmatch(r"[A-Za-z_][\w.]*(\[[^\]]*\])?", lines[-1].strip()))


@pytest.mark.parametrize("nb", [ROOT / "nbs" / "index.ipynb", *NOTEBOOKS], ids=lambda p: p.stem)
def test_every_cell_that_shows_something_has_its_output(nb):
    cells = json.loads(nb.read_text())["cells"]
    silent = ["".join(c["source"])[:80] for c in cells if c["cell_type"] == "code" and not c.get("outputs")
              and not "".join(c["source"]).lstrip().startswith("#| export") and shows_something("".join(c["source"]))]
    assert not silent, f"execute it in place: jupyter nbconvert --to notebook --execute --inplace {nb.name}; nbdev-clean\n{silent}"


@pytest.mark.parametrize("nb", [ROOT / "nbs" / "index.ipynb", *NOTEBOOKS], ids=lambda p: p.stem)
def test_every_figure_says_what_it_shows(nb):
    "A cell that draws carries a `#| fig-alt: ...` line: the site's alt text for its figure, what a screen reader says."
    cells = json.loads(nb.read_text())["cells"]
    draws = ["".join(c["source"])[:80] for c in cells if c["cell_type"] == "code"
             and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))
             and not re.search(r"^#\|\s*fig-alt:\s*\S", "".join(c["source"]), re.M)]
    assert not draws, draws


def test_shows_something_reads_cells_as_a_reader_would():
    assert shows_something("x = 1\nprint(x)") and shows_something("rows = f()\nrows[0]") and shows_something("fig.tight_layout(); plt.show()")
    assert not shows_something("test_eq(f(1), 2)") and not shows_something("x = f()")


def test_every_module_has_its_notebook():
    from coretex.docs import module_of
    from coretex.layers import module_name
    mods = {module_name(p, ROOT / "coretex") for p in (ROOT / "coretex").rglob("*.py")} - {"coretex._modidx"}
    exported = [module_of(nb) for nb in NOTEBOOKS]
    assert sorted(mods) == sorted(exported)   # each module its own notebook, once


def test_every_public_function_and_class_has_a_docstring():
    from coretex.docs import api_modules
    missing = []
    for m in api_modules(NOTEBOOKS):
        mod = importlib.import_module(m)
        for n in mod.__all__:
            obj = getattr(mod, n)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)): continue
            doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
            if not doc or doc.startswith(f"{n}("): missing.append(f"{m}.{n}")   # a dataclass's generated "X(a, b)" is no docstring
    assert not missing, missing


def test_from_coretex_import_gives_each_module_s_own_objects():
    import coretex
    from coretex.evaluator.evaluate import Evaluator
    from coretex.core.state import GENESIS
    from coretex import Evaluator as E, GENESIS as G, evaluate_patch, state_root, apply_patch
    assert E is Evaluator and G is GENESIS and callable(evaluate_patch) and callable(state_root) and callable(apply_patch)
    assert set(coretex.__all__) <= set(dir(coretex)) and coretex.__version__
    with pytest.raises(AttributeError): coretex.no_such_name


def test_import_coretex_is_quick_and_loads_no_evaluator():
    probe = "import sys, coretex; print(sorted(m for m in ('torch', 'web3', 'transformers', 'coretex.evaluator.evaluate') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout
    seconds = []
    for _ in range(3):
        t = time.perf_counter(); subprocess.run([sys.executable, "-c", "import coretex"], check=True); seconds.append(time.perf_counter() - t)
    assert min(seconds) < 1.0, f"import coretex took {min(seconds):.2f} s (the contract is under 1 s)"


def public_callables():
    "Every function and class of coretex's public API: `coretex.__all__`, each layer's and each documented module's."
    import importlib.util
    from coretex.docs import api_modules, site_notebooks
    from coretex.layers import LAYERS
    modules = ["coretex", *(f"coretex.{layer}" for layer in LAYERS if importlib.util.find_spec(f"coretex.{layer}")),
               *api_modules(site_notebooks(ROOT / "nbs"))]
    for m in dict.fromkeys(modules):
        mod = importlib.import_module(m)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__.startswith("coretex"): yield f"{m}.{name}", obj


def test_help_names_every_parameter_of_the_public_api():
    import enum
    seen, silent = 0, {}
    for name, obj in public_callables():
        if inspect.isclass(obj) and (issubclass(obj, enum.Enum) or getattr(obj, "_is_protocol", False)): continue   # called by value, or never
        try: params = [p for p in inspect.signature(obj).parameters if p not in ("self", "cls")]
        except (TypeError, ValueError): continue
        doc = (obj.__doc__ or "") + (obj.__init__.__doc__ or "" if inspect.isclass(obj) and "__init__" in vars(obj) else "")
        seen += 1
        if missing := [p for p in params if not re.search(rf"(^|[\s*]){re.escape(p)}\b", doc)]: silent[name] = missing
    print(f"{seen} public callables, {len(silent)} with a parameter their docstring does not name")   # `pytest -n 0 -s -k help`
    assert seen > 500 and silent == {}, silent


@pytest.mark.parametrize("nb", [ROOT / "nbs" / "index.ipynb", *NOTEBOOKS], ids=lambda p: p.stem)
def test_the_code_a_reader_sees_is_formatted_to_the_column(nb, tmp_path):
    import shutil
    from coretex.docs import format_shown_cells
    shutil.copy(nb, tmp_path / nb.name)
    assert format_shown_cells(tmp_path / nb.name) == 0, f"{nb.name}: run coretex.docs.format_shown_cells on it"
