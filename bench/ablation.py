"""What each part of the ``pos`` preset's accuracy push adds, on UD English EWT (issue 13).

Trains on ``en_ewt-ud-train.conllu`` and scores UPOS token accuracy on
``en_ewt-ud-dev.conllu``, one row per variant, each the row above plus one
change:

* ``no tags``: the preset without its ``:tags`` templates (the preset before
  the accuracy push);
* ``+ class of the word`` (U80), ``+ classes of the neighbours`` (U81-U83),
  ``+ class conjunctions`` (U84-U87, the whole preset);
* ``tags, not jackknifed``: the whole preset, but the training sentences see
  classes counted on all of the training data, their own labels included
  (why :mod:`cseq.features.tagdict` jackknifes);
* ``order 2``: the whole preset with second-order transitions.

Learner: the averaged perceptron (10 passes, seed 0, ``cseq train``'s
defaults); ``--learner ssvm`` uses the structured SVM (C = 0.1) instead.  The
banner and the last line give the load average: seconds are taken under it.
A measuring tool: it asserts nothing and never runs in the test suite.

Usage::

    python bench/ablation.py --data ../shared/data
    python bench/ablation.py --learner ssvm
    python bench/ablation.py --seed 1        # how much a seed moves the rows
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from unittest import mock

import cseq
import cseq.features.tagdict
from cseq.conll import read_conllu
from cseq.metrics import accuracy
from cseq.templates import PRESETS, TemplateFeaturizer

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data")

POS = PRESETS["pos"]


def without(*idents: str) -> str:
    """The pos preset without the templates named ``idents``."""
    return "\n".join(line for line in POS.splitlines()
                     if not any(line.startswith(i + ":") for i in idents))


VARIANTS = [
    ("no tags", without(*[f"U8{k}" for k in range(8)]), 1, False),
    ("+ class of the word (U80)", without(*[f"U8{k}" for k in range(1, 8)]), 1, False),
    ("+ classes of the neighbours (U81-U83)", without("U84", "U85", "U86", "U87"), 1, False),
    ("+ class conjunctions (U84-U87) = pos", POS, 1, False),
    ("tags, not jackknifed", POS, 1, True),
    ("pos, order 2", POS, 2, False),
]


def _unjackknifed_fit(original):
    """TagDictionary.fit whose training classes are the whole dictionary's."""
    def fit(rows, y, columns):
        dictionary, _ = original(rows, y, columns)
        return dictionary, [dictionary.classes(sent) for sent in rows]
    return fit


def make(learner: str, templates: str, order: int, seed: int = 0):
    features = TemplateFeaturizer(templates)
    if learner == "ssvm":
        return cseq.StructuredSVM(C=0.1, max_iter=10, random_state=seed, order=order,
                                  features=features)
    return cseq.StructuredPerceptron(max_iter=10, random_state=seed, order=order,
                                     features=features)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA, help="folder holding ud_en_ewt/")
    ap.add_argument("--learner", choices=["perceptron", "ssvm"], default="perceptron")
    ap.add_argument("--seed", type=int, default=0, help="the learners' random_state")
    args = ap.parse_args(argv)
    ewt = os.path.join(args.data, "ud_en_ewt")
    X, y = read_conllu(os.path.join(ewt, "en_ewt-ud-train.conllu"))
    X_dev, y_dev = read_conllu(os.path.join(ewt, "en_ewt-ud-dev.conllu"))
    print(f"cseq {cseq.__version__}, {args.learner} (seed {args.seed}), EWT train {sum(map(len, y)):,} tokens -> "
          f"dev {sum(map(len, y_dev)):,}, load average {' '.join('%.2f' % v for v in os.getloadavg())}")
    print("| variant | dev accuracy | change | train s |")
    print("|---|---|---|---|")
    previous = None
    for name, templates, order, plain in VARIANTS:
        est = make(args.learner, templates, order, args.seed)
        patch = (mock.patch.object(cseq.features.tagdict.TagDictionary, "fit",
                                   _unjackknifed_fit(cseq.features.tagdict.TagDictionary.fit))
                 if plain else mock.patch.object(cseq.features.tagdict, "FOLDS", cseq.features.tagdict.FOLDS))
        with patch:
            t = time.perf_counter()
            est.fit(X, y)
            seconds = time.perf_counter() - t
        acc = 100 * accuracy(y_dev, est.predict(X_dev))
        change = "" if previous is None else f"{acc - previous:+.2f}"
        print(f"| {name} | {acc:.2f} | {change} | {seconds:.1f} |", flush=True)
        if not plain and order == 1:
            previous = acc
    print(f"load average at the end: {' '.join('%.2f' % v for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
