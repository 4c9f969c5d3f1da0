"""Tagging and perceptron-epoch costs in pieces: packing, decoding, predict, AVX2 against scalar.

    python bench/internals/tagging.py            # CoNLL-2000, CRF++ attributes as string lists
    python bench/internals/tagging.py --repeat 7

Every figure is the best of ``--repeat`` runs (the median for predict too),
in seconds, on the whole CoNLL-2000 training file (211,727 tokens) and on
its last 1,000 sentences (the bench's dev set):

* packing: ``FeatureVocabulary.transform`` (lists to arrays) with 1 and 2 threads;
* decoding: ``LinearChain.decode`` of the packed corpus with 1 and 2 threads,
  with the AVX2 Viterbi step and with the scalar one;
* a perceptron epoch, AVX2 and scalar (the fastest of 4 epochs);
* ``predict`` from the lists with ``n_jobs`` 1 and 2, and the ratio.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402
from common.timing import times  # noqa: E402

import argparse
import statistics

import cseq
from cseq.chain import _decode
from cseq.conll import read_conll

from common import features as chunk_features

DATA = SHARED_DATA


def epoch_seconds(X, y) -> float:
    est = cseq.StructuredPerceptron(max_iter=4, random_state=0).fit(X, y)
    return min(r["seconds"] for r in est.history_)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    has_avx2 = _decode._set_avx2(True)
    print(f"cseq {cseq.__version__}, OpenMP {cseq.openmp_enabled()}, AVX2 step {has_avx2}")
    rows, y = read_conll(DATA / "conll2000" / "train.txt")
    X = [chunk_features.sentence_features([r[0] for r in s], [r[1] for r in s]) for s in rows]
    model = cseq.StructuredPerceptron(max_iter=3, random_state=0).fit(X[:-1000], y[:-1000])
    fz, chain = model.featurizer_, model.model_
    corpus = fz.transform(X)
    r = args.repeat

    print(f"\nwhole file, {corpus.n_tokens} tokens; best of {r} [s]")
    print(f"  packing (transform)     1 thread {min(times(lambda: fz.transform(X), r)):.3f}"
          f"   2 threads {min(times(lambda: fz.transform(X, n_jobs=2), r)):.3f}")
    for avx2 in ([True, False] if has_avx2 else [False]):
        _decode._set_avx2(avx2)
        d1 = min(times(lambda: chain.decode(corpus, 1), r))
        d2 = min(times(lambda: chain.decode(corpus, 2), r))
        ep = epoch_seconds(X[:-1000], y[:-1000])
        step = "AVX2" if avx2 else "scalar"
        print(f"  decoding, {step:6} step   1 thread {d1:.3f}   2 threads {d2:.3f}"
              f"   perceptron epoch {ep:.3f}")
    _decode._set_avx2(True)

    for name, data in (("whole file", X), ("dev (last 1,000 sentences)", X[-1000:])):
        t1 = times(lambda: model.predict(data), r)
        t2 = times(lambda: model.predict(data, n_jobs=2), r)
        print(f"\npredict, {name} [s]        best   median")
        print(f"  n_jobs=1                  {min(t1):.4f} {statistics.median(t1):.4f}")
        print(f"  n_jobs=2                  {min(t2):.4f} {statistics.median(t2):.4f}")
        print(f"  ratio (1 thread / 2)      {min(t1) / min(t2):.2f}x "
              f"{statistics.median(t1) / statistics.median(t2):.2f}x")


if __name__ == "__main__":
    main()
