"""Type stubs for the compiled module :mod:`cseq.chain._chain` (``_chain.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain.sequences import Sequences

MAX_LABELS: int
MIN_SCALE: float

def param_layout(n_state: int, n_labels: int, order: int = 1) -> dict[str, int]: ...

@disjoint_base
class ChainIndex:
    """The structure of a chain model: its state index and parameter layout."""

    def __new__(cls, attr_ptr: NDArray[np.int64], attr_labels: NDArray[np.int32],
                 n_labels: int, order: int = 1) -> ChainIndex: ...
    @property
    def attr_ptr(self) -> NDArray[np.int64]: ...
    @property
    def attr_labels(self) -> NDArray[np.int32]: ...
    @property
    def layout(self) -> dict[str, int]: ...

@disjoint_base
class CorpusView:
    """A packed corpus as kernels read it."""

    def __new__(cls, sequences: Sequences, with_labels: bool = True,
                partial: bool = False) -> CorpusView: ...
    @property
    def sequences(self) -> Sequences: ...
    @property
    def max_len(self) -> int: ...

@disjoint_base
class AveragedParams:
    """Parameters of an online learner and their lazy-averaging accumulator."""

    n_examples: int
    scale: float
    scale_sum: float
    weight_sum: float
    def __new__(cls, w: NDArray[np.float64] | None = None, u: NDArray[np.float64] | None = None,
                 n_examples: int = 0, n_params: int = 0, scale: float = 1.0,
                 scale_sum: float | None = None, weight_sum: float | None = None) -> AveragedParams: ...
    @property
    def w(self) -> NDArray[np.float64]: ...
    @property
    def u(self) -> NDArray[np.float64]: ...
    def scale_by(self, factor: float) -> None: ...
    def weights(self) -> NDArray[np.float64]: ...
    def averaged(self) -> NDArray[np.float64]: ...

def build_state_index(tok_ptr: NDArray[np.int64], attr_ids: NDArray[np.int32],
                      labels: NDArray[np.int32], n_attrs: int,
                      n_labels: int) -> tuple[NDArray[np.int64], NDArray[np.int32]]: ...
def score_corpus_emissions(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
                           t0: int, t1: int) -> NDArray[np.float64]: ...
def path_feature_counts(ix: ChainIndex, cv: CorpusView, paths: NDArray[np.int32],
                        scale: float = 1.0) -> NDArray[np.float64]: ...
