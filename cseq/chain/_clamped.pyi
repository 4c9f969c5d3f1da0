"""Type stubs for the compiled module :mod:`cseq.chain._clamped` (``_clamped.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray

from cseq.chain._chain import ChainIndex, CorpusView

def clamped_log_z_and_expectations(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
                                   seqs: NDArray[np.int64], chunks: NDArray[np.int64],
                                   grad_buffers: NDArray[np.float64],
                                   n_jobs: int) -> tuple[float, NDArray[np.float64]]: ...
def partial_sequence_loss_and_gradient(ix: ChainIndex, params: NDArray[np.float64],
                                       cv: CorpusView, s: int
                                       ) -> tuple[float, NDArray[np.float64]]: ...
