"""Dot products and norms of long float64 vectors, without BLAS threads.

numpy's ``a @ b`` (and ``np.linalg.norm``) on two long vectors calls the
BLAS, and OpenBLAS (in numpy's and scipy's wheels) runs a long ``ddot`` on
several threads, which then spin, waiting for more work, for a while after
it returns.  The objectives and optimizers make a few dot products per
evaluation between GIL-free passes over the corpus that use every core
(``n_jobs`` threads, or Dask workers on the same machine): the spinning
threads took those cores.  On CoNLL-2000, a CRF evaluation on a
``LocalCluster`` of two workers took 0.16 s with ``@`` on the driver and
0.115 s with this module (``bench/internals/dask_cluster.py``).  ``np.einsum`` sums
the products in numpy's own single-threaded loop.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["dot", "norm"]


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` of two 1-d float64 arrays, on this thread only."""
    return float(np.einsum("i,i->", a, b))


def norm(a: np.ndarray) -> float:
    """The Euclidean norm of a 1-d float64 array, on this thread only."""
    return math.sqrt(dot(a, a))
