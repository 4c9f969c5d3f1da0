"""python-crfsuite's dict items packed natively (``pack_features(crfsuite=True)``).

:class:`CRFsuiteVocabulary` and the compat ``CRF`` read the common items
(lists of strings, dicts of str names and str, bool, int or float values,
nested dicts and lists of strings) in the compiled packer, and everything
else through :func:`convert`.  These
tests hold both paths to the same arrays, the same vocabulary and so the same
labels and marginals, bit for bit, on random item sets that mix every kind.
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cseq
from cseq.features import _pack
from cseq.compat.crfsuite_items import CRFsuiteVocabulary, convert
from cseq.compat.sklearn_crfsuite import CRF as CompatCRF
from cseq.features import FeatureVocabulary

LABELS = ["A", "B", "C"]
NAMES = ["w", "w:q", "p", "len", "f", "t", "-1:w", "a:b"]
WORDS = ["x", "y", "b", "z:1", "é", "日本"]   # no "q": "w" and "w:q" never collide


def _value(rng: random.Random):
    kind = rng.randrange(7)
    if kind == 0:
        return rng.choice(WORDS)
    if kind == 1:
        return rng.random() < 0.5            # True or False (value 0, kept)
    if kind == 2:
        return rng.choice([0, 1, 2, -3, 7])
    if kind == 3:
        return rng.choice([0.0, 1.0, 0.1, -2.5, 1e-3, 3.25])
    return rng.choice(WORDS)


def _flat(rng: random.Random) -> dict:
    return {name: _value(rng) for name in rng.sample(NAMES, rng.randrange(len(NAMES) + 1))}


def _item(rng: random.Random, odd: bool):
    """A flat dict (maybe empty) or a list; with ``odd``, also nested and colliding items."""
    kind = rng.randrange(10 if odd else 5)
    if kind == 0:
        return [rng.choice(NAMES) for _ in range(rng.randrange(4))]
    if kind == 5:
        return {**_flat(rng), "n": {"tag": rng.choice(WORDS), "x": rng.choice([0.5, 1, False])}}
    if kind == 6:
        # "w" -> "w:x" and the name "w:x": one attribute twice, values added by convert.
        return {"w": "x", "w:x": rng.choice([1, 2.5, True, False])}
    if kind == 7:
        return {"a": "b:c", "a:b": "c", **_flat(rng)}   # "a:b:c" twice
    if kind == 8:   # python-crfsuite users' neighbours: nested dicts and lists, two deep
        return {**_flat(rng), "previous": {**_flat(rng), "m": [rng.choice(WORDS)],
                                           "deeper": {"w": rng.choice(WORDS)}}}
    if kind == 9:   # a nested name that collides with a flat one
        return {"n": {"x": 1.5}, "n:x": rng.choice([1, True])}
    return _flat(rng)


def _corpus(seed: int, odd: bool, n: int = 60):
    rng = random.Random(seed)
    X, y = [], []
    for _ in range(n):
        length = rng.randrange(0 if X else 1, 7)
        X.append([_item(rng, odd) for _ in range(length)])
        y.append([rng.choice(LABELS) for _ in range(length)])
    return X, y


def _arrays(corpus):
    return corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values


def _same_arrays(a, b):
    for u, v in zip(_arrays(a), _arrays(b)):
        assert u.dtype == v.dtype
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("odd", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_packed_items_match_convert(seed, odd):
    """fit_transform and transform give convert's arrays and attribute ids, nested items or not."""
    X, _ = _corpus(seed, odd)
    fast, ref = CRFsuiteVocabulary(), FeatureVocabulary()
    _same_arrays(fast.fit_transform(X), ref.fit_transform(convert(X)))
    assert fast.attribute_names() == ref.attribute_names()
    X2, _ = _corpus(seed + 100, odd)
    _same_arrays(fast.transform(X2), ref.transform(convert(X2)))
    _same_arrays(fast.transform(X2, n_jobs=2), ref.transform(convert(X2)))


