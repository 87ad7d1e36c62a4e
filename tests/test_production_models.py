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
    rr = QwenReranker(str(MODELS / "tiny-qwen3-reranker"), **kw)
    diffs, n = [], 0
    for r in reranker_vectors["requests"]:
        if field not in r: continue
        got = rr.score(r["query"], r["documents"])
        assert len(got) == len(r[field])
        diffs += list(np.abs(np.asarray(got) - np.asarray(r[field])))
        n += 1
    print(f"{field}: {n} requests, {len(diffs)} pairs, max |coretex - runner| {max(diffs):.2e}")
    assert n and max(diffs) <= 1e-5


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
