"Each replay check catches a report in which exactly its own field was tampered with."
import copy, tempfile
import pytest
from coretex.chain import Chain
from coretex.coordinator import Coordinator
from coretex.evaluate import Evaluator
from coretex.keccak import keccak256, to_hex
from coretex.layout import encode_relation
from coretex.patch import make_patch
from coretex.receipt import Signer
from coretex.replay import replay
from coretex.state import GENESIS, state_root
from coretex.store import open_db

SECRET = keccak256(b"tamper epoch secret")


@pytest.fixture(scope="module")
def signed():
    d = tempfile.mkdtemp()
    db, close = open_db(path=d)
    ev, chain = Evaluator(), Chain.connect()
    coord = Coordinator(db, chain, ev, Signer.load(f"{d}/key", create=True))
    coord.open_epoch(5, GENESIS, SECRET)
    job = coord.intake("0x" + "cd" * 20, make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04).hex(), 5)
    env = coord.process(job["jobId"])
    yield env, chain, ev
    close()


def results(env, chain, ev, secret=SECRET, signer=None):
    return {name: ok for name, ok, _ in replay(env, chain, ev, secret, signer)}


def test_untouched_report_replays(signed):
    assert all(results(*signed).values())


def flip(h: str) -> str:
    return h[:-1] + ("0" if h[-1] != "0" else "1")


TAMPERS = {
    "patch hashes": lambda e: e["report"]["receipt"].__setitem__("dedupKey", flip(e["report"]["receipt"]["dedupKey"])),
    "parent state": lambda e: e["report"].__setitem__("parentState", e["report"]["parentState"][:-2] + "01"),
    "target block": lambda e: e["report"]["seedDerivation"].__setitem__("blockhash", to_hex(keccak256(b"other block"))),
    "seeds": lambda e: e["report"]["receipt"].__setitem__("gateSeed", flip(e["report"]["receipt"]["gateSeed"])),
    "report hash": lambda e: e.__setitem__("evalReportHash", flip(e["evalReportHash"])),
    "signature": lambda e: e["signedReceipt"].__setitem__("signature", e["signedReceipt"]["signature"][:-4] + "abcd"),
    "rescore": lambda e: e["report"]["receipt"].__setitem__("gateDeltaPpm", e["report"]["receipt"]["gateDeltaPpm"] + 10_000),
}


@pytest.mark.parametrize("check", sorted(TAMPERS))
def test_each_tamper_is_caught_by_its_check(signed, check):
    env, chain, ev = signed
    bad = copy.deepcopy(env)
    TAMPERS[check](bad)
    assert results(bad, chain, ev)[check] is False


def test_wrong_secret_is_caught(signed):
    env, chain, ev = signed
    r = results(env, chain, ev, secret=keccak256(b"guess"))
    assert r["epoch secret"] is False and r["seeds"] is False


def test_unexpected_signer_is_caught(signed):
    env, chain, ev = signed
    assert results(env, chain, ev, signer="0x" + "00" * 20)["signature"] is False
