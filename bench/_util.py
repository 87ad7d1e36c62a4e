"Timing helpers shared by the benchmarks."
import time


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
