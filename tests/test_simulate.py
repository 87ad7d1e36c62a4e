"The network simulator (nbs/81*): determinism, the controller and finalization wiring, the copycat, the folder on disk, the coordinator's store, the CLI."
import json, subprocess
from dataclasses import replace
import pymongo
import pytest
from coretex.economy.difficulty import next_min_improvement_ppm
from coretex.evaluator.evaluate import Evaluator
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.simulate import SimConfig, Simulation, run_epoch, simulate, read_trajectory, make_miners, STRATEGIES
from coretex.core.keccak import to_hex
from coretex.core.state import GENESIS, state_root

CFG = SimConfig(epochs=3, miners=4, seed=5, patches_per_epoch=5)


@pytest.fixture(scope="module")
def ev(): return Evaluator(reranker=TokenOverlapReranker())


@pytest.fixture(scope="module")
def run(ev, tmp_path_factory):
    "One short run, written to a folder, with every submission kept."
    out, subs = tmp_path_factory.mktemp("sim"), []
    sim = Simulation(ev, CFG)
    submit = sim.submit
    def spy(m, family, e, n, data, epoch):
        s = submit(m, family, e, n, data, epoch)
        subs.append((e, m.strategy, data, s))
        return s
    sim.submit = spy
    records = [run_epoch(sim) for _ in range(CFG.epochs)]
    return out, records, subs, simulate(ev, CFG, out)


def timeless(records): return [replace(r, seconds=0) for r in records]


def test_same_seed_same_run(run):
    "The seed fixes the run: two runs of one configuration agree on every epoch (only the wall time differs)."
    _, records, _, again = run
    assert timeless(records) == timeless(again.records)


def test_another_seed_another_run(ev):
    "A different seed draws other patches: the coordinator's verdict cache (keyed by dedupKey) holds other submissions."
    a, b = Simulation(ev, replace(CFG, seed=6)), Simulation(ev, replace(CFG, seed=7))
    run_epoch(a); run_epoch(b)
    assert a.verdicts and b.verdicts and set(a.verdicts) != set(b.verdicts)


def test_threshold_follows_controller(run):
    "Epoch e+1 runs at next_min_improvement_ppm of epoch e's threshold, advances, target and quality attempts."
    _, records, _, _ = run
    assert records[0].threshold_ppm == CFG.start_threshold_ppm
    for prev, cur in zip(records, records[1:]):
        expect = next_min_improvement_ppm(prev.threshold_ppm, prev.advances, CFG.target_advances, prev.quality_attempts).next
        assert prev.next_threshold_ppm == expect and cur.threshold_ppm == expect


def test_counts_match_submissions(run):
    "Each record's counts are its submissions' outcomes and verdicts, and an advance moves the live root."
    _, records, subs, _ = run
    for r in records:
        mine = [s for e, _, _, s in subs if e == r.epoch]
        assert r.advances == sum(s.outcome == "ADVANCE" for s in mine) == len(r.advanced)
        assert r.screener_passes == sum(s.outcome in ("ADVANCE", "SCREENER_PASS") for s in mine)
        assert r.quality_attempts == sum(s.verdict == "SCREENER_PASS" for s in mine)
        assert r.screened == sum((s.reason or "").startswith("screened:") for s in mine)
        assert sum(r.credits.values()) == sum(r.work_units_by_strategy.values())
    roots = [to_hex(state_root(GENESIS))] + [r.state_root for r in records]
    assert all((before != r.state_root) == (r.advances > 0) for before, r in zip(roots, records))


def test_copycat_earns_nothing_from_a_lever_that_paid_once(ev):
    "The copycat copies the lever of what advanced, not its bytes: after spam's abstention atom, another atom gains nothing."
    cfg = SimConfig(epochs=4, miners=2, strategies=("spam", "copycat"), seed=2, patches_per_epoch=6)
    run = simulate(ev, cfg)
    assert any(a[1] == "spam" for r in run.records for a in r.advanced), "the run should hold spam's advance for the check to mean anything"
    assert sum(r.work_units_by_strategy["copycat"] for r in run.records) == 0
    assert all(r.by_strategy.get("copycat", [0, 0, 0])[2] == 0 for r in run.records)


def test_trajectory_written_per_epoch(ev, tmp_path):
    "trajectory.jsonl holds one line per finished epoch as soon as it closes, and reads back as the run's records."
    import coretex.simulate.loop as S
    seen = []
    write = S.Trajectory.write
    def spy(self, rec, sim):
        write(self, rec, sim)
        seen.append(len((tmp_path / "trajectory.jsonl").read_text().splitlines()))
    S.Trajectory.write = spy
    try: run = simulate(ev, replace(CFG, epochs=3), tmp_path)
    finally: S.Trajectory.write = write
    assert seen == [1, 2, 3]
    assert read_trajectory(tmp_path) == run.records
    assert json.loads((tmp_path / "config.json").read_text())["epochs"] == 3


