"""Type stubs for the compiled module :mod:`cseq.learners._memm` (``_memm.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray

from cseq.chain._chain import ChainIndex, CorpusView

def memm_objective(
    ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView, chunks: NDArray[np.int64],
    grad_buffers: NDArray[np.float64], n_jobs: int, with_grad: bool = True,
    per_sequence: NDArray[np.float64] | None = None,
) -> tuple[float, NDArray[np.float64] | None]: ...
def memm_decode(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
                chunks: NDArray[np.int64], n_jobs: int) -> NDArray[np.int32]: ...
def memm_marginals(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
                   chunks: NDArray[np.int64], n_jobs: int) -> NDArray[np.float64]: ...
def local_distributions(
    ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView, s: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]: ...
