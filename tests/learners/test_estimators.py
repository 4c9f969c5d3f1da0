"""The estimator API: fit/predict/score, parameters, errors, verbosity, persistence and
model-file corruption."""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import pickle
import re

import numpy as np
import pytest

import cseq
from cseq.io import serialize
from cseq.exceptions import (
    CSeqError,
    InputError,
    InputTypeError,
    ModelFormatError,
    NotFittedError,
)
from cseq.features import FeatureVocabulary

from support.registered import commands, estimators, quick, reads_words, takes

# Quick fits here stop at max_iter on purpose; ConvergenceWarning itself is tested in
# test_crf_options.py.
pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

#: Every registered learner that takes feature lists and iterates (all but the HMM).
ESTIMATORS = estimators(takes("features", "max_iter"))


def make_corpus(seed: int, n_seqs: int = 30):
    """Words whose tag mostly follows the word; labels first seen in non-sorted order."""
    rng = np.random.default_rng(seed)
    tags = ["n", "b", "z", "a"]
    X, y = [], []
    for _ in range(n_seqs):
        n = int(rng.integers(1, 7))
        ws = [int(rng.integers(10)) for _ in range(n)]
        X.append([[f"w={w}", f"p={ws[i - 1] if i else 'S'}"] if w % 3 else {"w": str(w), "x": 1.0}
                  for i, w in enumerate(ws)])
        y.append([tags[w % 4] if rng.random() > 0.1 else tags[int(rng.integers(4))] for w in ws])
    X.insert(3, [])
    y.insert(3, [])
    return X, y


X_TRAIN, Y_TRAIN = make_corpus(0)
X_TEST, Y_TEST = make_corpus(1, 15)


def fit(cls, **kwargs):
    defaults = {"max_iter": 30} if cls in (cseq.CRF, cseq.MEMM) else \
        {"max_iter": 5, "random_state": 0}
    defaults.update(kwargs)
    return cls(**defaults).fit(X_TRAIN, Y_TRAIN)


@pytest.fixture(scope="module")
def crf():
    return fit(cseq.CRF, c2=0.1)


@pytest.fixture(scope="module")
def perceptron():
    return fit(cseq.StructuredPerceptron)


@pytest.fixture(scope="module")
def memm():
    return fit(cseq.MEMM, c2=0.1)


@pytest.fixture(scope="module")
def ssvm():
    return fit(cseq.StructuredSVM)


@pytest.fixture(scope="module")
def pa():
    return fit(cseq.PassiveAggressive)


@pytest.fixture(scope="module")
def arow():
    return fit(cseq.AROW)


#: The learners of feature lists, from the registry: those with a fixture above
#: are fitted as it says, any other with its quick settings.
_FEATURE_LEARNERS = commands(lambda command: not reads_words(command.estimator))
_OWN_FIXTURE = {"crf", "perceptron", "memm", "ssvm", "pa", "arow"}


@pytest.fixture(scope="module", params=_FEATURE_LEARNERS)
def fitted(request):
    if request.param in _OWN_FIXTURE:
        return request.getfixturevalue(request.param)
    return quick(request.param, random_state=0).fit(X_TRAIN, Y_TRAIN)


# ---------------------------------------------------------------------------
# fit / predict / score


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_fit_returns_self_and_sets_fitted_attributes(cls):
    est = cls(max_iter=3)
    assert est.fit(X_TRAIN, Y_TRAIN) is est
    assert est.classes_ == ["a", "b", "n", "z"]
    assert est.n_iter_ == len(est.history_) >= 1
    assert est.model_.n_labels == 4
    assert est.featurizer_.n_attributes == est.model_.n_attributes


def test_predict_returns_lists_of_str(fitted):
    pred = fitted.predict(X_TEST)
    assert type(pred) is list and len(pred) == len(X_TEST)
    for p, x in zip(pred, X_TEST):
        assert type(p) is list and len(p) == len(x)
        assert all(type(label) is str and label in fitted.classes_ for label in p)


def test_predict_on_empty_input(fitted):
    assert fitted.predict([]) == []
    assert fitted.predict(()) == []
    assert fitted.predict([[]]) == [[]]
    pred = fitted.predict([[], X_TEST[0], []])
    assert pred == [[], fitted.predict([X_TEST[0]])[0], []]
    assert fitted.score([], []) == 0.0
    assert fitted.score([[]], [[]]) == 0.0


def test_empty_sequences_in_marginals(crf):
    assert crf.predict_marginals([]) == []
    out = crf.predict_marginals([[], X_TEST[0], []])
    assert [m.shape for m in out] == [(0, 4), (len(X_TEST[0]), 4), (0, 4)]


def test_unseen_features_are_ignored(fitted):
    base = fitted.predict_marginals if hasattr(fitted, "predict_marginals") else fitted.predict
    seen = [[["w=1"], ["w=2", "p=1"], {"w": "3"}]]
    with_unseen = [[["w=1", "never seen"], ["zzz", "w=2", "p=1"], {"w": "3", "nope": 2.0}]]
    only_unseen = [[["never seen"], ["zzz"], {"nope": 1.0}]]
    nothing = [[[], [], {}]]
    if base == fitted.predict:
        assert base(with_unseen) == base(seen)
        assert base(only_unseen) == base(nothing)
    else:
        np.testing.assert_array_equal(base(with_unseen)[0], base(seen)[0])
        np.testing.assert_array_equal(base(only_unseen)[0], base(nothing)[0])
    corpus = fitted.featurizer_.transform(only_unseen)
    assert corpus.n_tokens == 3 and len(corpus.attr_ids) == 0


def _emissions(est, X):
    corpus = est.featurizer_.transform(X)
    return est.model_.emissions(corpus, 0, corpus.n_tokens)


