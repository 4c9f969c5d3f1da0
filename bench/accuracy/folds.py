"""Choose a default by cross-validation: each candidate on k folds of the training data.

The folds are contiguous blocks of the training file (which lists its sentences
document by document, so a block holds out whole documents, as new text would).
A default changes only when its mean gain over the current default, fold by fold
(the folds are the same sentences for every candidate, so the differences are
paired), is larger than two standard errors of that mean: one split of the
training data overfits a choice among many variants (the chunking default of
issue 31 led CRFsuite by 0.36 on one split, and by nothing on held-out data).

Tasks and their training data (no dev or test file is read; ``--dev`` adds a
row per candidate scored on the task's dev file, trained on all of train):

* ``chunk``: CoNLL-2000 ``train.txt``, span F1 (conlleval's rules);
* ``pos``: UD English EWT ``en_ewt-ud-train.conllu``, UPOS accuracy (and the
  accuracy on words unseen in the fold's training part);
* ``ner``: WNUT-17 ``wnut17train.conll``, span F1.

Candidates, each ``cseq train --template TASK`` plus options (``default`` is the
preset as it ships, ``none`` the preset without word classes, ``en`` with the
shipped English classes),
and ``crfsuite``: python-crfsuite L-BFGS at ``c1=c2=0.1`` on the attributes of
``bench/accuracy/accuracy.py``.  Folds run two at a time (``--jobs``).

Usage::

    python bench/accuracy/folds.py --tasks ner,pos --folds 5 --dev
    python bench/accuracy/folds.py --tasks chunk --candidates none,en,crfsuite --folds 5 --dev
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
sys.path.insert(0, str(_Path(__file__).resolve().parent))  # for `accuracy`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import functools
import math
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cseq
from accuracy import load, run_crfsuite, score
from cseq.cli import _parser
from cseq.cli.train import _make_estimator

#: The candidates: extra ``cseq train`` options (None: python-crfsuite).
CANDIDATES = {"default": [], "none": ["--clusters", "none"], "en": ["--clusters", "en"],
              "crfsuite": None, "en-crf": ["--clusters", "en", "--algorithm", "crf"],
              "en-perceptron": ["--clusters", "en", "--algorithm", "perceptron"]}


def _word(t) -> str:
    return t if isinstance(t, str) else t[0]


def _run(task: str, candidate: str, X, y, Xd, yd) -> dict:
    """Train one candidate on (X, y) and score it on (Xd, yd)."""
    options = CANDIDATES[candidate]
    cpu = time.process_time()
    wall = time.perf_counter()
    if options is None:
        result = run_crfsuite(task, X, y, Xd, yd, {"c1": 0.1, "c2": 0.1})
        figure, pred = result["score"], None
    else:
        argv = ["train", "-", "--template", task, *options]
        est = _make_estimator(_parser().parse_args(argv), task)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        pred = est.predict(Xd)
        figure = score(task, yd, pred)
    out = {"score": figure, "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    if task == "pos" and pred is not None:
        seen = {_word(t).lower() for s in X for t in s}
        hits = [(p == g, _word(t).lower() not in seen)
                for s, gs, ps in zip(Xd, yd, pred) for t, g, p in zip(s, gs, ps)]
        unseen = [h for h, u in hits if u]
        out["unseen"] = 100 * sum(unseen) / max(len(unseen), 1)
    return out


@functools.lru_cache(maxsize=None)
def _data(task: str, data: str) -> tuple:
    """The task's files, read once per worker process."""
    return load(task, Path(data))


def _job(args: tuple) -> tuple[tuple, dict]:
    task, candidate, fold, k, data = args
    X, y, Xd, yd = _data(task, data)
    if fold is None:  # all of train, scored on dev
        return (task, candidate, "dev"), _run(task, candidate, X, y, Xd, yd)
    if task == "chunk":  # the bench split's training part is train.txt minus its last 1,000
        X, y = X + Xd, y + yd
    # Contiguous blocks: the files list sentences document by document, so a block
    # holds out whole documents (their names and topics), as new text would.
    lo, hi = fold * len(X) // k, (fold + 1) * len(X) // k
    tr = [*range(lo), *range(hi, len(X))]
    te = list(range(lo, hi))
    return (task, candidate, fold), _run(task, candidate, [X[i] for i in tr], [y[i] for i in tr],
                                         [X[i] for i in te], [y[i] for i in te])


def _mean_sd(v: list[float]) -> tuple[float, float]:
    m = sum(v) / len(v)
    return m, (math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0)


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(SHARED_DATA), help="the shared data folder")
    ap.add_argument("--tasks", default="ner,pos,chunk")
    ap.add_argument("--candidates", default="none,en", help="comma-separated, from "
                    + ", ".join(CANDIDATES) + "; the first is the current default")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--dev", action="store_true", help="also train on all of train and score dev")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    tasks = args.tasks.split(",")
    cands = args.candidates.split(",")
    for c in cands:
        if c not in CANDIDATES:
            raise SystemExit(f"unknown candidate {c!r} (have {', '.join(CANDIDATES)})")
    k = args.folds
    print(f"cseq {cseq.__version__}: {k} folds of the training data, candidates {cands} "
          f"(the first is the default), {args.jobs} jobs; load average {load_average()}",
          flush=True)
    jobs = [(t, c, f, k, args.data) for t in tasks for c in cands for f in range(k)]
    if args.dev:
        jobs += [(t, c, None, k, args.data) for t in tasks for c in cands]
    wall = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = dict(pool.map(_job, jobs))
    for t in tasks:
        print(f"\n### {t}: {k} folds (contiguous blocks)\n")
        print("| candidate | mean | sd | per fold | gain over " + cands[0] +
              " (mean ± 2 SE) | verdict |" + (" unseen words |" if t == "pos" else "") +
              (" dev |" if args.dev else "") + " train+tag s, wall / CPU |")
        print("|---|---:|---:|---|---|---|" + ("---:|" if t == "pos" else "")
              + ("---:|" if args.dev else "") + "---:|")
        base = [results[(t, cands[0], f)]["score"] for f in range(k)]
        for c in cands:
            runs = [results[(t, c, f)] for f in range(k)]
            v = [r["score"] for r in runs]
            m, sd = _mean_sd(v)
            diff = [a - b for a, b in zip(v, base)]
            dm, dsd = _mean_sd(diff)
            se2 = 2 * dsd / math.sqrt(k)
            verdict = ("-" if c == cands[0] else
                       "better" if dm > se2 else "worse" if dm < -se2 else "no clear change")
            row = (f"| {c} | {m:.2f} | {sd:.2f} | {', '.join(f'{x:.2f}' for x in v)} | "
                   f"{dm:+.2f} ± {se2:.2f} | {verdict} |")
            if t == "pos":
                row += (f" {_mean_sd([r.get('unseen', float('nan')) for r in runs])[0]:.2f} |")
            if args.dev:
                row += f" {results[(t, c, 'dev')]['score']:.2f} |"
            row += (f" {sum(r['wall'] for r in runs) / k:.1f} / "
                    f"{sum(r['cpu'] for r in runs) / k:.1f} |")
            print(row, flush=True)
    print(f"\n{time.perf_counter() - wall:.0f} s wall, load average at the end {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
