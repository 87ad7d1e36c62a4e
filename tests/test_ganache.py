"""The same chain code against a real JSON-RPC node: ganache from the npm registry, started and stopped here.

Intake, the wait for the target block with confirmations, Gate and Confirm, a signed receipt, then
`coretex replay --rpc` checking the report against the node, and catching a report whose blockhash was changed.
"""
import json, os, shutil, socket, subprocess, time
from pathlib import Path
import pymongo
import pytest
from helpers import run_cli, accepted_job
from coretex.network.chain import Chain
from coretex.network.coordinator import Coordinator
from coretex.evaluator.evaluate import Evaluator
from coretex.core.keccak import keccak256, to_hex
from coretex.network.receipt import Signer, artifact_hash
from coretex.core.state import GENESIS
from coretex.network.store import EmbeddedMongo, open_db

GANACHE = "ganache@7.9.2"


def ganache_bin() -> Path:
    if shutil.which("npm") is None: pytest.skip("npm is not installed, so ganache cannot be fetched from the npm registry")
    prefix = Path(os.environ.get("CORETEX_CACHE", Path.home() / ".cache" / "coretex")) / "ganache"
    exe = prefix / "node_modules" / ".bin" / "ganache"
    if not exe.exists():
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), GANACHE], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"npm install {GANACHE} failed: {r.stderr[-500:]}"
    return exe


@pytest.fixture(scope="module")
def evaluator():
    "One Evaluator for the tests of this module (loading its corpus and models takes seconds)."
    return Evaluator()


