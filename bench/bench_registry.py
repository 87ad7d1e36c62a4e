"""A registry catch-up: coretex's replay of the deployed registry's logs against the reference's, on the same logs.

Logs: EPOCHS generated epochs from genesis (default 1,000), each with 0-4 advances (random valid SLOT_REPLACE patches
of 1-4 MemoryIndex cells, `coretex.network.registry.random_patch`) and its finalization, ABI-encoded as the registry
emits them (`coretex.economy.registry.state_advanced_log` / `epoch_finalized_log`), with pins that rotate every 7
epochs, increasing block numbers and one registry address; policy-atoms mode on, pins looked up per epoch.

coretex replays them three ways, each timed: as the reference does (`replay_registry_logs`, one call over every
log); strictly (`strict=True`, one call); and as `coretex validator sync` catches up (`57_follower`: decoded strictly,
replayed epoch by epoch in windows of 9,500 blocks, each window resuming from the last: `replay_window`). The peer
is the reference's `replayCoreTexFromLogs`, run by the command given with --reference-cmd (this script never fetches
or builds it), fed the same logs (the first --reference-epochs epochs of them: its cost is linear and a full run
takes minutes) as one job. The command reads one JSON object per line on stdin and writes one per line on stdout:

  in:  {"id", "parent_state": {} (sparse words, here genesis), "logs": [eth_getLogs objects],
        "opts": {"policyAtomsMode": true}, "pins_table": {"<epoch>": {core_version_hash, corpus_root, active_frontier_root, baseline_manifest_hash}}}
  out: {"id", "ms": milliseconds inside the replay call, "result": {ok, code, message, transitions, reproduced_final_root,
        on_chain_final_root}} or {"id", "ms", "error": {name, message}}

Printed: seconds and logs per second for each, the reference's on its prefix beside coretex's on the same prefix,
their ratio, and whether every replay reached the generated final root.
Run: python bench/bench_registry.py [--epochs 1000] [--reference-cmd "node replay-driver.mjs DIST"] [--reference-epochs 50]
"""
import argparse, json, random, shlex, shutil, subprocess, sys, time
from coretex.core.keccak import keccak256, to_hex
from coretex.core.patch import decode_patch, patch_hash, prepare
from coretex.core.state import GENESIS
from coretex.economy.registry import (Pins, decode_all, epoch_finalized_log, replay_registry_logs, replay_window,
                                      state_advanced_log)
from coretex.network.registry import LOG_CHUNK, made_up_pins, random_patch

ADDRESS = "0x" + "79" * 20


def epoch_logs(rng: random.Random, state, epoch: int, block: int) -> tuple:
    "(logs, end state, next block) of one epoch: 0-4 advances, then its finalization."
    pins, logs, start = made_up_pins(epoch).as_dict(), [], to_hex(state.root)
    for i in range(rng.randint(0, 4)):
        raw, child = random_patch(rng, state, rng.randrange(1, 10**6))
        a = {"epoch": epoch, "transition_index": i, "miner": "0x" + rng.getrandbits(160).to_bytes(20, "big").hex(),
             "parent_state_root": to_hex(state.root), "new_state_root": to_hex(child.root), "patch_hash": to_hex(patch_hash(raw)),
             "eval_report_hash": to_hex(keccak256(raw)), **{k: pins[k] for k in ("core_version_hash", "corpus_root", "active_frontier_root")},
             "improvement_credits": rng.randrange(10**6), "word_count": decode_patch(raw).word_count, "compact_patch_bytes": raw}
        logs.append(state_advanced_log(a, ADDRESS, block, rng.randrange(50))); block += rng.randint(1, 5); state = child
    f = {"epoch": epoch, "parent_state_root": start, "final_state_root": to_hex(state.root), **pins,
         "patch_set_root": to_hex(keccak256(b"set", epoch.to_bytes(8, "big"))), "score_root": to_hex(keccak256(b"score", epoch.to_bytes(8, "big")))}
    logs.append(epoch_finalized_log(f, ADDRESS, block))
    return logs, state, block + rng.randint(20, 60)


def generate(epochs: int, seed: int) -> tuple:
    "(logs, per-epoch pins table, final root after each epoch) of `epochs` epochs from genesis."
    rng, state, block, logs, roots = random.Random(seed), prepare(GENESIS), 1_000, [], []
    for e in range(1, epochs + 1):
        got, state, block = epoch_logs(rng, state, e, block)
        logs += got; roots.append(to_hex(state.root))
    return logs, {str(e): made_up_pins(e).as_dict() for e in range(1, epochs + 1)}, roots


