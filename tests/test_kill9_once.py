"""A job whose evaluation kill -9 cuts off is evaluated again at most once: `coretex coordinator serve` killed twice in
the middle of the same job's evaluation, then started again, fails the job (its evaluation started twice) rather than
starting it a third time, and nothing is credited or stranded."""
import signal, subprocess, sys, time
from pathlib import Path
import pytest
from coretex.network.store import EmbeddedMongo, free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _service import call, env_for, LENS

VICTIM = "0x" + "42" * 20


def serve(port: int, uri: str, env: dict) -> subprocess.Popen:
    "`coordinator serve` with a 2 s lease, once it is listening."
    p = subprocess.Popen(["coretex", "coordinator", "serve", "--port", str(port), "--mongodb-uri", uri, "--lease", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    while not any("listening" in l for l in lines):
        line = p.stdout.readline()
        assert line, "".join(lines)
        lines.append(line)
    return p


def wait_for(jobs, job: str, test, limit: float = 180) -> dict:
    deadline = time.monotonic() + limit
    while not test(d := jobs.find_one({"_id": job})):
        assert time.monotonic() < deadline, d
        time.sleep(0.02)
    return d


def test_two_kills_in_one_evaluation_leave_it_evaluated_twice_and_failed(tmp_path):
    import pymongo
    with EmbeddedMongo(tmp_path / "db") as db, pymongo.MongoClient(db.uri) as c:
        env, port = env_for(tmp_path / "data"), free_port()
        p = serve(port, db.uri, env)
        status, body = call(f"http://127.0.0.1:{port}/v1/patches", {"miner": VICTIM, "patch": LENS, "epochId": 1})
        assert status == 202, body
        job, jobs, seen = body["jobId"], c.coretex.jobs, []
        for kill in (1, 2):   # kill -9 while the job's evaluation number `kill` runs
            seen.append(wait_for(jobs, job, lambda d: d.get("evaluations", 0) >= kill)["evaluations"])
            p.send_signal(signal.SIGKILL); p.wait(10); p.stdout.close()
            p = serve(port, db.uri, env)
        try: d = wait_for(jobs, job, lambda d: d["status"] in ("done", "failed"))
        finally: p.terminate(); out = p.communicate(timeout=60)[0]
        assert seen == [1, 2]                                                  # each kill landed in an evaluation
        assert (d["status"], d["evaluations"]) == ("failed", 2), d             # not started a third time
        assert "EvaluationCutOff" in d["error"] and "Traceback" not in out, (d, out)
        assert c.coretex.inflight.count_documents({}) == 0                    # released: the miner may send the patch again
        assert c.coretex.results.count_documents({}) == 0                     # nothing signed or credited for it