def test_resume_continues_the_same_run(ev, run, tmp_path):
    "A run stopped after two epochs and resumed for a third (with a stray line past its checkpoint) equals the uninterrupted run."
    _, records, _, _ = run
    simulate(ev, replace(CFG, epochs=2), tmp_path)
    with open(tmp_path / "trajectory.jsonl", "a") as f: f.write(json.dumps(records[2].to_json()) + "\n")   # a crash after the line, before the checkpoint
    resumed = simulate(ev, CFG, tmp_path, resume=True)
    assert timeless(resumed.records) == timeless(records) == timeless(read_trajectory(tmp_path))
    with pytest.raises(ValueError, match="another configuration"): simulate(ev, replace(CFG, seed=9), tmp_path, resume=True)


def test_screens_change_no_verdict(ev):
    "The screens only save time: a run with them and one without agree on every advance, threshold, root and credit."
    cfg = SimConfig(epochs=3, seed=4, population="mixed-honest")
    on, off = simulate(ev, cfg), simulate(ev, replace(cfg, screens=False))
    key = lambda r: (r.threshold_ppm, r.next_threshold_ppm, r.state_root, r.advanced, r.quality_attempts, r.outcomes, r.credits)
    assert on.screened > 0 and off.screened == 0 and off.evaluations == on.evaluations + on.screened
    assert [key(r) for r in on.records] == [key(r) for r in off.records]


