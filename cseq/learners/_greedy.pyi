"""Type stubs for the compiled module :mod:`cseq.learners._greedy` (``_greedy.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import AveragedParams, ChainIndex, CorpusView

def greedy_layout(n_state: int, n_labels: int, pair: bool = True) -> dict[str, int]: ...
def tag_corpus(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
               tagdict: NDArray[np.int32] | None, chunks: NDArray[np.int64],
               n_jobs: int) -> NDArray[np.int32]: ...

@disjoint_base
class GreedyTrainer:
    """Averaged greedy perceptron over one packed, labeled corpus."""

    def __new__(cls, ix: ChainIndex, cv: CorpusView, params: AveragedParams,
                 tagdict: NDArray[np.int32] | None = None) -> GreedyTrainer: ...
    def train_epoch(self, order: NDArray[np.int64]) -> int: ...
