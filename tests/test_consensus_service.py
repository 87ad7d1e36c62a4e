"Consensus hardening: huge response times, and the weight loop with the clean-up as one scheduled command."
import json, os, subprocess
from datetime import datetime, timedelta, timezone
import pytest
from coretex.consensus.seed_rules import ConsensusConfig, ConsensusResult, ConsensusStore, evaluate_challenge, ice_responses
from coretex.network.store import EmbeddedMongo


def test_huge_response_times_do_not_overflow_the_emissions():
    rows = ice_responses()[:4]
    rows[0]["response_time_ms"] = rows[1]["response_time_ms"] = 1e308
    r = evaluate_challenge(rows, ConsensusConfig(heatmap=False))
    slow, fast = [r.emissions[m] for m in ("m01", "m02")], [r.emissions[m] for m in ("m03", "m04")]
    assert all(0 <= e < 1.18 for e in slow + fast) and min(fast) > max(slow)


def test_consensus_service_sets_weights_and_cleans_up_then_stops(tmp_path):
    import pymongo
    with EmbeddedMongo(tmp_path / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        st, now = ConsensusStore(client.coretex), datetime.now(timezone.utc)
        res = ConsensusResult(0.9, True, ["x", "y"], [], {"x": 80.0, "y": 60.0}, {"x": 0.5, "y": 0.2}, None, 0.7, sybil=[["x", "y"]])
        st.record("old", "p", [], res, now - timedelta(hours=49))
        st.record("new", "p", [], res, now - timedelta(minutes=5))
        env = {**os.environ, "CORETEX_DATA": str(tmp_path / "data")}
        r = subprocess.run(["coretex", "consensus-service", "--mongodb-uri", server.uri, "--interval", "1s", "--rate-limit", "1s", "--for", "3.5s"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        assert 2 <= r.stdout.count("weights: set") <= 4 and r.stdout.count("clean-up:") == 1
        db = client.coretex
        assert [c["_id"] for c in db.challenges.find()] == ["new"] and db.sybil.count_documents({}) == 2
        w = db.weights.find_one(sort=[("timestamp", -1)])["weights"]
        assert w == pytest.approx({"x": 0.5 / 0.7, "y": 0.2 / 0.7})
