"""Cost-augmented Viterbi against enumeration, and the structured SVM."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cseq
from cseq import _decode
from cseq.exceptions import InputError, InputTypeError

from oracle import brute_loss_augmented, kernel_tie_break, path_score
from strategies import chains

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


@settings(max_examples=300, deadline=None, derandomize=True)
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


@contextlib.contextmanager
def viterbi_step(avx2: bool):
    if _decode._set_avx2(avx2) != avx2:
        _decode._set_avx2(True)
        pytest.skip("this CPU has no AVX2")
    try:
        yield
    finally:
        _decode._set_avx2(True)


@pytest.mark.parametrize("avx2", [False, True])
@settings(max_examples=200, deadline=None, derandomize=True)
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
