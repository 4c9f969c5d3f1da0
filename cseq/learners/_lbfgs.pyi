"""Type stubs for the compiled module :mod:`cseq.learners._lbfgs` (``_lbfgs.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

def two_loop(g: NDArray[np.float64],
             pairs: Iterable[tuple[NDArray[np.float64], NDArray[np.float64], float]],
             ) -> NDArray[np.float64]: ...
def moved(x: NDArray[np.float64], step: float, d: NDArray[np.float64]) -> NDArray[np.float64]: ...
def correction(x_new: NDArray[np.float64], x: NDArray[np.float64], g_new: NDArray[np.float64],
               g: NDArray[np.float64],
               ) -> tuple[NDArray[np.float64], NDArray[np.float64], float, float, float, float]: ...