@pytest.fixture
def node():
    exe = ganache_bin()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    p = subprocess.Popen([str(exe), "--server.host", "127.0.0.1", "--server.port", str(port), "--miner.blockTime", "0.05",
                          "--logging.quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try: Chain.connect(url); break
        except Exception:
            assert p.poll() is None and time.monotonic() < deadline, "ganache did not start"
            time.sleep(0.2)
    yield url
    p.terminate(); p.wait(10)


def test_coordinator_and_replay_over_json_rpc(node, evaluator, tmp_path):
    chain = Chain.connect(node)
    assert not chain.embedded and chain.chain_id == 1337
    db, close = open_db(path=tmp_path / "db")
    try:
        coord = Coordinator(db, chain, evaluator, Signer.load(tmp_path / "key", create=True), confirmations=3, block_timeout=60)
        secret = keccak256(b"ganache epoch")
        coord.open_epoch(1, GENESIS, secret)
        job, env = accepted_job(coord, "0x" + "99" * 20, 1)
    finally: close()
    sd = env["artifact"]["seedDerivation"]
    assert sd["targetBlock"] == sd["receivedAtBlock"] + 30 and chain.block_number() >= sd["targetBlock"] + 3
    assert sd["blockhash"] == to_hex(chain.block_hash(sd["targetBlock"]))
    report = tmp_path / "report.json"
    report.write_text(json.dumps(env))
    r = run_cli("replay", report, "--rpc", node, "--epoch-secret", to_hex(secret))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("OK  ") == 15 and "replay passed" in r.stdout
    a = env["artifact"]                                   # a forged blockhash, consistently through the re-hashed artifact
    a["receipt"]["blockhash"] = a["seedDerivation"]["blockhash"] = to_hex(keccak256(b"forged"))
    a["artifactHash"] = a["evalReportHash"] = to_hex(artifact_hash(a))
    report.write_text(json.dumps(env))
    r = run_cli("replay", report, "--rpc", node, "--epoch-secret", to_hex(secret))
    assert r.returncode == 1 and "FAIL target block: BLOCKHASH_MISMATCH" in r.stdout


def test_coordinator_registry_finalize_validator_sync_and_claim_over_json_rpc(node, evaluator, tmp_path):
    """The loop over ganache, through the installed command: a coordinator's epoch (its draws on this node) finalized and
    published with `coordinator finalize --registry`; more epochs on the contract; `validator sync` killed with SIGKILL
    mid-catch-up and run again, to the root of a clean run and the registry's live root; a reorganisation deeper than
    its confirmation depth (evm_snapshot / evm_revert) rolled back; `claim-proof --verify` against the funded root."""
    import random, signal
    from coretex.core.patch import prepare
    from coretex.network.registry import RegistryContract, publish_random_epochs, revert, snapshot
    chain, miner = Chain.connect(node), "0x" + "a1" * 20
    registry = RegistryContract.deploy(chain)
    with EmbeddedMongo(tmp_path / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        coord = Coordinator(client.coretex, chain, evaluator, Signer.load(tmp_path / "key", create=True), confirmations=3, block_timeout=60)
        coord.open_epoch(1, GENESIS, keccak256(b"ganache registry epoch"))
        accepted_job(coord, miner, 1)
        base = ["--mongodb-uri", server.uri, "--key-file", tmp_path / "key"]
        fin = run_cli("coordinator", "finalize", "--epoch", 1, *base, "--reward", 10**18, "--multiplier-bps", 12_500, "--registry", registry.address, "--rpc", node)
        assert fin.returncode == 0 and f"on registry {registry.address.lower()}: 1 advance(s) (1 sent now), finalized, funded" in fin.stdout, fin.stdout + fin.stderr
        claim = run_cli("claim-proof", "--epoch", 1, "--miner", miner, "--mongodb-uri", server.uri)
        end1 = prepare(coord.store.state(coord.store.epoch(1).root))
    (tmp_path / "claim.json").write_text(claim.stdout)
    assert json.loads(claim.stdout)["bonus_botcoin"] == str(10**18 * 2_500 // 10_000)   # decimal text: above 2^53
    ok = run_cli("claim-proof", "--verify", tmp_path / "claim.json", "--registry", registry.address, "--rpc", node)
    assert ok.returncode == 0 and "valid against root " + registry.view("bonusMerkleRoot", 1) in ok.stdout, ok.stdout + ok.stderr
    (tmp_path / "forged.json").write_text(json.dumps({**json.loads(claim.stdout), "bonus_botcoin": str(10**18)}))
    assert run_cli("claim-proof", "--verify", tmp_path / "forged.json", "--registry", registry.address, "--rpc", node).returncode == 1

    end = publish_random_epochs(registry, 2, 8, 2, end1, random.Random(3))
    sync = lambda folder, *more: ["coretex", "validator", "sync", "--rpc", node, "--registry", registry.address, "--data", str(tmp_path / folder),
                                 "--confirmations", "3", "--chunk", "40", "--json", "--skip-score-replay", *more]
    time.sleep(0.3)   # three more blocks on top (ganache mines every 50 ms)
    clean = subprocess.run(sync("clean"), capture_output=True, text=True, timeout=120)
    assert clean.returncode == 3 and json.loads(clean.stdout.splitlines()[-1])["root"] == registry.view("liveStateRoot", 9), clean.stderr
    assert [json.loads(l)["epoch"] for l in clean.stdout.splitlines()[:-1]] == list(range(1, 10))
    cursor = lambda folder: json.loads((tmp_path / folder / "cursor.json").read_text())["cursor"] if (tmp_path / folder / "cursor.json").exists() else {"block": -1}
    kills = []
    for _ in range(3):   # SIGKILL right after the next commit
        before, p = cursor("killed")["block"], subprocess.Popen(sync("killed"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while cursor("killed")["block"] == before and p.poll() is None and time.monotonic() < deadline: time.sleep(0.005)
        p.send_signal(signal.SIGKILL); p.wait(); kills.append(cursor("killed")["block"])
    resumed = subprocess.run(sync("killed"), capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 3 and 0 < kills[0] and kills == sorted(kills), (kills, resumed.stderr)
    assert {k: cursor("killed")[k] for k in ("root", "next_index")} == {k: cursor("clean")[k] for k in ("root", "next_index")}
    assert cursor("killed")["root"] == registry.view("liveStateRoot", 9) == to_hex(end.root)

    snap = snapshot(chain)                                  # a fork deeper than 3 confirmations: epochs 10-11 replaced
    publish_random_epochs(registry, 10, 2, 1, end, random.Random(4)); time.sleep(0.3)
    assert subprocess.run(sync("clean"), capture_output=True, text=True, timeout=120).returncode == 3
    revert(chain, snap)
    chain.w3.eth.send_transaction({"from": chain.w3.eth.accounts[1], "to": chain.w3.eth.accounts[2], "value": 1})
    fork = publish_random_epochs(registry, 10, 1, 2, end, random.Random(5)); time.sleep(0.5)
    after = subprocess.run(sync("clean"), capture_output=True, text=True, timeout=120)
    assert after.returncode == 3 and "reorg deeper than 3 confirmations" in after.stderr, after.stderr
    assert json.loads(after.stdout.splitlines()[-1])["root"] == to_hex(fork.root) == registry.view("liveStateRoot", 10)


def test_mining_contract_commit_and_reveal_over_json_rpc(node):
    """The mining contract on ganache: an epoch opened on both contracts with its commitment, read as a validator reads
    it at a block (the secret unrevealed, then revealed), a reveal of another secret refused by the contract, and a
    mining commit that is not the registry's hidden-seed commit caught."""
    from coretex.network.follower import Reader, SyncError
    from coretex.network.mining import MiningContract, mining_context, open_epoch
    from coretex.network.registry import EpochPins, RegistryContract, RegistryError
    chain = Chain.connect(node)
    reg = RegistryContract.deploy(chain)
    mining = MiningContract.deploy(chain, reg.address)
    pins, secret = EpochPins(*(keccak256(bytes([i])) for i in range(4))), keccak256(b"ganache mining epoch")
    commit = open_epoch(reg, mining, 1, keccak256(b"parent"), pins, secret)
    before = chain.block_number()
    with pytest.raises(RegistryError, match="EpochSecretCommitMismatch"): mining.reveal(1, keccak256(b"other"))
    mining.reveal(1, secret)
    reader = Reader(reg, tries=1)
    assert mining_context(reader, mining, before) == {"epoch": 1, "epochCommit": commit, "epochSecret": None}
    assert mining_context(reader, mining, chain.block_number())["epochSecret"] == to_hex(secret)
    reg.set_context(2, keccak256(b"parent"), pins, keccak256(b"registry's commit"))
    mining.set_context(2, keccak256(b"parent"), pins); mining.commit(2, keccak256(b"mining's commit")); mining.set_epoch(2)
    with pytest.raises(SyncError) as e: mining_context(reader, mining, chain.block_number())
    assert e.value.code == "HIDDEN_SEED_COMMIT_MISMATCH" and "V4 epochCommit 0x" in e.value.message
