"""Training kernels against brute-force references: emissions, expected counts, the CRF
objective and its gradient, lazy perceptron averaging, and fits on tiny corpora."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.chain import _crf, _chain
from cseq.features import _pack
from cseq.chain import _labels
from cseq.learners import _perceptron
from cseq.exceptions import InputError
from cseq.features import FeatureVocabulary
from cseq.chain.model import LinearChain, work_chunks
from cseq.learners.objectives import CRFObjective
from cseq.chain.sequences import Sequences

from support.corpora import SEPARABLE_X, SEPARABLE_Y, word_corpus
from support.budget import examples
from support.oracle import (
    finite_difference_gradient,
    NaivePerceptron,
    brute_expected_counts,
    brute_log_z_sum,
    naive_crf_objective,
    naive_emissions,
    path_features,
    split_params,
)
from support.strategies import corpora
from support.packing import pack, random_params, single_sequence

# Quick fits here stop at max_iter on purpose; ConvergenceWarning itself is tested in
# test_crf_options.py.
pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

seeds = st.integers(0, 2**32 - 1)


def expectations(model, corpus, params, n_jobs=1, chunks=None):
    if chunks is None:
        chunks = work_chunks(corpus.seq_ptr, n_jobs)
    buffers = np.empty((len(chunks) - 1, len(params)))
    return _crf.crf_log_z_and_expectations(
        model.index, params, corpus.view(), chunks, buffers, n_jobs)


# ---------------------------------------------------------------------------
# Emissions


@examples(100)
@given(corpora(), st.booleans(), seeds, st.data())
def test_emissions_match_naive(Xy, all_states, seed, data):
    _, corpus, model = pack(*Xy, all_states=all_states)
    model.params = random_params(model, seed, 1.0)
    n_tok = corpus.n_tokens
    t0 = data.draw(st.integers(0, n_tok))
    t1 = data.draw(st.integers(t0, n_tok))
    args = (model.attr_ptr, model.attr_labels, model.state_weights, corpus.tok_ptr,
            corpus.attr_ids, corpus.values)
    got = _chain.score_corpus_emissions(model.index, model.params, corpus.view(), t0, t1)
    want = naive_emissions(*args, model.n_labels, t0, t1)
    assert got.shape == (t1 - t0, model.n_labels)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.emissions(corpus, t0, t1), want, rtol=1e-12, atol=1e-12)
    # every token of the corpus
    np.testing.assert_allclose(model.emissions(corpus, 0, n_tok),
                               naive_emissions(*args, model.n_labels), rtol=1e-12, atol=1e-12)


@examples(60)
@given(corpora(), st.booleans(), seeds, st.floats(-4, 4, allow_nan=False))
def test_path_features_kernel_matches_naive_phi(Xy, all_states, seed, scale):
    """The one path-features kernel against the oracle's Phi, on arbitrary label paths."""
    _, corpus, model = pack(*Xy, all_states=all_states)
    rng = np.random.default_rng(seed)
    paths = rng.integers(0, model.n_labels, size=corpus.n_tokens).astype(np.int32)
    got = _chain.path_feature_counts(model.index, corpus.view(), paths, scale)
    want = np.zeros(len(model.params))
    for s in range(corpus.n_sequences):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        want += path_features(model.attr_ptr, model.attr_labels, model.n_labels, corpus, s,
                              paths[t0:t1])
    np.testing.assert_allclose(got, scale * want, rtol=1e-12, atol=1e-12)
    # With the gold labels it is the CRF's empirical count.
    np.testing.assert_allclose(model.path_features(corpus),
                               _chain.path_feature_counts(model.index, corpus.view(),
                                                            corpus.labels), rtol=0, atol=0)
    with pytest.raises(ValueError, match="one label per token"):
        _chain.path_feature_counts(model.index, corpus.view(), paths[:-1] if len(paths)
                                     else np.zeros(1, dtype=np.int32))


@pytest.mark.parametrize("order", [1, 2])
def test_param_layout_places_blocks_back_to_back(order):
    n_state, L = 7, 3
    lay = _chain.param_layout(n_state, L, order)
    assert (lay["n_state"], lay["trans"], lay["start"], lay["end"], lay["trans2"]) == \
        (7, 7, 16, 19, 22)
    assert lay["n_params"] == 22 + (27 if order == 2 else 0)
    assert (lay["n_labels"], lay["order"]) == (L, order)
    for bad in ((n_state, 0, 1), (n_state, L, 3), (-1, L, 1)):
        with pytest.raises(ValueError):
            _chain.param_layout(*bad)


