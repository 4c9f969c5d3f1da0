"""The pipeline's column taggers (FEATS, lemma) on k contiguous folds of UD training files.

    python bench/accuracy/pipeline_columns.py --ud DIR --treebanks UD_Greek-GDT,UD_Turkish-IMST
    python bench/accuracy/pipeline_columns.py --ud DIR --folds 5 --column lemma

For each treebank folder of ``DIR`` (as ``bench/languages.py`` reads them) the
training file is cut into ``--folds`` contiguous blocks; each block is tagged by
a tagger trained on the others, from gold words and gold UPOS (the tagger's
input in a pipeline, where the UPOS is predicted).  Candidates, per column:

* ``pos+upos``: the ``pos`` preset with ``UPOS_TEMPLATES``;
* ``own``: the column's templates in ``PIPELINE_DEFAULTS`` (``LEMMA_TEMPLATES``,
  ``FEATS_TEMPLATES``), with ``min_freq`` 1;
* ``own, min_freq 2``: the default.

Printed: each candidate's accuracy, mean and sd over the folds, and its mean
paired difference to ``pos+upos`` with two standard errors.  Nothing outside
the training files is read.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path


def _folds(n: int, k: int) -> list[range]:
    size = -(-n // k)
    return [range(i, min(n, i + size)) for i in range(0, n, size)]


def main(argv: list[str] | None = None) -> int:
    from cseq.features.featurizer import TemplateFeaturizer
    from cseq.features.presets import PRESETS
    from cseq.io.conll_read import read_conllu
    from cseq.pipeline import PIPELINE_DEFAULTS, UPOS_TEMPLATES, _kind
    from cseq.learners.greedy import GreedyTagger
    from cseq.learners.perceptron import StructuredPerceptron
    from cseq.segment.lemmas import Lemmatizer

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ud", type=Path, required=True)
    p.add_argument("--treebanks", default=None, help="comma-separated folder names (all)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--column", choices=("lemma", "feats", "both"), default="both")
    args = p.parse_args(argv)
    dirs = sorted(d for d in args.ud.iterdir() if d.is_dir() and (
        args.treebanks is None or d.name in args.treebanks.split(",")))
    columns = ("lemma", "feats") if args.column == "both" else (args.column,)
    candidates = {"pos+upos": (PRESETS["pos"] + UPOS_TEMPLATES, 1)}
    for column in columns:
        for d in dirs:
            train = sorted(d.glob("*-ud-train.conllu"))
            if not train:
                continue
            rows = read_conllu(train[0], label=None, columns=("form", "upos", column))[0]
            own = PIPELINE_DEFAULTS[f"{column}_templates"]
            cands = {**candidates, "own": (own, 1),
                     f"own, min_freq {PIPELINE_DEFAULTS['min_freq']}":
                         (own, PIPELINE_DEFAULTS["min_freq"])}
            acc: dict[str, list[float]] = {name: [] for name in cands}
            for block in _folds(len(rows), args.folds):
                held = set(block)
                tr = [s for i, s in enumerate(rows) if i not in held]
                te = [rows[i] for i in block]
                X = [[(r[0], r[1]) for r in s] for s in tr]
                Xt = [[(r[0], r[1]) for r in s] for s in te]
                gold = [r[2] for s in te for r in s]
                n_labels = len({r[2] for s in tr for r in s})
                for name, (templates, min_freq) in cands.items():
                    features = TemplateFeaturizer(templates, min_freq=min_freq)
                    if column == "lemma" or _kind(n_labels) == "greedy":
                        est = GreedyTagger(max_iter=PIPELINE_DEFAULTS["greedy_epochs"],
                                           random_state=0, pair_history=False,
                                           features=features)
                    else:
                        est = StructuredPerceptron(max_iter=PIPELINE_DEFAULTS["tagger_epochs"],
                                                   random_state=0, features=features)
                    if column == "lemma":
                        lem = Lemmatizer.fit(est, [[r[0] for r in s] for s in tr],
                                             [[r[2] for r in s] for s in tr],
                                             upos=[[r[1] for r in s] for s in tr])
                        pred = [x for s in lem.predict(Xt) for x in s]
                    else:
                        est.fit(X, [[r[2] for r in s] for s in tr])
                        pred = [x for s in est.predict(Xt) for x in s]
                    acc[name].append(100 * sum(a == b for a, b in zip(gold, pred)) / len(gold))
            base = acc["pos+upos"]
            for name, values in acc.items():
                diffs = [v - b for v, b in zip(values, base)]
                se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0
                print(f"{d.name} {column} {name}: {statistics.fmean(values):.2f} ± "
                      f"{statistics.pstdev(values):.2f}; vs pos+upos "
                      f"{statistics.fmean(diffs):+.2f} ± {2 * se:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
