"""A coordinator killed mid-evaluation and restarted finishes the job with the same packs and verdict, credited once.

The database runs in its own process (the embedded MongoDB wire-protocol server), as it would in production;
the coordinator's worker is a real `coretex coordinator work` process, killed with SIGKILL while it scores.
"""
import os, signal, subprocess, time
from coretex.network.chain import Chain
from coretex.network.coordinator import Coordinator
from coretex.evaluator.evaluate import Evaluator, evaluate_patch
from coretex.core.keccak import keccak256, from_hex
from coretex.network.receipt import Signer
from coretex.core.state import GENESIS
from helpers import abstain_patch
from coretex.network.store import EmbeddedMongo

SECRET = keccak256(b"crash test epoch secret")


def worker(uri, key, data):
    env = {**os.environ, "CORETEX_DATA": str(data)}
    env.pop("CORETEX_RPC_URL", None)
    return subprocess.Popen(["coretex", "coordinator", "work", "--once", "--lease", "2", "--mongodb-uri", uri, "--key-file", str(key)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_killed_coordinator_resumes_with_the_same_draw(tmp_path):
    import pymongo
    with EmbeddedMongo(tmp_path / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        db = client.coretex
        ev, key = Evaluator(), tmp_path / "coordinator.key"
        coord = Coordinator(db, Chain.connect(), ev, Signer.load(key, create=True))
        coord.open_epoch(1, GENESIS, SECRET)
        patch = abstain_patch()
        job = coord.intake("0x" + "77" * 20, patch.hex(), 1)
        drawn = coord.draw(job["jobId"])                                     # the triple is stored before scoring
        triple = (drawn.received_at_block, drawn.target_block, drawn.blockhash)

        p = worker(server.uri, key, tmp_path)
        deadline = time.monotonic() + 120
        while db.jobs.find_one({"_id": job["jobId"]}).get("scoringStartedAt") is None:
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "worker never started scoring"
            time.sleep(0.01)
        # killed at once: a cold first evaluation takes about 0.3 s, and a later kill can land after its verdict is cached
        p.send_signal(signal.SIGKILL); p.communicate()
        killed = db.jobs.find_one({"_id": job["jobId"]})
        assert killed["status"] == "running", "the worker finished before it could be killed: the test proved nothing"
        assert db.results.count_documents({}) == 0 and db.epochs.find_one({"_id": 1})["credited"] == []

        p = worker(server.uri, key, tmp_path)
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        done = db.jobs.find_one({"_id": job["jobId"]})
        assert done["status"] == "done" and (done["receivedAtBlock"], done["targetBlock"], done["blockhash"]) == triple
        env = db.results.find_one({"_id": job["dedupKey"]})["envelope"]
        uninterrupted = evaluate_patch(ev, GENESIS, patch, from_hex(triple[2]), SECRET, 1).to_json()
        assert env["evaluation"] == uninterrupted                            # same packs, scores and verdict
        if env["status"] == "accepted": assert env["artifact"]["receipt"]["blockhash"] == triple[2]
        credited = [job["jobId"]] if env["outcome"] == "STATE_ADVANCE" else []
        assert db.epochs.find_one({"_id": 1})["credited"] == credited

        p = worker(server.uri, key, tmp_path)                                # nothing left: still credited once
        p.communicate(timeout=300)
        assert db.epochs.find_one({"_id": 1})["credited"] == credited \
            and db.results.count_documents({}) == 1
