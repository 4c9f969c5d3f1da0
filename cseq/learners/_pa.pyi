"""Type stubs for the compiled module :mod:`cseq.learners._pa` (``_pa.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import AveragedParams, ChainIndex, CorpusView

@disjoint_base
class PATrainer:
    """Passive-aggressive training over one packed, fully labeled corpus (first order)."""

    def __new__(cls, ix: ChainIndex, cv: CorpusView, params: AveragedParams, pa_type: int,
                C: float, error_sensitive: bool) -> PATrainer: ...
    def train_epoch(self, order: NDArray[np.int64]) -> tuple[int, float]: ...
