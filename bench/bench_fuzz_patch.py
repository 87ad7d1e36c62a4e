"""Seeded random and mutated (state, patch) pairs through every public patch entry point; untyped errors must be 0.

Each case goes through decode_patch, apply_to in r4 and r5, and patch_apply_result (the `coretex patch-apply`
command's code path) in r4 and r5 (`coretex.core.fuzz.drive`). The run prints cases/s and the count of untyped
errors, then times r5 apply on the first --peer-cases cases against a named peer measured in the same run:
`apply_patch` without the parent's levels, which rebuilds the parent's Merkle root and rescans all its cells
for every patch, as the reference's applyPatch does, and checks that both give the same answers.
Run: python bench/bench_fuzz_patch.py [--cases N] [--seed S] [--peer-cases M]
"""
import argparse, time
from collections import Counter
from itertools import islice
from coretex.core.fuzz import ENTRY_POINTS, drive, fuzz_cases
from coretex.core.patch import PatchError, apply_patch, apply_to

BATCH = 20_000


def answers(cases, apply) -> tuple:
    "(outcomes, seconds) of `apply(parent, data)` on every case: a root, or a refusal's code."
    out, t0 = [], time.perf_counter()
    for parent, data in cases:
        try: out.append(apply(parent, data).root)
        except PatchError as e: out.append(e.code)
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=100_000, help="cases to drive (default 100,000)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--peer-cases", type=int, default=3_000, help="cases timed against the full-rebuild peer")
    args = ap.parse_args()
    stream, done, driving, escaped = fuzz_cases(args.seed, args.cases), 0, 0.0, []
    while done < args.cases:
        batch = list(islice(stream, BATCH))
        t0 = time.perf_counter()
        for parent, data in batch: escaped += drive(parent, data)
        driving += time.perf_counter() - t0
        done += len(batch)
    print(f"cases {done:,} (seed {args.seed}); entry points: {', '.join(ENTRY_POINTS)}")
    print(f"driven in {driving:.1f}s: {done / driving:,.0f} cases/s ({len(ENTRY_POINTS) * done / driving:,.0f} entry-point calls/s)")
    print(f"untyped errors: {len(escaped)}" + "".join(f"\n  {e}" for e in escaped[:10]))

    sample = list(fuzz_cases(args.seed, args.peer_cases))
    ours, t_ours = answers(sample, lambda parent, data: apply_to(parent, data, "r5"))
    peer, t_peer = answers(sample, lambda parent, data: apply_patch(parent.words, data, "r5"))
    codes = Counter(a if isinstance(a, str) else "ok" for a in ours)
    print(f"r5 outcomes on the first {len(sample):,} cases: {dict(sorted(codes.items()))}; same answers as the peer: {ours == peer}")
    print(f"apply_to r5, parent prepared once        {len(sample) / t_ours:10,.0f} patches/s")
    print(f"peer: apply_patch, full rebuild per patch {len(sample) / t_peer:10,.0f} patches/s   ratio = {t_peer / t_ours:.1f}x")
    return 1 if escaped or ours != peer else 0


if __name__ == "__main__":
    raise SystemExit(main())
