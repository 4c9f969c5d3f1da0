"""Passive-aggressive (PA, PA-I, PA-II) and AROW: the kernels against slow dense
versions of the same updates after every step, and the estimators end to end."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.learners import _arow, _pa
from cseq.chain import _chain

from support.budget import examples
from support.oracle import NaiveMargin
from support.packing import pack
from support.strategies import corpora


def _one(s):
    return np.array([s], dtype=np.int64)


@examples(60)
@given(corpora(max_len=4, values="dyadic"), st.sampled_from([0, 1, 2]), st.booleans(),
       st.sampled_from([0.05, 0.5, 1.0, 4.0]), st.booleans(), st.integers(1, 3), st.data())
def test_pa_kernel_matches_the_dense_update_after_every_step(Xy, pa_type, error_sensitive, C,
                                                             all_states, epochs, data):
    _, corpus, model = pack(*Xy, all_states=all_states)
    params = _chain.AveragedParams(n_params=len(model.params))
    trainer = _pa.PATrainer(model.index, corpus.view(), params, pa_type, C, error_sensitive)
    naive = NaiveMargin(model.attr_ptr, model.attr_labels, model.n_labels, corpus, pa_type,
                        C=C, error_sensitive=error_sensitive)
    for _ in range(epochs):
        for s in data.draw(st.permutations(range(corpus.n_sequences))):
            errors, loss = trainer.train_epoch(_one(s))
            want_errors, want_loss = naive.step(s)
            if naive.ambiguous:
                return
            assert errors == want_errors
            assert loss == pytest.approx(want_loss, rel=1e-9, abs=1e-9)
            np.testing.assert_allclose(params.w, naive.weights, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(params.averaged(), naive.averaged(), rtol=1e-9,
                                       atol=1e-9)


@examples(60)
@given(corpora(max_len=4, values="dyadic"), st.sampled_from([0.25, 1.0, 3.0]),
       st.sampled_from([0.1, 1.0, 10.0]), st.booleans(), st.integers(1, 3), st.data())
def test_arow_kernel_matches_the_dense_update_after_every_step(Xy, variance, gamma, all_states,
                                                               epochs, data):
    _, corpus, model = pack(*Xy, all_states=all_states)
    mean = np.zeros(len(model.params))
    cov = np.full_like(mean, variance)
    trainer = _arow.AROWTrainer(model.index, corpus.view(), mean, cov, gamma)
    naive = NaiveMargin(model.attr_ptr, model.attr_labels, model.n_labels, corpus, "arow",
                        variance=variance, gamma=gamma)
    for _ in range(epochs):
        for s in data.draw(st.permutations(range(corpus.n_sequences))):
            errors, loss = trainer.train_epoch(_one(s))
            want_errors, want_loss = naive.step(s)
            if naive.ambiguous:
                return
            assert errors == want_errors
            assert loss == pytest.approx(want_loss, rel=1e-9, abs=1e-9)
            np.testing.assert_allclose(mean, naive.weights, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(cov, naive.cov, rtol=1e-9, atol=1e-12)


def test_a_weight_both_paths_touch_is_updated_once_by_its_difference():
    # "x" fires on both tokens of sequence 1, whose gold path is B B (label
    # 1); under zero weights the kernel predicts A A (ties go to label 0).
    X = [[{"x": 1.0}, {"x": 1.0}], [{"x": 1.0}, {"x": 1.0}]]
    y = [["A", "A"], ["B", "B"]]
    _, corpus, model = pack(X, y, all_states=True)
    params = _chain.AveragedParams(n_params=len(model.params))
    trainer = _pa.PATrainer(model.index, corpus.view(), params, 0, 1.0, False)
    errors, loss = trainer.train_epoch(_one(1))
    # PA (type 0), loss 0 - 0 + 1 = 1; delta has x:B +2,
    # x:A -2, trans B->B +1, A->A -1, start and end B +1, A -1: ||delta||^2 = 14.
    assert (errors, loss) == (2, 1.0)
    w = params.w
    np.testing.assert_allclose(sorted(w[np.nonzero(w)]),
                               sorted(np.array([2, -2, 1, -1, 1, -1, 1, -1]) / 14))


@pytest.mark.parametrize("est", [
    cseq.PassiveAggressive(pa_type=0, random_state=0), cseq.PassiveAggressive(random_state=0),
    cseq.PassiveAggressive(pa_type=2, C=0.1, error_sensitive=False, average=False,
                           random_state=0),
    cseq.AROW(random_state=0), cseq.AROW(variance=0.1, gamma=10.0, random_state=0),
], ids=repr)
def test_learns_a_chain_that_needs_transitions(est):
    # A run of "x" at the end copies the label before it: only transitions can
    # tell (a first-order chain separates it: T(P, P), T(Q, Q) above the rest).
    rng = np.random.default_rng(0)
    X, y = [], []
    for _ in range(60):
        head = [str(rng.choice(["P", "Q"])) for _ in range(int(rng.integers(1, 4)))]
        tail = int(rng.integers(1, 4))
        X.append([[f"w={label.lower()}"] for label in head] + [["w=x"]] * tail)
        y.append(head + head[-1:] * tail)
    est.fit(X, y)
    assert est.score(X, y) == 1.0
    assert est.history_[-1]["errors"] == 0 and "loss" in est.history_[-1]


def test_pa_stops_when_the_mean_loss_falls_below_tol():
    X, y = [[["a"], ["b"]]], [["A", "B"]]
    est = cseq.PassiveAggressive(max_iter=50, tol=0.5, random_state=0).fit(X, y)
    assert est.n_iter_ < 50 and est.stop_reason_ == "mean loss below tol=0.5"
    assert est.history_[-1]["loss"] < 0.5
    assert cseq.PassiveAggressive(max_iter=7).fit(X, y).n_iter_ == 7  # tol 0: every pass


def test_partial_labels_are_refused():
    for est in (cseq.PassiveAggressive(), cseq.AROW()):
        with pytest.raises(cseq.InputTypeError, match=r"y\[0\]\[1\] is None"):
            est.fit([[["a"], ["b"]]], [["A", None]])


def test_a_loss_beyond_float64_stops_the_pass_without_an_update():
    # Two features whose weights for label 0 are 1e308 each: that label's
    # score is inf; the gold label is 1, so the loss is inf.
    X, y = [[["f", "g"]], [["f", "g"]]], [["A"], ["B"]]
    _, corpus, model = pack(X, y, all_states=True)
    w = np.zeros(len(model.params))
    w[[k for k in range(len(model.attr_labels)) if model.attr_labels[k] == 0]] = 1e308
    params = _chain.AveragedParams(w.copy())
    trainer = _pa.PATrainer(model.index, corpus.view(), params, 1, 1.0, True)
    with pytest.raises(FloatingPointError, match="at sequence 1"):
        trainer.train_epoch(np.array([1, 0], dtype=np.int64))
    np.testing.assert_array_equal(params.w, w)
    mean, cov = w.copy(), np.ones_like(w)
    trainer = _arow.AROWTrainer(model.index, corpus.view(), mean, cov, 1.0)
    with pytest.raises(FloatingPointError, match="at sequence 1"):
        trainer.train_epoch(np.array([1, 0], dtype=np.int64))
    np.testing.assert_array_equal(mean, w)
    np.testing.assert_array_equal(cov, 1.0)


def test_pa_average_counts_the_zero_weights_before_the_first_example_as_crfsuite():
    # One sequence, one pass: one update w1.  CRFsuite averages the vectors
    # before the example (0) and after it (w1): w1 / 2.
    X, y = [[["a"], ["b"]]], [["A", "B"]]
    last = cseq.PassiveAggressive(max_iter=1, average=False, all_states=True).fit(X, y)
    mean = cseq.PassiveAggressive(max_iter=1, all_states=True).fit(X, y)
    assert np.any(last.model_.params != 0)
    np.testing.assert_allclose(mean.model_.params, last.model_.params / 2, rtol=1e-15)
