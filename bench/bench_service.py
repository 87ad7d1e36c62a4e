"""The coordinator as a service under load and faults, with real processes, each figure with a named peer
measured in the same run: `python bench/bench_service.py [--runs 20] [--flood 100000]`.

load    100 concurrent submissions of one patch; 1,000 distinct submissions; 50 slow clients; 100,000 rejected requests
faults  kill -9 of `coordinator work` at random moments; the database restarted under `serve`; a reorganising,
        a flapping and a vanished JSON-RPC node
secrets the signing key and the epoch secret searched for in every artefact of a full run before reveal
miner   an evaluated submission's latency through the network's POST /coretex/submit (which waits for its verdict)
        next to the job API's (POST /v1/patches, poll GET /v1/jobs/<id>, GET /v1/results)
attacks 1,010 and 5,000 connections trickling their head or body at 1 byte/s while a normal client
        GETs; serve's worker plus 3 `coordinator work` on 500 jobs and 30 abstention patches in 10 more epochs
        (evaluations and credits counted per job), then with kill -9 of random workers; the lockout and eviction
        attacks on the rate limiter
front   the front on Granian: 1,010 and 5,000 tricklers (head, body) that reconnect after each answer or
        close, from 1 and from 200 addresses, while a normal client GETs; 20,000 connections from 200 addresses (serve's
        RSS before, peak, after; tracebacks and EMFILE lines in its output); `serve` killed with SIGKILL 10 times under
        load, then every submitted patch submitted again (stranded: refused as in flight, or a claim with no job); a
        flood from 100 rotating addresses, then an honest miner's job (jobs started before it, against the fair
        queue's bound)
"""
import os
import argparse, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _service as sv


def load(a, tmp: Path) -> None:
    with sv.served(tmp / "load", "--rate", 1_000_000, "--requests", 1_000_000) as s:   # one client address measures throughput
        get = [x * 1000 for x in sv._latencies(f"{s.base}/v1/jobs/none", 50)]
        f = sv.same_patch(s, a.concurrent)
        print(f"{a.concurrent} concurrent submissions of one patch: {f['accepted']} evaluation (202), {f['duplicate_in_flight']} duplicate_in_flight (409), "
              f"{f['cached']} cached (200), {f['other']} other; jobs stored {f['jobs']}; submit p50 {f['p50_ms']:.0f} ms, p99 {f['p99_ms']:.0f} ms "
              f"= {f['p99_ms'] / sv.pct(get, 0.99):.1f}x the p99 of a sequential GET /v1/jobs ({sv.pct(get, 0.99):.1f} ms)")
        f = sv.distinct(s, a.distinct, threads=16)
        print(f"{a.distinct} distinct submissions, 16 threads: answers {f['codes']}; {f['accepted']} accepted, {f['distinct_ids']} distinct job ids, {f['stored']} stored, "
              f"{f['readable']} readable back; {f['post_per_s']:.0f} submissions/s vs {f['get_per_s']:.0f} GET /v1/jobs/s "
              f"(ratio {f['post_per_s'] / f['get_per_s']:.2f})")
        f = sv.slow_clients(s, a.slow, k=20)
        print(f"{a.slow} slow clients (1 byte of a promised 100, held open): a fast GET's max {f['with_slow_max_ms']:.1f} ms, median "
              f"{f['with_slow_median_ms']:.1f} ms; alone max {f['alone_max_ms']:.1f} ms (median ratio {f['ratio_median']:.2f}x)")
        f = sv.rejected_flood(s, a.flood, threads=8)
        print(f"{a.flood} rejected requests (half unique 15 KB miner strings -> 400, half unique valid addresses to a closed epoch -> 404; "
              f"codes {f['codes']}) at {f['per_s']:.0f}/s: serve RSS {f['rss_before_mb']:.1f} MB -> {f['rss_after_mb']:.1f} MB "
              f"(+{f['growth_mb']:.1f} MB, ratio {f['ratio']:.3f})")


def miner(a, tmp: Path) -> None:
    with sv.served(tmp / "miner", "--rate", 1_000_000) as s:
        f = sv.submit_latency(s, a.submits)
        print(f"{f['n']} evaluated submissions each way, alternating (answers through /coretex/submit {f['codes']}): POST /coretex/submit "
              f"p50 {f['coretex_p50_ms']:.0f} ms, p90 {f['coretex_p90_ms']:.0f} ms; the job API (POST /v1/patches, poll GET /v1/jobs every 50 ms, "
              f"GET /v1/results) p50 {f['jobs_p50_ms']:.0f} ms, p90 {f['jobs_p90_ms']:.0f} ms (ratio of p50s {f['coretex_p50_ms'] / f['jobs_p50_ms']:.2f}); "
              f"the job API's 202 alone p50 {f['intake_p50_ms']:.0f} ms")


