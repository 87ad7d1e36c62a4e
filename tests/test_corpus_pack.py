"""The packed corpus form (35a_cache `pack_corpus` / `open_corpus`) against the JSON form it was written from: the same
root, documents and events, the same stage-1 lists, and byte-identical evaluator reports on a sample of the evaluator
vectors' 310 cases (every 10th, plus every case whose verdict is not a rejection: 46 of them); a damaged or truncated packed
corpus is refused with one line on the command line."""
import gzip, json, shutil
from functools import lru_cache
import numpy as np
import pytest
from helpers import ROOT, run_cli
from coretex.evaluator.cache import PACK_HEADER, PackedCorpus, open_corpus, pack_corpus
from coretex.evaluator.corpus import CorpusError, load_corpus
from coretex.evaluator.evaluate import Evaluator, evaluate_patch
from coretex.core.keccak import from_hex, to_hex
from coretex.core.patch import apply_patch
from coretex.evaluator.rerank import TokenOverlapReranker
from coretex.core.state import GENESIS

VEC = ROOT.parent / "shared" / "vectors" / "coretex" / "evaluator"
pytestmark = pytest.mark.skipif(not (VEC / "cases.json.gz").exists(), reason="../shared/vectors is not beside the checkout")
EVERY = 10


@pytest.fixture(scope="module", autouse=True)
def own_cache(tmp_path_factory):
    "The verified-pack marks go to a folder of this module's, not the user's cache."
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CORETEX_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    "(the vectors corpus as JSON, the same corpus packed and opened again)."
    json_form = load_corpus(VEC / "corpus.json.gz")
    folder = pack_corpus(json_form, tmp_path_factory.mktemp("pack") / "vectors.packed")
    return json_form, open_corpus(folder)


@lru_cache(None)
def cases():
    return json.load(gzip.open(VEC / "cases.json.gz"))


@lru_cache(None)
def state(root: str) -> tuple:
    "A vectors state rebuilt from its build chain (parents) or parent + patch."
    st = cases()["states"][root]
    if st["role"] != "parent": return tuple(apply_patch(list(state(st["parent"])), from_hex(st["patch"]), "r5").words)
    words = list(GENESIS)
    for p in st["buildChain"]: words = list(apply_patch(words, from_hex(p), "r5").words)
    return tuple(words)


def test_round_trip(forms):
    j, p = forms
    assert isinstance(p, PackedCorpus)
    assert to_hex(p.root) == to_hex(j.root) == cases()["corpus"]["corpusRoot"]
    assert list(p.events) == list(j.events)
    assert (list(p.doc_ids), dict(p.docs), dict(p.doc_event)) == (j.doc_ids, j.docs, j.doc_event)
    assert (dict(p.by_record), dict(p.inverse), dict(p.owner_scopes), p.entity_owners) == (j.by_record, j.inverse, j.owner_scopes, j.entity_owners)
    assert p.hidden_events == j.hidden_events and len(p.hidden_events) > 0
    assert all(p.by_id[e["id"]] == e for e in j.events)
    assert (p.layout, p.bi_encoder, p.entities, p.corpus_epoch) == (j.layout, j.bi_encoder, j.entities, j.corpus_epoch)


def test_stage1_identical(forms):
    j, p = forms
    ej, ep = (Evaluator(c, reranker=TokenOverlapReranker()) for c in forms)
    qs = j.queries()
    assert [ep.fs.retrieve(q).tolist() for q in qs] == [ej.fs.retrieve(q).tolist() for q in qs]
    assert ep.fs.doc_vecs.dtype == ej.fs.doc_vecs.dtype and (ep.fs.doc_vecs == ej.fs.doc_vecs).all()


def test_reports_identical_on_sampled_cases(forms):
    cs, si = cases()["cases"], cases()["seedInputs"]
    sample = [c for i, c in enumerate(cs) if i % EVERY == 0 or c["verdict"]["outcome"] != "REJECT"]
    ej, ep = (Evaluator(c, reranker=TokenOverlapReranker()) for c in forms)
    run = lambda ev, c: json.dumps(evaluate_patch(ev, list(state(c["parent"])), from_hex(c["patch"]), from_hex(si["blockhash"]),
                                                  from_hex(si["epochSecret"]), si["epochId"]).to_json())
    differ = [c["id"] for c in sample if run(ej, c) != run(ep, c)]
    assert len(sample) == 46 and any(c["verdict"]["outcome"] != "REJECT" for c in sample)
    assert differ == [], f"{len(differ)}/{len(sample)} reports differ, e.g. {differ[:3]}"


def _damaged(forms, tmp_path, damage):
    folder = tmp_path / "damaged.packed"
    pack_corpus(forms[0], folder)
    damage(folder)
    return folder


@pytest.mark.parametrize("damage, says", [
    (lambda d: (d / "events.npy").write_bytes((d / "events.npy").read_bytes()[:-100]), "events.npy is"),
    (lambda d: (d / "post.w.npy").write_bytes(b"\0" + (d / "post.w.npy").read_bytes()[1:]), "post.w.npy does not match"),
    (lambda d: (d / "texts.off.npy").unlink(), "texts.off.npy is missing"),
    (lambda d: (d / PACK_HEADER).write_text((d / PACK_HEADER).read_text()[:50]), "not a packed corpus"),
])
def test_damaged_pack_refused(forms, tmp_path, damage, says):
    folder = _damaged(forms, tmp_path, damage)
    with pytest.raises(CorpusError, match=says): open_corpus(folder)


def test_a_file_changed_after_a_verified_open_is_refused(forms, tmp_path):
    folder = _damaged(forms, tmp_path, lambda d: None)
    assert open_corpus(folder).root == forms[0].root          # checked in full, marked
    assert open_corpus(folder).root == forms[0].root          # from the mark
    f = folder / "doc_event.npy"
    owners = np.load(f)
    owners[-1] += 1
    np.save(f, owners)                                          # the last document now owned by another event; same size
    with pytest.raises(CorpusError, match="doc_event.npy does not match"): open_corpus(folder)


def test_damaged_pack_one_line_on_the_command_line(forms, tmp_path):
    "evaluate-batch opens its --corpus with open_corpus: a truncated packed file is one line and exit status 2."
    folder = _damaged(forms, tmp_path, lambda d: (d / "vectors.npy").write_bytes((d / "vectors.npy").read_bytes()[:-9]))
    job = {"parent": "00" * 32768, "patch": "0x00", "blockhash": "0x" + "11" * 32, "epochSecret": "0x" + "22" * 32, "epochId": 1}
    (tmp_path / "jobs.jsonl").write_text(json.dumps(job) + "\n")
    r = run_cli("evaluate-batch", tmp_path / "jobs.jsonl", "--workers", "0", "--corpus", folder, "--reranker", "token-overlap")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "vectors.npy is" in r.stderr, r.stderr


def test_pack_refuses_an_existing_folder(forms, tmp_path):
    with pytest.raises(CorpusError, match="already exists"): pack_corpus(forms[0], tmp_path)
    assert list(tmp_path.iterdir()) == []
