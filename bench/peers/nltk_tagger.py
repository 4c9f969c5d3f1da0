"""cseq's GreedyTagger next to NLTK's PerceptronTagger on UD English EWT (UPOS).

Both taggers are greedy averaged perceptrons that tag left to right on their
own predicted history.  They run in this one process on the same sentences:
EWT train (fit) and EWT dev (tagging and accuracy).  NLTK's tagger is built
with ``PerceptronTagger(load=False)`` and trained with its own features and
tag dictionary (``train(sentences, nr_iter=5)``): nothing is downloaded.
cseq's tagger is fitted from the raw words with a ``TemplateFeaturizer``;
training time includes featurization, and tagging time runs from the words
to the labels (``predict``), one thread unless the row says otherwise.

The greedy tagger's CoNLL-2000 chunking F1 (train minus its last 1,000
sentences, tested on those, the ``chunk`` preset) is printed after the table.

This is a measuring tool, not a test: it asserts nothing.

    pip install -r bench/requirements.txt   # nltk
    python bench/peers/nltk_tagger.py              # full run (a few minutes on 2 cores)
    python bench/peers/nltk_tagger.py --quick      # 2,000 training sentences, smoke run
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
import time
from pathlib import Path

import cseq
from cseq.conll import read_conll, read_conllu
from cseq.metrics import accuracy, chunk_f1

DEFAULT_DATA = SHARED_DATA

#: A smaller template set for greedy tagging: NLTK's kinds of features (the
#: word and its neighbours two each side, affixes, the neighbours' suffixes)
#: plus a few orthographic flags; 17 templates against the pos preset's 48.
GREEDY_TEMPLATES = """\
U00:%x[-2,0:lower]
U01:%x[-1,0:lower]
U02:%x[0,0:lower]
U03:%x[1,0:lower]
U04:%x[2,0:lower]
U05:%x[0,0]
U10:%x[0,0:prefix1]
U11:%x[0,0:prefix2]
U15:%x[0,0:suffix2]
U16:%x[0,0:suffix3]
U17:%x[0,0:suffix4]
U18:%x[-1,0:suffix3]
U19:%x[1,0:suffix3]
U20:%x[0,0:hashyphen]
U21:%x[0,0:istitle]
U23:%x[0,0:hasdigit]
U25:%x[0,0:shape]
"""

#: greedy17 plus eight templates of the current token only (more affixes and
#: flags), which templates look up once per distinct word when tagging.
GREEDY25_TEMPLATES = GREEDY_TEMPLATES + """\
U12:%x[0,0:prefix3]
U13:%x[0,0:prefix4]
U14:%x[0,0:suffix1]
U50:%x[0,0:suffix5]
U22:%x[0,0:isupper]
U27:%x[0,0:ispunct]
U26:%x[0,0:shortshape]
U24:%x[0,0:alldigits]
"""

FEATURE_SETS = {"pos": "pos", "greedy17": GREEDY_TEMPLATES, "greedy25": GREEDY25_TEMPLATES}


def best_of(fn, repeat):
    """(min seconds, last result) of ``repeat`` calls."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def run_nltk(X, y, Xd, yd, n_iter, repeat, seed):
    from nltk.tag.perceptron import PerceptronTagger
    train = [list(zip((t[0] for t in s), tags)) for s, tags in zip(X, y) if s]
    words = [[t[0] for t in s] for s in Xd]
    random.seed(seed)  # NLTK shuffles with the random module
    tagger = PerceptronTagger(load=False)
    t = time.perf_counter()
    tagger.train(train, nr_iter=n_iter)
    train_s = time.perf_counter() - t
    tag_s, out = best_of(lambda: [[tag for _, tag in tagger.tag(w)] for w in words], repeat)
    return {"system": f"NLTK PerceptronTagger ({n_iter} iter, own features, tag dict)",
            "train_s": train_s, "tag_s": tag_s, "acc": accuracy(yd, out)}


