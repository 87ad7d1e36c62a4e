"""The reference's economy vectors (shared/vectors/coretex/economy), decoded for the tests, and the comparison
its README prescribes: ints equal decimal strings, hex compares lower-case, bytes equal their hex, a result may be a
dict, a dataclass or an object, and extra keys on the Python side are allowed.

Import by name (`from economy_vectors import cases, decode, agree, raises_as`); tests that use it put
`pytestmark = VECTORS_PRESENT` so they skip cleanly when ../shared is not beside the checkout. `params`/`check` make
one pytest item per case; `all_agree` runs a function's cases in one item (far less overhead for thousands)."""
import dataclasses, enum, gzip, json, re
from functools import lru_cache
from pathlib import Path
import pytest

VECTORS = Path(__file__).resolve().parents[1].parent / "shared/vectors/coretex/economy/vectors.json.gz"
VECTORS_PRESENT = pytest.mark.skipif(not VECTORS.exists(), reason="../shared/vectors is not beside the checkout")
STATE_ARGS = {"parent_state", "current", "genesis_state"}  # args that name one of the file's states
_DECIMAL = re.compile(r"-?[0-9]+")


@lru_cache(None)
def data() -> dict:
    "The whole vectors file, read once."
    return json.load(gzip.open(VECTORS))


def cases(name: str) -> list:
    "The cases of one function (or `difficulty_trajectory`, `constants`)."
    return data()["functions"][name]


def params(name: str):
    "pytest parameters for every case of `name`, with the case ids as test ids."
    return pytest.mark.parametrize("case", cases(name), ids=[c["id"] for c in cases(name)])


@lru_cache(None)
def state(name: str) -> tuple:
    "A named state of the file as 1024 ints (its sparse map filled with zeros)."
    words = [0] * 1024
    for i, w in data()["states"][name].items(): words[int(i)] = int(w, 16)
    return tuple(words)


@lru_cache(None)
def _state_bytes(name: str) -> bytes:
    return b"".join(w.to_bytes(32, "big") for w in state(name))


def decode(v, key: str | None = None):
    "An args value as Python: tagged bigints/numbers/state bytes decoded, state names under STATE_ARGS made words."
    if isinstance(v, dict):
        if "$bigint" in v: return int(v["$bigint"])
        if "$number" in v: return float(v["$number"])
        if "$state_bytes" in v: return _state_bytes(v["$state_bytes"])[:v.get("length")]
        return {k: decode(x, k) for k, x in v.items()}
    if isinstance(v, list): return [decode(x) for x in v]
    if key in STATE_ARGS and isinstance(v, str) and v in data()["states"]: return state(v)
    return v


def args(case: dict) -> dict:
    "A case's keyword arguments, decoded."
    return decode(case["args"])


def _field(result, key):
    if isinstance(result, dict): return result[key]
    return getattr(result, key)


def diff(result, expect, path: str = "$") -> str | None:
    "Where `result` departs from `expect` under the README's rules (None when they agree)."
    if isinstance(result, enum.Enum): result = result.value
    if expect is None:
        return None if result is None else f"{path}: expected null, got {result!r}"
    if isinstance(expect, bool):
        return None if result is expect or (isinstance(result, bool) and result == expect) else \
            f"{path}: expected {expect}, got {result!r}"
    if isinstance(expect, str):
        if isinstance(result, (bytes, bytearray)): result = "0x" + bytes(result).hex()
        if isinstance(result, int) and not isinstance(result, bool) and _DECIMAL.fullmatch(expect):
            return None if result == int(expect) else f"{path}: expected {expect}, got {result}"
        if isinstance(result, str) and expect.startswith("0x") and result.lower() == expect.lower(): return None
        return None if result == expect else f"{path}: expected {expect!r}, got {result!r}"
    if isinstance(expect, (int, float)):
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            return f"{path}: expected the number {expect}, got {result!r}"
        return None if result == expect else f"{path}: expected {expect}, got {result}"
    if isinstance(expect, list):
        if isinstance(result, (str, bytes, dict)) or not hasattr(result, "__len__"):
            return f"{path}: expected a list, got {type(result).__name__}"
        if len(result) != len(expect): return f"{path}: expected {len(expect)} items, got {len(result)}"
        return next((d for i, (r, e) in enumerate(zip(result, expect)) if (d := diff(r, e, f"{path}[{i}]"))), None)
    if isinstance(expect, dict):
        if not (isinstance(result, dict) or dataclasses.is_dataclass(result) or hasattr(result, "__dict__")):
            return f"{path}: expected a record, got {type(result).__name__}"
        for k, e in expect.items():
            try: r = _field(result, k)
            except (KeyError, AttributeError): return f"{path}: missing {k!r}"
            if (d := diff(r, e, f"{path}.{k}")): return d
        return None
    return f"{path}: unknown expectation {expect!r}"


def agree(result, expect):
    "Assert `result` agrees with `expect`, naming the first place it does not."
    assert (d := diff(result, expect)) is None, d


def raises_as(error: dict):
    "pytest.raises for a recorded JS error: RangeError/Error → ValueError; TypeError → TypeError or ValueError."
    return pytest.raises((TypeError, ValueError) if error["name"] == "TypeError" else ValueError)


def check(fn, case: dict, **extra):
    "Call `fn(**args, **extra)` and check it against the case's expectation or its recorded error."
    kw = {**args(case), **extra}
    if "error" in case:
        with raises_as(case["error"]): fn(**kw)
    else: agree(fn(**kw), case["expect"])


def disagreement(fn, case: dict, **extra) -> str | None:
    "Why `fn(**args, **extra)` departs from the case (expected output or recorded error); None when it agrees."
    kw = {**args(case), **extra}
    allowed = (TypeError, ValueError) if "error" in case and case["error"]["name"] == "TypeError" else ValueError
    try: out = fn(**kw)
    except allowed as e:
        return None if "error" in case else f"raised {type(e).__name__}: {e}"
    except Exception as e: return f"raised {type(e).__name__}: {e}"
    if "error" in case: return f"returned {out!r} where the reference raised {case['error']['name']}"
    return diff(out, case["expect"])


def all_agree(name: str, fn, extra=lambda case: {}):
    "Assert every case of `name` agrees; the message counts and names the first few that do not."
    bad = [(c["id"], why) for c in cases(name) if (why := disagreement(fn, c, **extra(c)))]
    assert not bad, f"{len(bad)}/{len(cases(name))} cases of {name} disagree, first: {bad[:3]}"
