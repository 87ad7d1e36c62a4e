"""Qwen3-Reranker-0.6B on the CPU: pairs per second at the real model's shape against this machine's float32 FLOPs bound,
and what one patch's full evaluation costs a validator.

No download: the model is Qwen3-Reranker-0.6B's architecture (its published config: hidden 1,024, 28 layers, 16 query
and 8 key/value heads of dim 128, MLP 3,072, vocabulary 151,669, tied embeddings) with random weights, written to a
temporary folder in bfloat16 and loaded by coretex's QwenReranker through the same from_pretrained path as the real
weights (float32, CPU, the runner's groups of 8 by length). Random weights cost what real ones cost: the arithmetic is
the shape's. The pairs are the production-model vectors' corpus and sybil-answer pairs when ../shared is beside the
checkout (real candidate lengths), else generated corpus documents.

The bound: the float32 GFLOP/s of a large matmul measured in the same run, divided by the FLOPs one pair needs
(2 x non-embedding parameters x prompt tokens, plus attention, plus the head at one position).
The validator's cost: Gate and Confirm packs (2) x 64 queries per pack x rerankerInputTopK 64 candidates x 2 states
(parent and child) pairs, an upper bound (a candidate scored for the parent and unchanged in the child is scored once).
Run: nice python bench/bench_production_models.py [--pairs 24] [--threads N]
"""
import argparse, gzip, json, os, tempfile, time
from pathlib import Path
from _util import timed

ROOT = Path(__file__).resolve().parents[1]
VEC = ROOT.parent / "shared" / "vectors" / "coretex" / "production-models" / "reranker.json.gz"
QWEN3_06B = dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=128, vocab_size=151669, max_position_embeddings=40960,
                 rope_theta=1_000_000.0, rms_norm_eps=1e-6, tie_word_embeddings=True)   # Qwen3-Reranker-0.6B's config.json
PACKS, QUERIES, CANDIDATES, STATES = 2, 64, 64, 2   # Gate + Confirm; hiddenPack.packSize; rerankerInputTopK; parent, child


def matmul_gflops(torch, n: int = 2048, reps: int = 6) -> float:
    "Float32 GFLOP/s of an n x n matmul, best of `reps` (the machine's practical bound for this model's GEMMs)."
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = min(timed(lambda: a @ b)[1] for _ in range(reps))
    return 2 * n ** 3 / best / 1e9


def write_model(path: str) -> int:
    "Qwen3-Reranker-0.6B's shape with random weights and the Qwen3 tokenizer in `path`; returns non-embedding params."
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from coretex.evaluator.rerank import qwen3_tokenizer
    tok = qwen3_tokenizer()
    cfg = Qwen3Config(**QWEN3_06B, bos_token_id=None, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return sum(p.numel() for n, p in model.named_parameters() if "embed_tokens" not in n)


def pairs(n: int) -> list:
    "(query, document) pairs with realistic candidate lengths."
    if VEC.exists():
        reqs = json.load(gzip.open(VEC))["requests"]
        out = [(r["query"], d) for r in reqs if r["tag"] in ("corpus", "sybil-answers") for d in r["documents"]]
    else:
        from coretex.evaluator.corpus import generate_corpus
        c = generate_corpus(20)
        out = [(e["queryText"], c.docs[d]) for e in c.queries() for d in c.doc_ids[:3]]
    return out[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=24)
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads (the runner's default: the CPU count)")
    a = ap.parse_args()
    import torch
    from coretex.evaluator.rerank import QwenReranker, qwen_prompt
    torch.set_num_threads(a.threads)
    bound = matmul_gflops(torch)
    with tempfile.TemporaryDirectory() as d:
        (params, t_write) = timed(lambda: write_model(d))
        rr, t_load = timed(lambda: QwenReranker(d, threads=a.threads))
    ps = pairs(a.pairs)
    tokens = [min(len(rr.tok(qwen_prompt(q, x))["input_ids"]), rr.max_length) for q, x in ps]
    by_query = {}
    for q, x in ps: by_query.setdefault(q, []).append(x)
    rr.score(ps[0][0], [ps[0][1]])   # warm up
    _, t = timed(lambda: [rr.score(q, docs) for q, docs in by_query.items()])
    cfg = rr.model.config
    attn = sum(4 * cfg.num_hidden_layers * cfg.num_attention_heads * cfg.head_dim * n * n / 2 for n in tokens)   # causal QK^T and AV
    flops = sum(2 * params * n for n in tokens) + attn + len(tokens) * 2 * cfg.vocab_size * cfg.hidden_size
    rate, bound_rate = len(ps) / t, bound * 1e9 / (flops / len(ps))
    per_patch = PACKS * QUERIES * CANDIDATES * STATES
    bound2 = matmul_gflops(torch)   # again after the run: the machine is shared, so the bound is given as a range
    print(f"machine: {os.cpu_count()} CPUs, torch {torch.__version__}, {a.threads} threads; float32 matmul bound "
          f"{min(bound, bound2):.1f}-{max(bound, bound2):.1f} GFLOP/s (2048^3, before and after)")
    print(f"model: Qwen3-Reranker-0.6B shape, {params / 1e6:.0f}M non-embedding parameters, random weights "
          f"(written in {t_write:.0f} s, loaded in {t_load:.0f} s)")
    print(f"pairs: {len(ps)} in {len(by_query)} requests, prompt tokens mean {sum(tokens) / len(tokens):.0f} "
          f"(min {min(tokens)}, max {max(tokens)}), {flops / len(ps) / 1e9:.1f} GFLOP per pair")
    print(f"coretex QwenReranker: {rate:.2f} pairs/s ({flops / t / 1e9:.1f} GFLOP/s) | FLOPs bound at the matmul rate: "
          f"{bound_rate:.2f} pairs/s | ratio {rate / bound_rate:.2f} of the bound")
    print(f"one patch's full evaluation: {PACKS} packs x {QUERIES} queries x {CANDIDATES} candidates x {STATES} states = "
          f"{per_patch:,} pairs (upper bound): {per_patch / rate / 60:.1f} min at the measured rate, "
          f"{per_patch / bound_rate / 60:.1f} min at the bound, on this machine")
    need = per_patch * flops / len(ps)
    print(f"sizing: {need / 1e15:.2f} PFLOP per patch at these prompt lengths; finishing one patch in 10 minutes needs "
          f"{need / 600 / 1e12:.1f} TFLOP/s sustained float32 (this machine's bound: {max(bound, bound2) / 1e3:.3f})")


if __name__ == "__main__":
    main()
