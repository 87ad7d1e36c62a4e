"""One loop on the in-process chain: a coordinator serves and finalizes epochs (real evaluation, embedded MongoDB),
publishes them to coretex's registry contract on the same chain, more epochs follow on the contract, and the
registry follower (what `coretex validator sync` runs) reproduces the registry's live root; a miner's claim checks
against the bonus root the funding put on chain. Then the follower killed with SIGKILL mid-catch-up (a forked
process reading the same chain) resumes to the cursor of a clean run; a reorganisation deeper than the confirmation
depth is rolled back; and a node that forges any of 11 event fields is caught with the reference's code, the code
the reference's own replay (reproduced in 47_registry) gives on the same logs."""
import json, os, random, signal, time
import pymongo
import pytest
from helpers import abstain_patch, accepted_job
from coretex.core.keccak import keccak256, to_hex
from coretex.core.patch import make_patch, patch_hash, prepare
from coretex.core.state import GENESIS
from coretex.economy.registry import (decode_epoch_finalized_log, decode_state_advanced_log, epoch_finalized_log,
                                      replay_registry_logs, state_advanced_log)
from coretex.evaluator.evaluate import Evaluator
from coretex.network.chain import Chain
from coretex.network.coordinator import Coordinator
from coretex.network.finalize import EconomyPolicy, check_claim, claim_proof, coordinator_pins, publish_epoch
from coretex.network.follower import Follower, Reader, Store, SyncError
from coretex.network.rescore import Reports, Rescored, rescore_backlog
from coretex.network.receipt import Signer
from coretex.network.registry import RegistryContract, publish_random_epochs, registry_logs, revert, snapshot
from coretex.network.store import EmbeddedMongo

A, B = "0x" + "a1" * 20, "0x" + "b2" * 20
POLICY = EconomyPolicy(target_advances=1, epoch_reward_botcoin=10**18, multiplier_bps=12_500)
MADE_UP = 6    # epochs 3..8 of random advances after the coordinator's two
FORGED_EPOCH = 4


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    "Epoch 1 (one advance by A, a rejection by B) and epoch 2 (a rejection) served, finalized and published; 12 more epochs on the contract."
    tmp = tmp_path_factory.mktemp("validator")
    with EmbeddedMongo(tmp / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        chain = Chain.connect()
        ev = Evaluator()
        coord = Coordinator(client.coretex, chain, ev, Signer.load(tmp / "coordinator.key", create=True))
        registry = RegistryContract.deploy(chain)
        coord.open_epoch(1, GENESIS, keccak256(b"epoch 1"))
        _, envelope = accepted_job(coord, A, 1)
        coord.process(coord.intake(B, abstain_patch(20, coord.store.state(coord.store.epoch(1).root)).hex(), 1)["jobId"])
        rec1 = coord.store.finalize_epoch(1, POLICY)
        published = publish_epoch(coord.store, registry, 1)
        coord.open_epoch(2, coord.store.state(rec1.new_state_root), keccak256(b"epoch 2"))
        coord.process(coord.intake(B, abstain_patch(21, coord.store.state(rec1.new_state_root)).hex(), 2)["jobId"])
        rec2 = coord.store.finalize_epoch(2, POLICY)
        publish_epoch(coord.store, registry, 2, coordinator_pins(ev, coord.store.epoch(2)))
        end = publish_random_epochs(registry, 3, MADE_UP, 2, prepare(coord.store.state(rec2.new_state_root)), random.Random(5))
        logs = registry_logs(chain, registry.address, registry.deploy_block, chain.block_number())
        pins = {e: registry.epoch_pins(e).as_dict() for e in range(1, 3 + MADE_UP)}
        reveal = {"epochId": 1, "epochSecret": to_hex(coord.store.secret(1)), "commitment": coord.store.epoch(1).commitment}
        yield {"chain": chain, "registry": registry, "records": (rec1, rec2), "published": published, "end": end, "logs": logs, "pins": pins,
               "ev": ev, "envelope": envelope, "reveal": reveal}


def follower(network, folder, reader=None, **kw) -> Follower:
    reader = reader or Reader(network["registry"], tries=2, backoff=0.01, say=lambda line: None)
    return Follower(reader, Store(folder), say=lambda line: None, **{"confirmations": 0, "chunk": 6, "from_block": network["registry"].deploy_block, **kw})


def test_the_coordinator_s_epochs_go_on_chain_and_the_follower_reproduces_the_live_root(network, tmp_path):
    reg, (rec1, rec2) = network["registry"], network["records"]
    assert network["published"] == {"epoch": 1, "registry": reg.address.lower(), "advances": 1, "on_chain_advances": 1,
                                    "finalized": True, "funded": True, "merkle_root": rec1.merkle_root}
    lines = []
    report = Follower(Reader(reg, tries=2, backoff=0.01), Store(tmp_path), confirmations=0, chunk=6, say=lines.append).sync_once()   # from the deployment, found by bisection
    last = 2 + MADE_UP
    assert report.root == reg.view("liveStateRoot", last) == to_hex(network["end"].root)
    assert (report.epoch, report.epoch_advances, report.applied) == (last, 2, 1 + 2 * MADE_UP)
    assert len(lines) == last and lines[-1] == f"epoch {last}: 2 advances, final root {report.root} verified"
    assert lines[:2] == [f"epoch 1: 1 advances, final root {rec1.new_state_root} verified", f"epoch 2: 0 advances, final root {rec2.new_state_root} verified"]
    claim = claim_proof(rec1, A)   # A's merge bonus, checked against the root on chain, not the one the claim names
    assert check_claim(claim, reg.view("bonusMerkleRoot", 1)) and not check_claim({**claim, "bonus_botcoin": str(int(claim["bonus_botcoin"]) + 1)}, reg.view("bonusMerkleRoot", 1))
    assert reg.view("bonusMerkleRoot", 1) == rec1.merkle_root != "0x" + "00" * 32
    # the reference's replay agrees on the whole history: every epoch is finalized, so its one final-root check holds
    ref = replay_registry_logs(GENESIS, network["logs"], policy_atoms_mode=True, expected_pins_for_epoch=network["pins"].get)
    assert (ref.ok, ref.reproduced_final_root) == (True, report.root)


def test_the_coordinator_s_advance_is_rescored_from_its_signed_report_and_revealed_secret(network, tmp_path):
    f = follower(network, tmp_path / "f", track=True)
    f.sync_once()
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "envelope.json").write_text(json.dumps(network["envelope"]))
    waits = rescore_backlog(f, Reports.load(tmp_path / "reports"), lambda entry: network["ev"])
    (tmp_path / "reports" / "reveal.json").write_text(json.dumps(network["reveal"]))
    done = rescore_backlog(f, Reports.load(tmp_path / "reports"), lambda entry: network["ev"])
    made_up = 2 * MADE_UP   # their advances have no report
    assert (waits, done) == (Rescored(0, {"awaiting the epoch secret": 1, "no report": made_up}), Rescored(1, {"no report": made_up}))
    assert [(b["epoch"], b["index"]) for b in f.backlog()][:2] == [(3, 0), (3, 1)]