@pytest.mark.parametrize("dict_token, list_token", [
    ({"w": "1"}, ["w=1"]),
    ({"x": True}, ["x"]),
    ({"x": 1.0}, ["x"]),
    ({"x": 1}, ["x"]),
    ({"x": np.float32(1.0)}, ["x"]),
    ({"x": np.int64(1)}, ["x"]),
    ({"x": np.bool_(True)}, ["x"]),
    ({"x": False}, []),
    ({"x": False, "w": "2"}, ["w=2"]),
    ({}, []),
])
def test_dict_tokens_equal_feature_lists(crf, dict_token, list_token):
    a = crf.featurizer_.transform([[dict_token]])
    b = crf.featurizer_.transform([[list_token]])
    for name in ("seq_ptr", "tok_ptr", "attr_ids", "values"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(crf.predict_marginals([[dict_token]])[0],
                                  crf.predict_marginals([[list_token]])[0])


@pytest.mark.parametrize("value", [2.0, 0.5, -1.0, 0.0, 3])
def test_dict_values_scale_the_weight_contribution(crf, value):
    one = _emissions(crf, [[{"x": 1.0}]])
    assert np.abs(one).max() > 0  # "x" has nonzero weights
    np.testing.assert_allclose(_emissions(crf, [[{"x": value}]]), value * one, rtol=1e-12)
    both = _emissions(crf, [[{"x": value, "w": "2"}]])
    np.testing.assert_allclose(both, value * one + _emissions(crf, [[["w=2"]]]), rtol=1e-12,
                               atol=1e-12)


def test_dict_tokens_and_lists_train_the_same_model():
    X_list = [[["a", "k=v"], ["b"]], [["a"]]]
    X_dict = [[{"a": True, "k": "v"}, {"b": 1.0, "c": False}], [{"a": 1}]]
    y = [["P", "Q"], ["Q"]]
    for est in (cseq.CRF(max_iter=5), cseq.StructuredPerceptron(max_iter=5, random_state=0)):
        a = copy.deepcopy(est).fit(X_list, y)
        b = copy.deepcopy(est).fit(X_dict, y)
        assert a.featurizer_.attribute_names() == b.featurizer_.attribute_names()
        np.testing.assert_array_equal(a.model_.params, b.model_.params)


def test_marginals_shapes_columns_and_rows(crf):
    marg = crf.predict_marginals(X_TEST)
    pred = crf.predict(X_TEST)
    assert len(marg) == len(X_TEST)
    agree = total = 0
    for m, x, p in zip(marg, X_TEST, pred):
        assert m.shape == (len(x), len(crf.classes_)) and m.dtype == np.float64
        np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-12)
        assert ((m >= 0) & (m <= 1 + 1e-12)).all()
        agree += sum(crf.classes_[j] == label for j, label in zip(m.argmax(axis=1), p))
        total += len(p)
    assert agree / total >= 0.9


def test_marginal_columns_follow_classes_order():
    # "z" is seen first and "a" last, so insertion order and sorted order differ.
    X = [[["w=z"], ["w=n"], ["w=a"]]] * 3
    y = [["z", "n", "a"]] * 3
    est = cseq.CRF(c2=0.01, max_iter=50).fit(X, y)
    assert est.classes_ == ["a", "n", "z"]
    m = est.predict_marginals([[["w=z"], ["w=n"], ["w=a"]]])[0]
    assert m.argmax(axis=1).tolist() == [2, 1, 0]
    assert (m.max(axis=1) > 0.9).all()


def test_score_is_token_accuracy(fitted):
    pred = fitted.predict(X_TEST)
    gold = [label for s in Y_TEST for label in s]
    flat = [label for s in pred for label in s]
    want = sum(a == b for a, b in zip(flat, gold)) / len(gold)
    assert 0.0 < want < 1.0
    assert fitted.score(X_TEST, Y_TEST) == pytest.approx(want, abs=1e-15)
    assert fitted.score(X_TEST, pred) == 1.0
    # labels unknown to the model count as errors
    y_unknown = [["??"] * len(s) for s in Y_TEST]
    assert fitted.score(X_TEST, y_unknown) == 0.0


# ---------------------------------------------------------------------------
# Parameters


@pytest.mark.parametrize("cls, expected", [
    (cseq.CRF, {"c1": 0.0, "c2": 1.0, "algorithm": "lbfgs", "max_iter": 100, "order": 1,
                "tol": 1e-5,
                "period": 10, "eta0": None, "random_state": None, "early_stopping": False,
                "patience": 5, "n_jobs": 1, "all_states": False, "features": None,
                "verbose": False}),
    (cseq.StructuredPerceptron, {"max_iter": 10, "order": 1, "average": True, "shuffle": True,
                                 "random_state": None, "early_stopping": False, "patience": 3,
                                 "all_states": False, "features": None, "verbose": False}),
    (cseq.MEMM, {"c2": 1.0, "max_iter": 100, "tol": 1e-5, "period": 10,
                 "early_stopping": False, "patience": 5, "n_jobs": 1, "all_states": False,
                 "features": None, "verbose": False}),
    (cseq.StructuredSVM, {"C": 1.0, "max_iter": 10, "order": 1, "cost": None, "average": True,
                          "shuffle": True, "random_state": None, "early_stopping": False,
                          "patience": 3, "all_states": False, "features": None,
                          "verbose": False}),
    (cseq.PassiveAggressive, {"pa_type": 1, "C": 1.0, "error_sensitive": True, "average": True,
                              "max_iter": 10, "tol": 0.0, "shuffle": True, "random_state": None,
                              "early_stopping": False, "patience": 3, "all_states": False,
                              "features": None, "verbose": False}),
    (cseq.AROW, {"variance": 1.0, "gamma": 1.0, "max_iter": 10, "tol": 0.0, "shuffle": True,
                 "random_state": None, "early_stopping": False, "patience": 3,
                 "all_states": False, "features": None, "verbose": False}),
    (cseq.GreedyTagger, {"max_iter": 5, "average": True, "shuffle": True, "random_state": None,
                         "early_stopping": False, "patience": 3, "tag_dict": None,
                         "tag_dict_min_count": 20, "tag_dict_min_share": 0.97,
                         "all_states": False, "pair_history": True, "features": None,
                         "verbose": False}),
])
def test_get_params_set_params(cls, expected):
    est = cls()
    assert est.get_params() == expected
    assert est.set_params(max_iter=3, all_states=True) is est
    assert est.get_params()["max_iter"] == 3 and est.all_states is True
    clone = cls(**est.get_params())
    assert clone.get_params() == est.get_params()
    with pytest.raises(InputError, match="no_such"):
        est.set_params(no_such=1)
    assert est.get_params()["max_iter"] == 3
    assert type(est).__name__ in repr(est) and "max_iter=3" in repr(est)
    with pytest.raises(TypeError):
        cls(1.0)  # keyword-only


