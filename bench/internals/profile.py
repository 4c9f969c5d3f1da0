"""Where the time goes: ns per token of each stage of cseq, next to its operation count.

    python bench/internals/profile.py                 # CoNLL-2000 (CRF++ attributes) and EWT UPOS (pos preset)
    python bench/internals/profile.py --repeat 5

Stages: featurization (Python lists or raw tokens to a packed corpus), emission
scoring, Viterbi (decode minus emissions), forward-backward (marginals minus
emissions), expected counts (one CRF objective pass minus forward-backward),
and L-BFGS overhead (fit time minus objective passes). The lower bound column
is the stage's multiply-adds per token (attribute weights touched per token for
emissions and expected counts, L^2 for Viterbi, about 3 L^2 for
forward-backward), at one multiply-add per cycle.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import time

import numpy as np

import cseq
from cseq.chain import _chain
from cseq.conll import read_conll, read_conllu
from cseq.learners.frame import pack
from cseq.chain.model import LinearChain
from cseq.learners.objectives import CRFObjective

from common import features as chunk_features
from common.timing import best_of

DATA = SHARED_DATA


def cpu_ghz() -> float | None:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) / 1000
    except OSError:
        pass
    return None


def profile(name, X, y, featurizer, repeat, iters):
    est = cseq.CRF(features=featurizer)
    labels = (y,) if getattr(featurizer, "needs_labels", False) else ()
    t_feat = best_of(lambda: est._new_featurizer().fit_transform(X, *labels), repeat)
    fz, corpus, classes = pack(est, X, y)
    model = LinearChain.from_corpus(corpus, fz.n_attributes, len(classes))
    L = model.n_labels
    rng = np.random.default_rng(0)
    model.params = rng.normal(scale=0.1, size=len(model.params))
    n = corpus.n_tokens
    view = corpus.view()
    t_em = best_of(lambda: _chain.score_corpus_emissions(model.index, model.params, view, 0, n),
                   repeat)
    t_dec = best_of(lambda: model.decode(corpus), repeat)
    t_marg = best_of(lambda: model.marginals(corpus), repeat)
    obj = CRFObjective(model, corpus, 1.0, 1)
    t_obj = best_of(lambda: obj(model.params), repeat)
    crf = cseq.CRF(max_iter=iters, tol=0.0, features=featurizer)
    t = time.perf_counter()
    crf.fit(X, y)
    t_fit = time.perf_counter() - t
    # Work per token: weights touched by the emission kernel.
    touched = np.diff(model.attr_ptr)[corpus.attr_ids].sum() / n
    ghz = cpu_ghz() or 1.0
    ns = lambda s: 1e9 * s / n  # noqa: E731
    n_eval = crf.n_evaluations_
    rows = [
        ("featurization", ns(t_feat), None),
        ("emission scoring", ns(t_em), touched),
        ("Viterbi (decode - emissions)", ns(t_dec - t_em), L * L),
        ("forward-backward (marginals - emissions)", ns(t_marg - t_em), 3 * L * L),
        ("expected counts (objective - marginals)", ns(t_obj - t_marg), touched + L * L),
        ("CRF objective pass, total", ns(t_obj), None),
        ("L-BFGS overhead per iteration",
         ns((t_fit - t_feat - t_obj * n_eval) / crf.n_iter_), None),
    ]
    print(f"\n{name}: {corpus.n_sequences} sequences, {n} tokens, {L} labels, "
          f"{fz.n_attributes} attributes, {model.n_state} state weights, "
          f"{touched:.0f} weights touched per token; {n_eval / iters:.2f} objective "
          f"evaluations per L-BFGS iteration")
    print(f"{'stage':45} {'ns/token':>10} {'bound ns/token':>15} {'x bound':>8}")
    for label, value, ops in rows:
        bound = ops / ghz if ops else None
        print(f"{label:45} {value:10.0f} "
              f"{(f'{bound:.0f}' if bound else '-'):>15} "
              f"{(f'{value / bound:.1f}' if bound else '-'):>8}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--iters", type=int, default=20, help="L-BFGS iterations timed")
    args = p.parse_args()
    print(f"cseq {cseq.__version__}, OpenMP {cseq.openmp_enabled()}, CPU {cpu_ghz()} GHz")
    rows, y = read_conll(DATA / "conll2000" / "train.txt")
    sents = [[(w, t) for w, t in s] for s in rows]
    X = [chunk_features.sentence_features([w for w, _ in s], [t for _, t in s]) for s in sents]
    profile("CoNLL-2000, CRF++ attributes as string lists", X, y, None, args.repeat, args.iters)
    X, y = read_conllu(DATA / "ud_en_ewt" / "en_ewt-ud-train.conllu")
    profile("EWT UPOS, pos preset (compiled templates)", X, y, cseq.TemplateFeaturizer("pos"),
            args.repeat, args.iters)


if __name__ == "__main__":
    main()
