"""The MEMM against enumeration: local normalisation, objective and gradient, decoding,
marginals; the estimator; and the label bias example (Zhang, ch. 8)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.learners import _memm
from cseq.learners.base import MAX_ITER_REASON
from cseq.features import FeatureVocabulary
from cseq.fitted import Fitted
from cseq.learners.memm import LocalChain
from cseq.chain.model import LinearChain, work_chunks
from cseq.learners.objectives import MEMMObjective
from cseq.chain.sequences import Sequences

from support.budget import examples
from support.oracle import (brute_memm, finite_difference_gradient, memm_path_log_prob,
                            naive_local_distributions, path_score,
                            sequence_emissions, split_params)
from support.strategies import corpora
from support.packing import pack

seeds = st.integers(0, 2**32 - 1)
# Parameter scales: 1e4 makes the scaled local sums underflow, so the
# log-space fallback of the decoder's local log Z runs too.
scales = st.sampled_from([1e-3, 0.7, 30.0, 1e4])


def dense(model, corpus, theta, s):
    """Emissions, transitions and start of sequence ``s`` from the oracle."""
    L = model.n_labels
    E = sequence_emissions(theta, model.attr_ptr, model.attr_labels, L, corpus, s)
    _, T, start, _ = split_params(theta, len(model.attr_labels), L)
    return E, T, start


def gold(corpus, s):
    return [int(v) for v in corpus.labels[corpus.seq_ptr[s]:corpus.seq_ptr[s + 1]]]


def nonempty(corpus):
    return [s for s in range(corpus.n_sequences) if corpus.seq_ptr[s + 1] > corpus.seq_ptr[s]]


# ---------------------------------------------------------------------------
# Kernels against enumeration


@examples(40)
@given(corpora(), st.booleans(), seeds, scales)
def test_local_distributions_are_normalised_softmaxes(Xy, all_states, seed, scale):
    _, corpus, model = pack(*Xy, all_states=all_states)
    theta = np.random.default_rng(seed).normal(size=len(model.params)) * scale
    for s in nonempty(corpus):
        first, cond, log_z = _memm.local_distributions(model.index, theta, corpus.view(), s)
        E, T, start = dense(model, corpus, theta, s)
        want_first, want_cond = naive_local_distributions(E, T, start)
        np.testing.assert_allclose(first.sum(), 1.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(cond.sum(axis=2), 1.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(first, want_first, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(cond, want_cond, rtol=1e-9, atol=1e-12)
        # The decoder's local log Z (scaled sums, log-space when they underflow).
        for t in range(1, len(E)):
            for p in range(model.n_labels):
                scores = E[t] + T[p]
                m = scores.max()
                want = m + math.log(np.exp(scores - m).sum())
                assert log_z[t - 1, p] == pytest.approx(want, rel=1e-12, abs=1e-9)


@examples(30)
@given(corpora(max_len=4), st.booleans(), st.sampled_from([0.0, 0.5]), seeds)
def test_memm_objective_matches_enumeration_and_finite_differences(Xy, all_states, c2, seed):
    _, corpus, model = pack(*Xy, all_states=all_states, chain=LocalChain)
    objective = MEMMObjective(model, corpus, c2=c2, n_jobs=1)
    theta = np.random.default_rng(seed).normal(size=len(model.params)) * 0.7
    theta_copy = theta.copy()
    value, grad = objective(theta)
    np.testing.assert_array_equal(theta, theta_copy)
    want = -sum(memm_path_log_prob(*dense(model, corpus, theta, s), gold(corpus, s))
                for s in nonempty(corpus)) + c2 * float(theta @ theta)
    assert value == pytest.approx(want, rel=1e-11, abs=1e-10)
    np.testing.assert_allclose(grad, finite_difference_gradient(objective, theta), rtol=1e-5,
                               atol=1e-6)
    # The end block plays no part: its gradient is the penalty's alone.
    end = model.layout["end"]
    np.testing.assert_array_equal(grad[end:end + model.n_labels],
                                  2 * c2 * theta[end:end + model.n_labels])
    value2, grad2 = objective(theta)
    assert value2 == value
    np.testing.assert_array_equal(grad2, grad)
    value_2, grad_2 = MEMMObjective(model, corpus, c2=c2, n_jobs=2)(theta)
    assert value_2 == pytest.approx(value, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(grad_2, grad, rtol=1e-12, atol=1e-12)
    # Per-sequence values, without the gradient.
    per = np.full(corpus.n_sequences, np.nan)
    chunks = work_chunks(corpus.seq_ptr, 1)
    total, none = _memm.memm_objective(model.index, theta, corpus.view(), chunks,
                                       np.empty((1, 0)), 1, False, per)
    assert none is None and total == pytest.approx(value - c2 * float(theta @ theta),
                                                   rel=1e-12, abs=1e-12)
    for s in range(corpus.n_sequences):
        want_s = 0.0 if s not in nonempty(corpus) else \
            -memm_path_log_prob(*dense(model, corpus, theta, s), gold(corpus, s))
        assert per[s] == pytest.approx(want_s, rel=1e-11, abs=1e-11)


@examples(40)
@given(corpora(), st.booleans(), seeds, scales, st.sampled_from([1, 2]))
def test_decode_and_marginals_match_enumeration(Xy, all_states, seed, scale, n_jobs):
    _, corpus, model = pack(*Xy, all_states=all_states)
    theta = np.random.default_rng(seed).normal(size=len(model.params)) * scale
    chunks = work_chunks(corpus.seq_ptr, n_jobs)
    path = _memm.memm_decode(model.index, theta, corpus.view(), chunks, n_jobs)
    marg = _memm.memm_marginals(model.index, theta, corpus.view(), chunks, n_jobs)
    for s in nonempty(corpus):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        E, T, start = dense(model, corpus, theta, s)
        paths, logp, want_marg = brute_memm(E, T, start)
        assert math.fsum(np.exp(logp)) == pytest.approx(1.0, abs=1e-9)
        got = memm_path_log_prob(E, T, start, path[t0:t1])
        best = float(logp.max())
        # The decoded path is a most probable one (ties within rounding allowed).
        assert got >= best - 1e-9 * max(1.0, abs(best))
        if np.sum(logp >= best - 1e-6 * max(1.0, abs(best))) == 1:
            np.testing.assert_array_equal(path[t0:t1], paths[int(np.argmax(logp))])
        np.testing.assert_allclose(marg[t0:t1], want_marg, rtol=0, atol=1e-9)
        np.testing.assert_allclose(marg[t0:t1].sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_the_end_block_does_not_change_decoding_or_marginals():
    X = [[["a"], ["b"], ["a"]], [["b"]]]
    y = [["P", "Q", "R"], ["R"]]
    _, corpus, model = pack(X, y)
    theta = np.random.default_rng(3).normal(size=len(model.params))
    other = theta.copy()
    end = model.layout["end"]
    other[end:end + model.n_labels] = [50.0, -50.0, 7.0]
    chunks = work_chunks(corpus.seq_ptr, 1)
    for f in (_memm.memm_decode, _memm.memm_marginals):
        np.testing.assert_array_equal(f(model.index, theta, corpus.view(), chunks, 1),
                                      f(model.index, other, corpus.view(), chunks, 1))


# ---------------------------------------------------------------------------
# The estimator


X_WORDS = [["the", "dog", "runs"], ["a", "cat", "sleeps"], ["the", "cat", "runs"],
           ["a", "dog", "sleeps"]] * 3
Y_WORDS = [["D", "N", "V"]] * 12


def test_fit_predict_marginals_and_templates():
    est = cseq.MEMM(c2=0.01, features=cseq.TemplateFeaturizer("U00:%x[0,0]"))
    est.fit(X_WORDS, Y_WORDS)
    assert est.predict([["the", "cat", "sleeps"]]) == [["D", "N", "V"]]
    assert est.score(X_WORDS, Y_WORDS) == 1.0
    marg = est.predict_marginals([["a", "dog", "runs"], []])
    assert [m.shape for m in marg] == [(3, 3), (0, 3)]
    assert est.classes_ == ["D", "N", "V"]
    np.testing.assert_array_equal(marg[0].argmax(axis=1), [0, 1, 2])
    assert marg[0].min() > 0 and np.allclose(marg[0].sum(axis=1), 1.0)
    logp = est.sequence_log_proba([["a", "dog", "runs"]] * 2, [["D", "N", "V"], ["V", "N", "D"]])
    assert logp[0] > logp[1] and logp[0] < 0
    # Round trips keep the kind, the decoder and the training record.
    loaded = pickle.loads(pickle.dumps(est))
    assert type(loaded) is cseq.MEMM
    assert loaded.to_bytes() == est.to_bytes()
    assert loaded.stop_reason_ == est.stop_reason_
    assert loaded.n_evaluations_ == est.n_evaluations_
    for a, b in zip(loaded.predict_marginals(X_WORDS), est.predict_marginals(X_WORDS)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(cseq.InputError, match="label"):
        est.sequence_log_proba([["a"]], [["X"]])


def test_memm_predicts_with_its_own_decoder_not_the_crf_one():
    """A chain whose local and global argmax differ: predict follows log P(y | x)."""
    _, corpus, model = pack([[["a"], ["b"]]], [["P", "Q"]], chain=LocalChain)
    est = cseq.MEMM()
    featurizer = FeatureVocabulary()
    featurizer.fit_transform([[["a"], ["b"]]])
    # No state weights; start favours P, after P the transition scores are
    # flat (P passes its mass on evenly), after Q one successor dominates.
    # Globally Q Q scores 0 + 5 against 1 + 0 for P then anything: the CRF
    # decoder picks Q Q.  Locally P(y_0 = P) = e / (1 + e) = 0.73, so
    # P(P P) = P(P Q) = 0.37 > P(Q Q) = 0.27 * 0.99: the MEMM's best starts
    # with P (P P, the lowest id, on the exact tie).
    theta = np.zeros(len(model.params))
    lay = model.layout
    theta[lay["start"]:lay["start"] + 2] = [1.0, 0.0]
    theta[lay["trans"]:lay["trans"] + 4] = [0.0, 0.0, 0.0, 5.0]
    model.params = theta
    est._fitted = Fitted(featurizer, ["P", "Q"], model).with_attributes(n_iter_=0)
    assert est.predict([[["a"], ["b"]]]) == [["P", "P"]]
    assert model.decode(corpus).tolist() == [0, 0]  # the model decodes, not the estimator
    assert LinearChain.decode(model, corpus).tolist() == [1, 1]  # the CRF's decoder
    E = np.zeros((2, 2))
    assert path_score(E, theta[lay["trans"]:lay["trans"] + 4].reshape(2, 2),
                      theta[lay["start"]:lay["start"] + 2], np.zeros(2), [1, 1]) == 5.0


# ---------------------------------------------------------------------------
# The label bias example (Zhang, ch. 8)

LABEL_BIAS_Y = [["l3", "l3", "l3"], ["l1", "l1", "l2"], ["l1", "l1"], ["l1", "l3", "l1"],
                ["l1", "l3", "l1"], ["l1", "l2", "l2"]]


def crf_sequence_log_proba(crf, X, y):
    """``log P(y | x)`` of a fitted CRF: path score minus log Z (by enumeration)."""
    from support.oracle import brute_log_z
    model = crf.model_
    corpus = crf.featurizer_.transform(X)
    ids = {c: i for i, c in enumerate(crf.classes_)}
    out = []
    for s, labels in enumerate(y):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        E = model.emissions(corpus, t0, t1)
        path = [ids[v] for v in labels]
        out.append(path_score(E, model.transitions, model.start, model.end, path)
                   - brute_log_z(E, model.transitions, model.start, model.end))
    return np.array(out)


@pytest.mark.parametrize("token", [[], ["bias"]], ids=["no feature", "one constant feature"])
def test_label_bias_memm_prefers_the_sequence_seen_once(token):
    # A constant feature adds the same vector to start and every transition
    # row: the same families of distributions, the same fit.
    X = [[list(token) for _ in seq] for seq in LABEL_BIAS_Y]
    query_x = [[list(token)] * 3] * 2
    # The local MLE: P(l1 | start) = 5/6, P(. | l1) = 1/3 each, P(l1 | l3) =
    # 1/2, P(l2 | l2) = 1 (only reachable as c2 -> 0: the weight grows without
    # bound, so the fit stops a gradient tolerance short of it).
    memm = cseq.MEMM(c2=1e-10, max_iter=500, tol=0.0).fit(X, LABEL_BIAS_Y)
    queries = [["l1", "l3", "l1"], ["l1", "l2", "l2"]]
    p131, p122 = np.exp(memm.sequence_log_proba(query_x, queries))
    assert p131 == pytest.approx(5 / 36, rel=1e-4)
    assert p122 == pytest.approx(5 / 18, rel=1e-4)
    assert p122 > p131
    assert memm.predict(query_x[:1]) == [["l1", "l2", "l2"]]

    crf = cseq.CRF(c2=1e-4, max_iter=500, tol=0.0).fit(X, LABEL_BIAS_Y)
    q131, q122 = np.exp(crf_sequence_log_proba(crf, query_x, queries))
    # The CRF follows the relative frequencies, 2/6 against 1/6.
    assert q131 > q122
    assert crf.predict(query_x[:1]) == [["l1", "l3", "l1"]]


# ---------------------------------------------------------------------------
# The CRF's L-BFGS loop, shared: stopping rule, ConvergenceWarning (early stopping
# and Ctrl-C are in test_crf_options.py and test_user_api.py)


def test_memm_stops_by_the_crf_rule_and_warns_at_max_iter():
    features = cseq.TemplateFeaturizer("U00:%x[0,0]")
    # tol = 100: any decrease below 100 |loss| stops once period + 1 iterations exist.
    for period in (1, 3):
        est = cseq.MEMM(tol=100.0, period=period, features=features).fit(X_WORDS, Y_WORDS)
        assert est.n_iter_ == period + 1 == len(est.history_)
        assert est.stop_reason_ == "stopped by the convergence test"
    with pytest.warns(cseq.ConvergenceWarning, match="MEMM stopped at max_iter=2"):
        est = cseq.MEMM(max_iter=2, tol=0.0, features=features).fit(X_WORDS, Y_WORDS)
    assert est.n_iter_ == 2 and est.stop_reason_ == MAX_ITER_REASON
    # The losses in history_ are the objective at the iterates: the last one at the weights kept.
    ids = {c: i for i, c in enumerate(est.classes_)}
    corpus = est.featurizer_.transform(X_WORDS)
    labeled = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values,
                        np.array([ids[t] for seq in Y_WORDS for t in seq], dtype=np.int32))
    objective = MEMMObjective(est.model_, labeled, est.c2)
    assert objective(est.model_.params)[0] == pytest.approx(est.history_[-1]["loss"], rel=1e-12)
