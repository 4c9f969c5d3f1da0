"""First- against second-order chains on EWT UPOS: accuracy, training time, Viterbi per token.

The task is the one of ``bench/accuracy/learners.py`` (UD English EWT, train -> dev,
the ``pos`` template preset, token accuracy).  For each learner it trains
``order=1`` and ``order=2`` with the same hyperparameters, then times both
models, interleaved so that a change of load on a shared machine hits both,
keeping the best of ``--repeat`` runs (one thread):

* ``decode``: ``LinearChain.decode`` on the featurized dev set (emission
  scores and Viterbi, sentence by sentence, in one call), per token;
* ``emissions``: the emission scores alone (``LinearChain.emissions``);
* ``Viterbi``: their difference, the part the order changes.

``--arrays`` times the bare Viterbi instead, without a model: ``cseq.viterbi``
on random scores (200 sequences of 25 positions, ``L`` = 5, 17 and 45
labels) at order 1 and 2, minus the cost of a call on one position, in
nanoseconds per position; theory says order 2 does ``L`` times the work of
order 1.

It is a measuring tool: it asserts nothing and never runs in the test suite.

Usage::

    python bench/accuracy/order2.py                           # perceptron and ssvm
    python bench/accuracy/order2.py --learners perceptron --repeat 5
    python bench/accuracy/order2.py --arrays                  # the bare Viterbi, order 2 against 1
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import sys
import time

import cseq
from cseq.conll import read_conllu
from cseq.metrics import accuracy
from cseq.templates import TemplateFeaturizer

DEFAULT_DATA = str(SHARED_DATA)

LEARNERS = {
    # The rows of bench/accuracy/learners.py (perceptron: cseq train's defaults).
    "perceptron": lambda order: cseq.StructuredPerceptron(
        max_iter=10, random_state=0, order=order, features=TemplateFeaturizer("pos")),
    "ssvm": lambda order: cseq.StructuredSVM(
        C=0.1, max_iter=10, random_state=0, order=order, features=TemplateFeaturizer("pos")),
    "crf": lambda order: cseq.CRF(c2=0.1, max_iter=200, order=order,
                                  features=TemplateFeaturizer("pos")),
    # SGD, 10 epochs: a second-order L-BFGS run of 200 iterations takes hours
    # on the shared 2-core machine.
    "crf-sgd": lambda order: cseq.CRF(algorithm="sgd", c2=0.1, max_iter=10, random_state=0,
                                      order=order, features=TemplateFeaturizer("pos")),
}


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def timed(model, corpus, repeat: int) -> tuple[float, float]:
    """Microseconds per token of decoding, and of the emission scores alone."""
    n_tok = corpus.n_tokens
    decode = best_of(repeat, lambda: model.decode(corpus))
    emissions = best_of(repeat, lambda: model.emissions(corpus, 0, n_tok))
    return decode / n_tok * 1e6, emissions / n_tok * 1e6


def arrays(repeat: int) -> None:
    """The bare Viterbi on random arrays: ns per position, order 1 and 2."""
    import numpy as np

    rng = np.random.default_rng(0)
    n, n_seq = 25, 200
    print("| L | order 1 ns/position | order 2 ns/position | order 2 / order 1 | L |")
    print("|---|---|---|---|---|")
    for L in (5, 17, 45):
        ems = [rng.normal(size=(n, L)) for _ in range(n_seq)]
        trans, trans2 = rng.normal(size=(L, L)), rng.normal(size=(L, L, L))
        def run(second=False, first=False, ems=ems, trans=trans, trans2=trans2):
            for e in ems:
                cseq.viterbi(e[:1] if first else e, trans,
                             transitions2=trans2 if second else None)

        call = best_of(repeat, lambda: run(first=True))
        one = best_of(repeat, run) - call
        two = best_of(repeat, lambda: run(second=True)) - call
        per = 1e9 / (n * n_seq)
        print(f"| {L} | {one * per:.1f} | {two * per:.1f} | {two / one:.1f} | {L} |", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learners", default="perceptron,ssvm",
                    help=f"comma-separated, from {', '.join(LEARNERS)}")
    ap.add_argument("--data", default=DEFAULT_DATA, help="the shared data folder")
    ap.add_argument("--repeat", type=int, default=7, help="timing rounds (the best is kept)")
    ap.add_argument("--arrays", action="store_true",
                    help="time the bare Viterbi on random arrays instead of trained models")
    args = ap.parse_args(argv)
    if args.arrays:
        arrays(args.repeat)
        return 0
    d = os.path.join(args.data, "ud_en_ewt")
    Xtr, ytr = read_conllu(os.path.join(d, "en_ewt-ud-train.conllu"))
    Xte, yte = read_conllu(os.path.join(d, "en_ewt-ud-dev.conllu"))
    print(f"cseq {cseq.__version__}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    print("| learner | order | dev accuracy | train s | decode us/token | emissions us/token "
          "| Viterbi us/token |")
    print("|---|---|---|---|---|---|---|")
    for name in [n for n in args.learners.split(",") if n]:
        if name not in LEARNERS:
            raise SystemExit(f"unknown learner {name!r} (have {', '.join(LEARNERS)})")
        fitted = {}
        for order in (1, 2):
            est = LEARNERS[name](order)
            t = time.perf_counter()
            est.fit(Xtr, ytr)
            fitted[order] = (est, time.perf_counter() - t, accuracy(yte, est.predict(Xte)))
        # Interleaved rounds of one run each: the best of each survives a busy moment.
        corpora = {order: fitted[order][0].featurizer_.transform(Xte) for order in (1, 2)}
        best = {1: [float("inf")] * 2, 2: [float("inf")] * 2}
        for _ in range(args.repeat):
            for order in (1, 2):
                got = timed(fitted[order][0].model_, corpora[order], 1)
                best[order] = [min(a, b) for a, b in zip(best[order], got)]
        viterbi = {order: best[order][0] - best[order][1] for order in (1, 2)}
        for order in (1, 2):
            est, train_s, acc = fitted[order]
            print(f"| {name} | {order} | {100 * acc:.2f} | {train_s:.1f} | "
                  f"{best[order][0]:.3f} | {best[order][1]:.3f} | {viterbi[order]:.3f} |",
                  flush=True)
        L = len(fitted[1][0].classes_)
        print(f"  ({name}: order 2 / order 1 = {viterbi[2] / viterbi[1]:.1f}x per token in "
              f"Viterbi, {best[2][0] / best[1][0]:.1f}x in decoding; L = {L} labels)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
