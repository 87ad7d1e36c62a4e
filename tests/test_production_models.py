"""coretex's production scoring path against the network's own model runners (shared/vectors/coretex/production-models),
on the two stand-in models (shared/models): every Qwen3 reranker score under the runner's three settings, and every
BGE-M3 bi-encoder vector."""
import gzip, json, struct
import numpy as np
import pytest
from helpers import ROOT

VEC = ROOT.parent / "shared" / "vectors" / "coretex" / "production-models"
MODELS = ROOT.parent / "shared" / "models"
pytestmark = pytest.mark.skipif(not (VEC / "reranker.json.gz").exists() or not MODELS.is_dir(),
                                reason="../shared/vectors and ../shared/models are not beside the checkout")


def load(name): return json.load(gzip.open(VEC / name))


@pytest.fixture(scope="module")
def reranker_vectors(): return load("reranker.json.gz")


@pytest.mark.parametrize("field,kw", [("scores", {}), ("scoresInnerBatch1", {"batch_size": 1}),
                                      ("scoresMaxSeq8192", {"max_length": 8192})])
def test_reranker_scores(reranker_vectors, field, kw):
    "Every score of the runner's setting within 1e-5 (one call per request, as the held-out check makes)."
    from coretex.evaluator.rerank import QwenReranker
    rr = QwenReranker(str(MODELS / "tiny-qwen3-reranker"), threads=1, **kw)   # one thread: the 2-core CI is shared
    diffs, n = [], 0
    for r in reranker_vectors["requests"]:
        if field not in r: continue
        got = rr.score(r["query"], r["documents"])
        assert len(got) == len(r[field])
        diffs += list(np.abs(np.asarray(got) - np.asarray(r[field])))
        n += 1
    print(f"{field}: {n} requests, {len(diffs)} pairs, max |coretex - runner| {max(diffs):.2e}")
    assert n and max(diffs) <= 1e-5


def test_the_reranker_bound_is_inside_the_replay_tolerance():
    "The 1e-5 the scores are held to is inside the bundle's replay tolerance, so a score within it cannot flip a replay."
    from coretex.core.seeds import load_manifest
    from coretex.toolkit.runtime import bundle_runtime
    assert 1e-5 < bundle_runtime(load_manifest())["replayTolerancePpm"] * 1e-6


def test_reranker_truncation_is_the_runners(reranker_vectors):
    "Prompt lengths before the cut are the vectors' promptTokens; the 2,048 cut changes exactly the longer prompts."
    from coretex.evaluator.rerank import QwenReranker, qwen_prompt
    rr = QwenReranker(str(MODELS / "tiny-qwen3-reranker"))
    long_ = [r for r in reranker_vectors["requests"] if "scoresMaxSeq8192" in r]
    for r in long_:
        assert [len(rr.tok(qwen_prompt(r["query"], d))["input_ids"]) for d in r["documents"]] == r["promptTokens"]
        for t, a, b in zip(r["promptTokens"], r["scores"], r["scoresMaxSeq8192"]):
            if t <= 2048: assert abs(a - b) < 1e-5


@pytest.fixture(scope="module")
def biencoder_vectors(): return load("biencoder.json.gz")


def header_ulps(a, b): return abs(int(a[:8], 16) - int(b[:8], 16))


@pytest.mark.parametrize("field,layout,kw", [("int8", "int8", {}), ("int8InnerBatch1", "int8", {"batch_size": 1}),
                                             ("bf16", "bf16", {})])
def test_biencoder_bytes(biencoder_vectors, field, layout, kw):
    """Every vector's bytes, one `stored` call per request in the request's order.

    The float32 kernels of this host decide the int8 scale header's last bits: the reference runner itself, run
    unmodified on this 2-core Xeon (AVX-512) host, gives the same headers coretex gives, which differ by a few ulps
    from the vectors' host on some texts. So: every int8 code and every bf16 byte must be equal, every header within
    8 float32 ulps, and the count of byte-equal vectors is printed."""
    from coretex.toolkit.embeddings import BiEncoder
    be = BiEncoder(str(MODELS / "tiny-bge-m3"), {"dim": 32, "quantization": layout}, **kw)
    exact = total = 0
    worst = 0
    for r in biencoder_vectors["requests"]:
        got = be.stored(r["texts"])
        assert all(len(g) == len(w) for g, w in zip(got, r[field])) and len(got) == len(r[field])
        total += len(got)
        exact += sum(g == w for g, w in zip(got, r[field]))
        if layout == "bf16": assert got == r[field], r["id"]
        else:
            assert [g[8:] for g in got] == [w[8:] for w in r[field]], r["id"]
            worst = max([worst] + [header_ulps(g, w) for g, w in zip(got, r[field])])
    print(f"{field}: {exact}/{total} byte-equal, every code equal, largest header difference {worst} ulps")
    assert worst <= 8


def test_a_text_alone_keeps_its_codes_and_encode_is_the_stored_bytes(biencoder_vectors):
    """A text embedded alone is padded to its own width: its int8 codes are those of the batch (the header may move by
    an ulp); `encode` gives exactly the vectors the stored bytes decode to."""
    from coretex.toolkit.embeddings import BiEncoder, decode_stored
    be = BiEncoder(str(MODELS / "tiny-bge-m3"), {"dim": 32, "quantization": "int8"})
    texts = biencoder_vectors["requests"][0]["texts"]
    got = be.stored(texts)
    assert [be.stored([t])[0][8:] for t in texts[:16]] == [g[8:] for g in got[:16]]
    assert np.array_equal(be.encode(texts), np.array([decode_stored(h, be.layout) for h in got]))


