"""A worker that dies holding a STATE_ADVANCE job (as under kill -9: no exception handler runs, its lease is not given
back) leaves the job to another worker once its lease runs out, and the advance is credited exactly once, whether it
died before crediting or after crediting and before marking the job done; the verdict is not evaluated again."""
import pytest
from coretex.network.chain import Chain
from coretex.network.coordinator import Coordinator, work
from coretex.core.keccak import keccak256
from coretex.evaluator.evaluate import Evaluator
import coretex.network.finalize   # noqa: F401  (adds epoch_verdicts to the store)
from coretex.network.receipt import Signer
from coretex.core.state import GENESIS
from coretex.network.store import EmbeddedMongo
from helpers import abstain_patch


class Killed(BaseException):
    "The worker's process ending where it stood: nothing below it runs."


@pytest.fixture(scope="module")
def coord(tmp_path_factory):
    import pymongo
    tmp = tmp_path_factory.mktemp("credit-once")
    with EmbeddedMongo(tmp / "db") as server, pymongo.MongoClient(server.uri, tz_aware=True) as client:
        yield Coordinator(client.coretex, Chain.connect(), Evaluator(), Signer.load(tmp / "coordinator.key", create=True))


@pytest.mark.parametrize("epoch, dies", [(1, "before crediting"), (2, "after crediting")])
def test_an_advance_is_credited_once_after_its_worker_dies(coord, monkeypatch, epoch, dies):
    coord.open_epoch(epoch, GENESIS, keccak256(b"credit once %d" % epoch))
    real = Coordinator.advance
    def dying(self, job, parent, env):
        if dies == "after crediting": real(self, job, parent, env)
        raise Killed
    for k in range(16 * (epoch - 1), 16 * epoch):   # the verdict depends on the draw: patches until one advances (a cell per epoch: no cached verdicts)
        job = coord.intake("0x" + "5a" * 20, abstain_patch(k).hex(), epoch)["jobId"]
        assert coord.store.take("dead-worker", term=0.3).id == job
        with monkeypatch.context() as m:
            m.setattr(Coordinator, "advance", dying)
            with pytest.raises(Killed): coord.process(job)
        held = coord.store.db.jobs.find_one({"_id": job})
        assert (held["status"], held["owner"]) == ("running", "dead-worker")
        credited = coord.store.epoch(epoch).credited
        assert list(credited) == ([job] if dies == "after crediting" and coord.store.verdict(held["dedupKey"])["outcome"] == "STATE_ADVANCE" else [])
        assert job in [v.job_id for v in coord.store.epoch_verdicts(epoch)]   # finalization reads its verdict meanwhile
        work(coord, once=True, term=0.3, poll=0.1, log=lambda *_: None)   # takes it when the dead worker's lease runs out
        done = coord.store.db.jobs.find_one({"_id": job})
        assert (done["status"], done["evaluations"]) == ("done", 1)        # finished from its saved verdict, not evaluated again
        if coord.store.verdict(done["dedupKey"])["outcome"] == "STATE_ADVANCE": break
    else: pytest.fail("no abstention patch advanced in 16 draws")
    assert list(coord.store.epoch(epoch).credited) == [job]
    assert coord.store.epoch(epoch).root == coord.store.verdict(done["dedupKey"])["newStateRoot"]
