"""Type stubs for the compiled module :mod:`cseq.chain._forward_backward` (``_forward_backward.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from typing import Literal, overload

import numpy as np
from numpy.typing import NDArray

from cseq.chain._masks import MaskSet
from cseq.chain._chain import ChainIndex, CorpusView

SCALED_MAX_SPREAD: float

@overload
def forward_backward_array(
    emissions: NDArray[np.float64], transitions: NDArray[np.float64],
    start: NDArray[np.float64], end: NDArray[np.float64], transitions2: None = None,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]: ...
@overload
def forward_backward_array(
    emissions: NDArray[np.float64], transitions: NDArray[np.float64],
    start: NDArray[np.float64], end: NDArray[np.float64], transitions2: NDArray[np.float64],
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]: ...
@overload
def forward_backward_sums(
    emissions: NDArray[np.float64], transitions: NDArray[np.float64],
    start: NDArray[np.float64], end: NDArray[np.float64], transitions2: None = None,
    with_beta: Literal[False] = False,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]: ...
@overload
def forward_backward_sums(
    emissions: NDArray[np.float64], transitions: NDArray[np.float64],
    start: NDArray[np.float64], end: NDArray[np.float64], transitions2: NDArray[np.float64],
    with_beta: Literal[False] = False,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]: ...
@overload
def forward_backward_sums(
    emissions: NDArray[np.float64], transitions: NDArray[np.float64],
    start: NDArray[np.float64], end: NDArray[np.float64],
    transitions2: NDArray[np.float64] | None = None, with_beta: bool = False,
) -> tuple[float | NDArray[np.float64], ...]: ...
def corpus_marginals(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
                     chunks: NDArray[np.int64], n_jobs: int,
                     masks: MaskSet | None = None) -> NDArray[np.float64]: ...