def test_flat_items_are_packed_without_convert():
    """The compiled reading: ':' between name and string, False kept with value 0."""
    table = _pack.StringTable()
    X = [[{"w": "the", "t": False, "n": 2, "f": 0.5}, ["bias"]], []]
    seq_ptr, tok_ptr, attr, values = _pack.pack_features(X, table, True, crfsuite=True)
    assert table.names() == ["w:the", "t", "n", "f", "bias"]
    assert values.tolist() == [1.0, 0.0, 2.0, 0.5, 1.0]
    assert tok_ptr.tolist() == [0, 4, 5] and seq_ptr.tolist() == [0, 2, 2]
    # The default reading is unchanged: "=" and False left out.
    plain = _pack.StringTable()
    _pack.pack_features(X, plain, True)
    assert plain.names() == ["w=the", "n", "f", "bias"]


def test_nested_items_are_packed_without_convert():
    table = _pack.StringTable()
    X = [[{"w": "the", "next": {"w": "dog", "t": True, "tags": ["NN", "x"], "d": {"n": 2}}}]]
    seq_ptr, tok_ptr, attr, values = _pack.pack_features(X, table, True, crfsuite=True)
    assert table.names() == ["w:the", "next:w:dog", "next:t", "next:tags:NN", "next:tags:x",
                             "next:d:n"]
    assert values.tolist() == [1.0, 1.0, 1.0, 1.0, 1.0, 2.0]


def _deep(levels: int) -> dict:
    item: dict = {"w": "x"}
    for _ in range(levels):
        item = {"k": item}
    return item


@pytest.mark.parametrize("X", [
    [[_deep(20)]],                              # deeper than the compiled reading goes
    [[{"w": {"x": b"y"}}]],                     # a nested value of another type
    [[{"w": {"x": float("inf")}}]],             # a nested value not finite
    [[{"w": ["a", 1]}]],                        # a list value with a non-string
    [[{"w": {"a", "b"}}]],                      # a set value
    [[{"w": {1: "a"}}]],                        # a nested name that is not a str
    [[{"w": "x", "w:x": 1}]],                   # one attribute twice
    [[{"w": {"x": 1}, "w:x": 1}]],              # a nested one twice
    [[{1: "x"}]],                               # a name that is not a str
    [[{"w": np.str_("x")}]],                    # a str subclass (convert formats it)
    [[{"w": b"x"}]],                            # bytes
    [[{"w": np.float64(2.0)}]],                 # a number that is not int or float
    [[{"w": float("nan")}]],                    # not finite: convert's path reports it
    [[{"w": 10**400}]],                         # an int beyond float
    [[["a", b"b"]]],                            # a list with bytes
    [[{"a"}]],                                  # a set item
    [iter([["a"]])],                            # a sequence that is not a list
    iter([[["a"]]]),                            # an X that is not a list
])
def test_other_items_are_left_to_convert(X):
    """Anything the compiled reading would not give exactly as convert does: None.

    The table may have learnt attributes before the packer met the item, but
    only those the converted ``X`` adds first, in that order (the ids stay
    convert's when the caller packs the converted ``X`` next).
    """
    table = _pack.StringTable()
    assert _pack.pack_features(X, table, True, crfsuite=True) is None
    assert _pack.pack_features(X, table, False, crfsuite=True) is None
    if len(table):
        ref = FeatureVocabulary()
        ref.fit_transform(convert(X))
        assert table.names() == ref.attribute_names()[:len(table)]


def test_repeat_of_unknown_attribute_is_dropped_not_converted():
    """At prediction an attribute given twice but not in the vocabulary is simply dropped."""
    table = _pack.StringTable.from_strings(["k"])
    packed = _pack.pack_features([[{"w": "x", "w:x": 2, "k": 3}]], table, False, crfsuite=True)
    assert packed is not None
    assert packed[2].tolist() == [0] and packed[3].tolist() == [3.0]


def _fitted_pair(seed: int, odd: bool):
    X, y = _corpus(seed, odd, 80)
    fast = cseq.CRF(features=CRFsuiteVocabulary(), max_iter=30, c2=0.1, tol=0.5).fit(X, y)
    ref = cseq.CRF(max_iter=30, c2=0.1, tol=0.5).fit(convert(X), y)
    return fast, ref


@pytest.mark.parametrize("odd", [False, True])
def test_training_and_prediction_match_convert(odd, tmp_path):
    """Weights (0-valued attributes included), labels and marginals are convert's, bit for bit."""
    fast, ref = _fitted_pair(3, odd)
    np.testing.assert_array_equal(fast.model_.params, ref.model_.params)
    X, _ = _corpus(7, odd)
    loaded = cseq.load(_save(fast, tmp_path))
    for model in (fast, loaded):
        assert model.predict(X) == ref.predict(convert(X))
        corpus, ref_corpus = model.featurizer_.transform(X), ref.featurizer_.transform(convert(X))
        np.testing.assert_array_equal(model.model_.marginals(corpus),
                                      ref.model_.marginals(ref_corpus))


