"""evaluate-batch throughput: a queue of the differential vectors' patches (file order, so runs share parents) on a local
Ray with 1 and with 2 workers, against the sequential in-process path (the peer: one evaluator, no Ray). Every path's
results are checked identical. Times exclude Ray's start; each run includes its workers building their evaluators
(the build time alone is printed too).
Run: python bench/bench_batch.py [--patches N]
"""
import argparse, gzip, json, time
import ray
from bench_evaluator_vectors import VEC, rebuild
from coretex.evaluator.batch import EvaluatorSpec, PatchJob, evaluate_on_ray, evaluate_sequential
from coretex.core.keccak import from_hex


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patches", type=int, default=52, help="the first N cases as the queue (default 52: two parents)")
    a = ap.parse_args()
    cases = json.load(gzip.open(VEC / "cases.json.gz"))
    si, words = cases["seedInputs"], rebuild(cases["states"])
    parents = {r: tuple(w) for r, w in words.items()}
    jobs = [PatchJob(n, parents[c["parent"]], c["patch"], from_hex(si["blockhash"]), from_hex(si["epochSecret"]), si["epochId"])
            for n, c in enumerate(cases["cases"][:a.patches], 1)]
    spec = EvaluatorSpec(str(VEC / "corpus.json.gz"), "token-overlap")
    t0 = time.perf_counter(); spec.build(); build = time.perf_counter() - t0
    t0 = time.perf_counter(); seq = evaluate_sequential(spec, jobs); t_seq = time.perf_counter() - t0
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    rates = {}
    for w in (1, 2):
        t0 = time.perf_counter(); got = evaluate_on_ray(spec, jobs, workers=w); t = time.perf_counter() - t0
        assert [r.to_json() for r in got] == [r.to_json() for r in seq], f"{w} workers differ from the sequential path"
        rates[w] = len(jobs) / t
    ray.shutdown()
    n = len(jobs)
    print(f"{n} patches; evaluator build {build:.1f}s (each worker pays it once); results identical on every path")
    print(f"  sequential, in process (peer)  {n / t_seq:6.2f} patches/s")
    for w, r in rates.items(): print(f"  Ray, {w} worker{'s' if w > 1 else ' '}                  {r:6.2f} patches/s  ({r / (n / t_seq):.2f}x the peer)")
    print(f"  2 workers / 1 worker: {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
