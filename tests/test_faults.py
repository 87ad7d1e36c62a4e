"""Faults and load against real processes (the scenarios of bench/_service.py with small counts; the benchmark
runs the full ones and prints the figures collected in bench/RESULTS.md)."""
import sys
from pathlib import Path
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import _service as sv


@pytest.fixture(scope="module")
def serving(tmp_path_factory):
    with sv.served(tmp_path_factory.mktemp("load"), "--rate", 1_000_000, "--requests", 1_000_000) as s: yield s


def test_one_patch_sent_100_times_at_once_is_evaluated_once(serving):
    f = sv.same_patch(serving, 100)
    assert (f["accepted"], f["duplicate_in_flight"] + f["cached"], f["other"], f["jobs"]) == (1, 99, 0, 1), f


def test_distinct_submissions_queue_without_loss(serving):
    f = sv.distinct(serving, 200, threads=8)
    assert f["accepted"] == f["distinct_ids"] == f["stored"] == f["readable"] == 200, f


def test_slow_clients_do_not_delay_a_fast_one(serving):
    f = sv.slow_clients(serving, 50, k=10)
    assert f["with_slow_max_ms"] < 1000, f


def test_rejected_requests_do_not_grow_memory(tmp_path):
    # a server of its own: the shared one's worker is still evaluating the queued jobs, and its caches grow meanwhile
    with sv.served(tmp_path, "--rate", 1_000_000, "--requests", 1_000_000) as s: f = sv.rejected_flood(s, 4000, threads=4)
    # keeping the 2,000 unique 15 KB miner strings, as the old limiter did, would add about 30 MB
    assert f["codes"] == {400: 2000, 404: 2000} and f["growth_mb"] < 15, f


def test_the_rpc_node_never_gets_an_unconfirmed_hash_scored(tmp_path):
    f = sv.rpc_faults(tmp_path)
    assert f["reorg"]["drawn"] == "0x" + "1a" * 32 and f["reorg"]["early_served"], f      # the early hash was served, not drawn
    for case in ("flap", "gone"):
        assert f[case]["drawn"] is None and f[case]["stored_blockhash"] is None and f[case]["status"] == "failed", f
        assert "not confirmed within 5s" in f[case]["error"] and f[case]["inflight_left"] == 0, f


def test_killed_coordinators_lose_nothing_and_credit_once(tmp_path):
    f = sv.kill9(tmp_path, runs=2, seed=3)
    assert f["lost"] == 0 and f["done"] == f["credited_once"] == f["identical_verdicts"] == 2 and f["results"] == 3, f


def test_the_database_restarted_under_serve(tmp_path):
    f = sv.db_restart(tmp_path, down_s=3)
    assert f["before"] == 202 and f["during"] == [503, "database_unavailable"] and f["after"] == 202, f
    assert f["first_job"] == "done" and f["serve_alive"], f


def test_secrets_never_leak_before_reveal(tmp_path):
    f = sv.secrets(tmp_path)
    assert f["hits"] == [] and f["revealed"] and f["files"] >= 2, f