def _save(model, tmp_path):
    path = tmp_path / "m.cseq"
    model.save(path)
    return path


#: The compat CRF silences max_iter's warning (as sklearn-crfsuite); its reference fit here too.
@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
@pytest.mark.parametrize("odd", [False, True])
def test_compat_crf_matches_convert(odd):
    """The compat CRF's fit, predict and predict_marginals equal the converted path's."""
    X, y = _corpus(11, odd, 80)
    crf = CompatCRF(max_iterations=20).fit(X, y)
    ref = crf._new_estimator().fit(convert(X), y)
    np.testing.assert_array_equal(crf.estimator_.model_.params, ref.model_.params)
    X2, _ = _corpus(12, odd)
    assert crf.predict(X2) == ref.predict(convert(X2))
    marginals = ref.model_.marginals(ref.featurizer_.transform(convert(X2)))
    columns = [ref.classes_.index(label) for label in crf.classes_]
    flat = [[m[label] for label in crf.classes_] for seq in crf.predict_marginals(X2) for m in seq]
    assert flat == marginals[:, columns].tolist()
    again = pickle.loads(pickle.dumps(crf))
    assert again.predict(X2) == crf.predict(X2)


@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_compat_crf_with_plain_vocabulary_still_converts():
    """A compat CRF pickled before (its estimator has the plain vocabulary) reads items as before."""
    X, y = _corpus(13, False, 80)
    crf = CompatCRF(max_iterations=20).fit(X, y)
    expected = crf.predict(X)
    crf.estimator_ = crf._new_estimator().fit(convert(X), y)
    assert type(crf.estimator_.featurizer_) is FeatureVocabulary
    assert crf.predict(X) == expected
    assert crf.score(X, y) == crf.estimator_.score(convert(X), y)


@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_partial_fit_keeps_the_crfsuite_reading():
    """partial_fit grows a copy of the featurizer: it stays a CRFsuiteVocabulary (was a plain one)."""
    X, y = _corpus(5, False, 40)
    model = cseq.CRF(features=CRFsuiteVocabulary(), algorithm="sgd", random_state=0)
    model.partial_fit(X[:20], y[:20], classes=LABELS)
    before = model.featurizer_.transform(X[:20])
    model.partial_fit(X[20:], y[20:])
    assert type(model.featurizer_) is CRFsuiteVocabulary
    _same_arrays(model.featurizer_.transform(X[:20]), before)


_names = st.sampled_from(["w", "p", "w:p", "a:b", "é", ""])
_scalars = st.one_of(st.sampled_from(["x", "b", "日本", "b:c", ""]), st.booleans(),
                     st.integers(-3, 3), st.floats(-1e3, 1e3, allow_nan=False),
                     st.just(float("inf")), st.just(10**400), st.binary(max_size=2),
                     st.just(np.float64(2.0)))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.dictionaries(_names, inner, max_size=3),
                            st.lists(st.sampled_from(["x", "y", "b:c"]), max_size=3),
                            st.sets(st.sampled_from(["x", "y"]), max_size=2),
                            st.lists(st.integers(0, 2), min_size=1, max_size=2)),
    max_leaves=8)
_items = st.one_of(st.dictionaries(_names, _values, max_size=4),
                   st.lists(st.sampled_from(["w", "p", "é"]), max_size=3))


@given(st.lists(st.lists(_items, min_size=1, max_size=3), min_size=1, max_size=3))
@settings(max_examples=300, deadline=None)
def test_any_nested_items_pack_as_convert_reads_them_or_go_to_convert(X):
    """Whatever the items hold, the compiled reading gives convert's arrays, or None."""
    try:
        ref_corpus = FeatureVocabulary().fit_transform(convert(X))
    except (cseq.InputError, cseq.InputTypeError):
        ref_corpus = None
    table = _pack.StringTable()
    packed = _pack.pack_features(X, table, True, crfsuite=True)
    if packed is None:
        return
    assert ref_corpus is not None
    _same_arrays(cseq.Sequences(*packed), ref_corpus)
