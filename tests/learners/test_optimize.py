"""cseq.learners.optimize.lbfgs against known minima and against scipy's L-BFGS-B."""

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given
from hypothesis import strategies as st

from cseq.learners.optimize import lbfgs

from support.budget import examples


def quadratic(A, b):
    def fun(x):
        return 0.5 * float(x @ A @ x) - float(b @ x), A @ x - b
    return fun


@examples(40)
@given(n=st.integers(1, 30), seed=st.integers(0, 2**32 - 1), cond=st.floats(1.0, 1e4))
def test_strictly_convex_quadratic_reaches_the_minimum(n, seed, cond):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = Q @ np.diag(np.geomspace(1.0, cond, n)) @ Q.T
    b = rng.normal(size=n)
    # With memory >= n, L-BFGS behaves like BFGS: quick convergence is required.
    res = lbfgs(quadratic(A, b), np.zeros(n), max_iter=20 * n + 50, memory=n, gtol=1e-9)
    x_star = np.linalg.solve(A, b)
    f_star = quadratic(A, b)(x_star)[0]
    # Near the minimum f changes below its rounding: x is good to ~sqrt(eps * cond).
    assert res.fun <= f_star + 1e-10 * (1 + abs(f_star))
    np.testing.assert_allclose(res.x, x_star, atol=1e-6 * np.sqrt(cond))
    assert res.nfev >= res.nit


def test_rosenbrock_non_convex():
    def fun(x):
        a, b = x
        f = (1 - a) ** 2 + 100 * (b - a * a) ** 2
        g = np.array([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)])
        return f, g
    res = lbfgs(fun, np.array([-1.2, 1.0]), max_iter=500, gtol=1e-9)
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-5)


def test_matches_scipy_on_a_logistic_loss():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 15))
    y = (X @ rng.normal(size=15) + rng.normal(size=200) > 0) * 2.0 - 1.0

    def fun(w):
        z = y * (X @ w)
        f = float(np.logaddexp(0, -z).sum() + 0.5 * w @ w)
        g = -(X.T @ (y / (1 + np.exp(z)))) + w
        return f, g
    ours = lbfgs(fun, np.zeros(15), max_iter=500, gtol=1e-9)
    ref = scipy.optimize.minimize(fun, np.zeros(15), jac=True, method="L-BFGS-B",
                                  options={"gtol": 1e-10, "ftol": 0})
    assert ours.fun == pytest.approx(ref.fun, rel=1e-10)
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-5)


def test_callback_stops_and_counts():
    A, b = np.eye(3) * 2.0, np.ones(3)
    seen = []
    res = lbfgs(quadratic(A, b), np.full(3, 10.0), callback=lambda k, x, f: seen.append(k) or k == 1)
    assert seen == [1] and res.nit == 1 and "convergence test" in res.message


def test_start_at_the_minimum():
    res = lbfgs(quadratic(np.eye(2), np.zeros(2)), np.zeros(2))
    assert res.nit == 0 and res.nfev == 1


def test_line_search_failure_is_reported():
    # A gradient that lies: the direction is never a descent direction for f.
    res = lbfgs(lambda x: (float(x @ x), -x), np.ones(2), max_linesearch=5)
    assert "line search failed" in res.message
    np.testing.assert_array_equal(res.x, np.ones(2))


@pytest.mark.parametrize("l1", [0.0, 0.5])
def test_a_curvature_bound_lets_a_huge_l2_weight_converge(l1):
    # C2 * ||x||^2 - g.x with c2 = 1e100: the minimum is
    # g / (2 c2), about 1e-100 away, and a unit-length first step overshoots
    # it by more than the line search's 40 shrinks (at most 10x each) undo.
    # With the curvature bound 2 * c2 the first trial step lands on it.
    c2, g = 1e100, np.array([3.0, -4.0, 1.0])

    def fun(x):
        return float(c2 * (x @ x) - g @ x), 2.0 * c2 * x - g
    assert "line search failed" in lbfgs(fun, np.zeros(3), l1=l1).message
    res = lbfgs(fun, np.zeros(3), l1=l1, curvature=2.0 * c2)
    assert res.nit >= 1 and "line search failed" not in res.message
    want = np.sign(g) * np.maximum(np.abs(g) - l1, 0.0) / (2.0 * c2)
    np.testing.assert_allclose(res.x, want, rtol=1e-6, atol=0)


# -- OWL-QN: f(x) + l1 * ||x||_1 ---------------------------------------------