@pytest.mark.parametrize("cls", estimators())
def test_unknown_keyword_names_the_nearest_parameter(cls):
    """Every learner's constructor (wrapped once, in
    ChainEstimator.__init_subclass__) and set_params suggest the nearest name."""
    name = cls._param_names[-1]
    typo = name[:-1] + ("x" if name[-1] != "x" else "y")
    with pytest.raises(InputTypeError, match=f"{cls.__name__}.*{typo!r}.*did you mean {name!r}"):
        cls(**{typo: 1})
    with pytest.raises(InputError, match=f"{typo!r}.*did you mean {name!r}"):
        cls().set_params(**{typo: 1})
    with pytest.raises(InputTypeError, match="the parameters are"):
        cls(zzzzzz=1)
    # the wrapper keeps what scikit-learn reads
    assert list(inspect.signature(cls).parameters) == list(cls._param_names)
    assert cls.__init__.__name__ == "__init__" and cls.__init__.__doc__ == cls.__init__.__wrapped__.__doc__


@pytest.mark.parametrize("kwargs, hint", [
    ({"max_iterations": 100}, r"did you mean 'max_iter'\? \(cseq's name for sklearn-crfsuite's"),
    ({"all_possible_states": True}, "did you mean 'all_states'"),
    ({"all_possible_transitions": True}, "cseq always learns every transition"),
])
def test_sklearn_crfsuite_spellings_get_cseqs_name(kwargs, hint):
    with pytest.raises(InputTypeError, match=hint) as info:
        cseq.CRF(c1=0.1, c2=0.1, **kwargs)
    assert "cseq.compat.sklearn_crfsuite" in str(info.value)
    assert isinstance(info.value, TypeError)  # existing ``except TypeError`` still works
    with pytest.raises(InputError, match=hint):
        cseq.CRF().set_params(**kwargs)


def test_compat_crf_names_the_nearest_sklearn_crfsuite_parameter():
    from cseq.compat.sklearn_crfsuite import CRF
    with pytest.raises(InputTypeError, match="did you mean 'max_iterations'"):
        CRF(max_iter=100)


def test_a_user_subclass_keeps_the_keyword_check_and_its_own_signature():
    class Mine(cseq.CRF):
        def __init__(self, *, extra: int = 0, **kwargs):
            super().__init__(**kwargs)
            self.extra = extra

    with pytest.raises(InputTypeError, match="did you mean 'max_iter'"):
        Mine(max_iterations=3)
    assert Mine(extra=1, max_iter=3).max_iter == 3


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_not_fitted(cls):
    est = cls()
    for call in (lambda: est.predict(X_TEST), lambda: est.score(X_TEST, Y_TEST)):
        with pytest.raises(NotFittedError) as info:
            call()
        assert isinstance(info.value, ValueError) and isinstance(info.value, CSeqError)
    if hasattr(est, "predict_marginals"):
        with pytest.raises(NotFittedError):
            est.predict_marginals(X_TEST)


# ---------------------------------------------------------------------------
# Bad inputs