def faults(a, tmp: Path) -> None:
    t0 = time.perf_counter()
    f = sv.kill9(tmp / "kill", a.runs, seed=14)
    took = time.perf_counter() - t0
    print(f"kill -9 of `coretex coordinator work` at a random moment, then a restart, {f['runs']} runs: {f['lost']} jobs lost, {f['done']} done, "
          f"{f['credited_once']} credited exactly once, {f['identical_verdicts']}/{f['runs']} verdicts identical to an uninterrupted "
          f"evaluation of the stored draw; {f['results']} results for {f['jobs']} jobs (1 calibration); killed while {f['phases']}; "
          f"calibration {f['calibration_s']}; {took:.0f} s")
    f = sv.db_restart(tmp / "restart", down_s=5)
    print(f"database stopped {f['down_s']} s under `serve`: a submission meanwhile got {f['during'][0]} {f['during'][1]}; after the restart "
          f"{f['after']}; the job queued before finished ({f['first_job']}) {f['resumed_after_s']} s after the database was back; serve alive "
          f"{f['serve_alive']}; worker logged the outage {f['worker_lines']} time(s)")
    f = sv.rpc_faults(tmp / "rpc")
    r = f["reorg"]
    print(f"JSON-RPC node reorganising the target block before 2 confirmations: served the early hash {r['early_served']}, drew "
          f"{r['drawn'][:10]}... (the confirmed one) after {r['waited_s']} s")
    for case, what in (("flap", "answering a different hash on every read at depth"), ("gone", "gone after intake")):
        x = f[case]
        print(f"JSON-RPC node {what}: nothing drawn (blockhash {x['stored_blockhash']}), job {x['status']} after {x['waited_s']} s: {x['error']}")


def secrets(a, tmp: Path) -> None:
    f = sv.secrets(tmp / "secrets")
    print(f"secrets: the signing key and the epoch secret searched for (hex, either case, and raw bytes) in {f['artefacts']} artefacts of a full "
          f"run (serve output, every HTTP answer, a dump of the database, {f['files']} files of the data folder) before reveal: "
          f"{len(f['hits'])} hits {f['hits']}")


def attacks(a, tmp: Path) -> None:
    with sv.served(tmp / "trickle", "--rate", 1_000_000) as s:
        for n in a.trickle:
            for body in (False, True):
                f = sv.trickle_flood(s, n, body)
                print(f"{n} connections trickling their {f['kind']} at 1 byte/s from {-(-n // 100)} loopback addresses ({f['connected']} connected, "
                      f"{f['held_during'][0]}..{f['held_during'][1]} held open while measured; their answers {f['answers']}): a normal client's GET "
                      f"median {f['median_ms']:.1f} ms, max {f['max_ms']:.1f} ms; alone {f['alone_median_ms']:.1f} ms (median ratio {f['ratio']:.2f}x); "
                      f"{f['burst_gets']} GETs in the first {f['settle_s']:g} s, while the front accepted the crowd: max {f['burst_max_ms']:.1f} ms; "
                      f"{f['timeouts']}/{f['gets']} GETs timed out in all; the trickling process used {f['crowd_cpu_s']} s of CPU")
    if not a.limiter_flood: return
    f = sv.limiter_attacks(tmp / "limiter", a.limiter_flood)
    print(f"lockout: 10 POSTs naming the victim's address for a closed epoch from another address got {sorted(set(f['lockout_answers']))}; "
          f"the victim's own submission then got {f['victim_after_lockout'][0]}")
    print(f"eviction: the attacker at its limit ({f['attacker_spent'][-1]} after 10 counted), then {f['flood']} counted submissions from "
          f"{f['flood']} other addresses in {f['flood_s']} s ({f['flood_codes']}): the attacker's next submission got {f['attacker_after_flood'][0]} "
          f"{f['attacker_after_flood'][1]}; a newcomer's valid submission got {f['newcomer_after_flood'][0]}")
    for kill_every, jobs in ((None, a.jobs), (a.kill_every, a.kill_jobs)):
        if not jobs: continue
        f = sv.workers_race(tmp / f"race-{kill_every}", jobs, kill_every=kill_every, advancing=a.advancing)
        print(f"{f['workers']} workers (serve's + {f['workers'] - 1} `coordinator work`) on {f['accepted']} accepted jobs"
              + (f", a random `work` killed with SIGKILL every {kill_every:g} s ({f['kills']} kills)" if kill_every else ", no kills")
              + f": {f['finished']} finished, {f['lost']} lost in {f['seconds']} s; {f['evaluations']} evaluations, {f['exactly_once']} jobs evaluated "
              f"exactly once, {f['re_evaluated']} re-evaluated ({f['re_evaluated_not_held_by_a_dead_worker']} of them not held by a worker that died; "
              f"{f['died_holding']} jobs held by killed workers); {f['advances']} STATE_ADVANCE verdicts in {f['epochs_advanced']} epochs, "
              f"{f['credited']} credited ({f['epochs_credited_once']} epochs credited exactly once; jobs by times credited {f['credits_per_job']}; {f['credited_held_by_killed']} of them held by a killed worker), "
              f"{f['credited_twice']} twice, {f['credited_not_advance']} not STATE_ADVANCE")


