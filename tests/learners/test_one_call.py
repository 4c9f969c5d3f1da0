"""The one-call path of ``predict`` (cseq/learners/_one_call.pyx) against the general path.

``predict`` of a short list of sequences packs them into C memory and
decodes them in one compiled call when the featurizer packs with a string
table and the model decodes sparse Viterbi.  Its labels must be the general
path's (``cseq.chain.decoding.predict``) bit for bit, for every learner that
has it and every kind of token, and what it does not take must go the
general way: these tests hold both.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

import cseq
from cseq.chain import decoding
from cseq.compat.crfsuite_items import CRFsuiteVocabulary
from cseq.learners._one_call import MAX_SEQUENCES
from cseq.learners.base import one_call
from support import registered

pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

LABELS = ["A", "B", "C", "D"]
FEATURES = [f"f{i}" for i in range(12)]


def _token(rng: random.Random, dicts: bool):
    names = rng.sample(FEATURES, rng.randrange(4)) + (["unseen"] if rng.random() < 0.2 else [])
    if dicts and rng.random() < 0.5:
        return {name: rng.choice([True, False, 2.5, -1, "v", "w"]) for name in names}
    return names


def _corpus(seed: int, n: int, dicts: bool):
    rng = random.Random(seed)
    X = [[_token(rng, dicts) for _ in range(rng.randrange(0 if k else 1, 6))]
         for k in range(n)]
    y = [[rng.choice(LABELS) for _ in x] for x in X]
    return X, y


def _general(est, X):
    return decoding.predict(est, est._check_fitted(), X, None, None, 1)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("cls", registered.estimators(lambda cls: not registered.reads_words(cls)),
                         ids=lambda cls: cls.__name__)
def test_one_call_labels_are_the_general_paths(cls, order, seed):
    params = {"max_iter": 3, "order": order, "random_state": seed}
    est = cls(**{k: v for k, v in params.items() if k in cls._param_names})
    if order == 2 and "order" not in cls._param_names:
        pytest.skip(f"{cls.__name__} has no second order")
    X, y = _corpus(seed, 40, dicts=True)
    est.fit(X, y)
    fast = one_call(est._check_fitted())
    if not est.model_.sparse_kernels:
        assert fast is None
        return
    assert fast is not None
    rng = random.Random(seed + 10)
    fitted = est._check_fitted()
    for _ in range(20):
        part = _corpus(rng.randrange(10**6), rng.randrange(0, MAX_SEQUENCES + 1), dicts=True)[0]
        expected = _general(est, part)
        assert fast.predict(part) == expected
        assert est.predict(part) == expected
        marginals = decoding.predict_marginals(est, fitted, part, None, None, 1)
        for mine, general in zip(fast.marginals(part), marginals, strict=True):
            np.testing.assert_array_equal(mine, general)
        if hasattr(est, "predict_marginals"):
            for mine, general in zip(est.predict_marginals(part), marginals, strict=True):
                np.testing.assert_array_equal(mine, general)


def test_crfsuite_items_nested_or_not_are_the_general_paths():
    rng = random.Random(0)

    def item():
        return {"w": rng.choice("abcde"), "t": rng.random() < 0.5, "n": rng.randrange(3),
                "prev": {"w": rng.choice("abc"), "tags": [rng.choice("xyz")]}}
    X = [[item() for _ in range(rng.randrange(1, 6))] for _ in range(80)]
    y = [[rng.choice(LABELS) for _ in x] for x in X]
    est = cseq.CRF(max_iter=20, features=CRFsuiteVocabulary()).fit(X, y)
    fast = one_call(est._check_fitted())
    for k in range(0, 80, 4):
        part = X[k:k + 4]
        assert fast.predict(part) == _general(est, part) == est.predict(part)
    # An item only convert reads exactly (a set value; an attribute twice): the general path.
    odd = [[{"w": {"a", "b"}}], [{"w": "a", "w:a": 2}]]
    assert fast.predict(odd) is None
    assert est.predict(odd) == _general(est, odd)


@pytest.mark.parametrize("X", [
    [[["f1"]]] * (MAX_SEQUENCES + 1),               # more sequences than one call takes
    ([["f1"]],),                                    # not a list
    [[[f"f{i % 12}" for i in range(5000)]]],        # more features than one call packs
    [[["f1"]] * 5000],                              # more Viterbi work than one GIL hold
])
def test_what_one_call_does_not_take_goes_the_general_way(X):
    est = cseq.StructuredPerceptron(max_iter=2).fit(*_corpus(0, 30, dicts=False))
    fast = one_call(est._check_fitted())
    assert fast.predict(X) is None and fast.marginals(X) is None
    assert est.predict(X) == _general(est, X)


@pytest.mark.parametrize("make", [
    lambda: cseq.MEMM(max_iter=2),
    lambda: cseq.GreedyTagger(max_iter=2),
    lambda: cseq.StructuredPerceptron(max_iter=2, features=cseq.TemplateFeaturizer("pos")),
])
def test_models_and_featurizers_without_it_have_none(make):
    words = make().features is not None
    X = [["The", "dog"], ["A", "cat"]] * 3 if words else _corpus(0, 6, dicts=False)[0]
    y = [[LABELS[len(w) % 4] for w in x] for x in X] if words else _corpus(0, 6, False)[1]
    est = make().fit(X, y)
    assert one_call(est._check_fitted()) is None
    assert est.predict(X[:2]) == _general(est, X[:2])


@pytest.mark.parametrize("bad", [
    [[["f1", 3]]],                 # a feature that is not a str
    [[{"f1": object()}]],          # a dict value of another type
    [["f1"]],                      # a sequence of strings, not of tokens
    [[None]],                      # a token that is neither a list nor a dict
])
def test_errors_are_the_general_paths(bad):
    est = cseq.StructuredPerceptron(max_iter=2).fit(*_corpus(0, 30, dicts=False))
    with pytest.raises(cseq.CSeqError) as general:
        _general(est, bad)
    with pytest.raises(type(general.value)) as fast:
        est.predict(bad)
    assert str(fast.value) == str(general.value)


def test_a_partial_fit_publishes_a_new_one_call():
    X, y = _corpus(1, 30, dicts=False)
    est = cseq.StructuredPerceptron(max_iter=2)
    est.partial_fit(X, y, classes=LABELS)
    first = one_call(est._check_fitted())
    est.partial_fit([[["brand-new"]]] * 5, [["D"]] * 5)
    second = one_call(est._check_fitted())
    assert second is not first
    assert est.predict([[["brand-new"]]]) == _general(est, [[["brand-new"]]])


def test_threads_share_one_call():
    est = cseq.StructuredPerceptron(max_iter=3).fit(*_corpus(2, 60, dicts=True))
    X = _corpus(3, 200, dicts=True)[0]
    expected = [_general(est, [x])[0] for x in X]
    got: dict[int, list] = {}

    def run(k: int) -> None:
        got[k] = [est.predict([x])[0] for x in X]
    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(labels == expected for labels in got.values())
