"""Type stubs for the compiled module :mod:`cseq.learners._arow` (``_arow.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import ChainIndex, CorpusView

@disjoint_base
class AROWTrainer:
    """AROW training over one packed, fully labeled corpus (first order)."""

    def __new__(cls, ix: ChainIndex, cv: CorpusView, mean: NDArray[np.float64],
                cov: NDArray[np.float64], gamma: float) -> AROWTrainer: ...
    def train_epoch(self, order: NDArray[np.int64]) -> tuple[int, float]: ...
