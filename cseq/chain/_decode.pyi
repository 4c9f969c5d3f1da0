"""Type stubs for the compiled module :mod:`cseq.chain._decode` (``_decode.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray

from cseq.chain._masks import MaskSet
from cseq.chain._chain import ChainIndex, CorpusView

def _set_avx2(enabled: bool) -> bool: ...
def viterbi_array(emissions: NDArray[np.float64], transitions: NDArray[np.float64],
                  start: NDArray[np.float64], end: NDArray[np.float64],
                  transitions2: NDArray[np.float64] | None = None,
                  ) -> tuple[NDArray[np.int32], float]: ...
def loss_augmented_viterbi_array(
    emissions: NDArray[np.float64], transitions: NDArray[np.float64],
    start: NDArray[np.float64], end: NDArray[np.float64], gold: NDArray[np.int32],
    cost: NDArray[np.float64] | None, transitions2: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.int32], float]: ...
def path_score_array(emissions: NDArray[np.float64], transitions: NDArray[np.float64],
                     start: NDArray[np.float64], end: NDArray[np.float64],
                     path: NDArray[np.int32],
                     transitions2: NDArray[np.float64] | None = None) -> float: ...
def decode_corpus(ix: ChainIndex, params: NDArray[np.float64], cv: CorpusView,
                  chunks: NDArray[np.int64] | None, n_jobs: int,
                  masks: MaskSet | None = None,
                  word_rows: tuple[NDArray[np.float64], NDArray[np.int32], NDArray[np.int32]]
                  | None = None) -> NDArray[np.int32]: ...
def check_masks(masks: MaskSet | None, n_labels: int, n_tokens: int) -> None: ...
def raise_bad_sequence(bad: NDArray[np.int64]) -> None: ...
