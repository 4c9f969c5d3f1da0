"""The L-BFGS direction: ``cseq._lbfgs.two_loop`` against the two-loop recursion in numpy.

    python bench/lbfgs_direction.py                    # CoNLL-2000's CRF size, memory 6
    python bench/lbfgs_direction.py --n 10000000 --memory 10

Times (median of ``--repeat``) the direction ``-H g`` for ``--memory``
random correction pairs of ``--n`` parameters, by the compiled fused
recursion that ``cseq.optimize`` uses and by the textbook recursion written
with numpy vector operations (what ``cseq.optimize`` ran before, with
einsum dot products), and checks that both give the same direction.  The
default size is the chunk preset's CRF on CoNLL-2000 (425,187 parameters):
the direction is the driver's own work between two evaluations of an
L-BFGS fit, in-process and on a Dask cluster alike.  A measuring tool: it
asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np

from cseq._lbfgs import two_loop
from tagging import times


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=425_187, help="parameters (default: CoNLL-2000's CRF)")
    ap.add_argument("--memory", type=int, default=6, help="correction pairs (cseq's default 6)")
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
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
          f"cseq._lbfgs {t_c:.2f} ms ({t_np / t_c:.2f}x); max relative difference {err:.1e}")


if __name__ == "__main__":
    main()