def _lasso_reference(A, b, lam):
    """The exact minimiser of 0.5 x'Ax - b'x + lam ||x||_1 (A positive definite).

    scipy's L-BFGS-B on the split x = u - v (u, v >= 0), a smooth bound-constrained
    problem, finds the support and the signs; the exact values then solve the
    optimality conditions on that support, A_SS x_S = b_S - lam sign(x_S), and
    the result is checked to satisfy every condition (|g_i| <= lam off the support).
    """
    n = len(b)

    def split(z):
        u, v = z[:n], z[n:]
        x = u - v
        g = A @ x - b
        return 0.5 * x @ A @ x - b @ x + lam * z.sum(), np.concatenate([g + lam, -g + lam])
    res = scipy.optimize.minimize(split, np.zeros(2 * n), jac=True, method="L-BFGS-B",
                                  bounds=[(0, None)] * (2 * n),
                                  options={"gtol": 1e-12, "ftol": 0, "maxiter": 10000})
    approx = res.x[:n] - res.x[n:]
    support = np.flatnonzero(np.abs(approx) > 1e-6)
    signs = np.sign(approx[support])
    x = np.zeros(n)
    x[support] = np.linalg.solve(A[np.ix_(support, support)], b[support] - lam * signs)
    g = A @ x - b
    off = np.setdiff1d(np.arange(n), support)
    assert np.all(np.sign(x[support]) == signs)
    assert np.all(np.abs(g[off]) <= lam * (1 + 1e-9))
    return x


@examples(30)
@given(n=st.integers(1, 25), seed=st.integers(0, 2**32 - 1), lam_scale=st.floats(0.05, 0.9))
def test_owlqn_finds_the_exact_lasso_minimum_with_exact_zeros(n, seed, lam_scale):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(n + 5, n))
    A = M.T @ M / (n + 5) + 0.1 * np.eye(n)
    b = rng.normal(size=n)
    lam = lam_scale * float(np.abs(b).max())  # below max|b|: not everything is zero
    ref = _lasso_reference(A, b, lam)
    res = lbfgs(quadratic(A, b), np.zeros(n), l1=lam, max_iter=2000, memory=10, gtol=1e-10)
    f_ref = quadratic(A, b)(ref)[0] + lam * np.abs(ref).sum()
    assert res.fun <= f_ref + 1e-9 * (1 + abs(f_ref))
    np.testing.assert_allclose(res.x, ref, atol=1e-5)
    # The zeros are exact zeros, and exactly the reference's.
    assert set(np.flatnonzero(res.x == 0.0)) == set(np.flatnonzero(ref == 0.0))


def test_owlqn_l1_logistic_loss_matches_a_bound_constrained_reference():
    rng = np.random.default_rng(7)
    n_feat = 30
    X = rng.normal(size=(150, n_feat))
    w_true = np.zeros(n_feat)
    w_true[:4] = [2.0, -1.5, 1.0, 0.5]
    y = (X @ w_true + 0.3 * rng.normal(size=150) > 0) * 2.0 - 1.0
    lam = 8.0

    def fun(w):
        z = y * (X @ w)
        return float(np.logaddexp(0, -z).sum()), -(X.T @ (y / (1 + np.exp(z))))

    def split(z):
        f, g = fun(z[:n_feat] - z[n_feat:])
        return f + lam * z.sum(), np.concatenate([g + lam, -g + lam])
    ref = scipy.optimize.minimize(split, np.zeros(2 * n_feat), jac=True, method="L-BFGS-B",
                                  bounds=[(0, None)] * (2 * n_feat),
                                  options={"gtol": 1e-12, "ftol": 0, "maxiter": 10000})
    ours = lbfgs(fun, np.zeros(n_feat), l1=lam, max_iter=1000, gtol=1e-9)
    assert ours.fun == pytest.approx(ref.fun, rel=1e-9)
    ref_x = ref.x[:n_feat] - ref.x[n_feat:]
    np.testing.assert_allclose(ours.x, ref_x, atol=1e-4)
    zeros = ours.x == 0.0
    assert 10 <= zeros.sum() < n_feat
    np.testing.assert_array_equal(zeros, np.abs(ref_x) < 1e-6)
    # Optimality: off the support the gradient is inside [-lam, lam].
    g = fun(ours.x)[1]
    assert np.all(np.abs(g[zeros]) <= lam + 1e-6)
    np.testing.assert_allclose(g[~zeros], -lam * np.sign(ours.x[~zeros]), atol=1e-5)