def test_linear_chain_views_follow_the_layout():
    X, y = [[["a"], ["b"]]], [["P", "Q"]]
    _, corpus, model = pack(X, y)
    model.params = np.arange(len(model.params), dtype=np.float64)
    _, T, start, end = split_params(model.params, model.n_state, model.n_labels)
    np.testing.assert_array_equal(model.transitions, T)
    np.testing.assert_array_equal(model.start, start)
    np.testing.assert_array_equal(model.end, end)


def test_averaged_params_refuses_mismatched_arrays():
    with pytest.raises(ValueError):
        _chain.AveragedParams(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError):
        _chain.AveragedParams(np.zeros(3, dtype=np.float32))
    p = _chain.AveragedParams(n_params=2)
    assert p.averaged().tolist() == [0.0, 0.0] and p.n_examples == 0


def test_state_index_holds_exactly_the_seen_pairs():
    X = [[["a", "b"], ["a"]], [["c"], ["a", "c"]]]
    y = [["P", "Q"], ["Q", "P"]]
    fv, corpus, model = pack(X, y)
    names = fv.attribute_names()
    pairs = set()
    for a in range(model.n_attributes):
        labs = model.attr_labels[model.attr_ptr[a]:model.attr_ptr[a + 1]].tolist()
        assert labs == sorted(set(labs))
        pairs |= {(names[a], lab) for lab in labs}
    # label ids follow first appearance in pack_labels: P=0, Q=1
    assert pairs == {("a", 0), ("a", 1), ("b", 0), ("c", 1), ("c", 0)}
    _, _, dense = pack(X, y, all_states=True)
    assert dense.n_state == dense.n_attributes * dense.n_labels == 6


# ---------------------------------------------------------------------------
# Expected counts and log Z


@examples(40)
@given(corpora(max_len=5), st.booleans(), seeds, st.floats(-1.0, 2.7))
def test_expected_counts_match_brute_force(Xy, all_states, seed, log_scale):
    _, corpus, model = pack(*Xy, all_states=all_states)
    scale = 10.0 ** log_scale  # above ~125 the transitions need the log-space variant
    params = random_params(model, seed, scale)
    mag = 1.0 + scale * 50
    want = brute_expected_counts(params, model.attr_ptr, model.attr_labels, model.n_labels,
                                 corpus)
    want_lz = brute_log_z_sum(params, model.attr_ptr, model.attr_labels, model.n_labels, corpus)
    lz1, exp1 = expectations(model, corpus, params, n_jobs=1)
    assert lz1 == pytest.approx(want_lz, rel=0, abs=1e-10 * mag)
    np.testing.assert_allclose(exp1, want, rtol=0, atol=1e-9 + 1e-13 * mag)
    lz2, exp2 = expectations(model, corpus, params, n_jobs=2)
    assert lz2 == pytest.approx(lz1, rel=1e-12, abs=1e-12 * mag)
    np.testing.assert_allclose(exp2, exp1, rtol=1e-12, atol=1e-12)
    # The expected counts of start (end) labels sum to the number of non-empty sequences.
    n_state, L = model.n_state, model.n_labels
    n_nonempty = int(np.count_nonzero(np.diff(corpus.seq_ptr)))
    assert exp1[n_state + L * L:n_state + L * L + L].sum() == pytest.approx(n_nonempty)
    assert exp1[n_state:n_state + L * L].sum() == pytest.approx(corpus.n_tokens - n_nonempty)


