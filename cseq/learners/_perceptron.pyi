"""Type stubs for the compiled module :mod:`cseq.learners._perceptron` (``_perceptron.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import AveragedParams, ChainIndex, CorpusView

@disjoint_base
class PerceptronTrainer:
    """Averaged structured perceptron over one packed, labeled corpus."""

    def __new__(cls, ix: ChainIndex, cv: CorpusView,
                params: AveragedParams) -> PerceptronTrainer: ...
    def train_epoch(self, order: NDArray[np.int64]) -> int: ...
