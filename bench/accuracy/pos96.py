"""What issue 31 item 2 (the ``pos`` preset at 96% UPOS on EWT dev) tried, each variant over several seeds.

Trains the averaged perceptron (10 passes) on ``en_ewt-ud-train.conllu`` and
scores UPOS on ``en_ewt-ud-dev.conllu``; one row per variant: the mean over
the seeds, each seed, the accuracy on the dev tokens whose lowercased word is
not in the training data (1,709 of 25,147), the mean training seconds and the
load average (seconds are taken under it). The variants:

* the old defaults (order 1, a label joins a word's ``tags`` class from a 5%
  share), the 10% share alone, and the new defaults (order 2, 10% share);
* the new defaults plus Brown clusters (300, from the raw text of EWT
  train+dev, WNUT-17 train+dev and CoNLL-2000 train: unlabeled use of the
  repository's data, ``cseq.brown_clusters(..., min_count=2)``) with
  ``--clusters``' templates;
* unknown-word features the token functions lack, given as extra columns:
  suffixes of the lowercased word, the part after the last hyphen; and the
  ``tags`` class counted separately for capitalised occurrences;
* stacking: a first tagger's tags at -2..+2 (jackknifed over 5 folds of the
  training data, the whole-train tagger's on dev) as features of a second;
* 15 passes; and the weights of three seeds' models averaged (``all_states``
  so that they share one index).

A measuring tool: it asserts nothing and never runs in the test suite.

Usage::

    python bench/accuracy/pos96.py --data ../shared/data            # seeds 0, 1, 2
    python bench/accuracy/pos96.py --seeds 3,4
    python bench/accuracy/pos96.py --rows "clusters (300), weights"   # one row
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`

import argparse
import os
import sys
import time
from unittest import mock

import numpy as np

import cseq
import cseq.features.tagdict as tagdict
from cseq.conll import read_conll, read_conllu
from cseq.features.clusters import CLUSTER_TEMPLATES
from cseq.templates import TemplateFeaturizer

from common.paths import SHARED_DATA  # noqa: E402
from common.pos_templates import POS, plus  # noqa: E402

#: First-pass tags as features (column 1), the current one left out (it made no difference).
STACKED = ["US1:%x[-1,1]", "US2:%x[1,1]", "US3:%x[-2,1]", "US4:%x[2,1]", "US5:%x[-1,1]/%x[1,1]",
           "US6:%x[1,1]/%x[2,1]", "US7:%x[0,0:lower]/%x[1,1]", "US8:%x[-1,1]/%x[0,1]/%x[1,1]"]
#: Over extra columns: 1 = the word lowercased, 2 = its part after the last hyphen.
UNKNOWN_WORDS = ["UL1:%x[0,1:suffix2]", "UL2:%x[0,1:suffix3]", "UL3:%x[0,1:suffix4]",
                 "UL4:%x[0,1:suffix5]", "UL5:%x[0,1:prefix3]/%x[0,1:suffix3]", "UH0:%x[0,2]",
                 "UH1:%x[0,2:suffix2]", "UH2:%x[0,2:suffix3]"]
#: Over an extra column 1: the word, marked when capitalised, so its class is counted apart.
CASED_CLASSES = ["UT0:%x[0,1:tags]", "UT1:%x[-1,1:tags]", "UT2:%x[1,1:tags]",
                 "UT3:%x[0,1:tags]/%x[-1,0:istitle]"]


def lower_and_hyphen(X):
    return [[(w, w.lower(), w.lower().rsplit("-", 1)[-1] if "-" in w.strip("-") else "_NOHY")
             for w in s] for s in X]


def case_marked(X):
    return [[(w, "^" + w if w[:1].isupper() else w) for w in s] for s in X]


def perceptron(templates, seed, order=2, clusters=None, **kw):
    return cseq.StructuredPerceptron(random_state=seed, order=order, **kw,
                                     features=TemplateFeaturizer(templates, clusters=clusters))


def stacked_columns(W, y, W_dev, seed, folds=5):
    """Training words with a first tagger's jackknifed tags, dev words with the whole one's."""
    first = [None] * len(W)
    for k in range(folds):
        inside = [i for i in range(len(W)) if i % folds != k]
        outside = [i for i in range(len(W)) if i % folds == k]
        est = perceptron(POS, seed, order=1).fit([W[i] for i in inside], [y[i] for i in inside])
        for i, tags in zip(outside, est.predict([W[i] for i in outside])):
            first[i] = tags
    dev = perceptron(POS, seed, order=1).fit(W, y).predict(W_dev)
    pair = lambda S, T: [list(zip(s, t)) for s, t in zip(S, T)]  # noqa: E731
    return pair(W, first), pair(W_dev, dev)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(SHARED_DATA), help="folder holding ud_en_ewt/, wnut17/, conll2000/")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--rows", default="", help="only the rows whose name holds this text")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    ewt = os.path.join(args.data, "ud_en_ewt")
    W, y = read_conllu(os.path.join(ewt, "en_ewt-ud-train.conllu"))[:2]
    W_dev, y_dev = read_conllu(os.path.join(ewt, "en_ewt-ud-dev.conllu"))[:2]
    W = [[t if isinstance(t, str) else t[0] for t in s] for s in W]
    W_dev = [[t if isinstance(t, str) else t[0] for t in s] for s in W_dev]
    gold = np.array([t for s in y_dev for t in s])
    seen = {w.lower() for s in W for w in s}
    unseen = np.array([w.lower() not in seen for s in W_dev for w in s])
    raw = W + W_dev
    for name in ("wnut17/wnut17train.conll", "wnut17/emerging.dev.conll", "conll2000/train.txt"):
        raw += [[t if isinstance(t, str) else t[0] for t in s]
                for s in read_conll(os.path.join(args.data, name))[0]]
    clusters = cseq.brown_clusters(raw, 300, min_count=2)
    share5 = lambda: mock.patch.object(tagdict, "MIN_SHARE", 0.05)  # noqa: E731
    # (row, estimator of a seed, (train X, dev X) of a seed or None for the words, patch)
    variants = [
        ("old defaults: order 1, 5% share", lambda s: perceptron(POS, s, order=1), None, share5),
        ("order 1, 10% share", lambda s: perceptron(POS, s, order=1), None, None),
        ("order 2, 5% share", lambda s: perceptron(POS, s), None, share5),
        ("new defaults: order 2, 10% share", lambda s: perceptron(POS, s), None, None),
        ("new + clusters (300)", lambda s: perceptron(plus(*CLUSTER_TEMPLATES), s,
                                                        clusters=clusters), None, None),
        ("new + lowercase suffixes, hyphen part", lambda s: perceptron(plus(*UNKNOWN_WORDS), s),
         lambda s: (lower_and_hyphen(W), lower_and_hyphen(W_dev)), None),
        ("new + classes of capitalised forms", lambda s: perceptron(plus(*CASED_CLASSES), s),
         lambda s: (case_marked(W), case_marked(W_dev)), None),
        ("new + stacked first-pass tags (5 folds)", lambda s: perceptron(plus(*STACKED), s),
         lambda s: stacked_columns(W, y, W_dev, s), None),
        ("new, 15 passes", lambda s: perceptron(POS, s, max_iter=15), None, None),
    ]
    print(f"cseq {cseq.__version__}, averaged perceptron, seeds {seeds}, EWT dev "
          f"{len(gold):,} tokens ({unseen.sum():,} unseen), load average "
          f"{' '.join('%.2f' % v for v in os.getloadavg())}")
    print("| variant | mean UPOS | per seed | unseen words | train s | load |")
    print("|---|---|---|---|---|---|")

    def row(name, accs, unk, secs):
        print(f"| {name} | {np.mean(accs):.2f} | {' / '.join('%.2f' % a for a in accs)} | "
              f"{np.mean(unk):.1f} | {np.mean(secs):.1f} | {os.getloadavg()[0]:.2f} |", flush=True)

    def score(pred):
        hit = gold == np.array([t for s in pred for t in s])
        return 100 * hit.mean(), 100 * hit[unseen].mean()

    for name, make, data, patch in variants:
        if args.rows and args.rows not in name:
            continue
        accs, unk, secs = [], [], []
        for seed in seeds:
            with patch() if patch else mock.patch.object(tagdict, "FOLDS", tagdict.FOLDS):
                t = time.perf_counter()  # stacking's first pass counts as training
                X, X_dev = (W, W_dev) if data is None else data(seed)
                est = make(seed).fit(X, y)
                secs.append(time.perf_counter() - t)
                a, u = score(est.predict(X_dev))
            accs.append(a)
            unk.append(u)
        row(name, accs, unk, secs)
    # One model whose weights are the mean of three seeds' (all_states: one shared index).
    for name, templates, table in [("new", POS, None),
                                   ("new + clusters (300)", plus(*CLUSTER_TEMPLATES), clusters)]:
        if args.rows and args.rows not in name + ", weights":
            continue
        accs, unk, secs = [], [], []
        for seed in seeds:
            t = time.perf_counter()
            models = [perceptron(templates, 3 * seed + k, clusters=table, all_states=True).fit(W, y)
                      for k in range(3)]
            models[0].model_.params[:] = np.mean([m.model_.params for m in models], axis=0)
            secs.append(time.perf_counter() - t)
            a, u = score(models[0].predict(W_dev))
            accs.append(a)
            unk.append(u)
        row(f"{name}, weights of 3 seeds averaged (seed s: seeds 3s..3s+2)", accs, unk, secs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