def test_pseudo_gradient_by_cases():
    from cseq.learners.optimize import pseudo_gradient
    x = np.array([1.0, -2.0, 0.0, 0.0, 0.0])
    g = np.array([0.5, 0.5, -3.0, 3.0, 0.2])
    # x != 0: g + l1 sign(x); at 0: the derivative of the descending side, or 0.
    np.testing.assert_array_equal(pseudo_gradient(x, g, 1.0), [1.5, -0.5, -2.0, 2.0, 0.0])


def test_owlqn_zero_is_optimal_when_l1_dominates():
    A, b = np.eye(3), np.array([0.5, -0.2, 0.1])
    res = lbfgs(quadratic(A, b), np.zeros(3), l1=1.0)
    assert res.nit == 0 and np.all(res.x == 0.0)


def test_l1_must_be_non_negative():
    with pytest.raises(ValueError):
        lbfgs(quadratic(np.eye(2), np.ones(2)), np.zeros(2), l1=-1.0)


# -- the two-loop recursion (cseq.learners._lbfgs) against the dense BFGS update ---------

def _dense_direction(g, pairs):
    """``-H g`` with ``H`` built explicitly: ``H0 = (s'y / y'y) I`` of the newest
    pair, then the BFGS inverse update ``H <- (I - rho s y') H (I - rho y s') + rho s s'``
    for each pair, oldest first (Nocedal and Wright 2006, eq. 6.17 and 7.20)."""
    n = len(g)
    s_new, y_new, _ = pairs[-1]
    H = (s_new @ y_new) / (y_new @ y_new) * np.eye(n)
    for s, y, rho in pairs:
        V = np.eye(n) - rho * np.outer(y, s)
        H = V.T @ H @ V + rho * np.outer(s, s)
    return -H @ g


@examples(60)
@given(n=st.integers(1, 25), k=st.integers(1, 7), seed=st.integers(0, 2**32 - 1))
def test_two_loop_is_the_dense_bfgs_direction(n, k, seed):
    from cseq.learners._lbfgs import two_loop
    rng = np.random.default_rng(seed)
    # Pairs from a symmetric positive definite curvature (y = A s), so y's > 0.
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = Q @ np.diag(rng.uniform(0.1, 10.0, n)) @ Q.T
    pairs = []
    for _ in range(k):
        s = rng.normal(size=n) * rng.uniform(0.01, 10.0)
        y = A @ s
        pairs.append((s, y, 1.0 / float(y @ s)))
    g = rng.normal(size=n)
    got = two_loop(g, pairs)
    want = _dense_direction(g, pairs)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10 * np.abs(want).max())
    assert got is not g and not np.shares_memory(got, g)


def test_two_loop_without_pairs_is_steepest_descent():
    from cseq.learners._lbfgs import two_loop
    g = np.array([1.5, -2.0, 0.0])
    np.testing.assert_array_equal(two_loop(g, []), -g)
    assert two_loop(np.zeros(0), [(np.zeros(0), np.zeros(0), 1.0)]).shape == (0,)


def test_two_loop_refuses_bad_pairs():
    from cseq.learners._lbfgs import two_loop
    g, s, y = np.ones(4), np.ones(4), 2 * np.ones(4)
    with pytest.raises(ValueError, match="length 4"):
        two_loop(g, [(s, np.ones(3), 0.125)])
    for rho in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="rho must be finite and positive"):
            two_loop(g, [(s, y, rho)])
    with pytest.raises(ValueError):  # float32: wrong buffer dtype
        two_loop(g, [(s.astype(np.float32), y, 0.125)])
    with pytest.raises(ValueError):  # not contiguous
        two_loop(g, [(np.ones(8)[::2], y, 0.125)])


def test_step_and_correction_kernels_match_numpy():
    from cseq.learners._lbfgs import correction, moved
    rng = np.random.default_rng(5)
    x, d, xn, g, gn = (rng.normal(size=101) for _ in range(5))
    np.testing.assert_allclose(moved(x, 0.25, d), x + 0.25 * d, rtol=1e-15)  # FMA may round once
    s, y, ys, yy, gg, xx = correction(xn, x, gn, g)
    np.testing.assert_array_equal(s, xn - x)
    np.testing.assert_array_equal(y, gn - g)
    for got, want in ((ys, y @ s), (yy, y @ y), (gg, gn @ gn), (xx, xn @ xn)):
        assert got == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="g_new has length 3"):
        correction(xn, x, gn[:3], g)
    with pytest.raises(ValueError, match="d has length 4"):
        moved(x, 1.0, d[:4])
