"""Agreement with the Loosh validator's release 1.2.8, and time per set, of coretex's two rule sets in one run.

Both rule sets score the 160 response sets of ../shared/vectors/loosh from the same stored vectors (no model): the
seed document's rules (coretex.consensus, the default) and loosh-1.2.8 (coretex.consensus.loosh). A set agrees when theta
and every emission are within 1e-6 of what 1.2.8 returned and the in-consensus miners are the same. Time per set is
the median of `--repeat` timings of each set, one BLAS thread (as the vectors were made).

    python bench/bench_loosh.py [--repeat 3]
"""
import argparse, gzip, json, os, statistics, time, warnings
from pathlib import Path
from threadpoolctl import threadpool_limits
from coretex.consensus.seed_rules import ConsensusConfig
from coretex.consensus.loosh_inputs import VectorTable
from coretex.consensus.loosh_evaluate import evaluate_responses

VEC = Path(__file__).resolve().parents[2] / "shared" / "vectors" / "loosh" / "sets.json.gz"


def agrees(theta: float, emissions: dict, members: list, x: dict) -> tuple:
    "(theta and emissions within 1e-6, same in-consensus set) against 1.2.8's answers `x`."
    close = abs(theta - x["theta"]) <= 1e-6 and emissions.keys() == x["emissions"].keys() and \
        all(abs(emissions[m] - e) <= 1e-6 for m, e in x["emissions"].items())
    return close, sorted(members) == sorted(x.get("in", []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message="Duplicate values are leading")   # the seed rules' LOF on exact copies
    with gzip.open(VEC, "rt") as f: d = json.load(f)
    table, rows = VectorTable(d["embeddings"]), {"seed": [], "loosh-1.2.8": []}
    cfg = ConsensusConfig(heatmap=False)
    with threadpool_limits(limits=1):
        for s in d["sets"]:
            for name in rows:
                opts = {"config": cfg} if name == "seed" else {}
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter(); r = evaluate_responses(s["responses"], s["prompt"], name, table, **opts)
                    times.append(time.perf_counter() - t0)
                rows[name].append((*agrees(r.theta, r.emissions, r.in_consensus, s["expect"]), statistics.median(times)))
    n = len(d["sets"])
    print(f"{n} response sets of Loosh release 1.2.8 (../shared/vectors/loosh), stored MiniLM vectors, 1 BLAS thread, "
          f"median of {args.repeat} per set, machine load {os.getloadavg()[0]:.1f} (1-minute average)")
    print(f"{'rule set':<14}{'theta+emissions (1e-6)':>24}{'in-consensus set':>18}{'both':>8}{'ms/set p50':>12}{'ms/set p95':>12}")
    ms = {}
    for name, r in rows.items():
        t = sorted(x[2] * 1000 for x in r)
        ms[name] = statistics.median(t)
        print(f"{name:<14}{sum(x[0] for x in r):>17}/{n:<6}{sum(x[1] for x in r):>11}/{n:<6}{sum(x[0] and x[1] for x in r):>4}/{n:<3}"
              f"{ms[name]:>12.2f}{t[int(0.95 * (n - 1))]:>12.2f}")
    print(f"loosh-1.2.8 takes {ms['loosh-1.2.8'] / ms['seed']:.1f}x the seed rules' time per set (medians): its quality scorer "
          f"embeds and clusters every answer's sentences and its sybil detector runs TF-IDF and a KMeans per answer")


if __name__ == "__main__":
    main()
