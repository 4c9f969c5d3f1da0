"""cseq.viterbi and cseq.forward_backward against brute-force enumeration and numpy references."""

from __future__ import annotations



import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cseq
from cseq.exceptions import CSeqError, InputError, InputTypeError

from support.budget import examples
from support.oracle import (
    all_path_scores,
    brute_log_z,
    brute_marginals,
    brute_pair_marginals,
    brute_viterbi,
    kernel_tie_break,
    path_score,
)
from support.strategies import chains
from support.packing import viterbi_step

SPREAD = 250.0  # cseq.chain._forward_backward.SCALED_MAX_SPREAD


def magnitude(E, T, start, end) -> float:
    """A bound on the absolute size of any path score (for tolerances)."""
    n = E.shape[0]
    side = max(np.abs(T).max(), 0.0 if start is None else np.abs(start).max(),
               0.0 if end is None else np.abs(end).max())
    return 1.0 + n * float(np.abs(E).max()) + (n + 1) * float(side)


def uses_log_space(T, start, end) -> bool:
    def spread(x):
        return 0.0 if x is None else float(np.ptp(x))
    return spread(T) > SPREAD or spread(start) > SPREAD or spread(end) > SPREAD


# ---------------------------------------------------------------------------
# Viterbi


@examples(300)
@given(chains())
def test_viterbi_matches_brute_force(chain):
    E, T, start, end = chain
    mag = magnitude(E, T, start, end)
    tol = 1e-11 * mag
    path, score = cseq.viterbi(E, T, start, end)
    assert path.dtype == np.int32 and path.shape == (E.shape[0],)
    assert isinstance(score, float)
    paths, scores = all_path_scores(E, T, start, end)
    best = float(scores.max())
    assert score == pytest.approx(best, abs=tol, rel=0)
    # The returned path is an argmax (ties, up to rounding, allowed) ...
    near_best = {tuple(p) for p, s in zip(paths.tolist(), scores) if s >= best - tol}
    assert tuple(path.tolist()) in near_best
    # ... and the score the kernel reports is the score of the path it returns.
    assert path_score(E, T, start, end, path) == pytest.approx(score, abs=tol, rel=0)


@examples(200)
@given(st.integers(1, 5), st.integers(1, 4), st.data())
def test_viterbi_ties_go_to_lower_label_ids(n, L, data):
    # Small integers keep every score exact, so ties are real ties.
    ints = st.integers(-2, 2).map(float)
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=ints))
    T = data.draw(hnp.arrays(np.float64, (L, L), elements=ints))
    start = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    end = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    path, score = cseq.viterbi(E, T, start, end)
    best, argmaxes = brute_viterbi(E, T, start, end)
    assert score == best
    assert tuple(path.tolist()) == kernel_tie_break(argmaxes)


@pytest.mark.parametrize("avx2", [False, True])
@examples(150)
@given(st.integers(1, 3), st.integers(1, 22), st.data())
def test_both_viterbi_steps_match_brute_force_with_ties(avx2, n, L, data):
    # L up to 22 covers every width of the AVX2 step's register groups (1 to 5
    # vectors, the last masked), and a group of 16 then the rest (L > 20).
    ints = st.integers(-2, 2).map(float)
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=ints))
    T = data.draw(hnp.arrays(np.float64, (L, L), elements=ints))
    start = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    end = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    with viterbi_step(avx2):
        path, score = cseq.viterbi(E, T, start, end)
    best, argmaxes = brute_viterbi(E, T, start, end)
    assert score == best
    assert tuple(path.tolist()) == kernel_tie_break(argmaxes)


@pytest.mark.parametrize("L", [1, 3, 4, 5, 17, 22, 50])
def test_avx2_and_scalar_viterbi_steps_agree_exactly(L):
    rng = np.random.default_rng(L)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        E, T = rng.normal(size=(n, L)), rng.normal(size=(L, L))
        start, end = rng.normal(size=L), rng.normal(size=L)
        T[rng.random((L, L)) < 0.3] = -1e3  # nearly forbidden transitions
        with viterbi_step(False):
            scalar = cseq.viterbi(E, T, start, end)
        with viterbi_step(True):
            vector = cseq.viterbi(E, T, start, end)
        assert scalar[0].tolist() == vector[0].tolist() and scalar[1] == vector[1]


