"""Scaling curves: cost per token against corpus size and against the number of labels.

    python bench/scaling.py               # both tables (about two minutes)
    python bench/scaling.py --repeat 5

Corpus size: CoNLL-2000 with the CRF++ chunking attributes, at 1/4, 1/2, 1
and 2 times the training set (2x is the set twice).  Labels: EWT with the
``pos`` preset, labeled with UPOS (17 tags) and XPOS (about 50), next to
CoNLL-2000 chunk tags (22).  For each corpus it times one CRF objective and
gradient pass, one averaged-perceptron epoch and tagging (``predict``, one
thread, from the user's lists), and prints nanoseconds per token: a flat
column means cost linear in tokens.  The label table also divides the
decoding and objective times by L^2, which is flat when the label-pair work
dominates, as it should for large L.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import cseq
from cseq.conll import read_conll, read_conllu
from cseq.model import LinearChain
from cseq.objectives import CRFObjective

import features as chunk_features
from featurize import best_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def measure(X, y, featurizer, repeat: int) -> dict:
    """ns/token of one CRF objective pass, one perceptron epoch and predict."""
    est = cseq.CRF(features=featurizer)
    fz, corpus, classes = est._pack_training(X, y)
    model = LinearChain.from_corpus(corpus, fz.n_attributes, len(classes))
    model.params = np.random.default_rng(0).normal(scale=0.1, size=len(model.params))
    objective = CRFObjective(model, corpus, 1.0, 1)
    n = corpus.n_tokens
    t_obj = best_of(lambda: objective(model.params), repeat)
    ap = cseq.StructuredPerceptron(max_iter=2, random_state=0, features=featurizer).fit(X, y)
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

    print("\nNumber of labels; ns per token, and ns per token / L^2")
    print(f"{'corpus':34} {'L':>3} {'CRF pass':>9} {'/L^2':>6} {'AP epoch':>9} {'/L^2':>6} "
          f"{'tag':>7} {'/L^2':>6}")
    ewt = DATA / "ud_en_ewt" / "en_ewt-ud-train.conllu"
    cases = [("CoNLL-2000 chunk, CRF++ attributes", X, y, None)]
    for label in ("upos", "xpos"):
        Xe, ye = read_conllu(ewt, label=label)
        cases.append((f"EWT {label.upper()}, pos preset", Xe, ye, cseq.TemplateFeaturizer("pos")))
    for name, Xc, yc, fz in cases:
        r = measure(Xc, yc, fz, args.repeat)
        L2 = r["labels"] ** 2
        print(f"{name:34} {r['labels']:>3} {r['obj']:>9.0f} {r['obj'] / L2:>6.2f} "
              f"{r['epoch']:>9.0f} {r['epoch'] / L2:>6.2f} {r['tag']:>7.0f} {r['tag'] / L2:>6.2f}")


if __name__ == "__main__":
    main()
