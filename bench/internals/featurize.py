"""Featurization speed: compiled templates against the plain-Python reference.

Runs :class:`cseq.templates.TemplateFeaturizer` (interning + 64-bit keys in C +
C hash table) and :func:`cseq.templates.expand` (one Python string per
feature) on the same corpus in one process, checks that both give the same
attributes, and prints times and ratios.

Usage::

    python bench/internals/featurize.py                       # both corpora below
    python bench/internals/featurize.py --data /path/to/shared/data --repeat 5

Corpora (from ``shared/data``, see its README):

* CoNLL-2000 ``conll2000/train.txt`` (word, POS) with the ``chunk`` preset;
* UD English EWT ``ud_en_ewt/en_ewt-ud-train.conllu`` (FORM) with the ``pos`` preset.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import platform
import sys
from collections import Counter
from pathlib import Path

import numpy as np

import cseq
from cseq.conll import read_conll, read_conllu
from cseq.templates import TemplateFeaturizer
from common.timing import best_of


def check_same(feat: TemplateFeaturizer, X, seqs) -> None:
    names = feat.attribute_names()
    ref = feat.features_python(X)
    k = 0
    for sent in ref:
        for tok in sent:
            got = seqs.attr_ids[seqs.tok_ptr[k] : seqs.tok_ptr[k + 1]]
            if Counter(names[i] for i in got) != Counter(tok):
                raise SystemExit(f"MISMATCH at token {k}")
            k += 1


def run(name: str, X, y, preset: str, repeat: int) -> None:
    n_tok = sum(map(len, X))
    feat = TemplateFeaturizer(preset)
    # The pos preset's ':tags' templates learn from the labels (cseq.features.tagdict).
    labels = (y,) if feat.needs_labels else ()
    t_fit = best_of(lambda: feat.fit_transform(X, *labels), repeat)
    seqs = feat.fit_transform(X, *labels)
    t_tr = best_of(lambda: feat.transform(X), repeat)
    hashed = TemplateFeaturizer(preset, n_buckets=2**20)
    hashed.fit_transform(X, *labels)
    t_hash = best_of(lambda: hashed.transform(X), repeat)
    t_py = best_of(lambda: feat.features_python(X), max(1, repeat // 2))
    if not labels:  # fit_transform's tags are jackknifed: tests/features/test_tagdict.py checks them
        check_same(feat, X, seqs)
    n_feat = len(seqs.attr_ids)
    print(f"\n{name}: {len(X)} sentences, {n_tok} tokens, preset {preset!r}, "
          f"{len(feat.templates)} templates, {n_feat} features, {feat.n_attributes} attributes")
    print(f"  {'path':<34}{'seconds':>9}{'tokens/s':>12}{'vs python':>11}")
    for label, t in (
        ("python reference (expand)", t_py),
        ("compiled fit_transform", t_fit),
        ("compiled transform", t_tr),
        ("compiled transform, n_buckets=2^20", t_hash),
    ):
        print(f"  {label:<34}{t:>9.3f}{n_tok / t:>12,.0f}{t_py / t:>10.1f}x")
    print("  compiled and python attributes: " + ("identical" if not labels else
          "not compared (jackknifed tags; tests/features/test_tagdict.py)"))


def main(argv=None) -> None:
    default = SHARED_DATA
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=default, help="the shared/data directory")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = ap.parse_args(argv)
    print(f"cseq {cseq.__version__}, Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"{platform.platform()}, {platform.processor() or platform.machine()}")
    conll = args.data / "conll2000" / "train.txt"
    ewt = args.data / "ud_en_ewt" / "en_ewt-ud-train.conllu"
    if conll.exists():
        run("CoNLL-2000 train", *read_conll(conll), "chunk", args.repeat)
    if ewt.exists():
        rows, y = read_conllu(ewt)
        run("UD EWT train", [[r[0] for r in sent] for sent in rows], y, "pos", args.repeat)


if __name__ == "__main__":
    main()
