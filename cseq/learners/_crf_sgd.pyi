"""Type stubs for the compiled module :mod:`cseq.learners._crf_sgd` (``_crf_sgd.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import ChainIndex, CorpusView

@disjoint_base
class CRFSGDTrainer:
    """SGD epochs for the L2-regularised CRF over one packed, labeled corpus."""

    def __new__(cls, ix: ChainIndex, cv: CorpusView,
                w: NDArray[np.float64]) -> CRFSGDTrainer: ...
    @property
    def w(self) -> NDArray[np.float64]: ...
    def epoch(self, order: NDArray[np.int64], lam: float, t0: float,
              t: int) -> tuple[float, int]: ...