def test_quantisation_is_the_runners(biencoder_vectors):
    """int8_stored and the runner's rules on the vectors' own values: a vector decoded from the bf16 bytes and
    re-quantised by the runner's formula written out here independently."""
    from coretex.toolkit.embeddings import int8_stored, bf16_stored, decode_stored
    for h in biencoder_vectors["requests"][0]["bf16"]:
        v = decode_stored(h, {"dim": 32, "quantization": "bf16"})
        assert bf16_stored(v, 32) == h
        vals = [float(x) for x in v]
        scale = max(map(abs, vals)) / 127.0
        want = struct.pack(">f", scale) + bytes((max(-128, min(127, round(x / scale))) + 256) % 256 for x in vals)
        assert int8_stored(v, 32) == want.hex()


@pytest.fixture(scope="module")
def standin_corpus(tmp_path_factory):
    "A generated corpus embedded by BiEncoder with the bi-encoder stand-in, written as a production-corpus file."
    from coretex.evaluator.corpus import generate_corpus, save_corpus
    from coretex.evaluator.retrieval import embed_corpus
    from coretex.toolkit.embeddings import BiEncoder
    be = BiEncoder(str(MODELS / "tiny-bge-m3"), {"dim": 32, "quantization": "int8"})
    corpus = embed_corpus(generate_corpus(120), be)   # enough hidden queries for every stratum quota of a pack
    path = tmp_path_factory.mktemp("standin") / "corpus.json.gz"
    save_corpus(corpus, path)
    return path, corpus, be


def test_corpus_embedded_by_biencoder(standin_corpus):
    """The file reloads with its recorded corpusRoot (recomputed over the stored bytes), every stored vector is the
    runner's bytes for the corpus's text stream, and the query path gives the same BiEncoder's vectors."""
    from coretex.evaluator.corpus import load_corpus, dequantize
    from coretex.evaluator.retrieval import corpus_texts, bi_encoder_for, FirstStage
    path, corpus, be = standin_corpus
    again = load_corpus(path)
    assert again.root == corpus.root and again.bi_encoder["modelId"] == str(MODELS / "tiny-bge-m3")
    texts = corpus_texts(corpus)
    want = dict(zip(texts, be.stored(texts)))
    for e in again.events:
        emb = e["embeddings"]
        assert emb["query"] == want[e["queryText"]]
        assert all(emb["perTruth"][d["id"]] == want[d["text"]] for d in e["truthDocuments"])
    q = "Which city does a person not in the corpus live in?"
    fs = FirstStage(again, bi_encoder_for(str(MODELS / "tiny-bge-m3"), again))
    assert np.array_equal(fs.query_vector(q), dequantize(be.stored([q])[0], again.layout))


def test_end_to_end_evaluate_with_the_two_stand_ins(standin_corpus, genesis_file, monkeypatch):
    "`coretex evaluate` on the BiEncoder corpus with --reranker and --bi-encoder the two stand-ins: a full verdict."
    from helpers import abstain_patch, run_cli
    from coretex.core.keccak import keccak256
    monkeypatch.setenv("RERANKER_NUM_THREADS", "1")   # the 2-core CI is shared
    path, _, _ = standin_corpus
    r = run_cli("evaluate", "--corpus", path, "--state", genesis_file, "--patch", abstain_patch().hex(),
                "--blockhash", "0x" + keccak256(b"stand-in block").hex(), "--reranker", MODELS / "tiny-qwen3-reranker",
                "--bi-encoder", MODELS / "tiny-bge-m3", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["reranker"] == str(MODELS / "tiny-qwen3-reranker")
    assert rep["outcome"] in {"STATE_ADVANCE", "SCREENER_PASS", "REJECT"} and len(rep["gate"]["pack"]) == 64
    assert 0 <= rep["gate"]["before_ppm"] <= 1_000_000


def test_missing_reranker_weights_fail_closed(genesis_file, tmp_path, monkeypatch):
    "The pinned reranker absent from the HF cache, or an empty folder: one line, exit 2; a fallback only when asked."
    from helpers import abstain_patch, run_cli
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    args = ["evaluate", "--state", genesis_file, "--patch", abstain_patch().hex(), "--blockhash", "0x" + "11" * 32, "--json"]
    r = run_cli(*args, "--reranker", "Qwen/Qwen3-Reranker-0.6B")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not in the local Hugging Face cache" in r.stderr, r.stderr
    (tmp_path / "empty").mkdir()
    r = run_cli(*args, "--reranker", tmp_path / "empty")
    assert r.returncode == 2 and "the directory is empty" in r.stderr and "Traceback" not in r.stderr
    r = run_cli(*args, "--reranker", tmp_path / "empty", "--reranker-fallback", "token-overlap")
    assert r.returncode == 0 and json.loads(r.stdout)["reranker"] == "token-overlap" and "as asked" in r.stderr
