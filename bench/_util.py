"Timing helpers shared by the benchmarks."
import functools, importlib, sys, time
from collections import defaultdict


def peer_library(module: str):
    "A benchmark's peer library, imported; one line and exit status 1 when it is missing (the peers are the `bench` extra)."
    try: return importlib.import_module(module)
    except ImportError: sys.exit(f"{module} is not installed; the benchmarks' peers come with: pip install -e \".[bench]\"")


def rate(fn, seconds: float) -> float:
    "Calls of fn per second over about `seconds` (at least one call)."
    n, t0 = 0, time.perf_counter()
    while True:
        fn(); n += 1
        el = time.perf_counter() - t0
        if el >= seconds: return n / el


def timed(fn):
    "(result, seconds) of one call."
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


class StageTimer:
    "Wraps functions so each call's time goes to a named stage, counted exclusively (a stage inside another is not counted twice)."
    def __init__(self):
        self.spent, self._stack = defaultdict(float), []

    def wrap(self, stage, fn):
        @functools.wraps(fn)
        def wrapped(*a, **k):
            t0 = time.perf_counter()
            self._stack.append(0.0)
            try: return fn(*a, **k)
            finally:
                el = time.perf_counter() - t0
                self.spent[stage] += el - self._stack.pop()
                if self._stack: self._stack[-1] += el
        return wrapped

    def report(self, total: float, other: str = "other") -> str:
        "Each stage's seconds and share of `total`, largest first, then the rest."
        w = max([len(s) for s in self.spent] + [len(other)])
        lines = [f"  {s:<{w}} {t:7.3f}s  {100 * t / total:5.1f}%" for s, t in sorted(self.spent.items(), key=lambda kv: -kv[1])]
        return "\n".join(lines + [f"  {other:<{w}} {total - sum(self.spent.values()):7.3f}s"])
