"""The example systemd unit of `coretex coordinator serve` (deploy/): systemd's own checker accepts it, and its
environment file gives every variable its command line uses."""
import re, shutil, subprocess
from pathlib import Path
import pytest

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def test_the_unit_passes_systemd_analyze_verify(tmp_path):
    if not shutil.which("systemd-analyze"): pytest.skip("systemd-analyze is not installed here")
    coretex = shutil.which("coretex")
    unit = tmp_path / "coretex-coordinator.service"   # the unit as installed, with this machine's coretex in ExecStart
    unit.write_text((DEPLOY / unit.name).read_text().replace("/usr/local/bin/coretex", coretex))
    r = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr


def test_the_environment_file_sets_what_the_unit_uses():
    unit, env = (DEPLOY / "coretex-coordinator.service").read_text(), (DEPLOY / "coordinator.env").read_text()
    used = set(re.findall(r"\$\{(\w+)\}", unit))
    set_ = {l.split("=", 1)[0] for l in env.splitlines() if l and not l.startswith("#")}
    assert used and used <= set_, used - set_
    exec_start = next(l for l in unit.splitlines() if l.startswith("ExecStart="))
    from coretex.cli import build_parser
    argv = re.sub(r"\$\{(\w+)\}", lambda m: {"CORETEX_HOST": "127.0.0.1"}.get(m[1], "1"), exec_start).split()[1:]
    assert build_parser().parse_args(argv).metrics_port == 1   # the command line parses, its options exist