def test_kill_9_mid_catch_up_resumes_to_the_cursor_of_a_clean_run(network, tmp_path):
    clean = follower(network, tmp_path / "clean", chunk=3).sync_once()
    killed = tmp_path / "killed"
    block = lambda: json.loads((killed / "cursor.json").read_text())["cursor"]["block"] if (killed / "cursor.json").exists() else -1
    kills = []
    for _ in range(3):   # each time: a child follows the same (copied) chain; SIGKILL right after its next commit
        before, pid = block(), os.fork()
        if pid == 0:
            try: follower(network, killed, chunk=3).sync_once()
            finally: os._exit(0)
        deadline = time.monotonic() + 30
        while block() == before and time.monotonic() < deadline: time.sleep(0.002)
        os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
        kills.append(block())
    resumed = follower(network, killed, chunk=3).sync_once()
    cursor = lambda d: json.loads((tmp_path / d / "cursor.json").read_text())["cursor"]
    assert kills == sorted(kills) and 0 < kills[0] < clean.block   # killed mid-catch-up, each run further on
    assert resumed.root == clean.root and cursor("killed") == cursor("clean")
    assert not list(killed.glob("**/*.tmp*"))


def test_a_reorg_deeper_than_the_confirmation_depth_is_rolled_back(network, tmp_path):
    chain, reg = network["chain"], network["registry"]
    snap, last = snapshot(chain), 2 + MADE_UP
    live = Store(tmp_path / "s").get_state(follower(network, tmp_path / "s").sync_once().root)
    publish_random_epochs(reg, last + 1, 3, 1, live, random.Random(6))
    chain.mine(3)
    lines = []
    old = follower(network, tmp_path / "s", confirmations=2).sync_once()
    revert(chain, snap)
    back = snapshot(chain)   # the fixture's chain, restored after the test
    chain.w3.eth.send_transaction({"from": chain.w3.eth.accounts[1], "to": chain.w3.eth.accounts[2], "value": 1})
    new_end = publish_random_epochs(reg, last + 1, 2, 2, live, random.Random(7))
    chain.mine(3)
    reader = Reader(reg, tries=2, backoff=0.01, say=lines.append)
    new = Follower(reader, Store(tmp_path / "s"), confirmations=2, chunk=6, say=lines.append).sync_once()
    assert (old.epoch, new.epoch) == (last + 3, last + 2)
    assert new.root == to_hex(new_end.root) == reg.view("liveStateRoot", last + 2) != old.root
    assert any(l.startswith(f"reorg deeper than 2 confirmations: block {old.block} changed") for l in lines)
    revert(chain, back)


