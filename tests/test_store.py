"The embedded MongoDB server never outlives the coretex process that started it."
import os, signal, subprocess, sys, time
import pytest

START = ("from coretex.network.store import EmbeddedMongo; import sys, time; "
         "m = EmbeddedMongo(sys.argv[1]).start(); print(m.proc.pid, flush=True); time.sleep(120)")


def _running(pid: int) -> bool:
    try: return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except OSError: return False


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_server_stops_when_its_parent_dies(tmp_path, sig):
    parent = subprocess.Popen([sys.executable, "-c", START, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    server = int(parent.stdout.readline())
    assert _running(server)
    os.kill(parent.pid, sig)
    parent.wait(10)
    deadline = time.monotonic() + 10
    while _running(server) and time.monotonic() < deadline: time.sleep(0.1)
    assert not _running(server), f"server {server} outlived its parent killed by {sig.name}"


def test_no_query_in_coretex_projects_a_nested_field():
    "nx-27017 answers a projection of a dotted field without the field (52_store): no find in coretex may name one."
    import re
    from pathlib import Path
    projection = re.compile(r"\.find(?:_one(?:_and_\w+)?)?\((?:[^()]|\([^()]*\))*?,\s*\{[^{}]*[\"'][\w$]+\.[\w.$]+[\"']\s*:\s*(?:1|True|0|False)")
    found = [f"{p.name}: {m.group(0)[:80]}" for p in (Path(__file__).resolve().parents[1] / "coretex").rglob("*.py")
             for m in projection.finditer(p.read_text())]
    assert found == []
    assert projection.search('db.results.find({}, {"envelope.outcome": 1})')   # what it would catch
    assert not projection.search('db.results.count_documents({"envelope.outcome": o})')