BAD_FIT_INPUTS = [
    ("len(X) != len(y)", X_TRAIN, Y_TRAIN[:-1], InputError, "sequences"),
    ("token/label count", [[["a"]], [["a"], ["b"]]], [["A"], ["A"]], InputError, "sequence 1"),
    ("int label", [[["a"]]], [[1]], InputTypeError, None),
    ("bytes label", [[["a"]]], [[b"A"]], InputTypeError, None),
    ("y is a string", [[["a"]]], "A", InputTypeError, None),
    ("y[i] is a string", [[["a"]]], ["A"], InputTypeError, None),
    ("y is None", [[["a"]]], None, InputTypeError, None),
    ("int feature", [[["a", 3]]], [["A"]], InputTypeError, None),
    ("None feature", [[[None]]], [["A"]], InputTypeError, None),
    ("bytes feature", [[[b"a"]]], [["A"]], InputTypeError, None),
    ("token is a string", [["ab"]], [["A"]], InputTypeError, None),
    ("token is None", [[None]], [["A"]], InputTypeError, None),
    ("sequence is a string", ["ab"], [["A", "B"]], InputTypeError, None),
    ("dict with int key", [[{1: 1.0}]], [["A"]], InputTypeError, None),
    ("dict with list value", [[{"a": [1.0]}]], [["A"]], InputTypeError, None),
    ("dict with None value", [[{"a": None}]], [["A"]], InputTypeError, None),
    ("X is None", None, [], InputTypeError, None),
    ("X is bytes", b"abc", [], InputTypeError, None),
    ("X is a string", "abc", [], InputTypeError, None),
    ("X is an object array", np.array([[["a"]]], dtype=object), [["A"]], InputTypeError, None),
    ("X is a generator", ([["a"]] for _ in range(1)), [["A"]], InputTypeError, None),
    ("NaN value", [[{"a": float("nan")}]], [["A"]], InputError, "finite"),
    ("inf value", [[{"a": float("inf")}]], [["A"]], InputError, "finite"),
    ("-inf value", [[{"a": -np.inf}]], [["A"]], InputError, "finite"),
    ("beyond float32", [[{"a": 1e39}]], [["A"]], InputError, None),
    ("empty corpus", [], [], InputError, "empty"),
    ("only empty sequences", [[], []], [[], []], InputError, None),
]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_none_label_is_unknown_or_refused(cls):
    """``None`` is an unknown label for the learners that train on partial labels."""
    if cls._partial_labels:
        with pytest.raises(InputError, match="every label is None"):
            cls(max_iter=2).fit([[["a"]]], [[None]])
    else:
        with pytest.raises(InputTypeError, match="is None"):
            cls(max_iter=2).fit([[["a"]]], [[None]])


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("case", BAD_FIT_INPUTS, ids=[c[0] for c in BAD_FIT_INPUTS])
def test_bad_fit_inputs_raise_cseq_errors(cls, case):
    _, X, y, exc, match = case
    with pytest.raises(exc, match=match) as info:
        cls(max_iter=2).fit(X, y)
    assert isinstance(info.value, CSeqError)
    assert isinstance(info.value, ValueError if exc is InputError else TypeError)


@pytest.mark.parametrize("case", [c for c in BAD_FIT_INPUTS if c[0] not in (
    "len(X) != len(y)", "token/label count", "empty corpus", "only empty sequences")
    and "label" not in c[0] and not c[0].startswith("y")], ids=lambda c: c[0])
def test_bad_predict_inputs_raise_cseq_errors(perceptron, case):
    _, X, _, exc, match = case
    with pytest.raises(exc, match=match):
        perceptron.predict(X)


def test_bad_score_labels(perceptron):
    with pytest.raises(InputError, match="sequence 0"):
        perceptron.score([[["a"], ["b"]]], [["n"]])
    with pytest.raises(InputTypeError):
        perceptron.score([[["a"]]], [[3]])


BAD_PARAMS = [
    (cseq.CRF, {"c2": -1.0}), (cseq.CRF, {"c2": float("nan")}), (cseq.CRF, {"c2": "1"}),
    (cseq.CRF, {"max_iter": 0}), (cseq.CRF, {"max_iter": 2.5}), (cseq.CRF, {"max_iter": True}),
    (cseq.CRF, {"n_jobs": 0}), (cseq.CRF, {"n_jobs": -2}), (cseq.CRF, {"n_jobs": 1.0}),
    (cseq.CRF, {"tol": -1e-3}), (cseq.CRF, {"period": 0}),
    (cseq.CRF, {"max_iter": 10**400}),
    (cseq.StructuredPerceptron, {"max_iter": 0}),
    (cseq.StructuredPerceptron, {"max_iter": -3}),
    (cseq.StructuredPerceptron, {"random_state": -1}),
    (cseq.StructuredPerceptron, {"random_state": "seed"}),
    (cseq.StructuredPerceptron, {"max_iter": 10**400}),
    (cseq.CRF, {"features": "not a featurizer"}),
    (cseq.MEMM, {"c2": -1.0}), (cseq.MEMM, {"max_iter": 0}), (cseq.MEMM, {"tol": -1.0}),
    (cseq.MEMM, {"period": 0}), (cseq.MEMM, {"n_jobs": 0}), (cseq.MEMM, {"patience": 0}),
    (cseq.MEMM, {"early_stopping": "yes"}),
    (cseq.MEMM, {"features": "not a featurizer"}),
    (cseq.StructuredSVM, {"C": 0.0}), (cseq.StructuredSVM, {"C": -1.0}),
    (cseq.StructuredSVM, {"C": float("inf")}), (cseq.StructuredSVM, {"C": "1"}),
    (cseq.StructuredSVM, {"max_iter": 0}), (cseq.StructuredSVM, {"random_state": -1}),
    (cseq.StructuredSVM, {"cost": "hamming"}), (cseq.StructuredSVM, {"patience": 0}),
    (cseq.StructuredSVM, {"early_stopping": 1}), (cseq.GreedyTagger, {"patience": 0}),
    (cseq.StructuredSVM, {"cost": [[0.0, -1.0], [1.0, 0.0]]}),
    (cseq.StructuredSVM, {"cost": [[0.0, 1.0], [1.0, 2.0]]}),
    (cseq.StructuredSVM, {"cost": [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]}),
    (cseq.StructuredSVM, {"cost": [[0.0, float("nan")], [1.0, 0.0]]}),
    (cseq.StructuredSVM, {"cost": {"a": {"b": -0.5}}}),
    (cseq.StructuredSVM, {"cost": {"a": {"a": 1.0}}}),
    (cseq.StructuredSVM, {"cost": {"a": {"b": float("inf")}}}),
    (cseq.CRF, {"order": 3}), (cseq.StructuredPerceptron, {"order": 0}),
    (cseq.StructuredSVM, {"order": "2"}),
    (cseq.PassiveAggressive, {"pa_type": 3}), (cseq.PassiveAggressive, {"pa_type": 1.0}),
    (cseq.PassiveAggressive, {"C": 0.0}), (cseq.PassiveAggressive, {"C": float("inf")}),
    (cseq.PassiveAggressive, {"error_sensitive": 1}), (cseq.PassiveAggressive, {"tol": -1.0}),
    (cseq.PassiveAggressive, {"max_iter": 0}),
    (cseq.AROW, {"variance": 0.0}), (cseq.AROW, {"gamma": -1.0}),
    (cseq.AROW, {"gamma": float("nan")}), (cseq.AROW, {"tol": float("inf")}),
]


