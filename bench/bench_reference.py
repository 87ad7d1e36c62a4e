"""coretex's evaluator against the reference's, per patch, on the same generated patches: seconds per patch and verdict agreement.

Patches: N deterministic (parent, patch, seed inputs) jobs on the differential vectors' corpus and parent states
(../shared/vectors/coretex/evaluator), a mix an epoch might see: the vectors' own patches on their parents, one
abstention policy atom (80_demo `abstention_patch`), an anchored memory slot for a real corpus event, and random
region-shaped writes (14a_fuzz `region_word`) of every patch type the r5 pipeline takes; every patch is one that
applyPatch accepts. Each job has its own blockhash, so its Gate and Confirm packs are drawn anew.

coretex evaluates every job as a validator would (one Evaluator, its caches on), and again (or the first --uncached)
with `EvalCache.none()` (reports checked byte-identical). The peer is the reference's evaluator, run by the command
given with --reference-cmd (this script never fetches or builds it), fed the same jobs after coretex's run, one at
a time. The command reads one JSON object per line on stdin and writes one per line on stdout, in order:

  in:  {"id", "parentState": hex of the 32,768 state bytes, "parentRoot": 0x-hex, "patch": 0x-hex of the patch bytes,
        "epochSecret": 0x-hex, "blockhash": 0x-hex, "epochId": int}
  out: {"id", "outcome": "REJECT"|"SCREENER_PASS"|"STATE_ADVANCE", "code": rejection code or null,
        "innerRejectionReason": the failing pack's reason or null,
        "packs": [{"which": "gate"|"confirm", "accepted", "reason", "deltaPpm", "beforePpm", "afterPpm"}, ...] (packs scored),
        "elapsed": seconds the command spent on this job}

Scoring: the vectors' profile, thresholds (screener 375 ppm, state advance 750 ppm), deterministic bi-encoder and
token-overlap reranker. Agreement per patch: outcome, reason, and each scored pack's (accepted, reason, delta ppm,
before ppm, after ppm).
Run: python bench/bench_reference.py [--patches N] [--reference-cmd "node driver.mjs"] [--peer-budget SECONDS]
"""
import argparse, contextlib, gzip, json, random, shlex, shutil, subprocess, sys, time
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


def progress(label: str, done: int, total: int, t0: float) -> None:
    if done % 25 == 0 or done == total:
        print(f"{label}: {done}/{total} patches, {done / (time.perf_counter() - t0):.2f}/s", file=sys.stderr, flush=True)


def run_coretex(ev: Evaluator, todo: list, states: dict, label: str) -> tuple:
    "(reports, seconds per patch) of coretex on every job."
    reps, secs, t0 = [], [], time.perf_counter()
    for k, j in enumerate(todo, 1):
        t = time.perf_counter()
        reps.append(evaluate_patch(ev, states[j["parentRoot"]], from_hex(j["patch"]), from_hex(j["blockhash"]),
                                   from_hex(j["epochSecret"]), j["epochId"]))
        secs.append(time.perf_counter() - t)
        progress(label, k, len(todo), t0)
    return reps, secs


def ask(proc: subprocess.Popen, job: dict) -> str:
    "The peer's answer line to one job; empty if it has ended."
    try:
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
    except BrokenPipeError: return ""
    return proc.stdout.readline()