def test_viterbi_all_tied_gives_label_zero_everywhere():
    path, score = cseq.viterbi(np.zeros((4, 3)), np.zeros((3, 3)))
    assert path.tolist() == [0, 0, 0, 0] and score == 0.0


def test_viterbi_docstring_example():
    path, score = cseq.viterbi(np.array([[1.0, 0.0], [0.0, 2.0]]), np.zeros((2, 2)))
    assert path.tolist() == [0, 1] and score == 3.0


# ---------------------------------------------------------------------------
# Forward-backward


@examples(300)
@given(chains())
def test_forward_backward_matches_brute_force(chain):
    E, T, start, end = chain
    n, L = E.shape
    mag = magnitude(E, T, start, end)
    log_z, marg, pairs = cseq.forward_backward(E, T, start, end)
    assert isinstance(log_z, float)
    assert marg.shape == (n, L) and pairs.shape == (n - 1, L, L)
    assert log_z == pytest.approx(brute_log_z(E, T, start, end), rel=0, abs=1e-10 * mag)
    atol = 1e-9 + 1e-13 * mag
    np.testing.assert_allclose(marg, brute_marginals(E, T, start, end), rtol=0, atol=atol)
    np.testing.assert_allclose(pairs, brute_pair_marginals(E, T, start, end), rtol=0, atol=atol)
    # In log space the marginals are exp(alpha + beta - log Z): the rounding of
    # those large sums is all that separates the row sums from 1.
    unit = 1e-12 + 1e-15 * mag
    np.testing.assert_allclose(marg.sum(axis=1), 1.0, rtol=0, atol=unit)
    assert (marg >= 0).all() and (marg <= 1 + unit).all()
    assert (pairs >= 0).all()
    np.testing.assert_allclose(pairs.sum(axis=2), marg[:-1], rtol=0, atol=atol)
    np.testing.assert_allclose(pairs.sum(axis=1), marg[1:], rtol=0, atol=atol)


@pytest.mark.parametrize("spread", [SPREAD - 1e-6, SPREAD, SPREAD + 1e-6, 2 * SPREAD])
@pytest.mark.parametrize("where", ["transitions", "start", "end"])
def test_forward_backward_both_sides_of_the_mode_switch(spread, where):
    rng = np.random.default_rng(7)
    n, L = 5, 3
    E = rng.normal(size=(n, L)) * 3
    T = rng.uniform(-1, 1, size=(L, L))
    start = rng.uniform(-1, 1, size=L)
    end = rng.uniform(-1, 1, size=L)
    target = {"transitions": T, "start": start, "end": end}[where]
    flat = target.reshape(-1)
    flat[0], flat[-1] = -spread / 2, spread / 2
    assert float(np.ptp(target)) == pytest.approx(spread)
    log_z, marg, pairs = cseq.forward_backward(E, T, start, end)
    assert log_z == pytest.approx(brute_log_z(E, T, start, end), rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(marg, brute_marginals(E, T, start, end), atol=1e-10, rtol=0)
    np.testing.assert_allclose(pairs, brute_pair_marginals(E, T, start, end), atol=1e-10, rtol=0)


@examples(50)
@given(chains(with_start_end=False))
def test_start_and_end_default_to_zeros(chain):
    E, T, _, _ = chain
    L = E.shape[1]
    zeros = np.zeros(L)
    lz0, m0, p0 = cseq.forward_backward(E, T)
    lz1, m1, p1 = cseq.forward_backward(E, T, zeros, zeros)
    assert lz0 == lz1
    np.testing.assert_array_equal(m0, m1)
    np.testing.assert_array_equal(p0, p1)
    path0, s0 = cseq.viterbi(E, T)
    path1, s1 = cseq.viterbi(E, T, start=zeros, end=zeros)
    assert s0 == s1 and path0.tolist() == path1.tolist()
    # Nonzero start/end scores do matter.
    bump = np.zeros(L)
    bump[0] = 1.0
    tol = 1e-10 * magnitude(E, T, bump, bump)
    assert cseq.forward_backward(E, T, bump, None)[0] == pytest.approx(
        brute_log_z(E, T, bump, None), abs=tol, rel=0)
    assert cseq.forward_backward(E, T, None, bump)[0] == pytest.approx(
        brute_log_z(E, T, None, bump), abs=tol, rel=0)


@pytest.mark.parametrize("L", [1, 3])
def test_empty_sequence_results(L):
    T = np.ones((L, L))
    path, score = cseq.viterbi(np.zeros((0, L)), T)
    assert path.dtype == np.int32 and path.shape == (0,) and score == 0.0
    log_z, marg, pairs = cseq.forward_backward(np.zeros((0, L)), T, np.ones(L), np.ones(L))
    assert log_z == 0.0
    assert marg.shape == (0, L) and pairs.shape == (0, L, L)


def test_single_label_chain():
    E = np.array([[1.0], [2.0], [-3.0]])
    T = np.array([[0.5]])
    log_z, marg, pairs = cseq.forward_backward(E, T, [1.0], [2.0])
    assert log_z == pytest.approx(1.0 + 0.5 * 2 + 1.0 + 2.0 - 3.0 + 2.0)
    np.testing.assert_allclose(marg, 1.0)
    np.testing.assert_allclose(pairs, 1.0)
    path, score = cseq.viterbi(E, T, [1.0], [2.0])
    assert path.tolist() == [0, 0, 0] and score == pytest.approx(log_z)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(6, 3)), rng.normal(size=(3, 3)), rng.normal(size=3),
              rng.normal(size=3)]
    copies = [a.copy() for a in arrays]
    cseq.forward_backward(*arrays)
    cseq.viterbi(*arrays)
    big = [a * 1e3 for a in arrays]  # the log-space variant
    big_copies = [a.copy() for a in big]
    cseq.forward_backward(*big)
    for a, c in zip(arrays + big, copies + big_copies):
        np.testing.assert_array_equal(a, c)


