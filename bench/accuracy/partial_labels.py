"""Training on partially labelled sentences: hiding labels against dropping the sentences.

The task of issue 16, item 4, on UD English EWT UPOS (train -> dev, the
``pos`` template preset, token accuracy on dev): the first ``--train``
training sentences, of which a fraction ``--hide`` of the token labels are
hidden at random (``None``, seeded).  Three models per learner:

* ``full``: every label known (the reference);
* ``partial``: the hidden labels are ``None``: the CRF maximizes the
  likelihood of all the completions of the known labels, the perceptron and
  the SSVM train on the best completion (docs/learners.md, "Partially
  labelled sequences");
* ``dropped``: every sentence that had a hidden label is left out, the
  others are kept whole.

It is a measuring tool: it asserts nothing and never runs in the test suite
(``tests/learners/test_partial_labels.py`` checks the same comparison on a smaller
subset).

Usage::

    python bench/accuracy/partial_labels.py                          # perceptron, crf-sgd
    python bench/accuracy/partial_labels.py --learners perceptron,ssvm,crf --train 12543
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import time

import numpy as np

import cseq
from cseq.conll import read_conllu
from cseq.templates import TemplateFeaturizer

DEFAULT_DATA = str(SHARED_DATA)

LEARNERS = {
    "perceptron": lambda: cseq.StructuredPerceptron(max_iter=10, random_state=0,
                                                    features=TemplateFeaturizer("pos")),
    "ssvm": lambda: cseq.StructuredSVM(max_iter=10, random_state=0,
                                       features=TemplateFeaturizer("pos")),
    "crf-sgd": lambda: cseq.CRF(algorithm="sgd", c2=0.1, max_iter=10, random_state=0,
                                features=TemplateFeaturizer("pos")),
    "crf": lambda: cseq.CRF(c2=0.1, max_iter=100, features=TemplateFeaturizer("pos")),
}


def hide_labels(y: list[list[str]], fraction: float, seed: int) -> list[list[str | None]]:
    """``y`` with each label replaced by None with probability ``fraction`` (seeded)."""
    rng = np.random.default_rng(seed)
    return [[None if h else lab for lab, h in zip(seq, rng.random(len(seq)) < fraction)]
            for seq in y]


def compare(make, X, y, X_dev, y_dev, fraction: float, seed: int) -> dict:
    """Dev accuracies (and seconds) of the full, partial and dropped models."""
    hidden = hide_labels(y, fraction, seed)
    keep = [i for i, seq in enumerate(hidden) if None not in seq]
    runs = {"full": (X, y), "partial": (X, hidden),
            "dropped": ([X[i] for i in keep], [y[i] for i in keep])}
    out = {"hidden_tokens": sum(lab is None for seq in hidden for lab in seq),
           "tokens": sum(map(len, y)), "kept_sentences": len(keep), "sentences": len(y)}
    for name, (Xs, ys) in runs.items():
        clock = time.perf_counter()
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cseq.ConvergenceWarning)
            est = make().fit(Xs, ys)
        out[name] = est.score(X_dev, y_dev)
        out[name + "_seconds"] = time.perf_counter() - clock
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--learners", default="perceptron,crf-sgd")
    ap.add_argument("--train", type=int, default=3000, help="first N training sentences")
    ap.add_argument("--hide", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    ewt = os.path.join(args.data, "ud_en_ewt")
    X, y = read_conllu(os.path.join(ewt, "en_ewt-ud-train.conllu"))
    X_dev, y_dev = read_conllu(os.path.join(ewt, "en_ewt-ud-dev.conllu"))
    X, y = X[:args.train], y[:args.train]
    print(f"EWT UPOS, first {len(X)} training sentences, {args.hide:.0%} of the labels hidden "
          f"(seed {args.seed}), dev {len(X_dev)} sentences; load {os.getloadavg()[0]:.1f}")
    print("| learner | full | partial | dropped | sentences kept | seconds (full/partial/dropped) |")
    print("|---|---|---|---|---|---|")
    for name in args.learners.split(","):
        r = compare(LEARNERS[name], X, y, X_dev, y_dev, args.hide, args.seed)
        print(f"| {name} | {100 * r['full']:.2f} | {100 * r['partial']:.2f} | "
              f"{100 * r['dropped']:.2f} | {r['kept_sentences']} of {r['sentences']} "
              f"({r['hidden_tokens']} of {r['tokens']} labels hidden) | "
              f"{r['full_seconds']:.0f} / {r['partial_seconds']:.0f} / "
              f"{r['dropped_seconds']:.0f} |", flush=True)
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
