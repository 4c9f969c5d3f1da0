"""sklearn-crfsuite's tutorial on CoNLL-2000, with sklearn-crfsuite and with cseq's compat layer.

The tutorial (sklearn-crfsuite's documentation, its CoNLL-2002 notebook, on
CoNLL-2000 chunks with POS tags) is :func:`tutorial`, written once; the only
thing that changes between the two runs is the pair of modules it is handed,
as a user's code would change only its import::

    import sklearn_crfsuite                                  # sklearn-crfsuite
    from sklearn_crfsuite import metrics
    from cseq.compat import sklearn_crfsuite                 # cseq
    from cseq.compat.sklearn_crfsuite import metrics

Both run in this one process on the same sentences (CoNLL-2000 ``train.txt``
minus its last 1,000 sentences for training, those 1,000 to test, as
``bench/run.py``), and the table gives each one's tutorial F1 (weighted
token F1 without 'O'), span F1 (conlleval), training and prediction seconds,
the cseq / sklearn-crfsuite ratios and how many test tokens both label alike.  A measuring tool, not a test.

    pip install -r bench/requirements.txt   # sklearn-crfsuite, python-crfsuite
    python bench/peers/sklearn_crfsuite_tutorial.py [--data DIR] [--train N] [--test N]
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.crfsuite_tutorial import load_sentences, sent2features, sent2labels  # noqa: E402,F401
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

DEFAULT_DATA = SHARED_DATA


# ---- the tutorial -----------------------------------------------------------

def tutorial(sklearn_crfsuite, metrics, train_sents, test_sents, out=print):
    """The tutorial's steps, with its modules passed in; returns what it computed.

    The returned dict holds the fitted ``crf``, ``y_test``, ``y_pred``, the
    tutorial's ``f1`` and ``report``, and the seconds of ``fit`` and
    ``predict`` (the only lines added to the tutorial are the two timers).
    """
    X_train = [sent2features(s) for s in train_sents]
    y_train = [sent2labels(s) for s in train_sents]

    X_test = [sent2features(s) for s in test_sents]
    y_test = [sent2labels(s) for s in test_sents]

    clock = time.perf_counter()
    crf = sklearn_crfsuite.CRF(
        algorithm='lbfgs',
        c1=0.1,
        c2=0.1,
        max_iterations=100,
        all_possible_transitions=True
    )
    crf.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - clock

    labels = list(crf.classes_)
    labels.remove('O')

    clock = time.perf_counter()
    y_pred = crf.predict(X_test)
    predict_seconds = time.perf_counter() - clock
    f1 = metrics.flat_f1_score(y_test, y_pred, average='weighted', labels=labels)
    out(f1)

    # group B and I results
    sorted_labels = sorted(labels, key=lambda name: (name[1:], name[0]))
    report = metrics.flat_classification_report(y_test, y_pred, labels=sorted_labels, digits=3)
    out(report)
    return {"crf": crf, "y_test": y_test, "y_pred": y_pred, "f1": f1, "report": report,
            "fit_seconds": fit_seconds, "predict_seconds": predict_seconds}


# ---- the data and the comparison ----------------------------------------------

def _version(module: str) -> str:
    from importlib import metadata
    try:
        return metadata.version(module)
    except metadata.PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="the folder holding conll2000/train.txt")
    parser.add_argument("--train", type=int, default=None,
                        help="use only the first N training sentences")
    parser.add_argument("--test", type=int, default=1000,
                        help="test on the last N sentences of train.txt (default 1000)")
    args = parser.parse_args(argv)
    path = args.data / "conll2000" / "train.txt"
    if not path.is_file():
        sys.exit(f"error: {path} not found (use --data DIR, the folder holding conll2000/)")
    try:
        import sklearn_crfsuite
        from sklearn_crfsuite import metrics as sk_metrics
    except ImportError as exc:
        sys.exit(f"error: sklearn-crfsuite does not import ({exc}): "
                 "pip install -r bench/requirements.txt")
    import cseq
    from cseq.compat import sklearn_crfsuite as cseq_crfsuite
    from cseq.compat.sklearn_crfsuite import metrics as cseq_metrics
    from cseq.metrics import chunk_f1

    sents = load_sentences(path)
    train, test = sents[:-args.test], sents[-args.test:]
    if args.train is not None:
        train = train[:args.train]
    print(f"# {platform.platform()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} logical cores, load average {os.getloadavg()[0]:.2f}")
    print(f"# cseq {cseq.__version__}, sklearn-crfsuite {_version('sklearn-crfsuite')}, "
          f"python-crfsuite {_version('python-crfsuite')}, scikit-learn {_version('scikit-learn')}")
    print(f"# {path}: {len(train)} training sentences "
          f"({sum(map(len, train))} tokens), {len(test)} test sentences")

    results = {}
    for name, module, metrics in (("sklearn-crfsuite", sklearn_crfsuite, sk_metrics),
                                  ("cseq.compat", cseq_crfsuite, cseq_metrics)):
        print(f"\n## {name}")
        with warnings.catch_warnings():
            # Labels absent from the test set make scikit-learn warn in the report.
            warnings.simplefilter("ignore")
            results[name] = tutorial(module, metrics, train, test)
    sk, cs = results["sklearn-crfsuite"], results["cseq.compat"]
    n_test = sum(map(len, test))
    print(f"\n{'system':<18} {'tutorial F1':>11} {'span F1':>8} {'fit s':>8} {'predict s':>10}")
    for name, r in results.items():
        span = 100 * chunk_f1(r["y_test"], [list(p) for p in r["y_pred"]])
        print(f"{name:<18} {100 * r['f1']:>11.2f} {span:>8.2f} {r['fit_seconds']:>8.1f} "
              f"{r['predict_seconds']:>10.2f}")
    same = sum(a == b for p, q in zip(sk["y_pred"], cs["y_pred"]) for a, b in zip(p, q))
    print(f"\ntokens given the same label by both: {same / n_test:.2%}")
    print(f"tutorial F1 difference (cseq - sklearn-crfsuite): "
          f"{100 * (cs['f1'] - sk['f1']):+.2f} points")
    print(f"training time ratio cseq / sklearn-crfsuite: "
          f"{cs['fit_seconds'] / sk['fit_seconds']:.2f}")
    print(f"prediction time ratio cseq / sklearn-crfsuite: "
          f"{cs['predict_seconds'] / sk['predict_seconds']:.2f} "
          f"({n_test / cs['predict_seconds']:,.0f} against "
          f"{n_test / sk['predict_seconds']:,.0f} tokens/s)")
    print(f"# load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
