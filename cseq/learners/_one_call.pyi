"""Type stubs for the compiled module :mod:`cseq.learners._one_call` (``_one_call.pyx``).

Checked against the built module by ``tests/package/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.chain._chain import ChainIndex
from cseq.features._pack import StringTable

__all__ = ["OneCall", "MAX_SEQUENCES"]

MAX_SEQUENCES: int

@disjoint_base
class OneCall:
    """One fitted snapshot's featurizer table and chain, for ``predict`` of short input."""

    def __new__(cls, table: StringTable, crfsuite: bool, index: ChainIndex,
                params: NDArray[np.float64], labels: list[str]) -> OneCall: ...
    def predict(self, X: object) -> list[list[str]] | None: ...
    def marginals(self, X: object) -> list[NDArray[np.float64]] | None: ...
