"""The L-BFGS direction: ``cseq.learners._lbfgs.two_loop`` against the two-loop recursion in numpy.

    python bench/internals/lbfgs_direction.py                    # CoNLL-2000's CRF size, memory 6
    python bench/internals/lbfgs_direction.py --n 10000000 --memory 10
    python bench/internals/lbfgs_direction.py --fit ../shared/data   # + a real CRF fit's driver time
    PYTHONPATH=/path/to/older/checkout python bench/internals/lbfgs_direction.py --fit ../shared/data

Times (median of ``--repeat``) the direction ``-H g`` for ``--memory``
random correction pairs of ``--n`` parameters, by the compiled fused
recursion that ``cseq.learners.optimize`` uses and by the textbook recursion written
with numpy vector operations (what ``cseq.learners.optimize`` ran before, with
einsum dot products), and checks that both give the same direction.  The
default size is the chunk preset's CRF on CoNLL-2000 (425,187 parameters):
the direction is the driver's own work between two evaluations of an
L-BFGS fit, in-process and on a Dask cluster alike.  With ``--fit DATA``
it also fits the ``chunk`` CRF (c2 = 1, 20 iterations, ``n_jobs=2``) on
CoNLL-2000 and prints the median time between the end of one evaluation of
the objective and the start of the next: the optimizer's own work per
iteration; with ``PYTHONPATH`` pointing at a checkout from before
``cseq.learners._lbfgs`` (524884c), the same for the numpy recursion.  A measuring
tool: it asserts nothing.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`

import argparse

import numpy as np

from common.timing import times


def numpy_two_loop(g: np.ndarray, pairs) -> np.ndarray:
    """The two-loop recursion as separate numpy vector operations."""
    q = g.copy()
    alphas = []
    for s, y, rho in reversed(pairs):
        a = rho * float(np.einsum("i,i->", s, q))
        alphas.append(a)
        q -= a * y
    s, y, rho = pairs[-1]
    q *= 1.0 / (rho * float(np.einsum("i,i->", y, y)))
    for (s, y, rho), a in zip(pairs, reversed(alphas)):
        b = rho * float(np.einsum("i,i->", y, q))
        q += (a - b) * s
    q *= -1.0
    return q


def median_ms(fn, repeat: int) -> float:
    return 1e3 * float(np.median(times(fn, repeat)))


def driver_seconds(data: str) -> tuple[float, float]:
    """Median seconds between two evaluations, and per evaluation, of a CRF fit on CoNLL-2000."""
    import time
    import warnings

    import cseq
    from cseq.learners.objectives import CRFObjective
    from cseq.templates import TemplateFeaturizer
    from learners import load_task

    Xtr, ytr, *_ = load_task("conll2000", data)
    spans = []
    real_call = CRFObjective.__call__

    def timed_call(self, theta):
        t = time.perf_counter()
        out = real_call(self, theta)
        spans.append((t, time.perf_counter()))
        return out
    CRFObjective.__call__ = timed_call
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cseq.ConvergenceWarning)
            cseq.CRF(c2=1.0, max_iter=20, tol=0.0, n_jobs=2,
                     features=TemplateFeaturizer("chunk")).fit(Xtr, ytr)
    finally:
        CRFObjective.__call__ = real_call
    gaps = [b[0] - a[1] for a, b in zip(spans, spans[1:])]
    return float(np.median(gaps)), float(np.median([b - a for a, b in spans]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=425_187, help="parameters (default: CoNLL-2000's CRF)")
    ap.add_argument("--memory", type=int, default=6, help="correction pairs (cseq's default 6)")
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--fit", metavar="DATA", help="also time a CRF fit's driver work "
                    "(the folder holding conll2000/)")
    args = ap.parse_args()
    try:
        from cseq.learners._lbfgs import two_loop
    except ImportError:  # a checkout from before cseq.learners._lbfgs: --fit alone
        print("this cseq has no cseq.learners._lbfgs (numpy L-BFGS): direction not compared")
    else:
        rng = np.random.default_rng(0)
        pairs = []
        for _ in range(args.memory):
            s = rng.normal(size=args.n)
            y = s * rng.uniform(0.5, 2.0, args.n)
            pairs.append((s, y, 1.0 / float(y @ s)))
        g = rng.normal(size=args.n)
        a, b = numpy_two_loop(g, pairs), two_loop(g, pairs)
        err = float(np.abs(a - b).max() / np.abs(a).max())
        t_np = median_ms(lambda: numpy_two_loop(g, pairs), args.repeat)
        t_c = median_ms(lambda: two_loop(g, pairs), args.repeat)
        print(f"n = {args.n:,} parameters, memory {args.memory}: numpy {t_np:.2f} ms, "
              f"cseq.learners._lbfgs {t_c:.2f} ms ({t_np / t_c:.2f}x); max relative difference {err:.1e}")
    if args.fit:
        gap, evaluation = driver_seconds(args.fit)
        print(f"CRF fit on CoNLL-2000 (chunk preset, n_jobs=2, 20 iterations): "
              f"{1e3 * gap:.1f} ms between two evaluations (the optimizer's work), "
              f"{1e3 * evaluation:.1f} ms per evaluation")


if __name__ == "__main__":
    main()