def follower_catch_up(logs: list, table: dict) -> tuple:
    "(seconds, root) of the follower's replay: strict decoding, windows of LOG_CHUNK blocks, each resuming from the last."
    t0 = time.perf_counter()
    state, nxt, starts, pins = prepare(GENESIS), {}, {}, Pins({}, lambda e: table.get(str(e)))
    blocks = [int(l["blockNumber"], 16) for l in logs]
    for a in range(min(blocks), max(blocks) + 1, LOG_CHUNK):
        window = [l for l, b in zip(logs, blocks) if a <= b < a + LOG_CHUNK]
        w = replay_window(state, *decode_all(window, strict=True, address=ADDRESS), pins, "r5", nxt, starts)
        if not w.result.ok: raise SystemExit(f"the catch-up failed: {w.result}")
        state, nxt, starts = w.state, w.next_index, w.start_roots
    return time.perf_counter() - t0, to_hex(state.root)


def timed_replay(logs: list, table: dict, strict: bool) -> tuple:
    "(seconds, result) of one replay_registry_logs call over `logs`."
    t0 = time.perf_counter()
    r = replay_registry_logs(GENESIS, logs, expected_pins_for_epoch=lambda e: table.get(str(e)), policy_atoms_mode=True, strict=strict)
    return time.perf_counter() - t0, r


def run_peer(cmd: str, logs: list, table: dict) -> dict:
    "The peer's answer to one job over `logs`, with the wall seconds of the whole exchange."
    job = {"id": "catch-up", "parent_state": {}, "logs": logs, "opts": {"policyAtomsMode": True}, "pins_table": table}
    t0 = time.perf_counter()
    p = subprocess.run(shlex.split(cmd), input=json.dumps(job) + "\n", capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0 or not p.stdout.strip(): raise SystemExit(f"--reference-cmd failed ({p.returncode}): {p.stderr[-400:]}")
    return {**json.loads(p.stdout.splitlines()[0]), "wall": wall}


def line(name: str, seconds: float, n: int, root_ok: bool) -> str:
    return f"{name:52} {seconds:9.3f} s  {n / seconds:10.0f} logs/s  final root {'ok' if root_ok else 'WRONG'}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=1000, help="epochs of generated logs (default 1000)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated logs (default 1)")
    ap.add_argument("--reference-cmd", help="the peer: a command speaking the JSON-lines contract described above")
    ap.add_argument("--reference-epochs", type=int, default=50, help="epochs of the logs the peer replays (default 50; 0: all)")
    a = ap.parse_args()
    if a.reference_cmd is not None and not (shlex.split(a.reference_cmd) and shutil.which(shlex.split(a.reference_cmd)[0])):
        ap.error(f"--reference-cmd: no such command: {a.reference_cmd!r}")
    t0 = time.perf_counter()
    logs, table, roots = generate(a.epochs, a.seed)
    n = len(logs)
    print(f"{a.epochs} epochs, {n} logs ({n - a.epochs} advances) generated in {time.perf_counter() - t0:.1f} s; from genesis, "
          f"per-epoch pins, policy atoms on")
    s, r = timed_replay(logs, table, strict=False); print(line("coretex, as the reference (one call)", s, n, r.ok and r.reproduced_final_root == roots[-1]))
    s, r = timed_replay(logs, table, strict=True); print(line("coretex, strict (one call)", s, n, r.ok and r.reproduced_final_root == roots[-1]))
    s, root = follower_catch_up(logs, table); print(line(f"coretex, the follower's catch-up ({LOG_CHUNK}-block windows)", s, n, root == roots[-1]))
    if not a.reference_cmd:
        print("peer: not given (--reference-cmd); no ratio"); return
    k = a.reference_epochs or a.epochs
    prefix = logs[:sum(1 for l in logs if int(l["topics"][1], 16) <= k)]
    mine, mr = timed_replay(prefix, table, strict=False)
    ans = run_peer(a.reference_cmd, prefix, table)
    res = ans.get("result") or {}
    theirs = ans["ms"] / 1000
    print(f"on the first {k} epochs ({len(prefix)} logs):")
    print(line("  coretex, as the reference (one call)", mine, len(prefix), mr.ok and mr.reproduced_final_root == roots[k - 1]))
    print(line("  reference replayCoreTexFromLogs (in the call)", theirs, len(prefix), res.get("ok") is True and res.get("reproduced_final_root") == roots[k - 1])
          + f"  (wall {ans['wall']:.1f} s with node start and JSON)" + (f"  error {ans['error']}" if "error" in ans else ""))
    print(f"  ratio: coretex {theirs / mine:.0f}x the reference's logs/s; same final root: {res.get('reproduced_final_root') == mr.reproduced_final_root}")


if __name__ == "__main__":
    main()
