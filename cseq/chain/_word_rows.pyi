"""Type stubs for the compiled module :mod:`cseq.chain._word_rows` (``_word_rows.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import ChainIndex

__all__ = ["word_rows", "WordRowCache"]

def word_rows(ix: ChainIndex, params: NDArray[np.float64], attrs: NDArray[np.int32],
              group: NDArray[np.int32], n_groups: int,
              cache: WordRowCache | None = None) -> NDArray[np.float64]: ...

@disjoint_base
class WordRowCache:
    """The word rows of attribute rows already summed, for one model and one thread."""

    def __new__(cls, ix: ChainIndex, params: NDArray[np.float64], group: NDArray[np.int32],
                n_groups: int, capacity: int = 4096) -> WordRowCache: ...
    @property
    def capacity(self) -> int: ...