# ---------------------------------------------------------------------------
# Long sequences: finite and equal to numpy references


def numpy_log_forward_backward(E, T, start, end) -> tuple[float, np.ndarray]:
    """Log-space forward-backward in numpy; returns log Z and the (n, L) marginals.

    Each forward and backward vector is renormalised (its logsumexp
    subtracted) at every position, so the stored values stay as small as the
    scores themselves whatever the length, and the marginals keep full
    precision; log Z is the sum of the subtracted normalisers.
    """
    n, L = E.shape
    alpha = np.empty((n, L))
    norms = np.empty(n)
    x = start + E[0]
    for t in range(n):
        if t:
            x = np.logaddexp.reduce(alpha[t - 1][:, None] + T, axis=0) + E[t]
        norms[t] = np.logaddexp.reduce(x)
        alpha[t] = x - norms[t]
    log_z = float(np.sum(norms) + np.logaddexp.reduce(alpha[-1] + end))
    beta = np.empty((n, L))
    x = np.asarray(end, dtype=np.float64)
    for t in range(n - 1, -1, -1):
        if t < n - 1:
            x = np.logaddexp.reduce(T + (E[t + 1] + beta[t + 1])[None, :], axis=1)
        beta[t] = x - np.logaddexp.reduce(x)
    both = alpha + beta
    marg = np.exp(both - np.logaddexp.reduce(both, axis=1)[:, None])
    return log_z, marg


def numpy_max_plus(E, T, start, end) -> float:
    delta = start + E[0]
    for t in range(1, E.shape[0]):
        delta = np.max(delta[:, None] + T, axis=0) + E[t]
    return float(np.max(delta + end))


def numpy_path_score(E, T, start, end, path) -> float:
    path = np.asarray(path, dtype=np.int64)
    return float(start[path[0]] + E[np.arange(len(path)), path].sum()
                 + T[path[:-1], path[1:]].sum() + end[path[-1]])