def run_cseq(X, y, Xd, yd, feats, n_iter, tag_dict, repeat, seed, n_jobs=(1,)):
    est = cseq.GreedyTagger(max_iter=n_iter, random_state=seed, tag_dict=tag_dict,
                            features=cseq.TemplateFeaturizer(FEATURE_SETS[feats]))
    t = time.perf_counter()
    est.fit(X, y)
    train_s = time.perf_counter() - t
    rows = []
    for jobs in n_jobs:
        tag_s, out = best_of(lambda j=jobs: est.predict(Xd, n_jobs=j), repeat)
        td = f", tag dict {tag_dict!r}: {est.tag_dict_size_} words" if tag_dict else ""
        th = f", {jobs} threads" if jobs > 1 else ""
        rows.append({"system": f"cseq GreedyTagger ({n_iter} iter, {feats}{td}{th})",
                     "train_s": train_s, "tag_s": tag_s, "acc": accuracy(yd, out)})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--quick", action="store_true", help="2,000 training sentences, 1 repeat")
    ap.add_argument("--iter", type=int, default=5, help="epochs of both taggers (NLTK's default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="tagging runs, best kept")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    ewt = args.data / "ud_en_ewt"
    if not ewt.is_dir():
        sys.exit(f"no EWT data in {ewt}")
    X, y = read_conllu(ewt / "en_ewt-ud-train.conllu")
    Xd, yd = read_conllu(ewt / "en_ewt-ud-dev.conllu")
    repeat = args.repeat
    if args.quick:
        X, y, repeat = X[:2000], y[:2000], 1
    n_dev = sum(map(len, Xd))
    print(f"# EWT UPOS: {len(X)} training sentences ({sum(map(len, X))} tokens), "
          f"dev {len(Xd)} sentences ({n_dev} tokens); {args.iter} epochs; tagging best of "
          f"{repeat}; load average {os.getloadavg()[0]:.2f}; cseq {cseq.__version__}")
    rows = [run_nltk(X, y, Xd, yd, args.iter, repeat, args.seed)]
    rows += run_cseq(X, y, Xd, yd, "pos", args.iter, None, repeat, args.seed, (1, 2))
    rows += run_cseq(X, y, Xd, yd, "pos", args.iter, "U05:", repeat, args.seed)
    rows += run_cseq(X, y, Xd, yd, "greedy17", args.iter, None, repeat, args.seed)
    rows += run_cseq(X, y, Xd, yd, "greedy25", args.iter, None, repeat, args.seed, (1, 2))
    rows += run_cseq(X, y, Xd, yd, "greedy25", args.iter, "U05:", repeat, args.seed)
    ref = rows[0]
    print()
    print("| system | train s | train speed-up | tagging tokens/s | tagging speed-up | dev UPOS acc |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['system']} | {r['train_s']:.1f} | {ref['train_s'] / r['train_s']:.1f}x | "
              f"{n_dev / r['tag_s']:,.0f} | {ref['tag_s'] / r['tag_s']:.1f}x | "
              f"{100 * r['acc']:.2f}% |")

    conll = args.data / "conll2000" / "train.txt"
    if conll.is_file():
        Xc, yc = read_conll(conll)
        Xtr, ytr, Xte, yte = Xc[:-1000], yc[:-1000], Xc[-1000:], yc[-1000:]
        if args.quick:
            Xtr, ytr = Xtr[:2000], ytr[:2000]
        est = cseq.GreedyTagger(max_iter=args.iter, random_state=args.seed,
                                features=cseq.TemplateFeaturizer("chunk"))
        t = time.perf_counter()
        est.fit(Xtr, ytr)
        train_s = time.perf_counter() - t
        tag_s, pred = best_of(lambda: est.predict(Xte), repeat)
        n = sum(map(len, Xte))
        print(f"\nCoNLL-2000 chunking (train minus last 1,000 sentences -> those 1,000, chunk "
              f"preset): GreedyTagger {args.iter} iter F1 {100 * chunk_f1(yte, pred):.2f}, "
              f"accuracy {100 * accuracy(yte, pred):.2f}%, train {train_s:.1f} s, "
              f"tagging {n / tag_s:,.0f} tokens/s")
    print(f"\n# load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
