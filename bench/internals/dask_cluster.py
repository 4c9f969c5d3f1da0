"""cseq.distributed on a Dask LocalCluster against in-process training (issue 17).

One run, on CoNLL-2000 chunking (``train.txt`` minus its last 1,000
sentences -> those 1,000, the ``chunk`` preset, as ``bench/accuracy/learners.py``):

1. **Speed**: CRF (c2 = 1) seconds per L-BFGS iteration (the median of
   ``history_[i]["seconds"]``, line searches included, first iteration left
   out), in-process with ``n_jobs=1`` and ``n_jobs=2``, and with
   ``cseq.distributed.fit`` on ``LocalCluster(n_workers=2,
   threads_per_worker=1)`` (2 shards, ``n_jobs=1`` per task), the same
   ``--iters`` iterations each.  The three rows run in turn, ``--rounds``
   times (the cluster idles while the in-process rows run), and the ratios
   are the medians of the rounds' ratios: a shared machine whose speed
   drifts weighs on both sides of each ratio alike.  Targets: the cluster
   at least 1.6x faster than ``n_jobs=1`` and at most 1.25x slower than
   ``n_jobs=2``.
2. **Accuracy** (unless ``--no-accuracy``): dev span F1 of the CRF trained to
   its stopping rule (``cseq train``'s defaults: c2 = 1, at most 100
   iterations) in-process and on the cluster, and of the averaged perceptron
   and the structured SVM (C = 0.1; 10 passes, seed 0) serially and by
   parameter mixing over 2 shards (10 passes) and 4 shards (10 and 20
   passes).  Targets: the distributed CRF within 0.1 F1 of the
   single-machine one, perceptron mixing within 0.3 of the serial
   perceptron.
3. **Warm start** (with the accuracy rows): iterations and seconds the
   hybrid start (``warm_start="perceptron"``) takes to reach the objective
   the cold distributed run ends at.
   The **hardware ceiling** row times the CRF data term in one process
   alone and in two processes at once: what two workers can gain at most
   on this machine (memory bandwidth and caches are shared).
4. **Cost model** constants (``docs/scaling.md``): compute seconds per token
   per iteration (``n_jobs=1``), bytes of weights sent and of gradients
   gathered per evaluation.

The machine may be shared: the banner and the last line give the load
average.  A measuring tool: it asserts nothing and never runs in the suite.

Usage::

    python bench/internals/dask_cluster.py --data ../shared/data
    python bench/internals/dask_cluster.py --iters 20 --no-accuracy --rounds 5
    python bench/internals/dask_cluster.py --project 1400 5     # the projection alone
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`

import argparse
import os
import sys
import time
import warnings

import numpy as np


import cseq  # noqa: E402
import cseq.distributed as cd  # noqa: E402
from cseq.learners.frame import pack  # noqa: E402
from cseq.metrics import chunk_f1  # noqa: E402
from cseq.templates import TemplateFeaturizer  # noqa: E402
from common.paths import SHARED_DATA  # noqa: E402
from common.tasks import load_average, load_task  # noqa: E402


def per_iteration(est) -> float:
    secs = [r["seconds"] for r in est.history_[1:]] or [est.history_[0]["seconds"]]
    return float(np.median(secs))


def crf(**kw):
    return cseq.CRF(c2=1.0, features=TemplateFeaturizer("chunk"), **kw)


def _data_term_seconds(args) -> float:
    """Median seconds of the CRF data term on the whole training set (n_jobs=1), in a process
    started at ``args[1]`` (a barrier shared with the others)."""
    data, barrier, repeat = args
    from cseq.learners.objectives import CRFObjective

    Xtr, ytr, *_ = load_task("conll2000", data)
    est = crf()
    featurizer, corpus, classes = pack(est, Xtr, ytr)
    model = est._model_class.from_corpus(corpus, featurizer.n_attributes, len(classes))
    obj = CRFObjective(model, corpus, 1.0, n_jobs=1)
    theta = np.random.default_rng(0).normal(0, 0.01, len(model.params))
    obj.data_term(theta)
    barrier.wait()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        obj.data_term(theta)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def hardware_ceiling(data: str, repeat: int = 8) -> tuple[float, float]:
    """How much faster two processes compute than one on this machine, for this kernel.

    The CRF data term of the whole training set, single-threaded, timed in
    one process alone and then in two processes at once: ``(seconds alone,
    seconds each when two run)``.  Two workers can at best be ``2 * alone /
    together`` times faster than one thread (memory bandwidth and shared
    caches are shared too).
    """
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        alone_barrier, pair_barrier = manager.Barrier(1), manager.Barrier(2)
        with ctx.Pool(1) as pool:
            alone = pool.map(_data_term_seconds, [(data, alone_barrier, repeat)])[0]
        with ctx.Pool(2) as pool:
            both = pool.map(_data_term_seconds, [(data, pair_barrier, repeat)] * 2)
    return alone, max(both)


#: The projection's network (10 Gb/s, as bytes per second) and model size.
BANDWIDTH = 10e9 / 8
PROJECTED_PARAMS = 10_000_000


def projection(ns_per_token: float, task_ms: float, n_params: int = PROJECTED_PARAMS) -> None:
    """Print the cost model's seconds per iteration for 10^8 and 10^9 tokens on 8-512 workers.

    ``T(N, P) = N c / P + (2 log2 P + 2) 8 d / B + 2 P t``: compute spread
    over P workers; the weights spread from the driver through the workers
    and the gradients summed by the pairwise tree (``log2 P`` rounds each,
    plus one transfer out of and one into the driver) of ``8 d`` bytes at
    ``B`` bytes/s; about ``2 P`` tasks per evaluation at ``t`` seconds of
    scheduling each.  Efficiency: ``N c / P`` over ``T``.
    """
    c, t = ns_per_token * 1e-9, task_ms * 1e-3
    mb = 8 * n_params / 1e6
    print(f"\nprojection: c = {ns_per_token:.0f} ns/token/iteration, t = {task_ms:.1f} ms/task, "
          f"d = {n_params:,} parameters ({mb:.0f} MB), B = 10 Gb/s")
    print("| tokens | workers | compute s | network s | scheduling s | s / iteration | "
          "efficiency |\n|---:|---:|---:|---:|---:|---:|---:|")
    for n in (1e8, 1e9):
        for p in (8, 64, 512):
            comp = n * c / p
            net = (2 * np.log2(p) + 2) * 8 * n_params / BANDWIDTH
            sched = 2 * p * t
            total = comp + net + sched
            print(f"| 10^{int(np.log10(n))} | {p} | {comp:.2f} | {net:.2f} | {sched:.2f} | "
                  f"{total:.2f} | {100 * comp / total:.0f}% |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(SHARED_DATA))
    ap.add_argument("--iters", type=int, default=30, help="L-BFGS iterations timed per row")
    ap.add_argument("--rounds", type=int, default=3,
                    help="times the three speed rows run, in turn (medians are reported)")
    ap.add_argument("--no-accuracy", action="store_true")
    ap.add_argument("--project", nargs=2, type=float, metavar=("NS_PER_TOKEN", "MS_PER_TASK"),
                    help="only print the cost model's projection for these constants")
    args = ap.parse_args(argv)
    if args.project:
        projection(*args.project)
        return 0
    warnings.simplefilter("ignore", cseq.ConvergenceWarning)
    from distributed import Client, LocalCluster

    Xtr, ytr, Xte, yte, _, _ = load_task("conll2000", args.data)
    n_tok = sum(len(s) for s in Xtr)
    print(f"cseq {cseq.__version__}, {os.cpu_count()} CPUs, load {load_average()}; CoNLL-2000 "
          f"train {len(Xtr):,} sentences, {n_tok:,} tokens", flush=True)
    fixed = dict(max_iter=args.iters, tol=0.0)
    names = ("in-process, n_jobs=1", "in-process, n_jobs=2", "LocalCluster(2 workers x 1 thread)")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        # The rows run in turn, --rounds times: a machine whose speed drifts
        # (a shared VM) then weighs on each ratio's rounds alike.
        times: dict[str, list[float]] = {name: [] for name in names}
        for r in range(args.rounds):
            for n_jobs in (1, 2):
                est = crf(n_jobs=n_jobs, **fixed).fit(Xtr, ytr)
                times[names[n_jobs - 1]].append(per_iteration(est))
            t = time.perf_counter()
            dist = cd.fit(crf(**fixed), Xtr, ytr, client=client, npartitions=2)
            total = time.perf_counter() - t
            times[names[2]].append(per_iteration(dist))
            print(f"round {r + 1}: " + ", ".join(f"{times[n][-1]:.3f}" for n in names)
                  + f" s/iteration (the cluster's fit {total:.1f} s in all, setup included)",
                  flush=True)
        n_params = len(est.model_.params)
        vs_one = [a / c for a, c in zip(times[names[0]], times[names[2]])]
        vs_two = [c / b for b, c in zip(times[names[1]], times[names[2]])]
        one, two, cl = (float(np.median(times[n])) for n in names)
        print("\n| row | s / L-BFGS iteration (median of rounds) | vs n_jobs=1 |\n|---|---:|---:|")
        for name in names:
            med = float(np.median(times[name]))
            print(f"| {name} | {med:.3f} | {one / med:.2f}x |")
        print(f"\ncluster: {np.median(vs_one):.2f}x faster than n_jobs=1 (target >= 1.6; rounds "
              f"{', '.join(f'{v:.2f}' for v in vs_one)}), {np.median(vs_two):.2f}x the time of "
              f"n_jobs=2 (target <= 1.25; rounds {', '.join(f'{v:.2f}' for v in vs_two)})")
        alone, together = hardware_ceiling(args.data)
        print(f"hardware ceiling: the CRF data term (n_jobs=1) takes {alone:.3f} s in one "
              f"process alone and {together:.3f} s in each of two processes at once: two "
              f"workers compute at most {2 * alone / together:.2f}x as fast as one thread "
              "on this machine", flush=True)
        ns = one / n_tok * 1e9
        # What the cluster adds per iteration beyond half the compute, per task
        # (2 shards: 2 data terms, 1 sum, 1 weights task per evaluation).
        evals = dist.n_evaluations_ / max(dist.n_iter_, 1)
        overhead_ms = max(cl - one / 2, 0.0) / (4 * evals) * 1e3
        print(f"cost model: {ns:.0f} ns compute per token per iteration (n_jobs=1); "
              f"{n_params:,} parameters: {8 * n_params / 1e6:.2f} MB of weights sent and "
              f"{8 * n_params / 1e6:.2f} MB of gradient per shard reduced per evaluation "
              f"({evals:.2f} evaluations per iteration); the cluster's time beyond half the "
              f"compute is {overhead_ms:.1f} ms per task (transfers on one machine "
              "included)", flush=True)
        projection(ns, overhead_ms)
        if not args.no_accuracy:
            print("\n| learner | single machine F1 | distributed F1 |\n|---|---:|---:|")
            ref = crf(max_iter=100).fit(Xtr, ytr)
            got = cd.fit(crf(max_iter=100), Xtr, ytr, client=client, npartitions=2)
            print(f"| CRF c2=1, <= 100 it. ({ref.n_iter_} / {got.n_iter_} it.) | "
                  f"{100 * chunk_f1(yte, ref.predict(Xte)):.2f} | "
                  f"{100 * chunk_f1(yte, got.predict(Xte)):.2f} (2 shards) |", flush=True)
            # The hybrid warm start: iterations and seconds (from the call, setup
            # included) to reach the cold run's final objective.
            def reach(warm):
                times, t0 = [], time.perf_counter()
                est = cd.fit(crf(max_iter=100), Xtr, ytr, client=client, npartitions=2,
                             warm_start=warm,
                             callback=lambda r: times.append(time.perf_counter() - t0))
                return est, times
            cold, cold_t = reach(None)
            warm, warm_t = reach("perceptron")
            target = cold.history_[-1]["loss"]
            hit = next((i for i, r in enumerate(warm.history_) if r["loss"] <= target), None)
            print(f"| CRF warm_start='perceptron' (2 shards) | | "
                  f"{100 * chunk_f1(yte, warm.predict(Xte)):.2f} |")
            if hit is None:
                print(f"\nwarm start: never reached the cold run's objective {target:.6g} "
                      f"(cold {len(cold_t)} it. in {cold_t[-1]:.1f} s; warm ended at "
                      f"{warm.history_[-1]['loss']:.6g} after {len(warm_t)} it.)")
            else:
                print(f"\nwarm start: the cold run's final objective {target:.6g} after "
                      f"{len(cold_t)} iterations / {cold_t[-1]:.1f} s cold, {hit + 1} "
                      f"iterations / {warm_t[hit]:.1f} s warm (setup and perceptron pass "
                      f"included): saves {len(cold_t) - hit - 1} iterations, "
                      f"{cold_t[-1] - warm_t[hit]:.1f} s", flush=True)
            # Mixing over P shards moves the weights by about 1/P of the
            # serial progress per pass: the 4-shard rows also run 20 passes.
            for name, cls in (("perceptron", cseq.StructuredPerceptron),
                              ("SSVM C=0.1", cseq.StructuredSVM)):
                def make(passes, cls=cls):
                    return cls(max_iter=passes, random_state=0,
                               features=TemplateFeaturizer("chunk"))
                serial = 100 * chunk_f1(yte, make(10).fit(Xtr, ytr).predict(Xte))
                for k, passes in ((2, 10), (4, 10), (4, 20)):
                    mixed = cd.fit(make(passes), Xtr, ytr, client=client, npartitions=k)
                    print(f"| {name}: serial 10 passes; mixing over {k} shards, {passes} "
                          f"passes | {serial:.2f} | "
                          f"{100 * chunk_f1(yte, mixed.predict(Xte)):.2f} |", flush=True)
    print(f"\nload average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
