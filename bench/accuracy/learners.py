"""Every learner of cseq on the same two tasks: accuracy, training time, tagging speed, size.

Tasks (issue 13):

* ``ewt``: UD English EWT, UPOS, train -> dev, the ``pos`` template preset,
  token accuracy.
* ``conll2000``: CoNLL-2000 chunking, ``train.txt`` minus its last 1,000
  sentences -> those 1,000, the ``chunk`` preset, span F1 (IOB2).

One function per learner returns the estimator to train (or None when the
learner does not apply), with the settings ``cseq train --algorithm NAME``
uses (``crf-l1`` is ``--algorithm crf --c1 1 --c2 0``; the MEMM's is
``c2=0.1``); the driver times ``fit`` and ``predict`` (one thread), scores
the predictions and measures the model file, and prints one table.  The
banner and the last line give the load average and the ``load`` column the
1-minute load after each row: on a shared machine the seconds are taken under
that load.  It is a measuring tool: it asserts nothing and never runs in the
test suite.

Usage::

    python bench/accuracy/learners.py                       # every learner on both tasks
    python bench/accuracy/learners.py --learners memm,hmm --data ../shared/data
    python bench/accuracy/learners.py --tasks ewt --learners hmm
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402
from common.tasks import load_average, load_task  # noqa: E402

import argparse
import os
import sys
import tempfile
import time

import cseq
from cseq.templates import TemplateFeaturizer

DEFAULT_DATA = str(SHARED_DATA)


# ---------------------------------------------------------------------------
# Learners: name -> function(task) returning an unfitted estimator.


def perceptron(task: str):
    """Averaged structured perceptron, 10 passes, seed 0 (``cseq train``'s defaults)."""
    return cseq.StructuredPerceptron(max_iter=10, random_state=0,
                                     features=TemplateFeaturizer(PRESET[task]))


def memm(task: str):
    """MEMM, L2 and L-BFGS on the task's template preset (c2 = 0.1 as the CRF's row)."""
    return cseq.MEMM(c2=0.1, max_iter=100, features=TemplateFeaturizer(PRESET[task]))


def hmm(task: str):
    """First-order HMM with TnT's suffix model; words only (templates do not apply)."""
    return cseq.HMM(alpha=0.01)


def greedy(task: str):
    """Greedy left-to-right averaged perceptron with label history, 5 epochs, the task's preset."""
    return cseq.GreedyTagger(max_iter=5, random_state=0, features=TemplateFeaturizer(PRESET[task]))


def ssvm(task: str):
    """Structured SVM, Hamming cost, C = 1, averaged, seed 0 (the perceptron's); 20 passes
    for pos, 40 for chunk (``cseq train``'s per-preset defaults)."""
    return cseq.StructuredSVM(C=1.0, max_iter=40 if PRESET[task] == "chunk" else 20,
                              random_state=0, features=TemplateFeaturizer(PRESET[task]))


def crf(task: str):
    """CRF (L-BFGS) with the defaults of ``cseq train --algorithm crf``: for pos c2 = 0.1 and
    200 iterations, for chunk c1 = c2 = 0.1 (elastic net, OWL-QN) and 200 iterations."""
    if PRESET[task] == "pos":
        return cseq.CRF(c2=0.1, max_iter=200, features=TemplateFeaturizer("pos"))
    return cseq.CRF(c1=0.1, c2=0.1, max_iter=200, features=TemplateFeaturizer(PRESET[task]))


def crf_l1(task: str):
    """L1 CRF by OWL-QN (c1 = 1, c2 = 0): a sparse model, zero weights pruned from the file."""
    return cseq.CRF(c1=1.0, c2=0.0, features=TemplateFeaturizer(PRESET[task]))


def crf_sgd(task: str):
    """L2 CRF by SGD (30 epochs, calibrated rate, seed 0), c2 as the ``crf`` row."""
    return cseq.CRF(algorithm="sgd", c2=0.1 if PRESET[task] == "pos" else 1.0, max_iter=30,
                    random_state=0, features=TemplateFeaturizer(PRESET[task]))


# Cheapest first, so that a long run shows its first rows early.
LEARNERS = {"perceptron": perceptron, "greedy": greedy, "hmm": hmm, "ssvm": ssvm, "memm": memm,
            "crf-sgd": crf_sgd, "crf": crf, "crf-l1": crf_l1}


# ---------------------------------------------------------------------------
# Tasks


PRESET = {"ewt": "pos", "conll2000": "chunk"}


def run(name: str, task: str, split) -> dict:
    Xtr, ytr, Xte, yte, metric, score = split
    est = LEARNERS[name](task)
    if est is None:
        return {}
    t = time.perf_counter()
    est.fit(Xtr, ytr)
    train_s = time.perf_counter() - t
    t = time.perf_counter()
    pred = est.predict(Xte)
    tag_s = time.perf_counter() - t
    n_tok = sum(len(s) for s in Xte)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.cseq")
        est.save(path)
        size = os.path.getsize(path)
    note = ""
    if getattr(est, "n_pruned_", 0):
        total = est.model_.n_state + est.n_pruned_
        note = (f"{name}: {est.n_pruned_:,} of {total:,} state weights exactly zero "
                f"({100 * est.n_pruned_ / total:.1f}%), pruned from the file")
    return {"metric": metric, "value": 100 * score(yte, pred), "train_s": train_s,
            "tok_s": n_tok / tag_s, "size_mb": size / 1e6,
            "iterations": getattr(est, "n_iter_", None), "note": note}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learners", default=",".join(LEARNERS),
                    help=f"comma-separated, from {', '.join(LEARNERS)}")
    ap.add_argument("--tasks", default="ewt,conll2000", help="ewt, conll2000 or both")
    ap.add_argument("--data", default=DEFAULT_DATA, help="the shared data folder")
    args = ap.parse_args(argv)
    names = [n for n in args.learners.split(",") if n]
    for n in names:
        if n not in LEARNERS:
            raise SystemExit(f"unknown learner {n!r} (have {', '.join(LEARNERS)})")
    print(f"cseq {cseq.__version__}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
          f"{load_average()}", flush=True)
    print("| task | learner | metric | value | train s | iterations | tag tokens/s | model MB | "
          "load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for task in [t for t in args.tasks.split(",") if t]:
        split = load_task(task, args.data)
        for n in names:
            r = run(n, task, split)
            if r:
                print(f"| {task} | {n} | {r['metric']} | {r['value']:.2f} | {r['train_s']:.1f} | "
                      f"{r['iterations']} | {r['tok_s']:,.0f} | {r['size_mb']:.1f} | "
                      f"{load_average().split()[0]} |", flush=True)
                if r.get("note"):
                    print(f"  ({r['note']})", flush=True)
    print(f"load average at the end: {load_average()} "
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
