"""Cost-augmented Viterbi against enumeration, and the structured SVM."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cseq
from cseq.learners import _ssvm
from cseq.chain import _chain
from cseq.chain.mapping import gold_ids
from cseq.exceptions import InputError, InputTypeError
from cseq.chain.sequences import Sequences

from support.budget import examples
from support.corpora import word_corpus
from support.oracle import (NaivePegasos, brute_hinge, brute_loss_augmented, kernel_tie_break,
                    path_features, path_score)
from support.strategies import chains, corpora
from support.packing import pack, viterbi_step

# ---------------------------------------------------------------------------
# Cost-augmented Viterbi


def _cost_of(gold, path, cost):
    if cost is None:
        return float(sum(int(g != y) for g, y in zip(gold, path)))
    return float(sum(cost[g][y] for g, y in zip(gold, path)))


@st.composite
def cost_matrices(draw, L, elements):
    """None (Hamming) or an (L, L) non-negative matrix with a zero diagonal."""
    if draw(st.booleans()):
        return None
    C = draw(hnp.arrays(np.float64, (L, L), elements=elements))
    np.fill_diagonal(C, 0.0)
    return C


@examples(300)
@given(chains(max_n=5), st.data())
def test_loss_augmented_viterbi_matches_brute_force(chain, data):
    E, T, start, end = chain
    n, L = E.shape
    gold = data.draw(st.lists(st.integers(0, L - 1), min_size=n, max_size=n))
    scale = float(np.abs(E).max()) + 1.0
    cost = data.draw(cost_matrices(L, st.floats(0.0, 3.0).map(lambda c: c * scale)))
    path, score = cseq.loss_augmented_viterbi(E, T, gold, cost, start, end)
    assert path.dtype == np.int32 and path.shape == (n,)
    best, _ = brute_loss_augmented(E, T, start, end, gold, cost)
    mag = 1.0 + n * (scale * 4) + (n + 1) * max(
        float(np.abs(T).max()), *(0.0 if v is None else float(np.abs(v).max())
                                  for v in (start, end)))
    tol = 1e-11 * mag
    assert score == pytest.approx(best, abs=tol, rel=0)
    # The reported score is the augmented score of the returned path.
    got = path_score(E, T, start, end, path) + _cost_of(gold, path.tolist(), cost)
    assert got == pytest.approx(score, abs=tol, rel=0)


@pytest.mark.parametrize("avx2", [False, True])
@examples(200)
@given(st.integers(1, 4), st.integers(1, 6), st.data())
def test_loss_augmented_viterbi_ties_go_to_lower_label_ids(avx2, n, L, data):
    # Small integers keep every score exact, so ties are real ties (and frequent).
    ints = st.integers(-2, 2).map(float)
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=ints))
    T = data.draw(hnp.arrays(np.float64, (L, L), elements=ints))
    start = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    end = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    gold = data.draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, L - 1)))
    cost = data.draw(cost_matrices(L, st.integers(0, 3).map(float)))
    with viterbi_step(avx2):
        path, score = cseq.loss_augmented_viterbi(E, T, gold, cost, start, end)
    best, argmaxes = brute_loss_augmented(E, T, start, end, gold, cost)
    assert score == best
    assert tuple(path.tolist()) == kernel_tie_break(argmaxes)


def test_hamming_cost_turns_a_small_margin_into_a_violation():
    # The docstring example: gold [0, 1] scores 2.5, [0, 0] scores 2 plus a cost of 1.
    em = np.array([[2.0, 0.0], [0.0, 0.5]])
    assert cseq.viterbi(em, np.zeros((2, 2)))[0].tolist() == [0, 1]
    path, score = cseq.loss_augmented_viterbi(em, np.zeros((2, 2)), [0, 1])
    assert path.tolist() == [0, 0] and score == 3.0
    # A cost of 0.25 for that mistake keeps the gold path.
    cost = np.array([[0.0, 1.0], [0.25, 0.0]])
    path, score = cseq.loss_augmented_viterbi(em, np.zeros((2, 2)), [0, 1], cost)
    assert path.tolist() == [0, 1] and score == 2.5


def test_zero_cost_is_plain_viterbi():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n, L = int(rng.integers(1, 30)), int(rng.integers(1, 9))
        E, T = rng.normal(size=(n, L)), rng.normal(size=(L, L))
        s, e = rng.normal(size=L), rng.normal(size=L)
        gold = rng.integers(0, L, size=n)
        plain = cseq.viterbi(E, T, s, e)
        aug = cseq.loss_augmented_viterbi(E, T, gold, np.zeros((L, L)), s, e)
        assert plain[0].tolist() == aug[0].tolist() and plain[1] == aug[1]


def test_loss_augmented_viterbi_empty_and_inputs_untouched():
    path, score = cseq.loss_augmented_viterbi(np.zeros((0, 3)), np.zeros((3, 3)), [])
    assert path.tolist() == [] and score == 0.0
    E = np.arange(6.0).reshape(3, 2)
    before = E.copy()
    cseq.loss_augmented_viterbi(E, np.zeros((2, 2)), [1, 1, 0])
    np.testing.assert_array_equal(E, before)


@pytest.mark.parametrize("gold, cost, error, match", [
    ([0, 1], None, InputError, r"shape \(2,\).*\(3,\)"),
    ([0, 1, 2], None, InputError, r"gold\[2\] is 2"),
    ([0, -1, 0], None, InputError, r"gold\[1\] is -1"),
    ([0.0, 1.0, 0.0], None, InputTypeError, "integer"),
    ("abc", None, InputTypeError, "gold"),
    ([[0, 1, 0]], None, InputError, "shape"),
    ([0, 1, 0], np.zeros((3, 3)), InputError, "axis 0 must be 2"),
    ([0, 1, 0], np.array([[0.0, -1.0], [1.0, 0.0]]), InputError, "non-negative"),
    ([0, 1, 0], np.array([[0.0, 1.0], [1.0, 0.5]]), InputError, "zero diagonal"),
    ([0, 1, 0], np.array([[0.0, np.inf], [1.0, 0.0]]), InputError, "non-finite"),
    ([0, 1, 0], np.array([[0.0, np.nan], [1.0, 0.0]]), InputError, "non-finite"),
    ([0, 1, 0], np.array([[True, False], [False, True]]), InputTypeError, "real numbers"),
])
def test_loss_augmented_viterbi_bad_input(gold, cost, error, match):
    with pytest.raises(error, match=match):
        cseq.loss_augmented_viterbi(np.zeros((3, 2)), np.zeros((2, 2)), gold, cost)


# ---------------------------------------------------------------------------
# The structured hinge loss and the Pegasos trainer against enumeration


def random_cost(rng, L):
    if rng.random() < 0.4:
        return None
    C = rng.uniform(0.0, 3.0, size=(L, L))
    np.fill_diagonal(C, 0.0)
    return C


@examples(60)
@given(corpora(max_len=4, max_labels=3), st.booleans(), st.integers(0, 2**32 - 1),
       st.sampled_from([0.1, 1.0, 10.0]))
def test_structured_hinge_matches_enumeration(Xy, all_states, seed, scale):
    _, corpus, model = pack(*Xy, all_states=all_states)
    rng = np.random.default_rng(seed)
    params = rng.normal(size=len(model.params)) * scale
    cost = random_cost(rng, model.n_labels)
    total, violated = _ssvm.structured_hinge(model.index, params, corpus.view(), cost)
    expected, n_strict = 0.0, 0
    for s in range(corpus.n_sequences):
        loss, _ = brute_hinge(params, model.attr_ptr, model.attr_labels, model.n_labels,
                              corpus, s, cost)
        expected += loss
        n_strict += loss > 1e-9 * scale
    assert total == pytest.approx(expected, rel=1e-9, abs=1e-9 * scale)
    # A positive loss means the gold path lost; a zero one, that it tied or won.
    assert n_strict <= violated <= corpus.n_sequences


@examples(40)
@given(corpora(max_len=4, max_labels=3), st.integers(1, 3),
       st.sampled_from([0.05, 1.0, 20.0]), st.booleans(), st.data())
def test_pegasos_trainer_matches_naive_after_every_step(Xy, epochs, C, with_cost, data):
    _, corpus, model = pack(*Xy)
    L = model.n_labels
    cost = random_cost(np.random.default_rng(L), L) if with_cost else None
    params = _chain.AveragedParams(n_params=len(model.params))
    trainer = _ssvm.SSVMTrainer(model.index, corpus.view(), params, C, cost)
    naive = NaivePegasos(model.attr_ptr, model.attr_labels, L, corpus, C, cost)
    assert trainer.lam == pytest.approx(naive.lam, rel=1e-15)
    for _ in range(epochs):
        for s in data.draw(st.permutations(range(corpus.n_sequences))):
            before = naive.weights
            violations, loss = trainer.train_epoch(np.array([s], dtype=np.int64))
            pred = tuple(trainer.last_path().tolist())
            # The trainer's path is a cost-augmented argmax under the weights before the step.
            expected_loss, _ = brute_hinge(before, model.attr_ptr, model.attr_labels, L,
                                           corpus, s, cost)
            t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
            gold = tuple(int(y) for y in corpus.labels[t0:t1])
            size = 1.0 + float(np.abs(before).sum())
            if t1 > t0:
                phi = path_features(model.attr_ptr, model.attr_labels, L, corpus, s, pred)
                phi_gold = path_features(model.attr_ptr, model.attr_labels, L, corpus, s, gold)
                got = float(before @ (phi - phi_gold)) + sum(
                    (g != y) if cost is None else cost[g][y] for g, y in zip(gold, pred))
                assert got == pytest.approx(expected_loss, rel=1e-9, abs=1e-9 * size)
            assert loss == pytest.approx(expected_loss, rel=1e-9, abs=1e-9 * size)
            assert violations == int(pred != gold)
            naive.step(s, pred)
            scale = 1.0 + float(np.abs(naive.weights).max())
            np.testing.assert_allclose(params.weights(), naive.weights, rtol=1e-9,
                                       atol=1e-9 * scale)
            np.testing.assert_allclose(params.averaged(), naive.averaged(), rtol=1e-9,
                                       atol=1e-9 * scale)
            assert params.n_examples == len(naive.history)


@pytest.mark.parametrize("factor", [0.0, 0.25, 1e-6])
def test_scaling_the_weights_keeps_the_average(factor):
    rng = np.random.default_rng(0)
    w, u = rng.normal(size=7), rng.normal(size=7)
    # A scale just above the threshold, so that 0.25 and 1e-6 fold it into w.
    p = _chain.AveragedParams(w.copy(), u.copy(), 5, scale=2 * _chain.MIN_SCALE,
                                scale_sum=3.5, weight_sum=15.0)
    weights, average = p.weights(), p.averaged()
    p.scale_by(factor)
    np.testing.assert_allclose(p.weights(), factor * weights, rtol=1e-12, atol=0)
    np.testing.assert_allclose(p.averaged(), average, rtol=1e-12, atol=1e-300)
    if factor < 0.5:
        assert p.scale == 1.0  # folded (or reset, for 0)
    with pytest.raises(ValueError):
        p.scale_by(-1.0)


# ---------------------------------------------------------------------------
# The estimator


X_WORDS, Y_WORDS = word_corpus(np.random.default_rng(0), 60)


@pytest.mark.parametrize("C", [0.01, 0.1, 1.0])
def test_primal_objective_goes_down_on_a_small_corpus(C):
    est = cseq.StructuredSVM(C=C, max_iter=12, random_state=0).fit(X_WORDS, Y_WORDS)
    losses = [r["loss"] for r in est.history_]
    assert len(losses) == 12
    assert all(b <= a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < losses[0]
    # The recorded objective is that of the returned weights.
    c = est.featurizer_.transform(X_WORDS)
    gold = gold_ids(Y_WORDS, c, {name: i for i, name in enumerate(est.classes_)})
    corpus = Sequences(c.seq_ptr, c.tok_ptr, c.attr_ids, c.values, gold)
    w = est.model_.params
    hinge, _ = _ssvm.structured_hinge(est.model_.index, w, corpus.view())
    assert est.history_[-1]["hinge"] == pytest.approx(hinge, rel=1e-12)
    assert losses[-1] == pytest.approx(0.5 * float(w @ w) + C * hinge, rel=1e-12)


def test_separable_corpus_is_learned():
    from support.corpora import SEPARABLE_X, SEPARABLE_Y
    for est in (cseq.StructuredSVM(C=1.0, max_iter=50, random_state=0),
                cseq.StructuredSVM(C=10.0, max_iter=50, average=False, shuffle=False)):
        est.fit(SEPARABLE_X, SEPARABLE_Y)
        assert est.predict(SEPARABLE_X) == SEPARABLE_Y


def test_same_random_state_same_bytes_and_average_false_differs():
    a = cseq.StructuredSVM(max_iter=3, random_state=5).fit(X_WORDS, Y_WORDS)
    b = cseq.StructuredSVM(max_iter=3, random_state=5).fit(X_WORDS, Y_WORDS)
    assert a.to_bytes() == b.to_bytes()
    c = cseq.StructuredSVM(max_iter=3, random_state=5, average=False).fit(X_WORDS, Y_WORDS)
    assert not np.array_equal(a.model_.params, c.model_.params)


def test_cost_dict_is_the_matrix_it_names():
    # classes_ are sorted: A, B, C.  Predicting C where the gold is A costs 3, B for A 0.5.
    by_name = {"A": {"C": 3.0, "B": 0.5}, "C": {"A": 0}}
    matrix = np.array([[0.0, 0.5, 3.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    a = cseq.StructuredSVM(max_iter=3, random_state=1, cost=by_name).fit(X_WORDS, Y_WORDS)
    b = cseq.StructuredSVM(max_iter=3, random_state=1, cost=matrix).fit(X_WORDS, Y_WORDS)
    np.testing.assert_array_equal(a.cost_matrix(), matrix)
    np.testing.assert_array_equal(a.model_.params, b.model_.params)
    hamming = cseq.StructuredSVM(max_iter=3, random_state=1).fit(X_WORDS, Y_WORDS)
    assert hamming.cost_matrix() is None
    assert not np.array_equal(a.model_.params, hamming.model_.params)


@pytest.mark.parametrize("cost, match", [
    ({"A": {"D": 1.0}}, "'D'"),
    ({"Z": {"A": 1.0}}, "'Z'"),
    (np.zeros((2, 2)), r"\(3, 3\)"),
])
def test_cost_must_fit_the_labels(cost, match):
    with pytest.raises(InputError, match=match):
        cseq.StructuredSVM(max_iter=1, cost=cost).fit(X_WORDS, Y_WORDS)


@pytest.mark.parametrize("cost, match", [
    ([[0.0, 1.0, 1.0], [1.0, 0.0], [1.0, 1.0, 0.0]], r"rows differ in length \(3, 2, 3\)"),
    ([[0.0, 1.0], 1.0], r"rows differ in length \(2, a scalar\)"),
    ("hamming", "got str"),
    ([0.0, 1.0, 2.0], r"got list of shape \(3,\)"),
])
def test_a_cost_that_is_not_a_square_array_is_an_input_error(cost, match):
    # A ragged list used to escape as numpy's bare ValueError.
    with pytest.raises(InputError, match=match):
        cseq.StructuredSVM(max_iter=1, cost=cost).fit(X_WORDS, Y_WORDS)
    if "shape" not in match:  # cost_matrix reads the cost without fit's validation
        with pytest.raises(InputError, match=match):
            cseq.StructuredSVM(cost=cost).cost_matrix(["A", "B", "C"])


@pytest.mark.parametrize("cost", [{"A": {"B": True}}, {"A": [1.0]}, {1: {"B": 1.0}},
                                  {"A": {2: 1.0}}, {"A": {"B": "1"}}])
def test_cost_of_the_wrong_type(cost):
    with pytest.raises(InputTypeError):
        cseq.StructuredSVM(max_iter=1, cost=cost).fit(X_WORDS, Y_WORDS)


@pytest.mark.parametrize("cost", [np.array([[0.0, 0.5, 3.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]),
                                  {"A": {"B": 0.25}}])
def test_cost_round_trips_through_the_model_file(cost, tmp_path):
    est = cseq.StructuredSVM(max_iter=2, random_state=0, cost=cost).fit(X_WORDS, Y_WORDS)
    for loaded in (pickle.loads(pickle.dumps(est)), cseq.load(_saved(est, tmp_path))):
        assert type(loaded.cost) is type(cost)
        if isinstance(cost, dict):
            assert loaded.cost == cost
        else:
            np.testing.assert_array_equal(loaded.cost, cost)
        np.testing.assert_array_equal(loaded.cost_matrix(), est.cost_matrix())
        assert loaded.to_bytes() == est.to_bytes()
        assert loaded.predict(X_WORDS) == est.predict(X_WORDS)
        refit = loaded.fit(X_WORDS, Y_WORDS)
        np.testing.assert_array_equal(refit.model_.params, est.model_.params)


def _saved(est, tmp_path):
    path = tmp_path / "ssvm.cseq"
    est.save(path)
    return path


def test_templates_history_and_verbose(capsys):
    words = [["The", "dog", "runs"], ["A", "cat", "sleeps", "."], ["Dogs", "run"]]
    tags = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB", "PUNCT"], ["NOUN", "VERB"]]
    X = [[[w] for w in s] for s in words]
    est = cseq.StructuredSVM(max_iter=4, random_state=0, verbose=True,
                             features=cseq.TemplateFeaturizer(cseq.Templates.preset("pos")))
    est.fit(X, tags, X, tags)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and all("loss" in line and "dev acc" in line for line in lines)
    assert [r["iteration"] for r in est.history_] == [1, 2, 3, 4]
    assert all({"loss", "hinge", "violations", "seconds", "dev_accuracy"} <= set(r)
               for r in est.history_)
    assert est.predict(X) == tags
    loaded = pickle.loads(pickle.dumps(est))
    assert loaded.predict(X) == tags and type(loaded.features) is cseq.TemplateFeaturizer
