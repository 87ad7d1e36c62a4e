"""One full patch evaluation (Gate and Confirm, parent and patched state, 64 queries each) on a generated
corpus of about 300k events, with the embedded reranker: wall seconds and the share spent in each stage.

The document embeddings are an index built once per corpus and cached on disk; their build time is
reported separately. Stage times come from wrapping the evaluator's stage functions with timers, each counted exclusively
(a stage called inside another is not counted twice).
Run: python bench/bench_evaluate.py [--people 24500]
"""
import argparse
from _util import timed, StageTimer
import coretex.evaluator.evaluate as E
import coretex.evaluator.ordering as O
import coretex.evaluator.stage1 as S
from coretex.evaluator.corpus import generate_corpus
from coretex.core.keccak import keccak256
from coretex.core.layout import encode_relation
from coretex.core.patch import make_patch
from coretex.core.state import GENESIS, state_root

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=24_500)
    a = ap.parse_args()
    corpus, t_gen = timed(lambda: generate_corpus(a.people))
    root, t_root = timed(lambda: corpus.root)
    print(f"corpus: {len(corpus.events)} events, {len(corpus.docs)} documents; generated in {t_gen:.1f}s, corpusRoot in {t_root:.1f}s")
    ev, t_index = timed(lambda: E.Evaluator(corpus, progress=True))
    print(f"index build (embeddings, cached on disk after the first run; BM25): {t_index:.1f}s")
    st = StageTimer()
    timer = st.wrap
    ev.fs.fused = timer("stage 1 (dense + BM25)", ev.fs.fused)
    ev.fs.prime = timer("query embedding + pack cosines (batched)", ev.fs.prime)
    ev.rerank = timer("rerank", ev.rerank)
    # each stage is wrapped in the room that calls it (34b_stage1 .. 35_evaluate)
    O.route = timer("substrate routing", O.route)
    E.query_metrics = timer("metrics", E.query_metrics)
    S.draw_pack = timer("pack draw", S.draw_pack)
    S.state_view = timer("state decode", S.state_view)
    patch = make_patch(state_root(GENESIS), {672: encode_relation("supersedes")}, 0x04)
    rep, total = timed(lambda: E.evaluate_patch(ev, GENESIS, patch, keccak256(b"bench block"), keccak256(b"bench"), 1))
    print(f"outcome {rep.outcome} ({rep.reason}); gate delta {rep.gate.delta_ppm} ppm; reranker {ev.reranker.name}")
    print(f"one patch evaluation: {total:.2f}s wall")
    print(st.report(total, "other (pre-rank, patch apply, bookkeeping)"))


if __name__ == "__main__":
    main()
