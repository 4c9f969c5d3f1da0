"""Type stubs for the compiled module :mod:`cseq.chain._nbest` (``_nbest.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray

def nbest_array(emissions: NDArray[np.float64], transitions: NDArray[np.float64],
                start: NDArray[np.float64], end: NDArray[np.float64], k: int,
                transitions2: NDArray[np.float64] | None = None,
                ) -> tuple[NDArray[np.int32], NDArray[np.float64]]: ...