def test_a_simulated_epoch_is_an_epoch_of_the_coordinators_store(ev, tmp_path):
    "`coretex coordinator finalize` and `claim-proof` run unchanged on the store a run wrote and agree with the run; published, the epochs are followed by a validator to the run's last root."
    from coretex.cli import run_command
    from coretex.cli.network import add_coordinator
    from coretex.cli.economy import add_claim_proof
    from coretex.network.chain import Chain
    from coretex.network.coordinator import Coordinator
    from coretex.network.receipt import Signer
    from coretex.network.store import EmbeddedMongo
    from coretex.network.finalize import check_claim, coordinator_pins, publish_epoch
    from coretex.network.follower import Follower, Reader, Store
    from coretex.network.registry import RegistryContract
    cfg = SimConfig(epochs=3, miners=2, strategies=("spam", "random"), patches_per_epoch=4, seed=3, merge_multiplier_bps=15_000)   # both start at their default threshold
    with EmbeddedMongo(tmp_path / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        coord = Coordinator(client.coretex, Chain.connect(), ev, Signer.load(tmp_path / "k", create=True))
        run = simulate(ev, cfg, coordinator=coord)
        assert sum(r.advances for r in run.records) >= 1, "the run should advance for the check to mean anything"
        for r in run.records:
            rc, out, err = run_command(add_coordinator, "coordinator", "finalize", "--epoch", str(r.epoch), "--mongodb-uri", server.uri,
                                       "--key-file", str(tmp_path / "k"), "--reward",
                                       str(cfg.reward_per_epoch), "--multiplier-bps", "15000", "--json")
            fin = json.loads(out)
            assert rc == 0 and (fin["new_state_root"], fin["next_threshold_ppm"], fin["advances"]) == (r.state_root, r.next_threshold_ppm, r.advances), err
        r = next(r for r in run.records if r.advances)
        miner = make_miners(cfg)[r.advanced[0][0]]
        rc, out, err = run_command(add_claim_proof, "claim-proof", "--epoch", str(r.epoch), "--miner", miner.address, "--mongodb-uri", server.uri)
        claim = json.loads(out)
        # the finalized epochs go on chain, and a validator following the registry reaches the run's last root
        registry = RegistryContract.deploy(coord.chain)
        for rec in run.records: publish_epoch(coord.store, registry, rec.epoch, coordinator_pins(ev, coord.store.epoch(rec.epoch)))
        lines = []
        report = Follower(Reader(registry, tries=2, backoff=0.01), Store(tmp_path / "validator"), confirmations=0, chunk=6, say=lines.append).sync_once()
    assert rc == 0 and int(claim["bonus_botcoin"]) == r.bonus_by_strategy[miner.strategy] > 0
    assert (report.root, report.epoch, len(lines)) == (run.records[-1].state_root, run.records[-1].epoch, len(run.records))
    assert check_claim(claim, registry.view("bonusMerkleRoot", r.epoch))


def test_cli_simulate_runs(tmp_path):
    "The installed `coretex simulate --epochs 2 --miners 3` runs, prints its summary and writes its files."
    r = subprocess.run(["coretex", "simulate", "--epochs", "2", "--miners", "3", "--out", str(tmp_path), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["epochs"] == 2 and set(summary["rewards_by_strategy"]) == set(STRATEGIES[:3])
    assert len(read_trajectory(tmp_path)) == 2 and (tmp_path / "trajectory.png").stat().st_size > 0


def test_cli_refuses_bad_strategy():
    r = subprocess.run(["coretex", "simulate", "--strategies", "greedy,lucky"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "lucky" in r.stderr


def test_cli_resume_without_a_run_is_refused(tmp_path):
    r = subprocess.run(["coretex", "simulate", "--resume", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nothing to resume" in r.stderr


def test_cli_refuses_a_base_too_small_for_a_pack(tmp_path):
    "A frontier whose hidden queries cannot fill the pack's quotas is refused in one line, before any epoch runs."
    r = subprocess.run(["coretex", "simulate", "--base-persons", "40", "--growth", "smooth", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot fill a pack" in r.stderr


def test_the_decay_ratio_moves_the_trajectory(ev):
    "Quality attempts are every honest proposal (the reference's Monte Carlo), so an epoch with no advance decays the threshold by the configured ratio: two ratios, two trajectories."
    cfg = SimConfig(epochs=4, seed=1, population="mixed-honest", start_threshold_ppm=5000)
    runs = {d: simulate(ev, replace(cfg, decay_ratio=d)).records for d in (0.7, 0.95)}
    thresholds = {d: [r.threshold_ppm for r in recs] for d, recs in runs.items()}
    assert thresholds[0.7] != thresholds[0.95], thresholds
    decays = [r for r in runs[0.7] if r.controller_reason == "decay"]
    assert decays and all(r.advances == 0 and r.quality_attempts == r.by_strategy["honest"][0] >= 4 for r in decays)
    assert all(r.next_threshold_ppm == max(500, int(r.threshold_ppm * 0.7 + 0.5)) for r in decays)  # JS Math.round


AIM_CFG = SimConfig(epochs=8, seed=2, population="mixed-honest", mix=(("honest", 6),))
USELESS = {"relation", "conflict", "evidence", "anchor"}   # levers the oracle gives no headroom on the embedded corpus


@pytest.fixture(scope="module")
def aimed(ev): return {aim: simulate(ev, replace(AIM_CFG, aim=aim)) for aim in (True, False)}


def test_aiming_miners_spend_fewer_proposals_where_there_is_no_headroom(aimed):
    "Honest miners that aim from their public trials and verdicts send fewer proposals to the levers the oracle gives no headroom on this corpus (lens, conflict, evidence, anchor) than miners drawing uniformly, and find no less."
    useless, runs = USELESS, aimed
    for run in runs.values():
        assert all(r.headroom[f] == 0 for r in run.records for f in useless)   # the oracle: nothing there
    spent = {aim: sum(s[2] in useless for s in run.samples if s[1] == "honest") for aim, run in runs.items()}
    assert spent[True] < 0.5 * spent[False], spent
    assert sum(r.advances for r in runs[True].records) >= sum(r.advances for r in runs[False].records)


def test_cli_refuses_a_calibration_that_is_not_a_small_regular_file(tmp_path):
    "`simulate --calibration` refuses /dev/zero, a FIFO, a directory and a 2 GB sparse file by their kind and size, each in one line, exit 2 (98_cli_demo shows how long each took)."
    import os
    fifo, sparse = tmp_path / "fifo", tmp_path / "sparse.json"
    os.mkfifo(fifo)
    with open(sparse, "wb") as f: f.truncate(2 * 2**30)
    for path, says in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"), (tmp_path, "Is a directory"), (sparse, "2147483648 bytes")):
        r = subprocess.run(["coretex", "simulate", "--mode", "surrogate", "--calibration", str(path), "--out", str(tmp_path / "out")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_the_surrogate_aims_as_the_loop_does(ev, aimed):
    "Calibrated from the aimed in-loop run, the surrogate's honest miners aim too: over 8 seeds they send fewer proposals to the no-headroom levers than uniform ones, and their share of such proposals is nearer the loop's than the uniform surrogate's is."
    from collections import Counter
    from coretex.simulate.surrogate import calibrate, surrogate_run
    run = aimed[True]
    cal = calibrate(run.records, run.samples, AIM_CFG, ev.corpus, ev.profile)
    honest = Counter(s[2] for s in run.samples if s[1] == "honest")
    loop = sum(honest[f] for f in USELESS) / sum(honest.values())
    def share(aim):
        tally = Counter()
        for seed in range(8): surrogate_run(replace(AIM_CFG, aim=aim, seed=seed), cal, ev.corpus, tally)
        h = {f: n for (s, f), n in tally.items() if s == "honest"}
        return sum(h.get(f, 0) for f in USELESS) / sum(h.values())
    aim, uniform = share(True), share(False)
    assert aim < uniform and abs(aim - loop) < abs(uniform - loop), (loop, aim, uniform)
