"""Type stubs for the compiled module :mod:`cseq.learners._ssvm` (``_ssvm.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import AveragedParams, ChainIndex, CorpusView

@disjoint_base
class SSVMTrainer:
    """Stochastic subgradient training of the structured SVM."""

    def __new__(cls, ix: ChainIndex, cv: CorpusView, params: AveragedParams, C: float,
                 cost: NDArray[np.float64] | None = None,
                 n_sequences: int | None = None) -> SSVMTrainer: ...
    @property
    def lam(self) -> float: ...
    def last_path(self) -> NDArray[np.int32]: ...
    def train_epoch(self, order: NDArray[np.int64]) -> tuple[int, float]: ...

def structured_hinge(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
                     cost: NDArray[np.float64] | None = None) -> tuple[float, int]: ...