def forged(kind: str, logs: list) -> list:
    "The logs with one event changed as `kind` says (re-encoded as the contract would encode it)."
    first = next(i for i, l in enumerate(logs) if (a := decode_state_advanced_log(l)) and (a["epoch"], a["transition_index"]) == (FORGED_EPOCH, 0))
    a, log = decode_state_advanced_log(logs[first]), logs[first]
    rewrite = lambda **kw: state_advanced_log({**a, **kw}, log["address"], int(log["blockNumber"], 16), int(log["logIndex"], 16))
    other = "0x" + "5a" * 32
    stale = make_patch(keccak256(b"another parent"), {40: 1 << 48}, 0x02)
    fin = next(i for i, l in enumerate(logs) if (f := decode_epoch_finalized_log(l)) and f["epoch"] == a["epoch"])
    f, flog = decode_epoch_finalized_log(logs[fin]), logs[fin]
    refin = lambda **kw: epoch_finalized_log({**f, **kw}, flog["address"], int(flog["blockNumber"], 16), int(flog["logIndex"], 16))
    change = {"OUT_OF_ORDER": (first, None),
              "CORE_VERSION_MISMATCH": (first, rewrite(core_version_hash=other)),
              "CORPUS_ROOT_MISMATCH": (first, rewrite(corpus_root=other)),
              "ACTIVE_FRONTIER_ROOT_MISMATCH": (first, rewrite(active_frontier_root=other)),
              "STATE_PARENT_MISMATCH": (first, rewrite(parent_state_root=other)),
              "NO_PATCH_BYTES": (first, rewrite(compact_patch_bytes=b"")),
              "PATCH_HASH_MISMATCH": (first, rewrite(patch_hash=other)),
              "APPLY_FAILED": (first, rewrite(compact_patch_bytes=stale, patch_hash=to_hex(patch_hash(stale)))),
              "NEW_ROOT_MISMATCH": (first, rewrite(new_state_root=other)),
              "BASELINE_MANIFEST_HASH_MISMATCH": (fin, refin(baseline_manifest_hash=other)),
              "FINAL_ROOT_MISMATCH": (fin, refin(final_state_root=other))}[kind]
    return [l if i != change[0] else change[1] for i, l in enumerate(logs) if not (i == change[0] and change[1] is None)]


TAMPERS = ("OUT_OF_ORDER", "CORE_VERSION_MISMATCH", "CORPUS_ROOT_MISMATCH", "ACTIVE_FRONTIER_ROOT_MISMATCH", "BASELINE_MANIFEST_HASH_MISMATCH",
           "STATE_PARENT_MISMATCH", "NO_PATCH_BYTES", "PATCH_HASH_MISMATCH", "APPLY_FAILED", "NEW_ROOT_MISMATCH", "FINAL_ROOT_MISMATCH")


@pytest.mark.parametrize("kind", TAMPERS)
def test_a_node_forging_an_event_is_caught_with_the_reference_code(network, tmp_path, kind):
    reg = network["registry"]
    lying = Reader(reg, tries=1, say=lambda line: None, logs=lambda *a: forged(kind, network["logs"]))   # the whole history, one field forged
    with pytest.raises(SyncError) as e: follower(network, tmp_path, reader=lying, chunk=10**6).sync_once()
    assert e.value.code == kind and not (tmp_path / "cursor.json").exists()   # nothing committed past the forgery
    # the reference's replay on the same forged logs, up to the forged epoch's finalization (the last finalized event is
    # the only one it checks), with the registry's pins per epoch, gives the same code
    logs = forged(kind, network["logs"])
    upto = [l for l in logs if ((decode_state_advanced_log(l) or decode_epoch_finalized_log(l))["epoch"]) <= FORGED_EPOCH]
    ref = replay_registry_logs(GENESIS, upto, policy_atoms_mode=True, expected_pins_for_epoch=network["pins"].get)
    assert ref.code == kind
