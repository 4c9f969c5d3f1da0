"""Brown clusters (issue 31): how fast ``cseq clusters`` runs, and what clusters bring.

``speed``: cluster the first ``--tokens`` tokens of raw text files (repeated
when they hold fewer) and print the CPU seconds, the wall seconds and the
load average.  ``accuracy``: train the averaged perceptron (10 passes, ``--seeds``, averaged)
with and without the cluster templates (``cseq train --clusters``) and score
the development sets: UD English EWT UPOS accuracy (``pos`` preset) and
WNUT-17 entity span F1 (``ner`` preset).  The clusters come from the training
and development files' own text (unlabeled use), or from ``--clusters FILE``.
A measuring tool: it asserts nothing and never runs in the test suite.

Usage::

    python bench/ablations/clusters.py speed RAW.txt --tokens 1000000 --clusters 1000
    python bench/ablations/clusters.py accuracy --data ../shared/data --clusters-n 300 --seeds 0,1,2,3
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import sys
import time

import cseq
from cseq.conll import read_conll, read_conllu
from cseq.features.clusters import brown_clusters, with_cluster_templates
from cseq.metrics import accuracy, chunk_scores

DEFAULT_DATA = str(SHARED_DATA)


def _load() -> str:
    return " ".join("%.2f" % v for v in os.getloadavg())


def _speed(args: argparse.Namespace) -> None:
    lines: list[str] = []
    for path in args.text:
        with open(path, encoding="utf-8") as f:
            lines.extend(f.read().splitlines())
    out, n = [], 0
    while n < args.tokens and lines:
        for line in lines:
            out.append(line)
            n += len(line.split())
            if n >= args.tokens:
                break
    print(f"cseq {cseq.__version__}: {n:,} tokens, {len(set(' '.join(out).split())):,} distinct, "
          f"C = {args.clusters}, min count {args.min_count}; load average {_load()}", flush=True)
    wall, cpu = time.perf_counter(), time.process_time()
    last = [wall]

    def progress(done: int, total: int) -> None:
        if time.perf_counter() - last[0] >= 60:
            last[0] = time.perf_counter()
            print(f"  merge {done:,}/{total:,}: {time.process_time() - cpu:.0f} s CPU, "
                  f"{last[0] - wall:.0f} s wall, load average {_load()}", flush=True)

    c = brown_clusters(out, args.clusters, min_count=args.min_count, progress=progress)
    print(f"{len(c):,} words in {c.n_clusters} clusters: {time.process_time() - cpu:.1f} s CPU, "
          f"{time.perf_counter() - wall:.1f} s wall; load average {_load()}")


def _fit_score(templates: str, clusters, X, y, X_dev, y_dev, spans: bool,
               seed: int) -> tuple[float, float]:
    features = cseq.TemplateFeaturizer(
        templates if clusters is None else with_cluster_templates(templates), clusters=clusters)
    est = cseq.StructuredPerceptron(max_iter=10, random_state=seed, features=features)
    t = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - t
    pred = est.predict(X_dev)
    score = chunk_scores(y_dev, pred, "iob2")["f1"] if spans else accuracy(y_dev, pred)
    return 100 * score, seconds


def _accuracy(args: argparse.Namespace) -> None:
    ewt, wnut = os.path.join(args.data, "ud_en_ewt"), os.path.join(args.data, "wnut17")
    tasks = [
        ("EWT UPOS accuracy", "pos", False,
         read_conllu(os.path.join(ewt, "en_ewt-ud-train.conllu")),
         read_conllu(os.path.join(ewt, "en_ewt-ud-dev.conllu"))),
        ("WNUT-17 span F1", "ner", True,
         read_conll(os.path.join(wnut, "wnut17train.conll")),
         read_conll(os.path.join(wnut, "emerging.dev.conll"))),
    ]
    if args.clusters:
        clusters = cseq.read_clusters(args.clusters)
        origin = args.clusters
    else:
        text = [" ".join(t if isinstance(t, str) else t[0] for t in s)
                for _, _, _, train, dev in tasks for s in (*train[0], *dev[0])]
        t = time.process_time()
        clusters = brown_clusters(text, args.clusters_n, min_count=args.min_count)
        origin = (f"the train and dev text ({sum(len(s.split()) for s in text):,} tokens), "
                  f"C = {args.clusters_n}, min count {args.min_count}, "
                  f"{time.process_time() - t:.0f} s CPU")
    seeds = [int(v) for v in args.seeds.split(",")]
    print(f"cseq {cseq.__version__}, averaged perceptron (10 passes, seeds {args.seeds}); "
          f"clusters: {origin}; load average {_load()}")
    print("| task (dev) | preset | + clusters | change | train s (preset / + clusters) |")
    print("|---|---|---|---|---|")
    for name, preset, spans, (X, y), (X_dev, y_dev) in tasks:
        runs = [(_fit_score(preset, None, X, y, X_dev, y_dev, spans, seed),
                 _fit_score(preset, clusters, X, y, X_dev, y_dev, spans, seed)) for seed in seeds]
        base = sum(r[0][0] for r in runs) / len(runs)
        with_c = sum(r[1][0] for r in runs) / len(runs)
        s0, s1 = min(r[0][1] for r in runs), min(r[1][1] for r in runs)
        each = ", ".join(f"{b[0]:.2f}/{c[0]:.2f}" for b, c in runs)
        print(f"| {name} | {base:.2f} | {with_c:.2f} | {with_c - base:+.2f} (per seed {each}) | "
              f"{s0:.1f} / {s1:.1f} |", flush=True)
    print(f"load average at the end: {_load()}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("speed")
    s.add_argument("text", nargs="+")
    s.add_argument("--tokens", type=int, default=1_000_000)
    s.add_argument("--clusters", type=int, default=1000)
    s.add_argument("--min-count", type=int, default=1)
    a = sub.add_parser("accuracy")
    a.add_argument("--data", default=DEFAULT_DATA)
    a.add_argument("--clusters", help="a cluster file (default: made from the data's text)")
    a.add_argument("--clusters-n", type=int, default=1000)
    a.add_argument("--min-count", type=int, default=2)
    a.add_argument("--seeds", default="0", help="the learners' seeds, averaged (e.g. 0,1,2,3)")
    args = ap.parse_args(argv)
    (_speed if args.what == "speed" else _accuracy)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
