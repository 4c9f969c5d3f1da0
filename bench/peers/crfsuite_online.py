"""CRFsuite's online learners against cseq's: PA, PA-I, PA-II and AROW side by side.

The same sklearn-crfsuite tutorial features (``bench/peers/sklearn_crfsuite_tutorial.py``)
on CoNLL-2000: ``cseq.compat.sklearn_crfsuite.CRF(algorithm=A, **p)`` against
python-crfsuite's ``Trainer(algorithm=A)`` with the same parameters
(``pa_type`` passed to CRFsuite as ``type``), ``--epochs`` passes each, test
on the last ``--test`` sentences of train.txt; prints token accuracy and
training seconds of both, one run each (docs/learners.md quotes it)::

    python bench/peers/crfsuite_online.py --data ../shared/data [--train 500]
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from common.crfsuite_tutorial import load_sentences, sent2features, sent2labels  # noqa: E402
from common.paths import SHARED_DATA  # noqa: E402

#: (name, algorithm, parameters) in sklearn-crfsuite's spelling.
CONFIGS = [
    ("PA", "pa", {"pa_type": 0}),
    ("PA-I", "pa", {"pa_type": 1}),
    ("PA-II", "pa", {"pa_type": 2}),
    ("PA-I, no error_sensitive", "pa", {"pa_type": 1, "error_sensitive": False}),
    ("PA-I, unaveraged", "pa", {"pa_type": 1, "averaging": False}),
    ("AROW", "arow", {}),
    ("AROW, variance 0.1, gamma 10", "arow", {"variance": 0.1, "gamma": 10.0}),
]


def _accuracy(pred, gold) -> float:
    pairs = [(p, g) for ps, gs in zip(pred, gold) for p, g in zip(ps, gs)]
    return 100.0 * sum(p == g for p, g in pairs) / len(pairs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--train", type=int, default=None, help="first N training sentences")
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args(argv)
    import pycrfsuite

    from cseq.compat import sklearn_crfsuite

    sents = load_sentences(args.data / "conll2000" / "train.txt")
    train, test = sents[:-args.test], sents[-args.test:]
    if args.train is not None:
        train = train[:args.train]
    X, y = [sent2features(s) for s in train], [sent2labels(s) for s in train]
    Xt, yt = [sent2features(s) for s in test], [sent2labels(s) for s in test]
    print(f"CoNLL-2000: {len(train)} training, {len(test)} test sentences, {args.epochs} epochs")
    print(f"{'learner':32} {'cseq acc':>9} {'crfsuite':>9} {'cseq s':>7} {'crfsuite s':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, algorithm, params in CONFIGS:
            t = time.perf_counter()
            crf = sklearn_crfsuite.CRF(algorithm=algorithm, max_iterations=args.epochs, **params)
            crf.fit(X, y)
            ours_s = time.perf_counter() - t
            ours = _accuracy(crf.predict(Xt), yt)
            t = time.perf_counter()
            trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
            theirs_params = {("type" if k == "pa_type" else k): v for k, v in params.items()}
            trainer.set_params({"max_iterations": args.epochs, **theirs_params})
            for xseq, yseq in zip(X, y):
                trainer.append(xseq, yseq)
            path = os.path.join(tmp, f"{algorithm}.crfsuite")
            trainer.train(path)
            theirs_s = time.perf_counter() - t
            tagger = pycrfsuite.Tagger()
            tagger.open(path)
            theirs = _accuracy([tagger.tag(x) for x in Xt], yt)
            print(f"{name:32} {ours:9.2f} {theirs:9.2f} {ours_s:7.2f} {theirs_s:10.2f}")


if __name__ == "__main__":
    main()