def _param_id(case):
    cls, params = case
    (name, value), = params.items()
    value = "huge int" if isinstance(value, int) and value > 2**64 else repr(value)
    return f"{cls.__name__}-{name}={value}"


@pytest.mark.parametrize("cls, params", BAD_PARAMS, ids=[_param_id(c) for c in BAD_PARAMS])
def test_bad_hyperparameters_raise_input_error(cls, params):
    with pytest.raises(InputError):
        cls(**params).fit(X_TRAIN, Y_TRAIN)


def test_bad_predict_n_jobs(fitted):
    with pytest.raises(InputError):
        fitted.predict(X_TEST, n_jobs=0)


# ---------------------------------------------------------------------------
# verbose


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("with_dev", [False, True])
def test_verbose_prints_one_line_per_iteration(cls, with_dev, capsys):
    dev = (X_TEST, Y_TEST) if with_dev else ()
    est = cls(max_iter=4, verbose=True).fit(X_TRAIN, Y_TRAIN, *dev)
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert len(lines) == est.n_iter_ == len(est.history_) >= 1
    for i, line in enumerate(lines, start=1):
        assert re.search(rf"\biter\s+{i}\b", line)
        assert ("dev" in line) == with_dev
    if with_dev:
        assert all("dev_accuracy" in record for record in est.history_)
    quiet = cls(max_iter=4).fit(X_TRAIN, Y_TRAIN, *dev)
    assert capsys.readouterr().out == "" and quiet.n_iter_ >= 1


def test_dev_set_needs_both_parts():
    with pytest.raises(InputError):
        cseq.CRF(max_iter=2).fit(X_TRAIN, Y_TRAIN, X_TEST)


# ---------------------------------------------------------------------------
# Persistence


def assert_same_behaviour(a, b):
    assert type(a) is type(b)
    assert a.get_params() == b.get_params()
    assert a.to_bytes() == b.to_bytes()
    assert a.classes_ == b.classes_
    assert a.predict(X_TEST) == b.predict(X_TEST)
    assert a.score(X_TEST, Y_TEST) == b.score(X_TEST, Y_TEST)
    np.testing.assert_array_equal(a.model_.params, b.model_.params)
    if hasattr(a, "predict_marginals"):
        for ma, mb in zip(a.predict_marginals(X_TEST), b.predict_marginals(X_TEST)):
            np.testing.assert_array_equal(ma, mb)


def test_save_load_round_trip(fitted, tmp_path):
    path = tmp_path / "model.cseq"
    fitted.save(path)
    loaded = cseq.load(path)
    assert loaded is not fitted
    assert_same_behaviour(fitted, loaded)
    assert path.read_bytes() == fitted.to_bytes()
    # Timings are left out of the file so that equal trainings give equal bytes.
    untimed = [{k: v for k, v in r.items() if k != "seconds"} for r in fitted.history_]
    assert loaded.n_iter_ == fitted.n_iter_ and loaded.history_ == untimed
    loaded2 = cseq.load(str(path))
    assert loaded2.to_bytes() == fitted.to_bytes()


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip(fitted, protocol):
    loaded = pickle.loads(pickle.dumps(fitted, protocol=protocol))
    assert_same_behaviour(fitted, loaded)
    assert_same_behaviour(fitted, copy.deepcopy(fitted))


def test_pickle_never_contains_a_pickled_model(fitted):
    data = pickle.dumps(fitted)
    assert fitted.to_bytes() in data
    assert b"numpy" not in data and b"LinearChain" not in data


@pytest.mark.parametrize("est", [
    cseq.CRF(), cseq.CRF(c2=0.25, max_iter=7, tol=0.0, period=3, n_jobs=2, all_states=True,
                         verbose=True),
    cseq.StructuredPerceptron(), cseq.StructuredPerceptron(max_iter=3, average=False,
                                                           shuffle=False, random_state=42),
    cseq.CRF(features=FeatureVocabulary()),
    cseq.MEMM(), cseq.MEMM(c2=0.5, max_iter=4, tol=0.0, period=2, n_jobs=2, all_states=True),
    cseq.StructuredSVM(),
    cseq.StructuredSVM(C=2.5, max_iter=3, cost={"a": {"b": 0.5, "z": 2}}, average=False,
                       shuffle=False, random_state=4),
    cseq.PassiveAggressive(),
    cseq.PassiveAggressive(pa_type=2, C=0.5, error_sensitive=False, average=False, tol=0.1,
                           shuffle=False, random_state=4),
    cseq.AROW(), cseq.AROW(variance=0.5, gamma=2.0, tol=0.1, shuffle=False, random_state=4),
], ids=repr)
def test_unfitted_round_trips(est, tmp_path):
    for loaded in (pickle.loads(pickle.dumps(est)), cseq.load(_saved(est, tmp_path))):
        assert type(loaded) is type(est)
        assert loaded.to_bytes() == est.to_bytes()
        params, lparams = est.get_params(), loaded.get_params()
        assert type(params.pop("features")) is type(lparams.pop("features"))
        assert params == lparams
        with pytest.raises(NotFittedError):
            loaded.predict(X_TEST)
    # a loaded unfitted estimator trains like the original
    a = pickle.loads(pickle.dumps(est)).set_params(verbose=False, max_iter=3)
    b = copy.deepcopy(est).set_params(verbose=False, max_iter=3)
    if "random_state" in a.get_params():
        a.set_params(random_state=0)
        b.set_params(random_state=0)
    np.testing.assert_array_equal(a.fit(X_TRAIN, Y_TRAIN).model_.params,
                                  b.fit(X_TRAIN, Y_TRAIN).model_.params)