def load_now() -> str: return "load %.1f %.1f %.1f" % os.getloadavg()


def front(a, tmp: Path) -> None:
    with sv.served(tmp / "front", "--rate", 1_000_000) as s:
        for n in a.trickle:
            for addresses in (1, 200):
                for body in (False, True):
                    f = sv.trickle_flood(s, n, body, addresses=addresses, seconds=a.reconnect_s)
                    print(f"[{load_now()}] {n} connections trickling their {f['kind']} at 1 byte/s from {f['addresses']} address(es), each opened again "
                          f"as soon as it is answered or closed, {a.reconnect_s:g} s ({f['connected']} connected at first, {f['connect_failed']} connects failed; "
                          f"their answers {f['answers']}): a normal client's GET median {f['median_ms']:.1f} ms, alone {f['alone_median_ms']:.1f} ms "
                          f"(ratio {f['ratio']:.2f}x), max {f['max_all_ms']:.1f} ms ({f['burst_gets']} GETs in the first {f['settle_s']:g} s: max "
                          f"{f['burst_max_ms']:.1f} ms; after: {f['max_ms']:.1f} ms); {f['timeouts']}/{f['gets']} GETs timed out; the crowd used "
                          f"{f['crowd_cpu_s']} s of CPU", flush=True)
        for round_ in range(a.descriptor_rounds if a.descriptors else 0):   # a second round on the same serve: RSS at a plateau, or growing
            f = sv.descriptor_flood(s, a.descriptors, 200)
            print(f"[{load_now()}] round {round_ + 1}: {f['n']} connections from {f['addresses']} addresses, each one byte of a head, held ({f['connected']} connected; "
                  f"their ends {f['answers']}): serve printed {f['tracebacks']} tracebacks, {f['emfile_lines']} EMFILE lines, {f['descriptor_warnings']} "
                  f"descriptor warnings ({f['log_bytes']} bytes); serve RSS {f['rss_before_mb']} MB -> peak {f['rss_peak_mb']} MB -> {f['rss_after_mb']} MB "
                  f"15 s after (ratio {f['rss_after_ratio']:.3f}); a normal client's GET median {f['median_ms']:.1f} ms, max {f['max_ms']:.1f} ms, "
                  f"{f['timeouts']}/{f['gets'] + f['timeouts']} timed out", flush=True)
    if a.serve_kills:
        f = sv.serve_kill9(tmp / "kill-serve", a.serve_kills)
        print(f"[{load_now()}] `coretex coordinator serve` killed with SIGKILL {f['kills']} times under load (after {f['killed_after_s']} s; restarts took "
              f"{f['restart_s']} s): {f['submitted']} patches reached serve (first answers {f['first_answers']}); a last serve drained the queue in "
              f"{f['drained_s']} s leaving {f['claims_left']} claims; each patch submitted again: {f['again']}; stranded {f['stranded']}; evaluations "
              f"per job {f['evaluations_per_job']}; the last serve printed {f['tracebacks']} tracebacks", flush=True)
    if a.rotating:
        f = sv.rotating_flood(tmp / "rotating", a.rotating, 10)
        print(f"[{load_now()}] a flood from {f['addresses']} addresses, {f['per_address']} submissions each in {f['flood_s']} s ({f['flood_codes']}), "
              f"{f['waiting_when_queued']} jobs from {f['waiting_sources']} addresses waiting when an honest miner's job was queued: {f['started_before_honest']} "
              f"jobs were started after it and before it (the fair queue's bound: {f['bound']}; oldest first: {f['waiting_when_queued']}); it was "
              f"{f['honest_status']} after {f['honest_waited_s']} s", flush=True)


