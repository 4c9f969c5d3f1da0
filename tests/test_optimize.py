"""cseq.optimize.lbfgs against known minima and against scipy's L-BFGS-B."""

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given
from hypothesis import strategies as st

from cseq.optimize import lbfgs

from budget import examples


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
