"""cseq's defaults next to each peer's best published setting: chunking, POS and NER, one run.

Every row of a task trains on the same sentences and is scored on the same
held-out ones (issue 31's acceptance command):

* ``chunk``: CoNLL-2000, ``train.txt`` minus its last 1,000 sentences ->
  those 1,000 (the split of ``bench/run.py``), span F1 (conlleval's rules);
* ``pos``: UD English EWT, train -> dev, UPOS token accuracy;
* ``ner``: WNUT-17, train -> dev (``emerging.dev.conll``), span F1.

No test set is read: only training and dev files exist here, and nothing in
cseq's defaults was tuned on these dev files' labels by this command (the
ablation that chose the defaults is ``docs/accuracy.md``).

Rows:

* ``cseq default``: exactly what ``cseq train FILE --template PRESET`` builds
  (its parser and its estimator factory, so the learner and settings are
  the command line's, whatever they become), and the alternative learner
  (``--algorithm crf`` where the default is the perceptron, ``--algorithm
  perceptron`` where it is the CRF) to show why the default is the default;
* ``python-crfsuite``: L-BFGS at ``c1=0.1, c2=0.1`` (elastic net, the
  sklearn-crfsuite tutorial's setting) and at ``c2=1`` (``bench/run.py``'s,
  CRF++'s default strength); chunking with the CRF++ chunking attributes of
  ``bench/common/features.py`` and CRFsuite's own stopping rule, POS and NER with
  the attributes of cseq's preset (its ``:tags`` templates left out, which
  need cseq's jackknifed tag dictionary) and the tutorial's
  ``max_iterations=100, all_possible_transitions=True``;
* ``NLTK PerceptronTagger`` (POS only): 5 iterations, its own features and
  tag dictionary (``bench/peers/nltk_tagger.py``).

Training time is the wall time of the fit from Python lists (featurizing
included for cseq, ``append`` included for crfsuite), one thread.  The
banner and the last line give the load average: on a shared machine the
seconds are taken under it.  A measuring tool: it asserts nothing.

Usage::

    python bench/accuracy/accuracy.py                 # every task (30 to 60 minutes on 2 busy cores)
    python bench/accuracy/accuracy.py --quick         # 1,000 training sentences per task, a smoke run
    python bench/accuracy/accuracy.py --tasks chunk --data ../shared/data
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

from common import features
import cseq
from cseq.cli import _parser
from cseq.cli.train import _make_estimator
from cseq.conll import read_conll, read_conllu
from cseq.metrics import accuracy, chunk_f1
from cseq.templates import PRESETS, expand

DEFAULT_DATA = SHARED_DATA
TASKS = ("chunk", "pos", "ner")
#: Sentences kept of each training set with --quick.
QUICK = 1000


def load(task: str, data: Path):
    """(X_train, y_train, X_dev, y_dev) of a task, as cseq's readers give them."""
    if task == "chunk":
        X, y = read_conll(data / "conll2000" / "train.txt")
        return X[:-1000], y[:-1000], X[-1000:], y[-1000:]
    if task == "pos":
        d = data / "ud_en_ewt"
        return (*read_conllu(d / "en_ewt-ud-train.conllu"),
                *read_conllu(d / "en_ewt-ud-dev.conllu"))
    d = data / "wnut17"
    return (*read_conll(d / "wnut17train.conll"), *read_conll(d / "emerging.dev.conll"))


def score(task: str, gold, pred) -> float:
    """The task's figure, in percent: token accuracy for POS, span F1 otherwise."""
    return 100 * (accuracy(gold, pred) if task == "pos" else chunk_f1(gold, pred))


def cseq_estimator(task: str, algorithm: str | None = None):
    """The estimator of ``cseq train FILE --template PRESET [--algorithm NAME]`` (the preset
    named as the task, ``chunk``, ``pos`` or ``ner``), and a description of it."""
    argv = ["train", "-", "--template", task] + (["--algorithm", algorithm] if algorithm else [])
    est = _make_estimator(_parser().parse_args(argv), task)
    params = est.get_params(deep=False)
    shown = ", ".join(f"{k}={params[k]}" for k in ("c1", "c2", "C", "max_iter", "order")
                      if k in params)
    what = "cseq default" if algorithm is None else f"cseq --algorithm {algorithm}"
    return est, f"{what}: {type(est).__name__} ({shown})"