LONG_CASES = [
    # (n, emission scale, transition/start/end scale): log-space and scaled modes
    (100_000, 1e4, 1e4),
    (100_000, 1e4, 1.0),
    (100_000, 10.0, 300.0),
    (30_000, 1.0, 1e4),
    (30_000, 1e-3, 1e-3),
    (30_000, 20.0, 100.0),
    # The reliability issue's bound: 10^6 tokens, scores up to +-10^6, both modes.
    pytest.param(1_000_000, 1e6, 1e6, marks=pytest.mark.slow),
    pytest.param(1_000_000, 1e6, 1.0, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("n, em_scale, tr_scale", LONG_CASES)
def test_long_sequences_stay_finite_and_exact(n, em_scale, tr_scale):
    rng = np.random.default_rng(int(n + em_scale + tr_scale))
    L = 5
    E = rng.uniform(-1, 1, size=(n, L)) * em_scale
    T = rng.uniform(-1, 1, size=(L, L)) * tr_scale
    start = rng.uniform(-1, 1, size=L) * tr_scale
    end = rng.uniform(-1, 1, size=L) * tr_scale
    assert uses_log_space(T, start, end) == (tr_scale > 200)
    log_z, marg, pairs = cseq.forward_backward(E, T, start, end)
    ref_log_z, ref_marg = numpy_log_forward_backward(E, T, start, end)
    assert np.isfinite(log_z)
    # Sums of 1e5 terms, accumulated in different orders: relative rounding ~1e-12.
    assert log_z == pytest.approx(ref_log_z, rel=1e-10, abs=1e-9)
    assert np.isfinite(marg).all() and np.isfinite(pairs).all()
    assert (marg >= 0).all() and (marg <= 1 + 1e-9).all()
    np.testing.assert_allclose(marg.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(marg, ref_marg, rtol=0, atol=1e-9)
    np.testing.assert_allclose(pairs.sum(axis=2), marg[:-1], rtol=0, atol=1e-9)
    path, score = cseq.viterbi(E, T, start, end)
    ref_best = numpy_max_plus(E, T, start, end)
    assert score == pytest.approx(ref_best, rel=1e-10, abs=1e-9)
    assert numpy_path_score(E, T, start, end, path) == pytest.approx(score, rel=1e-10, abs=1e-9)
    assert log_z >= score - 1e-10 * abs(score)


@pytest.mark.parametrize("scale", [1e100, 1e200])
def test_huge_finite_scores(scale):
    # Any finite scores: with gaps this large, log Z is the best path's score and
    # the marginals put all mass on it.
    rng = np.random.default_rng(11)
    n, L = 6, 3
    E = rng.uniform(-1, 1, size=(n, L)) * scale
    T = rng.uniform(-1, 1, size=(L, L)) * scale
    log_z, marg, pairs = cseq.forward_backward(E, T)
    path, score = cseq.viterbi(E, T)
    assert np.isfinite(log_z) and np.isfinite(score)
    assert log_z == pytest.approx(score, rel=1e-12)
    one_hot = np.zeros((n, L))
    one_hot[np.arange(n), path] = 1.0
    np.testing.assert_allclose(marg, one_hot, atol=1e-12)
    best, argmaxes = brute_viterbi(E, T)
    assert tuple(path.tolist()) in argmaxes and score == pytest.approx(best, rel=1e-12)


# ---------------------------------------------------------------------------
# Input validation


def _good(n=3, L=2):
    rng = np.random.default_rng(5)
    return rng.normal(size=(n, L)), rng.normal(size=(L, L)), rng.normal(size=L), rng.normal(size=L)


BAD_SHAPES = [
    ("emissions 1-d", lambda E, T, s, e: (E[0], T, s, e)),
    ("emissions 3-d", lambda E, T, s, e: (E[None], T, s, e)),
    ("emissions without labels",
     lambda E, T, s, e: (np.zeros((3, 0)), np.zeros((0, 0)), None, None)),
    ("transitions too small", lambda E, T, s, e: (E, T[:1], s, e)),
    ("transitions not square", lambda E, T, s, e: (E, np.zeros((2, 3)), s, e)),
    ("transitions 1-d", lambda E, T, s, e: (E, T.ravel(), s, e)),
    ("start too long", lambda E, T, s, e: (E, T, np.zeros(3), e)),
    ("end too short", lambda E, T, s, e: (E, T, s, np.zeros(1))),
    ("start 2-d", lambda E, T, s, e: (E, T, s[None], e)),
    ("end scalar", lambda E, T, s, e: (E, T, s, 1.0)),
]


@pytest.mark.parametrize("kernel", [cseq.viterbi, cseq.forward_backward])
@pytest.mark.parametrize("case", BAD_SHAPES, ids=[c[0] for c in BAD_SHAPES])
def test_wrong_shapes_raise_input_error(kernel, case):
    args = case[1](*_good())
    with pytest.raises(InputError):
        kernel(*args)


@pytest.mark.parametrize("kernel", [cseq.viterbi, cseq.forward_backward])
@pytest.mark.parametrize("which", range(4))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_raise_input_error(kernel, which, bad):
    args = list(_good())
    arr = args[which]
    arr.reshape(-1)[-1] = bad
    with pytest.raises(InputError, match="non-finite"):
        kernel(*args)


def _bad_dtype_arrays():
    E, T, s, e = _good()
    return {
        "bool": E > 0,
        "complex": E.astype(np.complex128),
        "object": E.astype(object),
        "str": E.astype(str),
        "bytes": E.astype(bytes),
    }


@pytest.mark.parametrize("kernel", [cseq.viterbi, cseq.forward_backward])
@pytest.mark.parametrize("which", range(4))
@pytest.mark.parametrize("kind", ["bool", "complex", "object", "str", "bytes"])
def test_bad_dtypes_raise_input_type_error(kernel, which, kind):
    args = list(_good())
    bad = _bad_dtype_arrays()[kind]
    if which == 1:
        bad = bad[:2, :2]
    elif which >= 2:
        bad = bad[0]
    args[which] = bad
    with pytest.raises(InputTypeError):
        kernel(*args)


@pytest.mark.parametrize("kernel", [cseq.viterbi, cseq.forward_backward])
@pytest.mark.parametrize("bad", [None, "abc", b"abc", [["a", "b"]], {"a": 1}])
def test_non_arrays_raise_cseq_errors(kernel, bad):
    E, T, s, e = _good()
    with pytest.raises(CSeqError) as info:
        kernel(bad, T, s, e)
    assert isinstance(info.value, (TypeError, ValueError))


def _assert_same_results(args, ref_args, exact=True):
    lz, m, p = cseq.forward_backward(*args)
    lz0, m0, p0 = cseq.forward_backward(*ref_args)
    path, score = cseq.viterbi(*args)
    path0, score0 = cseq.viterbi(*ref_args)
    if exact:
        assert lz == lz0 and score == score0
        np.testing.assert_array_equal(m, m0)
        np.testing.assert_array_equal(p, p0)
    else:
        assert lz == pytest.approx(lz0, rel=1e-12)
        np.testing.assert_allclose(m, m0, atol=1e-12)
        assert score == pytest.approx(score0, rel=1e-12)
    assert path.tolist() == path0.tolist()


def test_non_contiguous_inputs_work():
    rng = np.random.default_rng(9)
    big_E = rng.normal(size=(8, 6))
    big_T = rng.normal(size=(6, 6))
    big_s = rng.normal(size=6)
    E, T, s, e = big_E[::2, ::2], big_T[::2, ::2].T, big_s[::2], big_s[1::2]
    assert not E.flags.c_contiguous and not T.flags.c_contiguous and not s.flags.c_contiguous
    ref = [np.ascontiguousarray(a) for a in (E, T, s, e)]
    _assert_same_results((E, T, s, e), ref)
    fortran = [np.asfortranarray(a) for a in ref]
    _assert_same_results(fortran, ref)
    reversed_rows = big_E[::-1][:4, :3]
    _assert_same_results((reversed_rows, T, s, e),
                         (np.ascontiguousarray(reversed_rows), ref[1], ref[2], ref[3]))


def test_read_only_inputs_work():
    args = _good(5, 3)
    ref = [a.copy() for a in args]
    for a in args:
        a.setflags(write=False)
    _assert_same_results(args, ref)
    # memory-mapped style buffers: read-only views of bytes
    E = np.frombuffer(ref[0].tobytes(), dtype=np.float64).reshape(ref[0].shape)
    assert not E.flags.writeable
    _assert_same_results((E, *args[1:]), ref)


def test_float32_and_integer_inputs_work():
    E, T, s, e = _good(5, 3)
    f32 = [a.astype(np.float32) for a in (E, T, s, e)]
    _assert_same_results(f32, [a.astype(np.float64) for a in f32])
    ints = [np.round(a * 3).astype(dtype) for a, dtype in
            zip((E, T, s, e), (np.int64, np.int32, np.int16, np.int8))]
    _assert_same_results(ints, [a.astype(np.float64) for a in ints])
    uints = [np.abs(a).astype(np.uint8) for a in ints]
    _assert_same_results(uints, [a.astype(np.float64) for a in uints])
    lists = [a.tolist() for a in (E, T, s, e)]
    _assert_same_results(lists, (E, T, s, e))


@pytest.mark.parametrize("fn", [cseq.viterbi, cseq.forward_backward])
def test_public_kernels_have_an_explicit_label_bound(fn):
    from cseq.chain._chain import MAX_LABELS
    too_many = np.zeros((1, MAX_LABELS + 1))
    # refused before the (L, L) transitions are even looked at
    with pytest.raises(InputError, match=f"at most {MAX_LABELS:,} labels"):
        fn(too_many, np.zeros((1, 1)))
