"""A coordinator that served an epoch (real evaluation, embedded MongoDB) finalizes it through the reducer: the root it
served, the next threshold by the controller, the claim base and merge bonus, the leaf, root and fundEpoch calldata
(checked here by hand: keccak over the leaf's bytes, the calldata's ABI layout); the next epoch starts from the threshold
it set; `coretex coordinator finalize` and `coretex claim-proof` (the installed command) record an epoch, print the miner's
claim and verify it, refusing tampered ones."""
import json
import pymongo
import pytest
from coretex.network.chain import Chain
from coretex.network.coordinator import Coordinator
from coretex.evaluator.evaluate import Evaluator
from coretex.network.finalize import EconomyPolicy, FinalizeError
from coretex.core.keccak import keccak256, from_hex, to_hex
from coretex.network.receipt import Signer
from coretex.core.state import GENESIS, state_root
from coretex.network.store import EmbeddedMongo
from helpers import abstain_patch, accepted_job, run_cli

A, B = "0x" + "a1" * 20, "0x" + "b2" * 20
REWARD = 10**18


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    "A coordinator whose epoch 1 had one advance (miner A, after any rejections of its own) and one rejection (miner B), finalized: (coordinator, record, envelopes, db uri)."
    tmp = tmp_path_factory.mktemp("finalize")
    with EmbeddedMongo(tmp / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        coord = Coordinator(client.coretex, Chain.connect(), Evaluator(), Signer.load(tmp / "coordinator.key", create=True))
        coord.open_epoch(1, GENESIS, keccak256(b"epoch 1 secret"))
        _, advanced = accepted_job(coord, A, 1)   # the verdict depends on the draw: the first abstention atom accepted
        # a second, identical atom on the advanced state changes nothing on any pack: a REJECT
        again = abstain_patch(20, coord.store.state(coord.store.epoch(1).root))
        envs = [advanced, coord.process(coord.intake(B, again.hex(), 1)["jobId"])]
        policy = EconomyPolicy(start_threshold_ppm=750, target_advances=1, epoch_reward_botcoin=REWARD, multiplier_bps=12_500)
        yield coord, coord.store.finalize_epoch(1, policy), envs, server.uri, policy, tmp


def test_the_record_is_the_epoch_the_coordinator_served(served):
    coord, rec, envs, _, policy, _ = served
    assert [e["outcome"] for e in envs] == ["STATE_ADVANCE", "REJECT"]
    ep = coord.store.epoch(1)
    assert rec.new_state_root == envs[0]["newStateRoot"] == ep.root and not ep.open
    assert rec.parent_state_root == to_hex(state_root(GENESIS))
    assert [(a["miner"], a["marginal_gain"]) for a in rec.advances] == [(A, envs[0]["evaluation"]["gate"]["delta_ppm"])]
    # the patch-set root is keccak over keccak(patch bytes) of the kept patches
    assert rec.patch_set_root == to_hex(keccak256(keccak256(from_hex(coord.store.job(ep.credited[0]).patch))))
    assert (rec.threshold_ppm, rec.next_threshold_ppm, rec.difficulty_reason) == (750, 750, "no_change")   # 1 advance, target 1
    assert coord.store.finalize_epoch(1, policy) == rec and coord.store.db.finalized.count_documents({}) == 1


def test_bonus_leaf_root_and_calldata(served):
    _, rec, _, _, _, _ = served
    bonus = REWARD * 2_500 // 10_000   # all the epoch's work is A's; a 1.25x multiplier pays a quarter of the claim base
    assert (rec.work_units_bps, rec.claim_bases) == ({A: 30_000}, [{"miner": A, "claim_base": REWARD}])
    assert rec.leaves == [{"miner": A, "bonus_botcoin": bonus, "cap_botcoin": bonus}] and rec.total_bonus == bonus
    assert rec.merkle_root == to_hex(keccak256(from_hex(A), bonus.to_bytes(32, "big"), bonus.to_bytes(32, "big")))   # one leaf: its hash
    call = from_hex(rec.fund_epoch_calldata)
    assert (call[:4], int.from_bytes(call[4:36], "big"), to_hex(call[36:68]), int.from_bytes(call[68:], "big"), len(call)) == \
           (keccak256(b"fundEpoch(uint64,bytes32,uint256)")[:4], 1, rec.merkle_root, bonus, 100)


def test_the_next_epoch_starts_from_the_threshold_set_and_a_wrong_root_is_refused(served):
    coord, rec, _, _, policy, _ = served
    coord.open_epoch(2, coord.store.state(rec.new_state_root), keccak256(b"epoch 2 secret"))
    idle = coord.store.finalize_epoch(2, policy)
    # no advance and no attempt: x0.95, rounded half up as JS does (712.5 -> 713)
    assert (idle.threshold_ppm, idle.next_threshold_ppm, idle.difficulty_reason, idle.leaves) == (750, 713, "small_drift_down", [])
    # epoch 3 credits a copy of epoch 1's advance but its root never moved (a lost write): the reducer reaches another root
    coord.open_epoch(3, GENESIS, keccak256(b"epoch 3 secret"))
    db = coord.store.db
    db.jobs.insert_one({**db.jobs.find_one({"_id": rec.advances[0]["job_id"]}), "_id": "copy", "epochId": 3})
    db.epochs.update_one({"_id": 3}, {"$set": {"credited": ["copy"]}})
    with pytest.raises(FinalizeError, match="the coordinator served"): coord.store.finalize_epoch(3, policy)


def test_claim_proof_command(served):
    _, rec, _, uri, _, tmp = served
    out = run_cli("claim-proof", "--epoch", 1, "--miner", A.upper().replace("0X", "0x"), "--mongodb-uri", uri)
    claim = json.loads(out.stdout)
    assert (out.returncode, claim["miner"], claim["proof"], claim["leaf_index"], claim["merkle_root"]) == (0, A, [], 0, rec.merkle_root)
    (tmp / "claim.json").write_text(out.stdout)
    ok = run_cli("claim-proof", "--verify", tmp / "claim.json", "--root", rec.merkle_root)
    assert (ok.returncode, ok.stdout.split(":")[1].split()[0]) == (0, "valid")
    assert claim["bonus_botcoin"] == str(rec.leaves[0]["bonus_botcoin"])   # decimal text, as the record keeps it
    (tmp / "forged.json").write_text(json.dumps({**claim, "bonus_botcoin": str(int(claim["bonus_botcoin"]) * 2)}))
    assert run_cli("claim-proof", "--verify", tmp / "forged.json", "--root", rec.merkle_root).returncode == 1
    assert run_cli("claim-proof", "--verify", tmp / "claim.json", "--root", "0x" + "00" * 32).returncode == 1
    none = run_cli("claim-proof", "--epoch", 1, "--miner", B, "--mongodb-uri", uri)
    assert (none.returncode, none.stdout, f"{B} has no merge-bonus leaf in epoch 1" in none.stderr) == (1, "", True)
    gone = run_cli("claim-proof", "--epoch", 9, "--miner", A, "--mongodb-uri", uri)
    assert (gone.returncode, gone.stderr) == (2, "coretex claim-proof: error: --epoch 9: no finalized epoch 9 in this store\n")


def test_coordinator_finalize_command(served):
    coord, _, _, uri, _, tmp = served
    coord.open_epoch(4, GENESIS, keccak256(b"epoch 4 secret"))
    argv = ["coordinator", "finalize", "--epoch", 4, "--mongodb-uri", uri, "--key-file", tmp / "coordinator.key", "--reward", 10**30, "--json"]
    out = run_cli(*argv)
    rec = json.loads(out.stdout)
    # no finalized predecessor: the start threshold (500); nothing happened: x0.95 = 475, clamped up to the 500 floor
    assert (out.returncode, rec["threshold_ppm"], rec["next_threshold_ppm"], rec["difficulty_reason"], rec["advances"], rec["leaves"]) == \
           (0, 500, 500, "small_drift_down", 0, 0)
    assert not coord.store.epoch(4).open and run_cli(*argv).stdout == out.stdout   # recorded once
    lines = run_cli(*argv[:-1]).stdout.splitlines()                                   # without --json: lines for a reader
    assert lines[:2] == [f"epoch 4 finalized: 0 advance(s), new state root {rec['new_state_root']}", "threshold 500 ppm; next epoch 500 ppm (small_drift_down)"]
    gone = run_cli("coordinator", "finalize", "--epoch", 99, "--mongodb-uri", uri, "--key-file", tmp / "coordinator.key")
    assert (gone.returncode, gone.stderr) == (2, "coretex coordinator: error: --epoch 99: no such epoch\n")


def test_coordinator_finalize_publishes_what_validators_fetch(served):
    "--publish-dir writes each kept advance's signed report under its evalReportHash and the epoch's reveal record."
    coord, rec, envs, uri, _, tmp = served
    pub = tmp / "artifacts"
    out = run_cli("coordinator", "finalize", "--epoch", 1, "--mongodb-uri", uri, "--key-file", tmp / "coordinator.key", "--reward", REWARD,
                  "--multiplier-bps", 12_500, "--start-threshold-ppm", 750, "--publish-dir", pub, "--json")
    assert out.returncode == 0, out.stderr
    advanced = envs[0]
    report = f"eval-reports/{advanced['evalReportHash'].lower()}.json"
    assert json.loads(out.stdout)["files"] == [report, "eval-reports/epoch-1.reveal.json"] and len(rec.advances) == 1
    assert json.loads((pub / report).read_text()) == json.loads(json.dumps(coord.store.verdict(advanced["dedupKey"])))
    reveal = json.loads((pub / "eval-reports/epoch-1.reveal.json").read_text())
    assert to_hex(keccak256(from_hex(reveal["epochSecret"]))) == reveal["commitment"] == coord.store.epoch(1).commitment
    blocked = run_cli("coordinator", "finalize", "--epoch", 1, "--mongodb-uri", uri, "--key-file", tmp / "coordinator.key", "--reward", REWARD,
                      "--multiplier-bps", 12_500, "--start-threshold-ppm", 750, "--publish-dir", pub / report)
    assert blocked.returncode == 2 and blocked.stderr.startswith("coretex coordinator: error: --publish-dir") and "Traceback" not in blocked.stderr