def _saved(est, tmp_path):
    # est.save refuses unfitted estimators (tests/package/test_user_api.py); the format holds them
    path = tmp_path / "est.cseq"
    path.write_bytes(est.to_bytes())
    return path


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_fitted_round_trip_with_a_features_parameter_refits_the_same(cls):
    est = cls(max_iter=3, features=FeatureVocabulary())
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    est.fit(X_TRAIN, Y_TRAIN)
    loaded = pickle.loads(pickle.dumps(est))
    assert_same_behaviour_except_params(est, loaded)
    # None and a FeatureVocabulary mean the same featurizer.
    assert isinstance(loaded.get_params()["features"], (FeatureVocabulary, type(None)))
    refit = loaded.fit(X_TRAIN, Y_TRAIN)
    np.testing.assert_array_equal(refit.model_.params, est.model_.params)
    assert refit.featurizer_.attribute_names() == est.featurizer_.attribute_names()


def assert_same_behaviour_except_params(a, b):
    assert a.predict(X_TEST) == b.predict(X_TEST)
    np.testing.assert_array_equal(a.model_.params, b.model_.params)
    assert a.to_bytes() == b.to_bytes()


def test_save_does_not_leave_temporary_files(fitted, tmp_path):
    fitted.save(tmp_path / "a.cseq")
    fitted.save(tmp_path / "a.cseq")  # overwrite
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cseq"]


# ---------------------------------------------------------------------------
# Model file corruption


@pytest.fixture(scope="module")
def small_model_bytes():
    est = cseq.CRF(max_iter=5).fit([[["a"], ["b", "c"]], [{"d": 2.0}]], [["P", "Q"], ["Q"]])
    data = est.to_bytes()
    assert len(data) < 4000
    return data


def test_truncation_at_every_offset_raises(small_model_bytes, tmp_path):
    data = small_model_bytes
    for k in range(len(data)):
        with pytest.raises(ModelFormatError):
            serialize.loads(data[:k])
    path = tmp_path / "cut.cseq"
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(ModelFormatError):
        cseq.load(path)
    with pytest.raises(ModelFormatError):
        serialize.loads(data + b"\x00")


def test_random_bit_flips_raise(small_model_bytes):
    rng = np.random.default_rng(2024)
    data = small_model_bytes
    positions = rng.integers(0, len(data) * 8, size=200)
    # make sure the prefix, the header, the arrays and the digest are all hit
    positions[:4] = [3, 8 * 9, 8 * (len(data) - 40), 8 * (len(data) - 1)]
    for bit in positions:
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(ModelFormatError):
            serialize.loads(bytes(flipped))


@pytest.mark.parametrize("bad", [None, "CSEQMDL", 12, [1, 2]])
def test_non_bytes_raise(bad):
    with pytest.raises(ModelFormatError):
        serialize.loads(bad)


def test_loads_accepts_bytearray_and_memoryview(small_model_bytes):
    for data in (bytearray(small_model_bytes), memoryview(small_model_bytes)):
        assert serialize.loads(data).to_bytes() == small_model_bytes


def split_model(data: bytes):
    """(version, header dict, array region) of model-file bytes."""
    magic, version, head_len = serialize._PREFIX.unpack_from(data)
    assert magic == serialize.MAGIC
    start = serialize._PREFIX.size
    header = json.loads(data[start:start + head_len])
    return version, header, data[start + head_len:-32]


def build_model(header, arrays: bytes, *, version=serialize.FORMAT_VERSION,
                magic=serialize.MAGIC, head: bytes | None = None, head_len=None) -> bytes:
    """Model-file bytes with a valid checksum from parts (the parts may be invalid)."""
    if head is None:
        head = json.dumps(header, sort_keys=True).encode("ascii")
    prefix = serialize._PREFIX.pack(magic, version, len(head) if head_len is None else head_len)
    body = prefix + head + arrays
    return body + hashlib.sha256(body).digest()


def test_build_model_reproduces_the_file(small_model_bytes):
    version, header, arrays = split_model(small_model_bytes)
    assert build_model(header, arrays) == small_model_bytes
    assert serialize.loads(build_model(header, arrays)).classes_ == ["P", "Q"]


def _entry(header, name):
    return next(e for e in header["arrays"] if e["name"] == name)


def _patch_array(header, arrays: bytes, name, values) -> bytes:
    e = _entry(header, name)
    raw = np.asarray(values, dtype=np.dtype(e["dtype"])).tobytes()
    assert len(raw) == e["nbytes"]
    return arrays[:e["offset"]] + raw + arrays[e["offset"] + e["nbytes"]:]


def _array(header, arrays, name):
    e = _entry(header, name)
    return np.frombuffer(arrays[e["offset"]:e["offset"] + e["nbytes"]], dtype=e["dtype"]).copy()


def _set(path, value):
    def edit(h, a):
        target = h
        for key in path[:-1]:
            target = target[key] if not callable(key) else key(target)
        target[path[-1]] = value
        return h, a
    return edit


def _params_entry(h):
    return _entry(h, "model/params")


def _edit_array(name, change):
    def edit(h, a):
        arr = _array(h, a, name)
        change(arr)
        return h, _patch_array(h, a, name, arr)
    return edit


def _first(value):
    def change(arr):
        arr[0] = value
    return change


def _last(value):
    def change(arr):
        arr[-1] = value
    return change


def _del(key):
    def edit(h, a):
        del h[key]
        return h, a
    return edit


