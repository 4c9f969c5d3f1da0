"""A user's program on cseq's public API, for ``tests/package/test_typing.py``.

The test type-checks it with ``mypy --strict`` against the installed package
(the wheel's ``.pyi`` stubs and ``py.typed``), then runs it.  Each
``assert_type`` pins a type the package declares; where a value comes from a
compiled module (``openmp_enabled``, the kernels behind ``viterbi`` and
``forward_backward``, ``LinearChain.index``) mypy sees only ``Any`` without
the stubs, and ``assert_type`` fails.

    python tests/support/typed_user_program.py     (from any directory; writes tagger.cseq there)
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

import cseq
from cseq.data import sample_path
from cseq.chain.model import LinearChain
from cseq.chain.sequences import Sequences
from cseq.templates import TemplateFeaturizer

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover - Python 3.10
    from typing_extensions import assert_type


def train_and_tag() -> float:
    X, y = cseq.conll.read_conll(sample_path(), sep="\t")
    assert y is not None
    est = cseq.StructuredPerceptron(max_iter=2, random_state=0,
                                    features=TemplateFeaturizer("pos", min_freq=2))
    assert_type(est.fit(X[:300], y[:300]), cseq.StructuredPerceptron)
    pred = est.predict(X[300:400])
    assert_type(pred, list[list[str]])
    acc = cseq.metrics.accuracy(y[300:400], pred)
    assert_type(acc, float)
    assert_type(est.score(X[300:400], y[300:400]), float)
    est.save("tagger.cseq")
    again: Any = cseq.load("tagger.cseq")  # load returns whichever estimator the file holds
    assert again.predict(X[300:400]) == pred
    return acc


def model_internals() -> dict[str, int]:
    X = [[["w=the"], ["w=dog"]], [["w=a"], ["w=cat"], ["w=sat"]]]
    y = [["DET", "NOUN"], ["DET", "NOUN", "VERB"]]
    crf = cseq.CRF(c2=0.1, max_iter=30).fit(X, y)
    # np.ndarray's type arguments differ between numpy 1.x and 2.x stubs: an
    # annotated assignment, not assert_type, for arrays.
    marginals: list[np.ndarray[Any, Any]] = crf.predict_marginals(X)
    assert marginals[0].shape == (2, 3)
    model = crf.model_
    assert model is not None
    assert_type(model, LinearChain)
    layout = model.index.layout                  # model.index: a compiled class (its stub)
    assert_type(layout, dict[str, int])
    corpus = cseq.FeatureVocabulary().fit_transform(X)
    assert_type(corpus, Sequences)
    assert_type(corpus.n_tokens, int)
    return layout


def kernels() -> None:
    emissions = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    transitions = np.zeros((2, 2))
    path, score = cseq.viterbi(emissions, transitions)
    assert_type(score, float)
    log_z, marginals, pairs = cseq.forward_backward(emissions, transitions)
    assert_type(log_z, float)
    assert marginals.shape == (3, 2) and pairs.shape == (2, 2, 2)
    # four results with transitions2 (an overload): unpacking three would not type-check
    log_z2, _, _, triples = cseq.forward_backward(emissions, transitions,
                                                  transitions2=np.zeros((2, 2, 2)))
    assert_type(log_z2, float)
    assert triples.shape == (1, 2, 2, 2)
    best, _ = cseq.loss_augmented_viterbi(emissions, transitions, path, 1.0 - np.eye(2))
    assert best.shape == path.shape
    assert_type(cseq.openmp_enabled(), bool)     # from the stub of cseq._core._parallel


def errors() -> str:
    try:
        cseq.CRF().predict([[["w=x"]]])
    except cseq.NotFittedError as exc:
        assert_type(exc, cseq.NotFittedError)
        return type(exc).__name__
    raise AssertionError("predict before fit did not raise")


if __name__ == "__main__":
    print(f"accuracy {train_and_tag():.3f}")
    print(f"n_params {model_internals()['n_params']}")
    kernels()
    print(errors())
    print("ok")