def run_peer(cmd: str, todo: list, states: dict, budget: float, out: list, ended: list) -> None:
    "Feed jobs to the peer one at a time, appending its answers to `out`, until done or past `budget` seconds; why it stopped early goes to `ended`."
    proc = subprocess.Popen(shlex.split(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    t0 = time.perf_counter()
    try:
        for k, j in enumerate(todo, 1):
            if time.perf_counter() - t0 > budget:
                ended.append(f"stopped at --peer-budget {budget:.0f}s")
                break
            job = {x: j[x] for x in ("id", "parentRoot", "patch", "epochSecret", "blockhash", "epochId")}
            line = ask(proc, {**job, "parentState": state_bytes(states[j["parentRoot"]]).hex()})
            if not line:
                ended.append(f"the command ended after {k - 1} jobs (exit {proc.wait()})")
                break
            try: out.append(json.loads(line))
            except json.JSONDecodeError:
                ended.append(f"answer {k} is not a JSON line: {line[:80]!r}")
                break
            progress("reference", k, len(todo), t0)
    finally:
        with contextlib.suppress(BrokenPipeError): proc.stdin.close()
        proc.wait()


def mine(rep) -> dict:
    "coretex's verdict in the peer's terms."
    return {"outcome": rep.outcome, "reason": rep.reason,
            "packs": [(p.which, p.accepted, p.reason, p.delta_ppm, p.before_ppm, p.after_ppm) for p in (rep.gate, rep.confirm) if p]}


def theirs(ans: dict) -> dict:
    "The peer's verdict in the same terms."
    return {"outcome": ans["outcome"], "reason": f"{ans['code']}:{ans['innerRejectionReason']}" if ans["outcome"] == "REJECT" else None,
            "packs": [(p["which"], p["accepted"], p["reason"], p["deltaPpm"], p["beforePpm"], p["afterPpm"]) for p in ans["packs"]]}


def per_patch(secs: list) -> str: return f"{sum(secs) / len(secs):.3f}s per patch (median {sorted(secs)[len(secs) // 2]:.3f}s)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--patches", type=int, default=1000, help="jobs to generate and evaluate (default 1,000)")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--uncached", type=int, help="only the first M jobs are also evaluated with caches off (default: all)")
    ap.add_argument("--reference-cmd", help="the peer: a command speaking the JSON-lines contract described above")
    ap.add_argument("--peer-budget", type=float, default=float("inf"), help="stop feeding the peer after this many seconds")
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
    print(f"{len(todo)} patches on {len({j['parentRoot'] for j in todo})} parents of the evaluator vectors (seed {a.seed}): "
          + ", ".join(f"{k} {v}" for k, v in kinds.items()))

    cached, t_cached = run_coretex(Evaluator(corpus, reranker=TokenOverlapReranker()), todo, words, "coretex, cached")
    uncached, t_uncached = run_coretex(Evaluator(corpus, reranker=TokenOverlapReranker(), cache=EvalCache.none()), todo[:a.uncached],
                                       words, "coretex, uncached")
    same = sum(json.dumps(x.to_json()) == json.dumps(y.to_json()) for x, y in zip(cached, uncached))
    outcomes = {o: sum(r.outcome == o for r in cached) for o in ("REJECT", "SCREENER_PASS", "STATE_ADVANCE")}
    print(f"coretex verdicts: {outcomes}; reports byte-identical cached vs uncached: {same}/{len(uncached)}")
    print(f"coretex, one Evaluator, caches on      {per_patch(t_cached)} over {len(todo)}")
    if uncached: print(f"coretex, caches off (EvalCache.none())  {per_patch(t_uncached)} over the first {len(uncached)}")
    if not a.reference_cmd:
        print("peer: not given (--reference-cmd); no ratio and no verdict agreement")
        return 0
    answers, ended = [], []
    run_peer(a.reference_cmd, todo, words, a.peer_budget, answers, ended)
    n = len(answers)
    t_ref = [x["elapsed"] for x in answers]
    print(f"peer: {a.reference_cmd}: answered {n} of {len(todo)} patches" + "".join(f" ({e})" for e in ended))
    if not n: return 1
    print(f"reference evaluator                    {per_patch(t_ref)} over {n}")
    mean = lambda xs: sum(xs) / len(xs)
    u = min(n, len(t_uncached))
    print(f"ratio reference/coretex per patch, same {n} patches: cached {mean(t_ref) / mean(t_cached[:n]):.1f}x"
          + (f"; uncached {mean(t_ref[:u]) / mean(t_uncached[:u]):.1f}x (first {u})" if u else ""))
    diff = [(j, mine(r), theirs(x)) for j, r, x in zip(todo, cached, answers) if mine(r) != theirs(x) or j["id"] != x["id"]]
    print(f"verdict agreement (outcome, reason, per pack: accepted, reason, delta ppm, before/after ppm): {n - len(diff)}/{n}")
    for j, m, t in diff[:20]: print(f"  {j['id']} {j['kind']} parent {j['parentRoot'][:10]} patch {j['patch']}\n    coretex   {m}\n    reference {t}")
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
