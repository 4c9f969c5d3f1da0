"""Second-order chains (``order=2``) against brute-force enumeration.

Viterbi (plain and cost-augmented), log Z, token, pair and trigram marginals,
expected counts, the path-features kernel, the CRF objective and its gradient,
the per-sequence SGD gradient, the perceptron and structured SVM updates; then
the estimators with ``order=2``: they learn what first order cannot, fit,
predict, save and load, and bad orders are refused.  Every reference enumerates
all ``L ** n`` label paths (``tests/support/oracle.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cseq
from cseq.chain import _crf, _decode, _chain
from cseq.learners import _ssvm, _perceptron
from cseq.io import serialize
from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.chain.model import work_chunks
from cseq.learners.objectives import CRFObjective

from support.budget import examples
from support.oracle import (
    finite_difference_gradient,
    NaivePegasos,
    NaivePerceptron,
    all_path_scores,
    brute_expected_counts,
    brute_hinge,
    brute_log_z,
    brute_log_z_sum,
    brute_loss_augmented,
    brute_marginals,
    brute_pair_marginals,
    brute_triple_marginals,
    brute_viterbi,
    kernel_tie_break,
    naive_crf_objective,
    path_features,
    path_score,
    sequence_emissions,
    split_params,
    trans2_of,
)
from support.strategies import chains, corpora
from support.packing import pack as pack_chain, random_params, viterbi_step
from support.registered import commands, estimators, quick, takes

pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

SPREAD = 250.0  # cseq.chain._forward_backward.SCALED_MAX_SPREAD
seeds = st.integers(0, 2**32 - 1)
_unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def chains2(draw, max_n: int = 5, max_labels: int = 4):
    """A dense second-order chain ``(E, T, start, end, T2)``.

    The trigram scale is drawn on its own, half the time above ~300 so that
    the log-space forward-backward runs (the spread of T2 + T exceeds 250).
    """
    E, T, start, end = draw(chains(max_n=max_n, max_labels=max_labels, with_start_end=True))
    L = E.shape[1]
    exponent = draw(st.one_of(st.floats(-3.0, 2.0), st.floats(2.5, 4.0)))
    T2 = draw(hnp.arrays(np.float64, (L, L, L), elements=_unit)) * 10.0 ** exponent
    return E, T, start, end, T2


def magnitude(E, T, start, end, T2) -> float:
    n = E.shape[0]
    side = max(np.abs(T).max(), np.abs(start).max(), np.abs(end).max(), np.abs(T2).max())
    return 1.0 + n * float(np.abs(E).max()) + 2 * (n + 1) * float(side)


# ---------------------------------------------------------------------------
# Dense chains: Viterbi


@examples(200)
@given(chains2())
def test_second_order_viterbi_matches_brute_force(chain):
    E, T, start, end, T2 = chain
    tol = 1e-11 * magnitude(*chain)
    path, score = cseq.viterbi(E, T, start, end, transitions2=T2)
    assert path.dtype == np.int32 and path.shape == (E.shape[0],)
    paths, scores = all_path_scores(E, T, start, end, T2)
    best = float(scores.max())
    assert score == pytest.approx(best, abs=tol, rel=0)
    near_best = {tuple(p) for p, s in zip(paths.tolist(), scores) if s >= best - tol}
    assert tuple(path.tolist()) in near_best
    assert path_score(E, T, start, end, path, T2) == pytest.approx(score, abs=tol, rel=0)
    # The kernels' own path score (the SSVM's gold score) agrees term by term.
    assert _decode.path_score_array(E, T, start, end, path, T2) == \
        pytest.approx(score, abs=tol, rel=0)


@pytest.mark.parametrize("avx2", [False, True])
@examples(120)
@given(st.integers(1, 4), st.data())
def test_second_order_viterbi_ties_go_to_lower_label_ids(avx2, n, data):
    # Small integers keep every score exact, so ties are real ties; L up to 6
    # covers the 4-wide vector body and its tails.
    L = data.draw(st.integers(1, 6 if n <= 3 else 5))
    ints = st.integers(-2, 2).map(float)
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=ints))
    T = data.draw(hnp.arrays(np.float64, (L, L), elements=ints))
    start = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    end = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    T2 = data.draw(hnp.arrays(np.float64, (L, L, L), elements=ints))
    with viterbi_step(avx2):
        path, score = cseq.viterbi(E, T, start, end, transitions2=T2)
    best, argmaxes = brute_viterbi(E, T, start, end, T2)
    assert score == best
    assert tuple(path.tolist()) == kernel_tie_break(argmaxes)


@examples(100)
@given(st.integers(1, 6), st.integers(1, 5), st.data())
def test_zero_trigrams_decode_as_first_order(n, L, data):
    ints = st.integers(-3, 3).map(float)
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=ints))
    T = data.draw(hnp.arrays(np.float64, (L, L), elements=ints))
    start = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    end = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    first = cseq.viterbi(E, T, start, end)
    second = cseq.viterbi(E, T, start, end, transitions2=np.zeros((L, L, L)))
    assert first[0].tolist() == second[0].tolist() and first[1] == second[1]
    lz1 = cseq.forward_backward(E, T, start, end)
    lz2 = cseq.forward_backward(E, T, start, end, transitions2=np.zeros((L, L, L)))
    assert lz2[0] == pytest.approx(lz1[0], rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(lz2[1], lz1[1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(lz2[2], lz1[2], rtol=0, atol=1e-12)


@pytest.mark.parametrize("L", [3, 5, 17, 22])
def test_avx2_and_scalar_second_order_steps_agree_exactly(L):
    rng = np.random.default_rng(L)
    for _ in range(10):
        n = int(rng.integers(1, 25))
        E, T, T2 = rng.normal(size=(n, L)), rng.normal(size=(L, L)), rng.normal(size=(L, L, L))
        start, end = rng.normal(size=L), rng.normal(size=L)
        T2[rng.random((L, L, L)) < 0.3] = -1e3
        with viterbi_step(False):
            scalar = cseq.viterbi(E, T, start, end, transitions2=T2)
        with viterbi_step(True):
            vector = cseq.viterbi(E, T, start, end, transitions2=T2)
        assert scalar[0].tolist() == vector[0].tolist() and scalar[1] == vector[1]


def _cost_of(gold, path, cost):
    if cost is None:
        return float(sum(int(g != y) for g, y in zip(gold, path)))
    return float(sum(cost[g][y] for g, y in zip(gold, path)))


@examples(150)
@given(chains2(), st.data())
def test_second_order_loss_augmented_viterbi_matches_brute_force(chain, data):
    E, T, start, end, T2 = chain
    n, L = E.shape
    gold = data.draw(st.lists(st.integers(0, L - 1), min_size=n, max_size=n))
    cost = None
    if data.draw(st.booleans()):
        cost = data.draw(hnp.arrays(np.float64, (L, L), elements=st.floats(0.0, 3.0)))
        np.fill_diagonal(cost, 0.0)
    tol = 1e-11 * (magnitude(*chain) + 3 * n)
    path, score = cseq.loss_augmented_viterbi(E, T, gold, cost, start, end, transitions2=T2)
    best, _ = brute_loss_augmented(E, T, start, end, gold, cost, T2)
    assert score == pytest.approx(best, abs=tol, rel=0)
    got = path_score(E, T, start, end, path, T2) + _cost_of(gold, path.tolist(), cost)
    assert got == pytest.approx(best, abs=tol, rel=0)


# ---------------------------------------------------------------------------
# Dense chains: forward-backward


@examples(150)
@given(chains2())
def test_second_order_forward_backward_matches_brute_force(chain):
    E, T, start, end, T2 = chain
    n, L = E.shape
    mag = magnitude(*chain)
    log_z, marg, pairs, triples = cseq.forward_backward(E, T, start, end, transitions2=T2)
    assert marg.shape == (n, L) and pairs.shape == (n - 1, L, L)
    assert triples.shape == (max(n - 2, 0), L, L, L)
    assert log_z == pytest.approx(brute_log_z(E, T, start, end, T2), rel=0, abs=1e-10 * mag)
    atol = 1e-9 + 1e-13 * mag
    np.testing.assert_allclose(marg, brute_marginals(E, T, start, end, T2), rtol=0, atol=atol)
    np.testing.assert_allclose(pairs, brute_pair_marginals(E, T, start, end, T2), rtol=0,
                               atol=atol)
    np.testing.assert_allclose(triples, brute_triple_marginals(E, T, start, end, T2), rtol=0,
                               atol=atol)
    assert (triples >= 0).all()
    np.testing.assert_allclose(triples.sum(axis=3), pairs[:-1], rtol=0, atol=atol)
    np.testing.assert_allclose(triples.sum(axis=1), pairs[1:], rtol=0, atol=atol)


@pytest.mark.parametrize("spread", [SPREAD - 1e-6, SPREAD + 1e-6, 4 * SPREAD])
@pytest.mark.parametrize("where", ["trigrams", "transitions"])
def test_second_order_forward_backward_both_sides_of_the_mode_switch(spread, where):
    rng = np.random.default_rng(11)
    n, L = 5, 3
    E = rng.normal(size=(n, L))
    T, T2 = rng.normal(size=(L, L)) * 0.1, rng.normal(size=(L, L, L)) * 0.1
    target = T2 if where == "trigrams" else T
    target -= target.min()
    target *= spread / target.max()
    target -= spread / 2   # centred: the spread of T2 + T is about `spread`
    start, end = rng.normal(size=L), rng.normal(size=L)
    log_z, marg, pairs, triples = cseq.forward_backward(E, T, start, end, transitions2=T2)
    mag = magnitude(E, T, start, end, T2)
    assert log_z == pytest.approx(brute_log_z(E, T, start, end, T2), rel=0, abs=1e-10 * mag)
    np.testing.assert_allclose(marg, brute_marginals(E, T, start, end, T2), atol=1e-9)
    np.testing.assert_allclose(pairs, brute_pair_marginals(E, T, start, end, T2), atol=1e-9)
    np.testing.assert_allclose(triples, brute_triple_marginals(E, T, start, end, T2), atol=1e-9)


def test_second_order_long_sequence_stays_finite_and_normalised():
    rng = np.random.default_rng(3)
    n, L = 3000, 4
    E, T, T2 = rng.normal(size=(n, L)) * 5, rng.normal(size=(L, L)), rng.normal(size=(L, L, L))
    for scale in (1.0, 1e3):   # scaled, then log space
        log_z, marg, pairs, triples = cseq.forward_backward(E, T * scale, None, None,
                                                            transitions2=T2 * scale)
        assert np.isfinite(log_z)
        np.testing.assert_allclose(marg.sum(axis=1), 1.0, atol=1e-9)
        np.testing.assert_allclose(triples.sum(axis=(1, 2, 3)), 1.0, atol=1e-9)
        # log Z is at least the best path's score and at most it plus n log L.
        _, best = cseq.viterbi(E, T * scale, transitions2=T2 * scale)
        assert best - 1e-6 * abs(best) <= log_z <= best + n * np.log(L) + 1e-6 * abs(best)


def test_empty_and_short_sequences():
    L = 3
    T2 = np.ones((L, L, L))
    lz, marg, pairs, triples = cseq.forward_backward(np.zeros((0, L)), np.zeros((L, L)),
                                                     transitions2=T2)
    assert lz == 0.0 and marg.shape == (0, L) and pairs.shape == (0, L, L)
    assert triples.shape == (0, L, L, L)
    path, score = cseq.viterbi(np.zeros((0, L)), np.zeros((L, L)), transitions2=T2)
    assert path.shape == (0,) and score == 0.0
    # One or two positions have no trigram: the trigram block changes nothing.
    for n in (1, 2):
        E = np.arange(n * L, dtype=float).reshape(n, L)
        assert cseq.viterbi(E, np.eye(L), transitions2=T2 * 100)[1] == \
            cseq.viterbi(E, np.eye(L))[1]
        got = cseq.forward_backward(E, np.eye(L), transitions2=T2 * 100)
        assert got[0] == pytest.approx(cseq.forward_backward(E, np.eye(L))[0], rel=1e-12)
        assert got[3].shape == (0, L, L, L)


@pytest.mark.parametrize("bad, error", [
    (np.zeros((2, 2)), InputError), (np.zeros((3, 3, 2)), InputError),
    (np.full((2, 2, 2), np.nan), InputError), (np.full((2, 2, 2), np.inf), InputError),
    ("trigrams", InputTypeError), (np.zeros((2, 2, 2), dtype=bool), InputTypeError),
])
@pytest.mark.parametrize("kernel", ["viterbi", "forward_backward", "loss_augmented_viterbi"])
def test_bad_transitions2_raise_cseq_errors(kernel, bad, error):
    E, T = np.zeros((3, 2)), np.zeros((2, 2))
    with pytest.raises(error, match="transitions2"):
        if kernel == "loss_augmented_viterbi":
            cseq.loss_augmented_viterbi(E, T, [0, 1, 0], transitions2=bad)
        else:
            getattr(cseq, kernel)(E, T, transitions2=bad)


# ---------------------------------------------------------------------------
# Packed corpora: the model's kernels with order 2

pack = functools.partial(pack_chain, order=2)


def test_order2_layout_and_views():
    _, corpus, model = pack([[["a"], ["b"], ["a"]]], [["P", "Q", "P"]])
    L = model.n_labels
    assert model.order == 2 and model.layout["order"] == 2
    assert len(model.params) == model.n_state + L * L + 2 * L + L ** 3
    model.params = np.arange(len(model.params), dtype=np.float64)
    T2 = trans2_of(model.params, model.n_state, L)
    np.testing.assert_array_equal(model.trans2, T2)
    assert model.trans2[1, 0, 1] == model.params[model.layout["trans2"] + (1 * L + 0) * L + 1]
    _, _, first = pack([[["a"]]], [["P"]], order=1)
    assert first.trans2 is None and first.order == 1


@examples(60)
@given(corpora(), st.booleans(), seeds, st.floats(-4, 4, allow_nan=False))
def test_order2_path_features_kernel_matches_naive_phi(Xy, all_states, seed, scale):
    _, corpus, model = pack(*Xy, all_states=all_states)
    paths = np.random.default_rng(seed).integers(0, model.n_labels, size=corpus.n_tokens)
    paths = paths.astype(np.int32)
    got = _chain.path_feature_counts(model.index, corpus.view(), paths, scale)
    want = np.zeros(len(model.params))
    for s in range(corpus.n_sequences):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        want += path_features(model.attr_ptr, model.attr_labels, model.n_labels, corpus, s,
                              paths[t0:t1], order=2)
    np.testing.assert_allclose(got, scale * want, rtol=1e-12, atol=1e-12)
    # The trigram counts are the number of positions t >= 2 of every sequence.
    n_tri = sum(max(int(b - a) - 2, 0) for a, b in zip(corpus.seq_ptr[:-1], corpus.seq_ptr[1:]))
    assert got[model.layout["trans2"]:].sum() == pytest.approx(scale * n_tri, abs=1e-9)


def expectations(model, corpus, params, n_jobs=1):
    chunks = work_chunks(corpus.seq_ptr, n_jobs)
    buffers = np.empty((len(chunks) - 1, len(params)))
    return _crf.crf_log_z_and_expectations(
        model.index, params, corpus.view(), chunks, buffers, n_jobs)


@examples(30)
@given(corpora(max_len=5), st.booleans(), seeds, st.floats(-1.0, 2.7))
def test_order2_expected_counts_match_brute_force(Xy, all_states, seed, log_scale):
    _, corpus, model = pack(*Xy, all_states=all_states)
    scale = 10.0 ** log_scale  # above ~60 the trigram steps need the log-space variant
    params = random_params(model, seed, scale)
    mag = 1.0 + scale * 80
    want = brute_expected_counts(params, model.attr_ptr, model.attr_labels, model.n_labels,
                                 corpus)
    want_lz = brute_log_z_sum(params, model.attr_ptr, model.attr_labels, model.n_labels, corpus)
    lz1, exp1 = expectations(model, corpus, params, n_jobs=1)
    assert lz1 == pytest.approx(want_lz, rel=0, abs=1e-10 * mag)
    np.testing.assert_allclose(exp1, want, rtol=0, atol=1e-9 + 1e-13 * mag)
    lz2, exp2 = expectations(model, corpus, params, n_jobs=2)
    assert lz2 == pytest.approx(lz1, rel=1e-12, abs=1e-12 * mag)
    np.testing.assert_allclose(exp2, exp1, rtol=1e-12, atol=1e-12)


@examples(30)
@given(corpora(max_len=5), seeds, st.sampled_from([0.3, 3.0, 300.0]))
def test_order2_decode_and_marginals_match_brute_force(Xy, seed, scale):
    _, corpus, model = pack(*Xy)
    model.params = random_params(model, seed, scale)
    L = model.n_labels
    _, T, start, end = split_params(model.params, model.n_state, L)
    T2 = trans2_of(model.params, model.n_state, L)
    decoded = model.decode(corpus, n_jobs=2)
    marginals = model.marginals(corpus, n_jobs=2)
    for s in range(corpus.n_sequences):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        if t1 == t0:
            continue
        E = sequence_emissions(model.params, model.attr_ptr, model.attr_labels, L, corpus, s)
        paths, scores = all_path_scores(E, T, start, end, T2)
        got = path_score(E, T, start, end, decoded[t0:t1], T2)
        assert got == pytest.approx(scores.max(), rel=1e-11, abs=1e-11)
        np.testing.assert_allclose(marginals[t0:t1], brute_marginals(E, T, start, end, T2),
                                   rtol=0, atol=1e-9)


@examples(30)
@given(corpora(max_len=4, max_labels=3), st.booleans(), st.sampled_from([0.0, 0.5]), seeds)
def test_order2_crf_objective_matches_enumeration_and_finite_differences(Xy, all_states, c2,
                                                                          seed):
    _, corpus, model = pack(*Xy, all_states=all_states)
    objective = CRFObjective(model, corpus, c2=c2, n_jobs=1)
    theta = random_params(model, seed, 0.7)
    value, grad = objective(theta)
    assert value == pytest.approx(naive_crf_objective(theta, model, corpus, c2), rel=1e-11,
                                  abs=1e-10)
    gold = np.zeros(len(theta))
    for s in range(corpus.n_sequences):
        t0, t1 = corpus.seq_ptr[s], corpus.seq_ptr[s + 1]
        gold += path_features(model.attr_ptr, model.attr_labels, model.n_labels, corpus, s,
                              corpus.labels[t0:t1], order=2)
    expected = brute_expected_counts(theta, model.attr_ptr, model.attr_labels, model.n_labels,
                                     corpus)
    np.testing.assert_allclose(grad, expected - gold + 2 * c2 * theta, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(grad, finite_difference_gradient(objective, theta), rtol=1e-5,
                               atol=1e-5)


@examples(20)
@given(corpora(max_seqs=4, max_len=4, max_labels=3), seeds)
def test_order2_sgd_epoch_matches_plain_steps(Xy, seed):
    from cseq.learners import _crf_sgd
    _, corpus, model = pack(*Xy)
    lam, t0 = 0.1, 10.0
    start = random_params(model, seed, 0.5)
    order = np.random.default_rng(seed).permutation(corpus.n_sequences).astype(np.int64)
    w = start.copy()
    loss, t = _crf_sgd.CRFSGDTrainer(model.index, corpus.view(), w).epoch(order, lam, t0, 0)
    ref, ref_loss = start.copy(), 0.0
    for i, s in enumerate(order):
        eta = 1.0 / (lam * (t0 + i))
        ref *= 1.0 - eta * lam
        value, grad = _crf.sequence_loss_and_gradient(
            model.index, ref, corpus.view(), int(s))
        ref_loss += value
        ref -= eta * grad
    assert loss == pytest.approx(ref_loss, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(w, ref, rtol=1e-9, atol=1e-12)


@examples(40)
@given(corpora(max_len=5, max_labels=3, values="dyadic"), st.integers(1, 3), st.data())
def test_order2_perceptron_matches_naive_after_every_step(Xy, epochs, data):
    _, corpus, model = pack(*Xy)
    params = _chain.AveragedParams(n_params=len(model.params))
    trainer = _perceptron.PerceptronTrainer(model.index, corpus.view(), params)
    naive = NaivePerceptron(model.attr_ptr, model.attr_labels, model.n_labels, corpus, order=2)
    for _ in range(epochs):
        for s in data.draw(st.permutations(range(corpus.n_sequences))):
            errors = trainer.train_epoch(np.array([s], dtype=np.int64))
            assert errors == naive.step(s)
            # Small dyadic values keep every score exact: identical weights.
            np.testing.assert_array_equal(params.w, naive.weights)
            np.testing.assert_allclose(params.averaged(), naive.averaged(), rtol=0, atol=1e-9)


@examples(30)
@given(corpora(max_len=4, max_labels=3), st.integers(1, 2), st.sampled_from([0.05, 1.0]),
       st.data())
def test_order2_pegasos_matches_naive_after_every_step(Xy, epochs, C, data):
    _, corpus, model = pack(*Xy)
    L = model.n_labels
    params = _chain.AveragedParams(n_params=len(model.params))
    trainer = _ssvm.SSVMTrainer(model.index, corpus.view(), params, C, None)
    naive = NaivePegasos(model.attr_ptr, model.attr_labels, L, corpus, C, None, order=2)
    for _ in range(epochs):
        for s in data.draw(st.permutations(range(corpus.n_sequences))):
            before = naive.weights
            _, loss = trainer.train_epoch(np.array([s], dtype=np.int64))
            pred = tuple(trainer.last_path().tolist())
            expected_loss, _ = brute_hinge(before, model.attr_ptr, model.attr_labels, L,
                                           corpus, s)
            size = 1.0 + float(np.abs(before).sum())
            assert loss == pytest.approx(expected_loss, rel=1e-9, abs=1e-9 * size)
            t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
            if t1 > t0:
                gold = [int(y) for y in corpus.labels[t0:t1]]
                phi = path_features(model.attr_ptr, model.attr_labels, L, corpus, s, pred, 2)
                phi_gold = path_features(model.attr_ptr, model.attr_labels, L, corpus, s, gold,
                                         2)
                got = float(before @ (phi - phi_gold)) + _cost_of(gold, pred, None)
                assert got == pytest.approx(expected_loss, rel=1e-9, abs=1e-9 * size)
            naive.step(s, pred)
            scale = 1.0 + float(np.abs(naive.weights).max())
            np.testing.assert_allclose(params.weights(), naive.weights, rtol=1e-9,
                                       atol=1e-9 * scale)
            np.testing.assert_allclose(params.averaged(), naive.averaged(), rtol=1e-9,
                                       atol=1e-9 * scale)
    total, _ = _ssvm.structured_hinge(model.index, params.weights(), corpus.view())
    want = sum(brute_hinge(params.weights(), model.attr_ptr, model.attr_labels, L, corpus, s)[0]
               for s in range(corpus.n_sequences))
    assert total == pytest.approx(want, rel=1e-9, abs=1e-9)


# ---------------------------------------------------------------------------
# Estimators


def two_back_data(n_seqs=16):
    """Label sequences where each label repeats the one two back: ``a b a b ...``, ``a a a ...``.

    The first two tokens name their labels (``A``, ``B``); the others are all
    ``w``.  A second-order chain fits this exactly (trigrams ``x y x``).  A
    first-order chain cannot: once ``y_1`` is fixed, the best continuation
    over identical tokens is the same whatever ``y_0`` is, but ``a b a b``
    and ``b b b b`` continue differently after the same ``b``.
    """
    X, y = [], []
    for k in range(n_seqs):
        first = ("a", "b")[k % 2], ("a", "b")[(k // 2) % 2]
        n = 3 + k % 5
        X.append([[first[0].upper()], [first[1].upper()]] + [["w"]] * (n - 2))
        y.append([first[t % 2] for t in range(n)])
    return X, y


#: Settings that learn the two-back data, per command; a command not named here is
#: tried with its quick settings (registered.quick).
_SETTINGS = {
    "perceptron": {"max_iter": 20, "random_state": 0},
    "ssvm": {"C": 10.0, "max_iter": 30, "random_state": 0},
    "crf": {"c2": 0.01, "max_iter": 100},
    "crf-sgd": {"c2": 0.01, "max_iter": 30, "random_state": 0},
}
#: Every registered learner that has second-order chains (an ``order`` parameter).
LEARNERS = {name: lambda order, name=name: quick(name, order=order, **_SETTINGS.get(name, {}))
            for name in commands(lambda command: "order" in command.estimator._param_names)}


@pytest.mark.parametrize("name", list(LEARNERS))
def test_second_order_learns_what_first_order_cannot(name):
    X, y = two_back_data()
    second = LEARNERS[name](2).fit(X, y)
    first = LEARNERS[name](1).fit(X, y)
    assert second.model_.order == 2 and first.model_.order == 1
    assert second.score(X, y) == 1.0
    assert first.score(X, y) < 1.0
    assert second.predict([[["B"], ["A"]] + [["w"]] * 4])[0] == list("bababa")


@pytest.mark.parametrize("name", list(LEARNERS))
def test_order2_estimators_predict_the_brute_force_argmax_and_round_trip(name, tmp_path):
    X = [[["x", "p"], ["y"], ["x"], ["z", "p"]], [["y"], ["x"], ["z"]], [["p"]], [["z"], ["y"]]]
    y = [["A", "B", "A", "C"], ["B", "A", "C"], ["C"], ["C", "B"]]
    est = LEARNERS[name](2).fit(X, y)
    model = est.model_
    assert model.order == 2 and model.trans2.shape == (3, 3, 3) and model.trans2.any()
    # Each prediction is an argmax of the model's second-order score.
    _, T, start, end = split_params(model.params, model.n_state, 3)
    corpus = est.featurizer_.transform(X)
    pred = est.predict(X)
    for s, labels in enumerate(pred):
        E = sequence_emissions(model.params, model.attr_ptr, model.attr_labels, 3, corpus, s)
        ids = [est.classes_.index(lab) for lab in labels]
        best = brute_viterbi(E, T, start, end, model.trans2)[0]
        assert path_score(E, T, start, end, ids, model.trans2) == pytest.approx(best, abs=1e-9)
    if hasattr(est, "predict_marginals"):
        for s, m in enumerate(est.predict_marginals(X)):
            E = sequence_emissions(model.params, model.attr_ptr, model.attr_labels, 3, corpus, s)
            np.testing.assert_allclose(m, brute_marginals(E, T, start, end, model.trans2),
                                       atol=1e-9)
    # The file stores the order; a load (and a pickle) predicts the same.
    path = tmp_path / "m.cseq"
    est.save(path)
    header = _split(path.read_bytes())[0]
    assert header["order"] == 2 and header["params"]["order"] == 2
    for loaded in (cseq.load(path), pickle.loads(pickle.dumps(est))):
        assert loaded.model_.order == 2 and loaded.order == 2
        np.testing.assert_array_equal(loaded.model_.params, model.params)
        assert loaded.predict(X) == pred
    assert "order=2" in repr(est)


def test_first_order_files_do_not_store_an_order():
    X, y = two_back_data(4)
    est = cseq.StructuredPerceptron(max_iter=2).fit(X, y)
    header = _split(est.to_bytes())[0]
    assert "order" not in header and header["params"]["order"] == 1
    assert serialize.loads(est.to_bytes()).model_.order == 1


@pytest.mark.parametrize("bad", [0, 3, -1, 1.5, "2", None, True, 2.0])
@pytest.mark.parametrize("cls", estimators(takes("order")), ids=lambda cls: cls.__name__)
def test_bad_orders_are_refused(cls, bad):
    X, y = two_back_data(3)
    with pytest.raises(InputError, match="order must be 1 or 2"):
        cls(order=bad).fit(X, y)


def test_learners_without_second_order_have_no_order_parameter():
    for cls in (cseq.MEMM, cseq.HMM, cseq.GreedyTagger):
        assert "order" not in cls().get_params()
        with pytest.raises(TypeError):
            cls(order=2)


# -- crafted model files ------------------------------------------------------------


def _split(data: bytes):
    _, _, head_len = serialize._PREFIX.unpack_from(data)
    start = serialize._PREFIX.size
    return json.loads(data[start:start + head_len]), data[start + head_len:-32]


def _build(header: dict, arrays: bytes) -> bytes:
    head = json.dumps(header, sort_keys=True).encode("ascii")
    body = serialize._PREFIX.pack(serialize.MAGIC, serialize.FORMAT_VERSION, len(head)) \
        + head + arrays
    return body + hashlib.sha256(body).digest()


@pytest.fixture(scope="module")
def files():
    X, y = two_back_data(4)
    second = cseq.StructuredPerceptron(max_iter=2, order=2).fit(X, y).to_bytes()
    first = cseq.StructuredPerceptron(max_iter=2).fit(X, y).to_bytes()
    memm = cseq.MEMM(max_iter=2).fit(X, y).to_bytes()
    return {"second": _split(second), "first": _split(first), "memm": _split(memm)}


@pytest.mark.parametrize("case", [
    "order 3", "order string", "order true", "order 2 on first-order params",
    "order 1 on second-order params", "params order disagrees", "memm with order 2",
])
def test_crafted_orders_are_model_format_errors(files, case):
    which = {"order 2 on first-order params": "first", "memm with order 2": "memm"}.get(
        case, "second")
    header, arrays = files[which]
    header = json.loads(json.dumps(header))
    if case == "order 3":
        header["order"] = 3
    elif case == "order string":
        header["order"] = "2"
    elif case == "order true":
        header["order"] = True
    elif case in ("order 2 on first-order params", "memm with order 2"):
        header["order"] = 2
        if case == "order 2 on first-order params":
            header["params"]["order"] = 2
    elif case == "order 1 on second-order params":
        del header["order"]
        header["params"]["order"] = 1
    else:
        header["params"]["order"] = 1
    with pytest.raises(ModelFormatError):
        serialize.loads(_build(header, arrays))
    # The untouched file loads.
    assert serialize.loads(_build(*files[which])).model_.n_labels == 2


# ---------------------------------------------------------------------------
# Command line


def _run(*args):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "cseq", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def test_cli_trains_second_order_and_info_shows_it(tmp_path):
    X, y = two_back_data(8)
    train = tmp_path / "train.txt"
    train.write_text("".join("".join(f"{tok[0]}\t{lab}\n" for tok, lab in zip(xs, labels)) + "\n"
                             for xs, labels in zip(X, y)))
    model = tmp_path / "m.cseq"
    r = _run("train", str(train), "--template", "pos", "--algorithm", "perceptron",
             "--order", "2", "--max-iter", "20", "-o", str(model), "--quiet")
    assert r.returncode == 0, r.stderr
    est = cseq.load(model)
    rows = [[(tok[0],) for tok in xs] for xs in X]
    assert est.order == 2 and est.model_.order == 2
    # The model the Python API trains with the same settings (the pos preset of
    # cseq train reads the shipped English classes).
    same = cseq.StructuredPerceptron(max_iter=20, order=2, random_state=0,
                                     features=cseq.TemplateFeaturizer("pos", clusters="en")
                                     ).fit(rows, y)
    np.testing.assert_array_equal(est.model_.params, same.model_.params)
    r = _run("info", str(model))
    assert r.returncode == 0, r.stderr
    assert "order: 2 (label bigrams and trigrams: 8 trigram weights)" in r.stdout
    assert "order=2" in r.stdout
    first = tmp_path / "m1.cseq"
    assert _run("train", str(train), "--template", "pos", "--algorithm", "ssvm",
                "-o", str(first), "--quiet").returncode == 0
    assert "order: 1 (label bigrams)" in _run("info", str(first)).stdout
    for algorithm in ("memm", "hmm", "greedy"):
        r = _run("train", str(train), "--algorithm", algorithm, "--order", "2",
                 "-o", str(tmp_path / "x.cseq"))
        assert r.returncode == 1 and f"--order does not apply to --algorithm {algorithm}" \
            in r.stderr, r.stderr
    r = _run("train", str(train), "--order", "3", "-o", str(tmp_path / "x.cseq"))
    assert r.returncode == 2 and "--order" in r.stderr