def _drop_array(name):
    def edit(h, a):
        h["arrays"] = [e for e in h["arrays"] if e["name"] != name]
        return h, a
    return edit


def _duplicate_array(name):
    def edit(h, a):
        h["arrays"].append(dict(_entry(h, name)))
        return h, a
    return edit


HEADER_EDITS = {
    "huge nbytes": _set([_params_entry, "nbytes"], 2**62),
    "nbytes past the end": _set([_params_entry, "nbytes"], 10**6),
    "negative offset": _set([_params_entry, "offset"], -8),
    "offset past the end": _set([_params_entry, "offset"], 10**9),
    "float offset": _set([_params_entry, "offset"], 0.0),
    "object dtype": _set([_params_entry, "dtype"], "|O"),
    "big-endian dtype": _set([_params_entry, "dtype"], ">f8"),
    "float16 dtype": _set([_params_entry, "dtype"], "<f2"),
    "dtype not a string": _set([_params_entry, "dtype"], 8),
    "shape disagrees with size": _set([_params_entry, "shape"], [1]),
    "negative shape": _set([_params_entry, "shape"], [-1]),
    "bool shape": _set([_params_entry, "shape"], [True]),
    "shape not a list": _set([_params_entry, "shape"], 3),
    "2-d params": lambda h, a: _set([_params_entry, "shape"],
                                    [1, _params_entry(h)["shape"][0]])(h, a),
    "attr_labels out of range": _edit_array("model/attr_labels", _last(2)),
    "negative attr_label": _edit_array("model/attr_labels", _first(-1)),
    "huge attr_label": _edit_array("model/attr_labels", _first(2**31 - 1)),
    "NaN param": _edit_array("model/params", _first(np.nan)),
    "inf param": _edit_array("model/params", _last(np.inf)),
    "attr_ptr does not start at 0": _edit_array("model/attr_ptr", _first(1)),
    "attr_ptr end mismatch": _edit_array("model/attr_ptr", _last(1)),
    "attr_ptr decreasing": _edit_array("model/attr_ptr", lambda p: p.__setitem__(1, -5)),
    "attr_ptr huge": _edit_array("model/attr_ptr", lambda p: p.__setitem__(1, 2**62)),
    "vocabulary offsets inconsistent": _edit_array("featurizer/offsets", _last(10**6)),
    "vocabulary offsets decreasing": _edit_array("featurizer/offsets",
                                                 lambda p: p.__setitem__(1, 10**6)),
    "vocabulary invalid UTF-8": _edit_array("featurizer/blob", _first(0xFF)),
    "vocabulary duplicate names": _edit_array("featurizer/blob",
                                              lambda b: b.__setitem__(slice(None), ord("a"))),
    "missing params array": _drop_array("model/params"),
    "missing vocabulary array": _drop_array("featurizer/blob"),
    "duplicate array name": _duplicate_array("model/params"),
    "arrays not a list": _set(["arrays"], {}),
    "array entry not an object": _set(["arrays"], [1]),
    "no array table": _del("arrays"),
    "extra label": lambda h, a: _set(["classes"], h["classes"] + ["R"])(h, a),
    "missing label": lambda h, a: _set(["classes"], h["classes"][:1])(h, a),
    "duplicate labels": _set(["classes"], ["P", "P"]),
    "non-str labels": _set(["classes"], [1, 2]),
    "no labels": _set(["classes"], []),
    "classes not a list": _set(["classes"], "PQ"),
    "many labels": _set(["classes"], [str(i) for i in range(10**5)]),
    "not a cseq header": _set(["library"], "other"),
    "unknown estimator": _set(["estimator"], "os.system"),
    "bad hyperparameter": _set(["params", "c2"], -1.0),
    "NaN hyperparameter": _set(["params", "c2"], float("nan")),
    "unknown hyperparameter": _set(["params", "evil"], 1),
    "features hyperparameter": _set(["params", "features"], None),
    "params not a dict": _set(["params"], [1]),
    "huge int hyperparameter": _set(["params", "max_iter"], 10**400),
    "bool max_iter": _set(["params", "max_iter"], True),
    "no training info": _del("training"),
    "n_iter not an int": _set(["training", "n_iter"], 1.5),
    "no featurizer": _del("featurizer"),
    "unknown featurizer": _set(["featurizer", "kind"], "pickle"),
    "featurizer not a dict": _set(["featurizer"], "vocabulary"),
}


@pytest.mark.parametrize("name", list(HEADER_EDITS))
def test_crafted_headers_raise_model_format_error(small_model_bytes, name):
    _, header, arrays = split_model(small_model_bytes)
    header, arrays = HEADER_EDITS[name](header, arrays)
    with pytest.raises(ModelFormatError):
        serialize.loads(build_model(header, arrays))


@pytest.mark.parametrize("name, kwargs", [
    ("newer version", {"version": serialize.FORMAT_VERSION + 1}),
    ("much newer version", {"version": 2**32 - 1}),
    ("version 0", {"version": 0}),
    ("wrong magic", {"magic": b"CSEQMDL\x01"}),
    ("other magic", {"magic": b"\x89PNG\r\n\x1a\n"}),
    ("header length past the end", {"head_len": 10**6}),
    ("huge header length", {"head_len": 2**64 - 1}),
    ("header length too short", {"head_len": 10}),
    ("zero header length", {"head_len": 0}),
    ("header not JSON", {"head": b"{" * 200}),
    ("header not ASCII", {"head": '{"library": "cseq\u00e9"}'.encode()}),
    ("header is a list", {"head": b"[1, 2, 3]"}),
    ("deeply nested header", {"head": b"[" * 100_000 + b"]" * 100_000}),
])
def test_crafted_prefixes_raise_model_format_error(small_model_bytes, name, kwargs):
    _, header, arrays = split_model(small_model_bytes)
    with pytest.raises(ModelFormatError):
        serialize.loads(build_model(header, arrays, **kwargs))