def _get_ms(c, request: bytes) -> float:
    "Milliseconds of one keep-alive GET on socket `c`, its JSON answer read whole."
    t0, d = time.perf_counter(), b""
    c.sendall(request)
    while not (b"\r\n\r\n" in d and d.endswith(b"}")): d += c.recv(65536)
    return (time.perf_counter() - t0) * 1000


def head(a, tmp: Path) -> None:
    "The 59 smuggling probes and the malformed HTTP requests of the tests against `serve`, each answered once as the contract says; the head reader's cost."
    import socket, statistics
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from smuggling_cases import SMUGGLING
    from test_attacks import exchange_raw
    from test_bad_input import wrong
    from bad_input_cases import HTTP
    with sv.served(tmp / "head", "--rate", 1_000_000, "--requests", 100_000) as s:
        port = int(s.base.rsplit(":", 1)[1])
        probes = {name: exchange_raw(port, raw) == (want, closes) for name, (raw, want, closes) in SMUGGLING.items()}
        bad = {case.name: wrong(port, case) is None for case in HTTP}
    print(f"[{load_now()}] {sum(probes.values())}/{len(probes)} smuggling probes answered once each with the status the contract gives"
          + (f" (not: {[k for k, v in probes.items() if not v]})" if not all(probes.values()) else "")
          + f"; {sum(bad.values())}/{len(bad)} malformed HTTP requests refused as the contract says"
          + (f" (not: {[k for k, v in bad.items() if not v]})" if not all(bad.values()) else ""), flush=True)
    from coretex.network.http import HttpIntake, RequestBudget, make_app
    srv = HttpIntake(make_app(None), budget=RequestBudget(10**6, 10**6)).start()   # no rate limit: these GETs come from one address
    try:
        via = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        direct = socket.create_connection(srv.guard.upstream, timeout=5)   # Granian's own port, the guard's map filled by hand
        srv.guard.peers[direct.getsockname()[:2]] = ("127.0.0.9", 1)
        for c in (via, direct): c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        req, guarded, straight = b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", [], []
        for _ in range(a.head_gets):
            guarded.append(_get_ms(via, req)); straight.append(_get_ms(direct, req))
    finally: srv.stop(); srv._thread.join(10)
    g, d = statistics.median(guarded), statistics.median(straight)
    print(f"[{load_now()}] a keep-alive GET, {a.head_gets} each way, alternating: through the head reader median {g:.2f} ms, straight to Granian "
          f"{d:.2f} ms (ratio {g / d:.2f}x)", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20, help="kill -9 runs")
    ap.add_argument("--flood", type=int, default=100_000, help="rejected requests")
    ap.add_argument("--distinct", type=int, default=1000)
    ap.add_argument("--concurrent", type=int, default=100)
    ap.add_argument("--slow", type=int, default=50)
    ap.add_argument("--trickle", type=int, nargs="*", default=[1010, 5000], help="trickling connections (none: skip them)")
    ap.add_argument("--jobs", type=int, default=500, help="jobs for the workers race without kills (0: skip it)")
    ap.add_argument("--kill-jobs", type=int, default=200, help="jobs for the workers race with kill -9 (0: skip it)")
    ap.add_argument("--kill-every", type=float, default=10.0, help="seconds between kills")
    ap.add_argument("--advancing", type=int, default=10, help="epochs opened beside epoch 1 in the worker races, each given 3 abstention patches that may advance it (at most 10)")
    ap.add_argument("--limiter-flood", type=int, default=10_000, help="0: skip the limiter attacks and the worker races")
    ap.add_argument("--submits", type=int, default=20, help="evaluated submissions each way for the miner part")
    ap.add_argument("--reconnect-s", type=float, default=30.0, help="seconds each reconnecting crowd runs (front)")
    ap.add_argument("--descriptors", type=int, default=20_000, help="connections of the descriptor flood (front; 0: skip it)")
    ap.add_argument("--descriptor-rounds", type=int, default=1, help="descriptor floods one after another on the same serve (front)")
    ap.add_argument("--serve-kills", type=int, default=10, help="kill -9 of serve under load (front; 0: skip it)")
    ap.add_argument("--rotating", type=int, default=100, help="addresses of the rotating flood, 10 jobs each (front; 0: skip it)")
    ap.add_argument("--head-gets", type=int, default=1000, help="GETs each way timing the head reader (head)")
    ap.add_argument("--only", choices=["load", "miner", "faults", "secrets", "attacks", "front", "head"], action="append", help="run only these parts")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for name, fn in (("load", load), ("miner", miner), ("faults", faults), ("secrets", secrets), ("attacks", attacks), ("front", front), ("head", head)):
            if not a.only or name in a.only: fn(a, Path(d))
