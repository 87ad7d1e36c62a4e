"""help() explains every parameter, and its default prints readably: over the callables `from coretex import ...` gives and those of each layer's
`__all__`, a parameter counts as described when the docstring's Args (or a class's Attributes) section gives it a
non-empty explanation (the trailing comment on its line in the notebook, turned into the docstring at export by
`coretex.docs.parameter_docs`), not merely its name and type. Defaults print readably (no `<function ... at 0x...>`)."""
import enum, importlib, inspect, re
import pytest
from helpers import ROOT

LAYERS = ["core", "toolkit", "evaluator", "economy", "network", "consensus", "beliefs", "demo", "simulate", "docs", "layers"]

_ROW = re.compile(r"^\s{4,}(\*{0,2}\w+)(?: \(([^)]*)\))?:?(.*)$")


def explained(doc: str) -> dict:
    "name -> its explanation, from a docstring's Args and Attributes sections (`    name (type, default X): text`)."
    out, inside = {}, False
    for line in (doc or "").splitlines():
        if re.match(r"^\s*(Args|Attributes):\s*$", line): inside = True; continue
        if inside and not line.strip(): inside = False; continue
        if inside and (m := _ROW.match(line)): out[m.group(1).lstrip("*")] = m.group(3).strip()
    return out


def parameters(obj) -> list:
    "The parameters a caller passes: a function's, or a class's constructor's; self, cls and *args/**kwargs of a wrapper left out."
    if isinstance(obj, type) and issubclass(obj, enum.Enum): return []   # members are values, not parameters a caller passes
    try: sig = inspect.signature(obj)
    except (TypeError, ValueError): return []
    return [p for p in sig.parameters.values() if p.name not in ("self", "cls")
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def public_callables() -> dict:
    "qualified name -> object, for `coretex`'s names and each layer's `__all__`, each object once under its own module."
    import coretex
    seen = {}
    spaces = [(coretex, coretex.__all__)] + [(m := importlib.import_module(f"coretex.{l}"), getattr(m, "__all__", [])) for l in LAYERS]
    for mod, names in spaces:
        for n in names:
            obj = getattr(mod, n)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or not getattr(obj, "__module__", "").startswith("coretex"): continue
            seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return seen


def undescribed_by_module() -> dict:
    "module -> ['fn(param)', ...] for each public parameter without an explanation."
    out = {}
    for qual, obj in public_callables().items():
        said = explained(obj.__doc__ if inspect.isfunction(obj) else obj.__dict__.get("__doc__") or "")
        if inspect.isclass(obj) and "__init__" in obj.__dict__: said = {**explained(obj.__init__.__doc__), **said}
        for p in parameters(obj):
            if not said.get(p.name): out.setdefault(obj.__module__, []).append(f"{obj.__qualname__}({p.name})")
            if p.default is not p.empty and re.search(r" at 0x[0-9a-f]+>", repr(p.default)):   # help() would print an address
                out.setdefault(obj.__module__, []).append(f"{obj.__qualname__}({p.name}={p.default!r}: default prints unreadably)")
    return out


def test_explained_reads_what_parameter_docs_writes():
    from coretex.docs import with_parameter_docs
    ns = {}
    exec(with_parameter_docs('def tip(amount: int,   # wei sent\n        to="0x0"):\n    "Send a tip."\n'), ns)
    assert explained(ns["tip"].__doc__) == {"amount": "wei sent", "to": ""}   # `to` is listed, not described


def test_the_names_a_researcher_reaches_for_first():
    import coretex, coretex.simulate
    from coretex import ndcg_at_k, rule_set, BeliefStore, Evaluator, evaluate_patch, evaluate_challenge, run_suite
    from coretex.evaluator.metrics import ndcg_at_k as home
    assert ndcg_at_k is home and callable(rule_set) and inspect.isclass(BeliefStore)
    # `coretex.simulate` is the simulator's package (Python puts the subpackage there once it is imported, so a
    # function of that name would be replaced behind the reader's back); its function is coretex.simulate.simulate
    from coretex import simulate
    assert inspect.ismodule(simulate) and inspect.isfunction(simulate.simulate)
    assert "validators" in coretex.__doc__ and "CoreTex" in coretex.__doc__   # what the package does, first


_ALL = None


def _undescribed():
    global _ALL
    if _ALL is None: _ALL = undescribed_by_module()
    return _ALL


def modules() -> list:
    from coretex.docs import api_modules, site_notebooks
    return sorted({*api_modules(site_notebooks(ROOT / "nbs")), "coretex"} - {"coretex.docs.cli"})


@pytest.mark.parametrize("module", modules())
def test_every_public_parameter_is_described(module):
    missing = _undescribed().get(module, [])
    assert missing == [], (f"{len(missing)} parameters of {module} have no explanation (a trailing comment on the parameter's line) "
                           f"or a default that prints as an address: {missing}")
