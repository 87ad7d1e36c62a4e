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
