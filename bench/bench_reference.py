"""coretex's evaluator against the reference's, per patch, on the same generated patches: seconds per patch (caches on,
caches off, the reference), verdict agreement, where coretex's time goes, and how many queries each kind of patch
can change.

Patches: N deterministic (parent, patch, seed inputs) jobs on the differential vectors' corpus and parent states
(../shared/vectors/coretex/evaluator), a mix an epoch might see: the vectors' own patches on their parents, one
abstention policy atom (80_demo `abstention_patch`), an anchored memory slot for a real corpus event, and random
region-shaped writes (14a_fuzz `region_word`) of every patch type the r5 pipeline takes; every patch is one that
applyPatch accepts. Each job has its own blockhash, so its Gate and Confirm packs are drawn anew.

Each job is evaluated three times, one after the other, before the next job: by coretex with one Evaluator whose
caches are on (a validator's steady state), by coretex with `EvalCache.none()` (nothing kept between patches;
reports checked byte-identical to the cached ones; only the first --uncached jobs), and by the peer. The order of
the three rotates from job to job, so a change in the machine's load falls on all three alike. The peer is the
reference's evaluator, run by the command given with --reference-cmd (this script never fetches or builds it). The
command reads one JSON object per line on stdin and writes one per line on stdout, in order:

  in:  {"id", "parentState": hex of the 32,768 state bytes, "parentRoot": 0x-hex, "patch": 0x-hex of the patch bytes,
        "epochSecret": 0x-hex, "blockhash": 0x-hex, "epochId": int}
  out: {"id", "outcome": "REJECT"|"SCREENER_PASS"|"STATE_ADVANCE", "code": rejection code or null,
        "innerRejectionReason": the failing pack's reason or null,
        "packs": [{"which": "gate"|"confirm", "accepted", "reason", "deltaPpm", "beforePpm", "afterPpm"}, ...] (packs scored),
        "elapsed": wall seconds the command spent on this job, "cpu": its CPU seconds (optional)}

Times: wall seconds around each evaluation (coretex) or the peer's own "elapsed"; CPU seconds (process time) beside
them when the peer reports "cpu". Ratios are means over the same patches: the reference's over coretex's.

Scoring: the vectors' profile, thresholds (screener 375 ppm, state advance 750 ppm), deterministic bi-encoder and
token-overlap reranker. Agreement per patch: outcome, reason, and each scored pack's (accepted, reason, delta ppm,
before ppm, after ppm).

Then, apart from the timed runs (so their wrapping costs nothing above): a pass with caches off over the same jobs,
each evaluator stage wrapped with a timer (each counted exclusively), for the share of time per stage; and the
queries the dependency rule (35_evaluate) sends to the patched state, per kind of patch.
Run: python bench/bench_reference.py [--patches N] [--seed S] [--reference-cmd "node driver.mjs"] [--peer-budget SECONDS]
"""
import argparse, contextlib, gzip, importlib, json, os, random, shlex, shutil, subprocess, sys, time
from collections import defaultdict
from statistics import median
from _util import StageTimer
import coretex.evaluator.evaluate as E
ROOMS = [importlib.import_module(f"coretex.evaluator.{r}") for r in ("views", "stage1", "intents", "atoms", "lenses", "temporal",
         "candidates", "memory_ir", "ordering", "per_query", "dependency", "evaluate")]
from coretex.evaluator.cache import EvalCache
from coretex.evaluator.corpus import load_corpus
from coretex.demo import abstention_patch
from coretex.evaluator.evaluate import Evaluator, evaluate_patch
from coretex.core.fuzz import region_word
from coretex.core.keccak import from_hex, keccak256, to_hex
from coretex.core.layout import SLOT_FAMILIES, encode_memory_slot
from coretex.core.patch import TYPE_RANGES, PatchError, apply_patch, make_patch
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.core.state import state_bytes
from bench_evaluator_vectors import VEC, rebuild

KINDS = ("vectors", "abstention", "anchor", "random")
R5_TYPES = (0x02, 0x03, 0x04, 0x07, 0xFF)
RUNS = ("cached", "off", "reference")


def candidate(rng: random.Random, kind: str, parents: dict, cases: list, memory_events: list) -> tuple:
    "(parent root, patch bytes) of one candidate patch of `kind`; it may still be refused."
    if kind == "vectors":
        c = rng.choice(cases)
        return c["parent"], from_hex(c["patch"])
    root = rng.choice(list(parents))
    raw = from_hex(root)
    if kind == "abstention": return root, abstention_patch(raw, rng.randrange(32))
    if kind == "anchor":
        word = encode_memory_slot(rng.choice(memory_events), rng.choice(list(SLOT_FAMILIES.values())), revoked=rng.random() < .2)
        return root, make_patch(raw, {rng.randint(*TYPE_RANGES[0x02]): word}, 0x02)
    ptype = rng.choice(R5_TYPES)
    lo, hi = TYPE_RANGES.get(ptype, (32, 895))
    cells = {i: region_word(rng, i) for i in (rng.randint(lo, hi) for _ in range(rng.randint(1, 4)))}
    return root, make_patch(raw, cells, ptype)