def test_newer_version_message(small_model_bytes):
    _, header, arrays = split_model(small_model_bytes)
    with pytest.raises(ModelFormatError, match="version"):
        serialize.loads(build_model(header, arrays, version=serialize.FORMAT_VERSION + 1))


def test_a_loadable_crafted_file_also_round_trips(small_model_bytes):
    # A file that loads must also save again.  This one is not what save()
    # writes (a huge finite loss, an extra key in a history record, the array
    # table in reverse order), but it is valid, so it must load, and the
    # estimator it gives must save and load again with the same predictions.
    _, header, arrays = split_model(small_model_bytes)
    assert header["training"]["history"]
    header["training"]["history"][0]["loss"] = 1.7e308
    header["training"]["history"][0]["note"] = "crafted"
    header["arrays"] = header["arrays"][::-1]
    est = serialize.loads(build_model(header, arrays))
    assert est.history_[0]["loss"] == 1.7e308
    again = serialize.loads(est.to_bytes())
    assert again.history_ == est.history_
    X = [[["a"], ["b"]], [["a"]]]
    assert again.predict(X) == est.predict(X) == serialize.loads(small_model_bytes).predict(X)
    # JSON's Infinity is refused, so a file holding it never loads.
    header["training"]["history"][0]["loss"] = float("inf")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        serialize.loads(build_model(header, arrays))


def test_crf_that_cannot_make_progress_raises_naming_the_cause():
    X = [[{"a": 2e38}, {"b": 1.0}], [{"a": -2e38}, {"b": 2.0}]]
    y = [["x", "y"], ["y", "x"]]
    with pytest.raises(cseq.ConvergenceError, match="largest feature value 2e\\+38"):
        cseq.CRF(max_iter=20).fit(X, y)


@pytest.mark.parametrize("Est", ESTIMATORS)
@pytest.mark.parametrize("n_jobs", [2, 3, -1])
def test_threaded_blocks_give_the_serial_results(Est, n_jobs):
    X, y = make_corpus(5, n_seqs=200)
    est = Est(max_iter=5).fit(X[:100], y[:100])
    assert est.predict(X, n_jobs=n_jobs) == est.predict(X)
    assert est.score(X, y, n_jobs=n_jobs) == est.score(X, y)
    if hasattr(est, "predict_marginals"):
        for a, b in zip(est.predict_marginals(X, n_jobs=n_jobs), est.predict_marginals(X)):
            np.testing.assert_array_equal(a, b)
    tiny = [X[0]]
    assert est.predict(tiny, n_jobs=n_jobs) == est.predict(tiny)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_errors_in_a_late_block_name_indices_of_the_whole_x(n_jobs):
    X, y = make_corpus(6, n_seqs=200)
    est = cseq.StructuredPerceptron(max_iter=2).fit(X, y)
    bad = copy.deepcopy(X)
    bad[187] = [["w=1", b"bytes"]]
    with pytest.raises(InputTypeError, match=re.escape("X[187][0]")):
        est.predict(bad, n_jobs=n_jobs)
    bad_y = copy.deepcopy(y)
    bad_y[150] = bad_y[150] + ["n"]
    with pytest.raises(InputError, match="sequence 150"):
        est.score(X, bad_y, n_jobs=n_jobs)
    with pytest.raises(InputError, match="X has 201 sequences but y has 200"):
        est.score(X, y[:-1], n_jobs=n_jobs)


def _overflowing_model(Est):
    """A fitted model with state weights of 1e308: a feature value of 2e38
    makes an emission score overflow, and two tokens of value 1 make a path
    score overflow while every emission stays finite."""
    X = [[{"a": 1.0}], [{"b": 1.0}, {"a": 1.0}]]
    y = [["P"], ["Q", "P"]]
    est = Est(max_iter=3).fit(X, y)
    est.model_.params[:est.model_.n_state] = 1e308
    return est


# The chain decoders (Viterbi, forward-backward, the MEMM's); the greedy
# tagger's left-to-right decoder does not check its scores yet.
@pytest.mark.parametrize("Est", [cseq.CRF, cseq.StructuredPerceptron, cseq.MEMM])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_non_finite_scores_at_prediction_name_the_sequence(Est, n_jobs):
    est = _overflowing_model(Est)
    fine = {"b": 1e-30}
    inf_emission = [[fine], [fine, {"a": 2e38}], [fine]]
    inf_path = [[fine], [fine], [{"a": 1.0}, {"b": 1.0}]]
    cases = [(inf_emission, 1), (inf_path, 2)]
    if Est is cseq.MEMM:
        # Locally normalised: finite emissions give finite log-probabilities,
        # so only an infinite emission score is an error.
        assert [len(s) for s in est.predict(inf_path, n_jobs=n_jobs)] == [1, 1, 2]
        cases = cases[:1]
    for X, seq in cases:
        with pytest.raises(InputError, match=rf"sequence {seq}: .*not finite"):
            est.predict(X, n_jobs=n_jobs)
        with pytest.raises(InputError, match=rf"sequence {seq}: .*not finite"):
            est.score(X, [["P"] * len(s) for s in X], n_jobs=n_jobs)
        if hasattr(est, "predict_marginals"):
            with pytest.raises(InputError, match=rf"sequence {seq}: .*not finite"):
                est.predict_marginals(X, n_jobs=n_jobs)
    # the same model on sequences whose scores stay finite predicts as usual
    pred = est.predict([[fine], [fine, fine]])
    assert [len(s) for s in pred] == [1, 2] and set(sum(pred, [])) <= set(est.classes_)
