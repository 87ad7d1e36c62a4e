"""The package's folders are its layers: no import circle, no import that runs back up, no long module without its
reason written in its notebook, and every module path of coretex 0.1 still imports, as its new home, with a warning."""
import importlib, json, re, sys, warnings
from pathlib import Path
import pytest
import coretex
from coretex.layers import LAYERS, circles, import_graph, layer_of, upward_imports, written_lines

ROOT = Path(__file__).resolve().parents[1]
LONG_LINES = 600
LONG_MODULES = {}   # module -> the notebook saying why it is longer (none now: the evaluator and loosh are rooms)


def test_no_circle_and_no_import_runs_back_up():
    graph = import_graph()
    assert len(graph) > 40
    assert circles(graph) == []
    assert upward_imports(graph) == []


def test_every_module_belongs_to_a_layer_and_every_layer_to_a_folder_or_a_top_module():
    graph = import_graph()
    assert {layer_of(m) for m in graph} == set(LAYERS)
    for layer in ("core", "toolkit", "evaluator", "economy", "network", "consensus", "beliefs", "cli"):
        assert (ROOT / "coretex" / layer / "__init__.py").exists(), layer


def test_subpackages_say_what_they_own_and_may_import():
    for layer in ("core", "toolkit", "evaluator", "economy", "network", "consensus", "beliefs"):
        doc = importlib.import_module(f"coretex.{layer}").__doc__
        assert doc and len(doc.split()) > 15, layer


def test_a_module_over_600_lines_is_one_whose_notebook_says_why():
    long = {".".join(p.relative_to(ROOT).with_suffix("").parts): n
            for p in (ROOT / "coretex").rglob("*.py") if p.name != "_modidx.py" and (n := written_lines(p.read_text())) > LONG_LINES}
    assert set(long) <= set(LONG_MODULES), long
    for module, nb in LONG_MODULES.items():
        cells = json.loads((ROOT / "nbs" / f"{nb}.ipynb").read_text())["cells"]
        assert any(c["cell_type"] == "markdown" and "".join(c["source"]).startswith("### Why one long module") for c in cells), nb


def test_no_library_module_imports_the_command_line():
    graph = import_graph()
    assert [m for m, deps in graph.items() if layer_of(m) != "cli" and any(layer_of(d) == "cli" for d in deps)] == []


@pytest.mark.parametrize("old", sorted(coretex.MOVED))
def test_an_old_module_path_imports_its_new_home_with_a_warning(old):
    new = f"coretex.{coretex.MOVED[old]}"
    sys.modules.pop(f"coretex.{old}", None)
    with pytest.warns(DeprecationWarning, match=re.escape(f"coretex.{old} is now {new}")):
        module = importlib.import_module(f"coretex.{old}")
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new


def test_an_old_from_import_gives_the_same_objects():
    sys.modules.pop("coretex.patch", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from coretex.patch import make_patch, PatchError
    from coretex.core.patch import make_patch as new_make_patch, PatchError as NewPatchError
    assert (make_patch, PatchError) == (new_make_patch, NewPatchError)


@pytest.mark.parametrize("package,home", [("consensus", "seed_rules"), ("beliefs", "store")])
def test_a_module_that_became_a_package_gives_its_old_names(package, home):
    pkg, mod = importlib.import_module(f"coretex.{package}"), importlib.import_module(f"coretex.{package}.{home}")
    assert pkg.__all__ == mod.__all__ and len(pkg.__all__) > 10
    assert all(getattr(pkg, n) is getattr(mod, n) for n in mod.__all__)
