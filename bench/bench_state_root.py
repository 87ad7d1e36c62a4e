"""Full state roots per second vs incremental patch-root updates per second.

A full root hashes 1,024 leaves and 1,023 nodes; a patch of at most four cells needs at most 4 x 11
hashes along its paths. This measures both on the same random states and prints the ratio, and the cost of
one keccak call against pycryptodome (eth-hash's other backend).
Run: python bench/bench_state_root.py [--seconds S]
"""
import argparse, random
from _util import rate
from coretex.core.patch import apply_patch, make_patch
from coretex.core.state import WORD_COUNT, merkle_levels, state_root, updated_levels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    rng = random.Random(0)
    slot_word = lambda: rng.getrandbits(256) & ~(((1 << 13) - 1) << 51)  # a MemoryIndex cell with no reserved flag bit
    words = tuple(slot_word() if 32 <= i < 384 else 0 for i in range(WORD_COUNT))
    levels = merkle_levels(words)
    changes = [{rng.randrange(32, 384): slot_word() for _ in range(4)} for _ in range(64)]
    patches = [make_patch(levels[-1][0], c, 0x02) for c in changes]
    assert all(updated_levels(levels, c)[-1][0] == state_root({**dict(enumerate(words)), **c}.values()) for c in changes[:4])

    full = rate(lambda: state_root(words), args.seconds)
    it = iter(range(10**12))
    incr = rate(lambda: updated_levels(levels, changes[next(it) % 64]), args.seconds)
    it2 = iter(range(10**12))
    applied = rate(lambda: apply_patch(words, patches[next(it2) % 64], "r5", levels), args.seconds)
    print(f"full state root            {full:10.1f} roots/s")
    print(f"incremental root (4 cells) {incr:10.1f} updates/s   ratio incremental/full = {incr / full:.1f}x")
    print(f"apply_patch (decode+checks+incremental root) {applied:10.1f} patches/s   ratio vs full root = {applied / full:.1f}x")
    from Crypto.Hash import keccak as pycryptodome_keccak
    from coretex.core.keccak import keccak256
    node = b"\x01" * 64
    ours = rate(lambda: keccak256(node), args.seconds)
    peer = rate(lambda: pycryptodome_keccak.new(digest_bits=256, data=node).digest(), args.seconds)
    print(f"keccak256 of a 64-byte node: coretex (safe-pysha3) {1e6 / ours:.2f} us/call | pycryptodome {1e6 / peer:.2f} us/call "
          f"(ratio {ours / peer:.1f}x)")


if __name__ == "__main__":
    main()
