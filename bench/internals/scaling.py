"""Scaling curves: cost per token against corpus size and against the number of labels.

    python bench/internals/scaling.py               # both tables (about two minutes)
    python bench/internals/scaling.py --repeat 5

Corpus size: CoNLL-2000 with the CRF++ chunking attributes (22 chunk
labels), at 1/4, 1/2, 1 and 2 times the training set (2x is the set twice).
Labels: EWT with the ``pos`` preset, labeled with UPOS (17 tags), XPOS (49)
and XPOS with its rarest tags merged (9, 25, 33), so the tokens and
attributes stay the same and only the label count moves.  For each corpus it
times one CRF objective and gradient pass, one averaged-perceptron epoch and
tagging (``predict``, one thread, from the user's lists) and prints
nanoseconds per token: a flat column means cost linear in tokens.  The label
table fits ``a + b L^2`` to each column; a good fit means quadratic growth
in the label count and nothing worse.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse

import numpy as np

import cseq
from cseq.conll import read_conll, read_conllu
from cseq.learners.frame import pack
from cseq.chain.model import LinearChain
from cseq.learners.objectives import CRFObjective

from common import features as chunk_features
from common.timing import best_of

DATA = SHARED_DATA


def measure(X, y, featurizer, repeat: int) -> dict:
    """ns/token of one CRF objective pass, one perceptron epoch and predict."""
    est = cseq.CRF(features=featurizer)
    fz, corpus, classes = pack(est, X, y)
    model = LinearChain.from_corpus(corpus, fz.n_attributes, len(classes))
    model.params = np.random.default_rng(0).normal(scale=0.1, size=len(model.params))
    objective = CRFObjective(model, corpus, 1.0, 1)
    n = corpus.n_tokens
    t_obj = best_of(lambda: objective(model.params), repeat)
    ap = cseq.StructuredPerceptron(max_iter=4, random_state=0, features=featurizer).fit(X, y)
    t_epoch = min(r["seconds"] for r in ap.history_)
    t_tag = best_of(lambda: ap.predict(X), repeat)
    return {"tokens": n, "labels": len(classes), "obj": 1e9 * t_obj / n,
            "epoch": 1e9 * t_epoch / n, "tag": 1e9 * t_tag / n}


def chunk_corpus():
    rows, y = read_conll(DATA / "conll2000" / "train.txt")
    X = [chunk_features.sentence_features([r[0] for r in s], [r[1] for r in s]) for s in rows]
    return X, y


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"cseq {cseq.__version__}, OpenMP {cseq.openmp_enabled()}")

    X, y = chunk_corpus()
    print("\nCorpus size (CoNLL-2000, CRF++ attributes, 22 labels); ns per token")
    print(f"{'fraction':>8} {'tokens':>9} {'CRF pass':>9} {'AP epoch':>9} {'tag':>9}")
    for frac in (0.25, 0.5, 1.0, 2.0):
        k = int(len(X) * frac)
        Xs, ys = (X * 2, y * 2) if frac == 2.0 else (X[:k], y[:k])
        r = measure(Xs, ys, None, args.repeat)
        print(f"{frac:>8} {r['tokens']:>9} {r['obj']:>9.0f} {r['epoch']:>9.0f} {r['tag']:>9.0f}")

    print("\nNumber of labels (EWT, pos preset; 9, 25 and 33 labels are XPOS with its rarest"
          "\ntags merged into one); ns per token, and the least-squares fit a + b L^2")
    ewt = DATA / "ud_en_ewt" / "en_ewt-ud-train.conllu"
    Xe, upos = read_conllu(ewt, label="upos")
    _, xpos = read_conllu(ewt, label="xpos")
    cases = [(f"XPOS, top {k - 1} + other", merge_rare(xpos, k)) for k in (9, 25, 33)]
    cases += [("UPOS", upos), ("XPOS", xpos)]
    rows = []
    for name, ys in cases:
        r = measure(Xe, ys, cseq.TemplateFeaturizer("pos"), args.repeat)
        rows.append((name, r))
    L2 = np.array([r["labels"] ** 2 for _, r in rows], dtype=float)
    fits = {}
    for key in ("obj", "epoch", "tag"):
        cost = np.array([r[key] for _, r in rows])
        b, a = np.polyfit(L2, cost, 1)
        fits[key] = (a, b, a + b * L2)
    print(f"{'labels':22} {'L':>3} {'CRF pass':>9} {'fit':>7} {'AP epoch':>9} {'fit':>7} "
          f"{'tag':>7} {'fit':>7}")
    for i, (name, r) in enumerate(rows):
        print(f"{name:22} {r['labels']:>3} "
              + " ".join(f"{r[k]:>{w}.0f} {fits[k][2][i]:>7.0f}"
                         for k, w in (("obj", 9), ("epoch", 9), ("tag", 7))))
    for key, label in (("obj", "CRF pass"), ("epoch", "AP epoch"), ("tag", "tag")):
        a, b, _ = fits[key]
        print(f"  {label}: {a:.0f} ns + {b:.2f} ns x L^2 per token")


def merge_rare(y, k: int):
    """Labels of ``y`` with all but the ``k - 1`` most frequent merged into one."""
    counts: dict[str, int] = {}
    for seq in y:
        for t in seq:
            counts[t] = counts.get(t, 0) + 1
    keep = set(sorted(counts, key=lambda t: (-counts[t], t))[: k - 1])
    return [[t if t in keep else "OTHER" for t in seq] for seq in y]


if __name__ == "__main__":
    main()
