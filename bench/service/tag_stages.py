"""Where ``predict`` spends its time on raw words: the stages of the template path, timed apart.

    python bench/service/tag_stages.py                 # EWT train words, the pos preset
    python bench/service/tag_stages.py --repeat 7 --epochs 3
    python bench/service/tag_stages.py --words dev --n-jobs 2   # dev words, the threaded stages in 2

Trains an averaged perceptron on the ``pos`` preset (UD English EWT
train, ``--epochs`` passes, seed 0), then runs the stages that
``predict(X)`` runs for the training file's words, one after the other,
each timed on its own (best of ``--repeat``): interning the cells
(``_intern_lookup``), the ``tags`` classes (``_tags_hashed``), the word
memo (``KeyTable.word_memo``), the summed emission rows of the memo's
attributes per word and offset (``LinearChain.word_rows``), the lookup of
the other attributes (``TransformChunks.sequences(without_memo=True)``),
decoding with the word rows (``LinearChain.decode``) and the label lists.
``--n-jobs`` is given to the stages that take it (interning, the word memo,
lookup, decoding); the word rows and the ``tags`` classes run on one
thread whatever it is.  Then the whole ``predict(X, n_jobs=...)`` (best of
``--repeat``), whose time beyond the stages' sum is its own work (chunking,
threads, the label lists it builds).  A measuring tool: it asserts nothing.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import time
from pathlib import Path

import numpy as np

import cseq
from cseq.conll import read_conllu
from cseq.chain.sequences import label_lists
from cseq.templates import TransformChunks

DATA = SHARED_DATA / "ud_en_ewt"


def stages(est, X, n_jobs: int = 1) -> dict[str, float]:
    f = est.featurizer_
    t0 = time.perf_counter()
    data = f._intern_lookup(X, n_jobs)
    t1 = time.perf_counter()
    f._tags_hashed(data)
    t2 = time.perf_counter()
    memo = f._table.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                              data.word_slots, f._memo_col, f._memo_row, n_jobs)
    t3 = time.perf_counter()
    chunks = TransformChunks(f, data, memo, None, 1)
    ids, group, groups = chunks.memo_attributes()
    rows = est.model_.word_rows(ids, group, len(groups))
    t4 = time.perf_counter()
    seqs = chunks.sequences(0, n_jobs=n_jobs, without_memo=True)
    t5 = time.perf_counter()
    labels = est.model_.decode(seqs, n_jobs, word_rows=(rows, chunks.words(0), groups))
    t6 = time.perf_counter()
    label_lists(np.asarray(est.classes_, dtype=object), labels, seqs.seq_ptr)
    t7 = time.perf_counter()
    return {"intern": t1 - t0, "tags": t2 - t1, "word memo": t3 - t2, "word rows": t4 - t3,
            "lookup": t5 - t4, "decode": t6 - t5, "label lists": t7 - t6}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA, help="the ud_en_ewt directory")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--words", choices=("train", "dev"), default="train",
                   help="the words tagged (the model is trained on train either way)")
    p.add_argument("--n-jobs", type=int, default=1)
    args = p.parse_args()
    sents, tags = read_conllu(args.data / "en_ewt-ud-train.conllu")[:2]
    X = [[r[0] for r in s] for s in sents]
    est = cseq.StructuredPerceptron(max_iter=args.epochs, random_state=0,
                                    features=cseq.TemplateFeaturizer("pos")).fit(X, tags)
    if args.words == "dev":
        X = [[r[0] for r in s] for s in read_conllu(args.data / "en_ewt-ud-dev.conllu")[0]]
    n = sum(map(len, X))
    best: dict[str, float] = {}
    whole = float("inf")
    for _ in range(args.repeat):
        for k, v in stages(est, X, args.n_jobs).items():
            best[k] = min(best.get(k, float("inf")), v)
        t0 = time.perf_counter()
        est.predict(X, n_jobs=args.n_jobs)
        whole = min(whole, time.perf_counter() - t0)
    total = sum(best.values())
    print(f"cseq {cseq.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
          f"EWT {args.words} words, {n:,} tokens, pos preset, n_jobs={args.n_jobs}; "
          f"best of {args.repeat}")
    for k, v in best.items():
        print(f"  {k:<12} {v * 1e3:7.1f} ms  {v / n * 1e9:6.0f} ns/token")
    print(f"  {'total':<12} {total * 1e3:7.1f} ms  = {n / total:,.0f} tokens/s")
    print(f"  {'predict':<12} {whole * 1e3:7.1f} ms  = {n / whole:,.0f} tokens/s "
          f"(beyond the stages: {(whole - total) * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
