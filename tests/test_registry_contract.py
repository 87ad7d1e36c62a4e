"""The committed contracts (the registry and the mining contract) are what their committed sources compile to: npm
`solc@0.8.28` (cached like ganache in test_ganache.py) recompiles each fixtures/registry/*.sol with
fixtures/registry/compile.js, and the abi, bytecode and deployed bytecode equal the artifact's byte for byte."""
import json, os, shutil, subprocess
from pathlib import Path
import pytest
from helpers import ROOT

SOLC = "solc@0.8.28"
FIXTURE = ROOT / "fixtures" / "registry"


def solc_module() -> Path:
    if shutil.which("npm") is None or shutil.which("node") is None: pytest.skip("npm is not installed, so solc cannot be fetched from the npm registry")
    prefix = Path(os.environ.get("CORETEX_CACHE", Path.home() / ".cache" / "coretex")) / "solc"
    module = prefix / "node_modules" / "solc"
    if not (module / "soljson.js").exists():
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), SOLC], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"npm install {SOLC} failed: {r.stderr[-500:]}"
    return module


@pytest.mark.parametrize("name", ["CoretexTestRegistry", "CoretexTestMining"])
def test_the_artifact_is_its_source_compiled(tmp_path, name):
    module = solc_module()
    out = tmp_path / f"{name}.json"
    r = subprocess.run(["node", str(FIXTURE / "compile.js"), str(module), str(FIXTURE / f"{name}.sol"), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-800:]
    again, committed = json.loads(out.read_text()), json.loads((FIXTURE / f"{name}.json").read_text())
    assert again["compiler"] == committed["compiler"] == "0.8.28+commit.7893614a.Emscripten.clang"
    assert (again["abi"], again["bytecode"], again["deployedBytecode"], again["settings"]) == \
           (committed["abi"], committed["bytecode"], committed["deployedBytecode"], committed["settings"])
    assert out.read_bytes() == (FIXTURE / f"{name}.json").read_bytes()