def run_cseq(task, X, y, Xd, yd, algorithm=None):
    est, name = cseq_estimator(task, algorithm)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        est.fit(X, y)
        seconds = time.perf_counter() - t
    pred = est.predict(Xd)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.cseq")
        est.save(path)
        size = os.path.getsize(path) / 1e6
    note = f"{len(caught)} warning(s): {caught[0].message}" if caught else ""
    return {"system": name, "score": score(task, yd, pred), "train_s": seconds,
            "size_mb": size, "note": note}


def crfsuite_attributes(task: str, X):
    """Per-token attribute strings handed to python-crfsuite (see the module docstring)."""
    if task == "chunk":
        return features.featurize(X)
    templates = "\n".join(line for line in PRESETS[task].splitlines() if ":tags]" not in line)
    return [expand(templates, sent) for sent in X]


def run_crfsuite(task, X, y, Xd, yd, params):
    import pycrfsuite
    A, Ad = crfsuite_attributes(task, X), crfsuite_attributes(task, Xd)
    if task != "chunk":
        params = {**params, "max_iterations": 100, "feature.possible_transitions": True}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.crfsuite")
        t = time.perf_counter()
        trainer = pycrfsuite.Trainer(verbose=False)
        for a, labels in zip(A, y):
            trainer.append(a, labels)
        trainer.select("lbfgs")
        trainer.set_params(params)
        trainer.train(path)
        seconds = time.perf_counter() - t
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        pred = [tagger.tag(a) for a in Ad]
        tagger.close()
        size = os.path.getsize(path) / 1e6
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if k in ("c1", "c2", "max_iterations"))
    return {"system": f"python-crfsuite L-BFGS ({shown})", "score": score(task, yd, pred),
            "train_s": seconds, "size_mb": size,
            "note": f"{len(trainer.logparser.iterations)} iterations"}


def run_nltk(task, X, y, Xd, yd):
    from nltk.tag.perceptron import PerceptronTagger
    train = [list(zip((t[0] for t in s), tags)) for s, tags in zip(X, y) if s]
    random.seed(0)  # NLTK shuffles with the random module
    tagger = PerceptronTagger(load=False)
    t = time.perf_counter()
    tagger.train(train, nr_iter=5)
    seconds = time.perf_counter() - t
    pred = [[tag for _, tag in tagger.tag([t[0] for t in s])] for s in Xd]
    return {"system": "NLTK PerceptronTagger (5 iterations)", "score": score(task, yd, pred),
            "train_s": seconds, "size_mb": None, "note": ""}


def systems(task: str):
    """The rows of a task: (name, function of (task, X, y, Xd, yd))."""
    # The default's alternative (the CRF where the perceptron is the default, and the
    # reverse), to show why the default is what it is.
    other = "perceptron" if cseq_estimator(task)[0].__class__.__name__ == "CRF" else "crf"
    rows = [("cseq", run_cseq),
            (f"cseq {other}", lambda *a: run_cseq(*a, algorithm=other)),
            ("crfsuite c1=0.1 c2=0.1",
             lambda *a: run_crfsuite(*a, {"c1": 0.1, "c2": 0.1})),
            ("crfsuite c2=1", lambda *a: run_crfsuite(*a, {"c1": 0.0, "c2": 1.0}))]
    if task == "pos":
        rows.append(("nltk", run_nltk))
    return rows


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated, from "
                    + ", ".join(TASKS))
    ap.add_argument("--quick", action="store_true",
                    help=f"the first {QUICK:,} training sentences of each task (a smoke run)")
    args = ap.parse_args(argv)
    tasks = [t for t in args.tasks.split(",") if t]
    for t in tasks:
        if t not in TASKS:
            raise SystemExit(f"unknown task {t!r} (have {', '.join(TASKS)})")
    print(f"cseq {cseq.__version__}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
          f"{load_average()}{', --quick' if args.quick else ''}", flush=True)
    print("| task | system | dev score | train s | model MB | load | note |")
    print("|---|---|---:|---:|---:|---:|---|")
    for task in tasks:
        X, y, Xd, yd = load(task, args.data)
        if args.quick:
            X, y = X[:QUICK], y[:QUICK]
        metric = "acc." if task == "pos" else "F1"
        for name, run in systems(task):
            try:
                r = run(task, X, y, Xd, yd)
            except ImportError as exc:  # a peer not installed: say so, go on
                print(f"| {task} | {name}: not available ({exc}) | | | | | |", flush=True)
                continue
            size = "" if r["size_mb"] is None else f"{r['size_mb']:.1f}"
            print(f"| {task} | {r['system']} | {r['score']:.2f} {metric} | {r['train_s']:.1f} | "
                  f"{size} | {os.getloadavg()[0]:.2f} | {r['note']} |", flush=True)
    print(f"load average at the end: {load_average()} "
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
