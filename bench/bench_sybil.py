"""Sybil resistance of the seed rules, Loosh 1.2.8 and coretex's detector on one generated attack suite, in one run.

The suite (coretex.consensus.sybil.attack_suite, seed 0) plants sybil groups with ground truth: exact copies and copies with
5-40% of their tokens edited (synonyms, fillers, insertions, deletions, sentence shuffles), spread over their own
IPs and coldkeys, one coldkey, or one IP; honest-only sets of 8-64; mixed sets; and groups of 2-32 keys in sets of
16 and 64 for emissions. Printed: the calibration of coretex's thresholds on honest answers of a second suite
(seed 1), then per rule set sybil-pair recall and precision by edit level, honest groups flagged, detection time per
set (ratios against the seed rules and 1.2.8 measured in the same run), and the share of emissions a group
captures. Embeddings (MiniLM, the packaged model) are cached in --cache, so a second run loads no model and its
detection times compare the rules alone.

    python bench/bench_sybil.py [--small] [--cache PATH] [--write-cache PATH]
"""
import argparse, json, sys, time
from pathlib import Path
import numpy as np
from threadpoolctl import threadpool_limits
from coretex.consensus.sybil import SYBIL_RULE_SETS, CopyDetector, EDIT_LEVELS, EmbeddingCache, attack_suite, recall_table, score_rule_set, share_table, word_overlap


def calibration(suite: list, embed) -> str:
    "The largest word overlap and embedding cosine between two honest answers of one set, against the detector's thresholds."
    J_max, S_max, pairs = 0.0, 0.0, 0
    for s in suite:
        honest = [r.text for r in s.responses if r.role == "honest"]
        if len(honest) < 2: continue
        J, E = word_overlap(honest), embed(honest)
        iu = np.triu_indices(len(honest), 1)
        J_max, S_max, pairs = max(J_max, float(J[iu].max())), max(S_max, float((E @ E.T)[iu].max())), pairs + len(iu[0])
    d = CopyDetector()
    return (f"calibration (honest-only sets, seed 1, {pairs} honest pairs): word overlap max {J_max:.3f} (detector: copies from "
            f"{d.lexical}, or from {d.lexical_soft} with cosine >= {d.semantic}); embedding cosine max {S_max:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="the small suite (two topics) instead of the full one")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "coretex" / "sybil-minilm.npz"))
    ap.add_argument("--write-cache", help="also write the embeddings this run asked for to this path (with --small: the notebook's fixture)")
    ap.add_argument("--write-scores", help="also write each rule set's counts as JSON to this path (the notebook draws the full suite from it)")
    a = ap.parse_args()
    Path(a.cache).parent.mkdir(parents=True, exist_ok=True)
    embed = EmbeddingCache(a.cache)
    size = "small" if a.small else "full"
    t0 = time.perf_counter()
    suite = attack_suite(size, seed=0)
    print(f"suite: {size}, seed 0, {len(suite)} sets, {sum(len(s.responses) for s in suite)} responses "
          f"(generated in {time.perf_counter() - t0:.1f} s)", flush=True)
    if not a.small:
        print(calibration([s for s in attack_suite("full", seed=1) if s.kind == "honest"], embed), flush=True)
        embed.save()
    scores = []
    for r in SYBIL_RULE_SETS:
        print(f"scoring {r.name} ...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        scores.append(score_rule_set(r, suite, embed))
        embed.save()
        print(f"  {r.name}: {time.perf_counter() - t:.1f} s (embedding cache misses so far {embed.misses})", file=sys.stderr, flush=True)
    print(recall_table(scores))
    by = {sc.rule_set: sc for sc in scores}
    ms = {k: 1000 * v.detect_s / v.sets for k, v in by.items()}
    cold = "" if embed.misses == 0 else f"; NOT comparable: {embed.misses} texts were embedded during this run, run again for cached timings"
    print(f"detection time per set: coretex {ms['coretex']:.1f} ms | seed {ms['seed']:.2f} ms (coretex takes {ms['coretex'] / ms['seed']:.0f}x as long) | "
          f"loosh-1.2.8 {ms['loosh-1.2.8']:.1f} ms (coretex {ms['loosh-1.2.8'] / ms['coretex']:.0f}x faster); one BLAS thread{cold}")
    c = by["coretex"]
    light = [k for k in EDIT_LEVELS if k <= 0.2]
    met = all(c.recall(k) >= 0.95 for k in light) and c.honest_groups == 0
    print(f"target (coretex recall >= 0.95 up to 20% edits, no honest group): {'met' if met else 'NOT met'} "
          f"(lowest recall up to 20%: {min(c.recall(k) for k in light):.3f}; honest groups {c.honest_groups})")
    l = by["loosh-1.2.8"]
    print(f"issue's note on 1.2.8 (11 of 14 honest sets flagged as a group): here {l.honest_sets_flagged} of {l.honest_sets} honest-only sets, "
          f"{l.honest_groups} groups of two or more honest miners over the whole suite")
    print("emission share of a sybil group (g keys, 10% edits, own IPs and coldkeys) in a set of n, mean over topics:")
    print(share_table(scores))
    if a.write_cache: embed.save(a.write_cache, only_used=True)
    if a.write_scores:
        Path(a.write_scores).write_text(json.dumps({"suite": size, "seed": 0, "written_by": "python bench/bench_sybil.py",
                                                    "scores": [sc.to_json() for sc in scores]}, indent=1) + "\n")


if __name__ == "__main__":
    with threadpool_limits(1): main()