@examples(40)
@given(corpora(max_seqs=6), seeds, st.integers(1, 9), st.data())
def test_expected_counts_do_not_depend_on_chunking(Xy, seed, n_chunks, data):
    _, corpus, model = pack(*Xy)
    params = random_params(model, seed, 1.0)
    lz, ref = expectations(model, corpus, params, n_jobs=1)
    chunks = work_chunks(corpus.seq_ptr, n_chunks)
    n_seq = corpus.n_sequences
    assert chunks.dtype == np.int64 and chunks[0] == 0 and chunks[-1] == n_seq
    assert np.all(np.diff(chunks) >= 0)
    assert len(chunks) - 1 == max(1, min(n_chunks, n_seq))
    for threads in (1, 2):
        lz_c, got = expectations(model, corpus, params, threads, chunks)
        assert lz_c == pytest.approx(lz, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    # Arbitrary boundaries, empty chunks included.
    cuts = sorted(data.draw(st.lists(st.integers(0, n_seq), max_size=4)))
    chunks = np.array([0, *cuts, n_seq], dtype=np.int64)
    lz_c, got = expectations(model, corpus, params, 2, chunks)
    assert lz_c == pytest.approx(lz, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_non_finite_log_z_names_the_sequence():
    X = [[["a"]], [["b"], ["a"]], [["c"]]]
    y = [["P"], ["P", "Q"], ["Q"]]
    fv, corpus, model = pack(X, y)
    params = np.zeros(len(model.params))
    c = fv.attribute_names().index("c")
    params[model.attr_ptr[c]] = 1e308
    corpus = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids,
                       np.full_like(corpus.values, 1e30), corpus.labels)
    with pytest.raises(FloatingPointError, match="sequence 2"):
        expectations(model, corpus, params)


# ---------------------------------------------------------------------------
# CRF objective and gradient


def brute_gradient(params, model, corpus, c2):
    L = model.n_labels
    gold = np.zeros(len(params))
    for s in range(corpus.n_sequences):
        t0, t1 = corpus.seq_ptr[s], corpus.seq_ptr[s + 1]
        gold += path_features(model.attr_ptr, model.attr_labels, L, corpus, s,
                              corpus.labels[t0:t1])
    expected = brute_expected_counts(params, model.attr_ptr, model.attr_labels, L, corpus)
    return expected - gold + 2 * c2 * params


@examples(30)
@given(corpora(max_len=4), st.booleans(), st.sampled_from([0.0, 0.5]), seeds)
def test_crf_objective_matches_enumeration_and_finite_differences(Xy, all_states, c2, seed):
    _, corpus, model = pack(*Xy, all_states=all_states)
    objective = CRFObjective(model, corpus, c2=c2, n_jobs=1)
    theta = random_params(model, seed, 0.7)
    theta_copy = theta.copy()
    value, grad = objective(theta)
    np.testing.assert_array_equal(theta, theta_copy)
    assert value == pytest.approx(naive_crf_objective(theta, model, corpus, c2), rel=1e-11,
                                  abs=1e-10)
    np.testing.assert_allclose(grad, brute_gradient(theta, model, corpus, c2), rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(grad, finite_difference_gradient(objective, theta), rtol=1e-5,
                               atol=1e-6)
    # Calling again gives the same answer (scratch buffers are reset).
    value2, grad2 = objective(theta)
    assert value2 == value
    np.testing.assert_array_equal(grad2, grad)
    # Two threads: equal up to rounding.
    value_2, grad_2 = CRFObjective(model, corpus, c2=c2, n_jobs=2)(theta)
    assert value_2 == pytest.approx(value, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(grad_2, grad, rtol=1e-12, atol=1e-12)


def test_crf_objective_at_zero_is_log_of_label_count():
    X = [[["a"], ["b"], ["a"]], [["b"]], []]
    y = [["P", "Q", "R"], ["R"], []]
    _, corpus, model = pack(X, y)
    value, grad = CRFObjective(model, corpus, c2=3.0)(np.zeros(len(model.params)))
    assert value == pytest.approx(4 * np.log(3))
    assert np.isfinite(grad).all()


# ---------------------------------------------------------------------------
# Perceptron: lazy averaging against storing every weight vector


class _Trainer:
    """A PerceptronTrainer with the weights it updates (``weights``, ``averaged()``)."""

    def __init__(self, model, corpus):
        self.params = _chain.AveragedParams(n_params=len(model.params))
        self.trainer = _perceptron.PerceptronTrainer(model.index, corpus.view(), self.params)

    def train_epoch(self, order):
        return self.trainer.train_epoch(order)

    @property
    def weights(self):
        return self.params.w.copy()

    @property
    def n_examples(self):
        return self.params.n_examples

    def averaged(self):
        return self.params.averaged()


def _trainer(model, corpus):
    return _Trainer(model, corpus)


@examples(40)
@given(corpora(max_len=5, values="dyadic"), st.booleans(), st.integers(1, 4), st.data())
def test_perceptron_matches_naive_after_every_step(Xy, all_states, epochs, data):
    _, corpus, model = pack(*Xy, all_states=all_states)
    trainer = _trainer(model, corpus)
    naive = NaivePerceptron(model.attr_ptr, model.attr_labels, model.n_labels, corpus)
    np.testing.assert_array_equal(trainer.averaged(), np.zeros(len(model.params)))
    snapshots = []
    for _ in range(epochs):
        order = data.draw(st.permutations(range(corpus.n_sequences)))
        for s in order:
            errors = trainer.train_epoch(np.array([s], dtype=np.int64))
            assert errors == naive.step(s)
            w = trainer.weights
            snapshots.append(w)
            # Small dyadic values keep every score exact: identical weights.
            np.testing.assert_array_equal(w, naive.weights)
            np.testing.assert_allclose(trainer.averaged(), np.mean(snapshots, axis=0),
                                       rtol=0, atol=1e-9)
            np.testing.assert_allclose(trainer.averaged(), naive.averaged(), rtol=0, atol=1e-9)
            assert trainer.n_examples == len(snapshots)


@examples(40)
@given(corpora(max_seqs=5, max_len=5), st.integers(1, 4), st.data())
def test_lazy_average_equals_naive_average_with_float_values(Xy, epochs, data):
    _, corpus, model = pack(*Xy)
    trainer = _trainer(model, corpus)
    snapshots = []
    for _ in range(epochs):
        order = data.draw(st.permutations(range(corpus.n_sequences)))
        for s in order:
            trainer.train_epoch(np.array([s], dtype=np.int64))
            snapshots.append(trainer.weights)
            np.testing.assert_allclose(trainer.averaged(), np.mean(snapshots, axis=0),
                                       rtol=0, atol=1e-9)


def test_trainer_continues_from_the_weights_it_receives():
    """Trainers own no weights: a second trainer on the same AveragedParams picks up exactly."""
    rng = np.random.default_rng(2)
    X, y = word_corpus(rng, 15)
    _, corpus, model = pack(X, y)
    order = rng.permutation(corpus.n_sequences).astype(np.int64)
    one = _chain.AveragedParams(n_params=len(model.params))
    trainer = _perceptron.PerceptronTrainer(model.index, corpus.view(), one)
    trainer.train_epoch(order)
    trainer.train_epoch(order)
    two = _chain.AveragedParams(n_params=len(model.params))
    _perceptron.PerceptronTrainer(model.index, corpus.view(), two).train_epoch(order)
    resumed = _chain.AveragedParams(two.w.copy(), two.u.copy(), two.n_examples)
    _perceptron.PerceptronTrainer(model.index, corpus.view(), resumed).train_epoch(order)
    np.testing.assert_array_equal(resumed.w, one.w)
    np.testing.assert_array_equal(resumed.averaged(), one.averaged())
    assert resumed.n_examples == one.n_examples == 2 * corpus.n_sequences
    with pytest.raises(ValueError, match="weights"):
        _perceptron.PerceptronTrainer(model.index, corpus.view(), _chain.AveragedParams(n_params=3))


def test_whole_epoch_equals_one_sequence_at_a_time():
    rng = np.random.default_rng(1)
    X, y = word_corpus(rng, 20)
    _, corpus, model = pack(X, y)
    a, b = _trainer(model, corpus), _trainer(model, corpus)
    order = rng.permutation(corpus.n_sequences).astype(np.int64)
    for _ in range(3):
        errors = a.train_epoch(order)
        assert errors == sum(b.train_epoch(order[i:i + 1]) for i in range(len(order)))
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.averaged(), b.averaged())


# ---------------------------------------------------------------------------
# Fitting tiny corpora


def test_crf_fit_with_one_or_two_threads_agrees():
    rng = np.random.default_rng(2)
    X, y = word_corpus(rng, 80)
    one = cseq.CRF(c2=0.5, max_iter=40, n_jobs=1).fit(X, y)
    two = cseq.CRF(c2=0.5, max_iter=40, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(two.model_.params, one.model_.params, rtol=0, atol=1e-6)
    assert one.predict(X) == two.predict(X)
    assert one.predict(X, n_jobs=2) == one.predict(X)
    for a, b in zip(one.predict_marginals(X, n_jobs=2), one.predict_marginals(X)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


def _perceptron_pair(random_state):
    rng = np.random.default_rng(3)
    X, y = word_corpus(rng, 40)
    a = cseq.StructuredPerceptron(max_iter=5, random_state=random_state).fit(X, y)
    b = cseq.StructuredPerceptron(max_iter=5, random_state=random_state).fit(X, y)
    return a, b


def test_same_random_state_gives_bitwise_equal_perceptron():
    a, b = _perceptron_pair(123)
    assert a.model_.params.tobytes() == b.model_.params.tobytes()
    np.testing.assert_array_equal(a.model_.attr_ptr, b.model_.attr_ptr)
    np.testing.assert_array_equal(a.model_.attr_labels, b.model_.attr_labels)
    # A different seed visits the sequences in another order.
    c = cseq.StructuredPerceptron(max_iter=5, random_state=124).fit(*word_corpus(
        np.random.default_rng(3), 40))
    assert c.model_.params.tobytes() != a.model_.params.tobytes()


def test_same_random_state_gives_identical_model_bytes():
    a, b = _perceptron_pair(123)
    assert a.to_bytes() == b.to_bytes()


# ---------------------------------------------------------------------------
# Many sequences of different lengths at once equal one sequence at a time


@examples(60)
@given(corpora(max_seqs=6, max_len=6), st.booleans(), seeds, st.floats(-1.0, 2.7))
def test_multi_sequence_results_equal_per_sequence_results(Xy, all_states, seed, log_scale):
    _, corpus, model = pack(*Xy, all_states=all_states)
    model.params = random_params(model, seed, 10.0 ** log_scale)
    _, T, start, end = split_params(model.params, model.n_state, model.n_labels)
    paths = model.decode(corpus)
    marg = model.marginals(corpus)
    assert paths.shape == (corpus.n_tokens,) and marg.shape == (corpus.n_tokens, model.n_labels)
    lz_all, exp_all = expectations(model, corpus, model.params)
    objective_all = CRFObjective(model, corpus, c2=0.0)(model.params)
    lz_sum, exp_sum, value_sum = 0.0, np.zeros(len(model.params)), 0.0
    grad_sum = np.zeros(len(model.params))
    for s in range(corpus.n_sequences):
        t0, t1 = corpus.seq_ptr[s], corpus.seq_ptr[s + 1]
        one = single_sequence(corpus, s)
        np.testing.assert_array_equal(model.decode(one), paths[t0:t1])
        np.testing.assert_allclose(model.marginals(one), marg[t0:t1], rtol=0, atol=1e-12)
        E = model.emissions(corpus, t0, t1)
        np.testing.assert_array_equal(model.emissions(one, 0, t1 - t0), E)
        path, _ = cseq.viterbi(E, T, start, end)
        np.testing.assert_array_equal(path, paths[t0:t1])
        if t1 > t0:
            _, m, _ = cseq.forward_backward(E, T, start, end)
            np.testing.assert_allclose(m, marg[t0:t1], rtol=0, atol=1e-12)
        lz, ex = expectations(model, one, model.params)
        lz_sum += lz
        exp_sum += ex
        v, g = CRFObjective(model, one, c2=0.0)(model.params)
        value_sum += v
        grad_sum += g
    tol = 1e-12 * (1.0 + abs(lz_all))
    assert lz_all == pytest.approx(lz_sum, rel=0, abs=tol)
    np.testing.assert_allclose(exp_all, exp_sum, rtol=1e-12, atol=1e-12)
    assert objective_all[0] == pytest.approx(value_sum, rel=1e-12, abs=tol)
    np.testing.assert_allclose(objective_all[1], grad_sum, rtol=1e-12, atol=1e-9)


@examples(15)
@given(corpora(max_seqs=5, max_len=5))
def test_estimators_predict_batches_like_single_sequences(Xy):
    X, y = Xy
    for est in (cseq.CRF(c2=0.1, max_iter=20), cseq.StructuredPerceptron(max_iter=3,
                                                                         random_state=0)):
        est.fit(X, y)
        batch = est.predict(X)
        assert [len(p) for p in batch] == [len(x) for x in X]
        assert batch == [est.predict([x])[0] for x in X]
        assert batch == [est.predict([x, x])[1] for x in X]
    crf = cseq.CRF(c2=0.1, max_iter=20).fit(X, y)
    batch = crf.predict_marginals(X)
    for x, m in zip(X, batch):
        np.testing.assert_allclose(crf.predict_marginals([x])[0], m, rtol=0, atol=1e-13)


@pytest.mark.slow
def test_crf_objective_on_a_million_token_sequence_stays_finite_and_consistent():
    """The CRF objective over one 10^6-token sequence, weights up to +-10^6."""
    rng = np.random.default_rng(7)
    n, L = 1_000_000, 3
    words = rng.integers(0, 50, size=n)
    X = [[[f"w={w}", f"b={w % 7}"] for w in words.tolist()]]
    y = [[f"L{v}" for v in rng.integers(0, L, size=n).tolist()]]
    features = FeatureVocabulary()
    corpus = features.fit_transform(X)
    label_ids: dict[str, int] = {}
    labels = _labels.pack_labels(y, corpus.seq_ptr, label_ids, True)
    corpus = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values, labels)
    model = LinearChain.from_corpus(corpus, features.n_attributes, L)
    for scale in (1.0, 1e6):
        theta = rng.uniform(-scale, scale, size=len(model.params))
        value, grad = CRFObjective(model, corpus, c2=0.0)(theta)
        assert np.isfinite(value) and np.isfinite(grad).all()
        assert value >= -1e-6 * abs(value)  # -log p(gold) >= 0
        # Expected counts: each position's marginals sum to one.
        expected = grad + CRFObjective(model, corpus, c2=0.0).empirical
        n_state = model.n_state
        assert expected[n_state:n_state + L * L].sum() == pytest.approx(n - 1, rel=1e-9)
        assert expected[n_state + L * L:n_state + L * L + L].sum() == pytest.approx(1.0, abs=1e-9)
        assert expected[-L:].sum() == pytest.approx(1.0, abs=1e-9)


def test_from_corpus_and_the_objective_validate_ids_and_labels():
    # Reachable from Python: out-of-range ids or a corpus without labels
    # wrote out of bounds in build_state_index.
    feats = [[["a"], ["b"]], [["a"]]]
    table = _pack.StringTable()
    seq_ptr, tok_ptr, attr_ids, values = _pack.pack_features(feats, table, True)
    labels = np.array([0, 1, 0], dtype=np.int32)
    corpus = Sequences(seq_ptr, tok_ptr, attr_ids, values, labels)
    unlabeled = Sequences(seq_ptr, tok_ptr, attr_ids, values)
    with pytest.raises(InputError, match="attribute id 1 but n_attrs is 1"):
        LinearChain.from_corpus(corpus, 1, 2)
    with pytest.raises(InputError, match="label id 1 but n_labels is 1"):
        LinearChain.from_corpus(corpus, 2, 1)
    with pytest.raises(InputError, match="labeled corpus"):
        LinearChain.from_corpus(unlabeled, 2, 2)
    with pytest.raises(InputError, match="n_labels"):
        LinearChain.from_corpus(corpus, 2, 0)
    with pytest.raises(InputError, match="n_attrs"):
        LinearChain.from_corpus(corpus, -1, 2)
    model = LinearChain.from_corpus(corpus, 2, 2)
    assert model.n_attributes == 2 and model.n_labels == 2
    assert LinearChain.from_corpus(unlabeled, 2, 2, all_states=True).n_state == 4
    # The objective checks the corpus against the model.
    with pytest.raises(InputError, match="labeled corpus"):
        CRFObjective(model, unlabeled)
    wide = Sequences(seq_ptr, tok_ptr, attr_ids + 5, values, labels)
    with pytest.raises(InputError, match="attribute id"):
        CRFObjective(model, wide)
    tall = Sequences(seq_ptr, tok_ptr, attr_ids, values, labels + 3)
    with pytest.raises(InputError, match="label id"):
        CRFObjective(model, tall)



@pytest.mark.parametrize("estimator", [
    cseq.CRF(c2=1e-3, max_iter=300),
    cseq.CRF(c2=1e-3, max_iter=300, all_states=True),
    cseq.StructuredPerceptron(max_iter=50, random_state=0),
    cseq.StructuredPerceptron(max_iter=50, random_state=1, average=False),
    cseq.StructuredPerceptron(max_iter=50, shuffle=False),
], ids=repr)
def test_separable_corpus_is_learned(estimator):
    est = estimator.fit(SEPARABLE_X, SEPARABLE_Y)
    assert est.score(SEPARABLE_X, SEPARABLE_Y) == 1.0
    assert est.predict(SEPARABLE_X) == SEPARABLE_Y