def jobs(n: int, seed: int, parents: dict, cases: list, memory_events: list, secret: str, epoch_id: int) -> list:
    "`n` jobs, each a patch applyPatch accepts on its parent, with its own blockhash."
    rng, out = random.Random(seed), []
    while len(out) < n:
        kind = rng.choices(KINDS, weights=(3, 2, 2, 3))[0]
        root, data = candidate(rng, kind, parents, cases, memory_events)
        try: apply_patch(parents[root], data, "r5")
        except PatchError: continue   # a miner's refused patch never reaches the evaluator
        out.append({"id": f"p{len(out):04d}", "kind": kind, "parentRoot": root, "patch": to_hex(data), "epochSecret": secret,
                    "blockhash": to_hex(keccak256(f"bench_reference {seed} {len(out)}".encode())), "epochId": epoch_id})
    return out


def progress(done: int, total: int, t0: float) -> None:
    if done % 25 == 0 or done == total:
        print(f"{done}/{total} patches, {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)


def timed(fn) -> tuple:
    "(result, wall seconds, CPU seconds) of one call."
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def evaluate(ev: Evaluator, job: dict, words: dict):
    return evaluate_patch(ev, words[job["parentRoot"]], from_hex(job["patch"]), from_hex(job["blockhash"]), from_hex(job["epochSecret"]),
                          job["epochId"])


class Peer:
    "The reference's evaluator behind the JSON-lines contract, asked one job at a time."
    def __init__(self, cmd: str, budget: float):
        self.proc = subprocess.Popen(shlex.split(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.budget, self.spent, self.ended = budget, 0.0, None

    def ask(self, job: dict, state: bytes) -> dict|None:
        "The peer's answer to one job; None once it has stopped (why: `ended`)."
        if self.ended: return None
        if self.spent > self.budget:
            self.ended = f"stopped at --peer-budget {self.budget:.0f}s"
            return None
        t = time.perf_counter()
        try:
            self.proc.stdin.write(json.dumps({**{x: job[x] for x in ("id", "parentRoot", "patch", "epochSecret", "blockhash", "epochId")},
                                              "parentState": state.hex()}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError: line = ""
        self.spent += time.perf_counter() - t
        if not line:
            self.ended = f"the command ended (exit {self.proc.wait()})"
            return None
        try: return json.loads(line)
        except json.JSONDecodeError:
            self.ended = f"an answer is not a JSON line: {line[:80]!r}"
            return None

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError): self.proc.stdin.close()
        self.proc.wait()


def mine(rep) -> dict:
    "coretex's verdict in the peer's terms."
    return {"outcome": rep.outcome, "reason": rep.reason,
            "packs": [(p.which, p.accepted, p.reason, p.delta_ppm, p.before_ppm, p.after_ppm) for p in (rep.gate, rep.confirm) if p]}


def theirs(ans: dict) -> dict:
    "The peer's verdict in the same terms."
    return {"outcome": ans["outcome"], "reason": f"{ans['code']}:{ans['innerRejectionReason']}" if ans["outcome"] == "REJECT" else None,
            "packs": [(p["which"], p["accepted"], p["reason"], p["deltaPpm"], p["beforePpm"], p["afterPpm"]) for p in ans["packs"]]}


def run_all(todo: list, words: dict, corpus, uncached: int, peer: Peer|None) -> dict:
    "Every job through the cached evaluator, the uncached one (first `uncached`) and the peer, in rotating order: per run, per job id, (result, wall, cpu)."
    cached = Evaluator(corpus, reranker=TokenOverlapReranker())
    bare = Evaluator(corpus, reranker=TokenOverlapReranker(), cache=EvalCache.none())
    out, t0 = {r: {} for r in RUNS}, time.perf_counter()
    for k, j in enumerate(todo):
        for r in RUNS[k % 3:] + RUNS[:k % 3]:
            if r == "cached": out[r][j["id"]] = timed(lambda: evaluate(cached, j, words))
            elif r == "off" and k < uncached: out[r][j["id"]] = timed(lambda: evaluate(bare, j, words))
            elif r == "reference" and peer and (ans := peer.ask(j, state_bytes(words[j["parentRoot"]]))) is not None:
                out[r][j["id"]] = (ans, ans["elapsed"], ans.get("cpu"))
        progress(k + 1, len(todo), t0)
    return out


def profile_pass(todo: list, words: dict, corpus) -> tuple:
    "(StageTimer, total seconds, per job id (pack queries, affected queries)) of caches-off evaluation with every stage timed."
    ev = Evaluator(corpus, reranker=TokenOverlapReranker(), cache=EvalCache.none())
    st, saved = StageTimer(), {}
    def wrap(owner, name: str, stage: str):
        saved[(owner, name)] = getattr(owner, name)
        setattr(owner, name, st.wrap(stage, getattr(owner, name)))
    for name, stage in (("state_view", "view decode"), ("prepare", "Merkle tree + cell faults (parent)"), ("apply_to", "patch apply"),
                        ("draw_pack", "pack draw"), ("stage1_of", "stage 1 (fused scores, the list as a set)"),
                        ("route", "routing (admission rules, lens BFS)"), ("candidates", "candidates (pre-rank arrays)"),
                        ("reranker_cap", "reranker cap"), ("rendered_texts", "reranker inputs (Memory-IR, bridges)"),
                        ("inherited_scores", "score inheritance"), ("policy_bonuses", "policy bonuses"), ("top_order", "final top 20"),
                        ("view_changes", "dependency rule"), ("query_affected", "dependency rule"), ("score_orders", "vote + metrics")):
        for room in ROOMS:   # wrapped wherever a room calls it by name
            if name in vars(room): wrap(room, name, stage)
    wrap(ev, "rerank", "reranker (token overlap)")
    counts, flags = {}, []
    def counted(*a, **k):
        out = saved[(E, "affected_flags")](*a, **k)
        flags.append(out)
        return out
    saved[(E, "affected_flags")] = E.affected_flags
    E.affected_flags = counted
    t0 = time.perf_counter()
    try:
        for j in todo:
            flags.clear()
            evaluate(ev, j, words)
            counts[j["id"]] = (sum(map(len, flags)), sum(map(sum, flags)))
    finally:
        for (owner, name), fn in saved.items(): setattr(owner, name, fn)
    return st, time.perf_counter() - t0, counts


def per_patch(xs: list) -> str: return f"{sum(xs) / len(xs):8.4f} {median(xs):8.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--patches", type=int, default=200, help="jobs to generate and evaluate (default 200)")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--uncached", type=int, help="only the first M jobs are also evaluated with caches off (default: all)")
    ap.add_argument("--reference-cmd", help="the peer: a command speaking the JSON-lines contract described above")
    ap.add_argument("--peer-budget", type=float, default=float("inf"), help="stop feeding the peer after this many seconds")
    ap.add_argument("--each", action="store_true", help="also print one line per patch")
    a = ap.parse_args()
    a.uncached = a.patches if a.uncached is None else a.uncached
    if a.patches < 1 or not 0 <= a.uncached <= a.patches: ap.error("--patches must be >= 1 and --uncached within 0..--patches")
    if a.reference_cmd is not None and not (shlex.split(a.reference_cmd) and shutil.which(shlex.split(a.reference_cmd)[0])):
        ap.error(f"--reference-cmd: no such command: {a.reference_cmd!r}")
    corpus, cases = load_corpus(VEC / "corpus.json.gz"), json.load(gzip.open(VEC / "cases.json.gz"))
    words = rebuild(cases["states"])
    parents = {r: words[r] for r, s in cases["states"].items() if s["role"] == "parent"}
    memory_events = sorted(e["id"] for e in corpus.events if e["id"].startswith("mem_"))
    si = cases["seedInputs"]
    todo = jobs(a.patches, a.seed, parents, cases["cases"], memory_events, si["epochSecret"], si["epochId"])
    kinds = {k: sum(j["kind"] == k for j in todo) for k in KINDS}
    load0 = os.getloadavg()
    print(f"{len(todo)} patches on {len({j['parentRoot'] for j in todo})} parents of the evaluator vectors (seed {a.seed}): "
          + ", ".join(f"{k} {v}" for k, v in kinds.items()))

    peer = Peer(a.reference_cmd, a.peer_budget) if a.reference_cmd else None
    try: res = run_all(todo, words, corpus, a.uncached, peer)
    finally:
        if peer: peer.close()
    load1 = os.getloadavg()
    cached, off, ref = res["cached"], res["off"], res["reference"]
    rep = lambda r, i: json.dumps(r[i][0].to_json())
    same = sum(rep(cached, i) == rep(off, i) for i in off)
    outcomes = {o: sum(r[0].outcome == o for r in cached.values()) for o in ("REJECT", "SCREENER_PASS", "STATE_ADVANCE")}
    print(f"coretex verdicts: {outcomes}; reports byte-identical cached vs uncached: {same}/{len(off)}")
    print(f"each job ran cached, caches off and the reference one after the other, the order rotating from job to job; "
          f"load average (1, 5, 15 min) {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f} before, {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f} after")
    cpu = bool(ref) and all(x[2] is not None for x in ref.values())
    print(f"{'seconds per patch':<40} {'wall mean':>9} {'median':>8}" + (f" {'cpu mean':>9} {'median':>8}" if cpu or not ref else ""))
    show_cpu = cpu or not ref
    for label, r in (("coretex, one Evaluator, caches on", cached), ("coretex, caches off (EvalCache.none())", off), ("reference evaluator", ref)):
        if r: print(f"{label + f' ({len(r)})':<40} {per_patch([x[1] for x in r.values()])}" + (f" {per_patch([x[2] for x in r.values()])}" if show_cpu else ""))
    if peer: print(f"peer: {a.reference_cmd}: answered {len(ref)} of {len(todo)} patches" + (f" ({peer.ended})" if peer.ended else ""))
    if ref:
        mean = lambda r, ids, c: sum(r[i][c] for i in ids) / len(ids)
        for label, r in (("cached", cached), ("caches off", off)):
            ids = [i for i in ref if i in r]
            if ids: print(f"ratio reference/coretex {label}, same {len(ids)} patches: {mean(ref, ids, 1) / mean(r, ids, 1):.1f}x wall"
                          + (f", {mean(ref, ids, 2) / mean(r, ids, 2):.1f}x cpu" if cpu else ""))
        diff = [(j, mine(cached[j["id"]][0]), theirs(ref[j["id"]][0])) for j in todo if j["id"] in ref]
        diff = [(j, m, t) for j, m, t in diff if m != t]
        print(f"verdict agreement (outcome, reason, per pack: accepted, reason, delta ppm, before/after ppm): {len(ref) - len(diff)}/{len(ref)}")
        for j, m, t in diff[:20]: print(f"  {j['id']} {j['kind']} parent {j['parentRoot'][:10]} patch {j['patch']}\n    coretex   {m}\n    reference {t}")
    else:
        diff = []
        print("peer: not given (--reference-cmd); no ratio and no verdict agreement")

    st, total, counts = profile_pass(todo, words, corpus)
    print(f"\nwhere coretex's time goes, caches off, {len(todo)} patches, every stage wrapped ({total / len(todo):.4f}s per patch with the wrappers):")
    print(st.report(total, "other (pool, ordering rows, evaluate_patch's own work)"))
    print(f"\nqueries the dependency rule sends to the patched state (Gate, and Confirm when Gate passes), per kind of patch:")
    print(f"  {'kind':<11} {'patches':>7} {'pack queries':>12} {'affected':>8} {'share':>6}  patches with any  most in one pack-pair"
          + ("   ref s   off s    on s  off x   on x" if ref else ""))
    for k in KINDS + ("all",):
        ids = [j["id"] for j in todo if k in ("all", j["kind"])]
        if not ids: continue
        n, aff = sum(counts[i][0] for i in ids), sum(counts[i][1] for i in ids)
        worst = max(counts[i][1] / counts[i][0] for i in ids)
        row = f"  {k:<11} {len(ids):>7} {n:>12} {aff:>8} {100 * aff / n:5.1f}%  {sum(counts[i][1] > 0 for i in ids):>16}  {100 * worst:20.1f}%"
        both = [i for i in ids if i in ref and i in off]
        if both:
            m = {r: sum(x[i][1] for i in both) / len(both) for r, x in (("ref", ref), ("off", off), ("on", cached))}
            row += f"  {m['ref']:6.3f}  {m['off']:6.4f}  {m['on']:6.4f} {m['ref'] / m['off']:5.1f}  {m['ref'] / m['on']:5.1f}"
        print(row)
    if a.each:
        print("\nper patch: id kind parent | pack queries affected | wall s: cached, caches off, reference | verdict")
        for j in todo:
            i = j["id"]
            t = lambda r: f"{r[i][1]:7.4f}" if i in r else "      -"
            print(f"  {i} {j['kind']:<10} {j['parentRoot'][:10]} | {counts[i][0]:3d} {counts[i][1]:3d} | {t(cached)} {t(off)} {t(ref)} | {cached[i][0].outcome}")
    return 1 if diff or same != len(off) else 0


if __name__ == "__main__":
    raise SystemExit(main())
