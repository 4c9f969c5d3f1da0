"""Type stubs for the compiled module :mod:`cseq.segment._chars` (``_chars.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

__all__ = ["CATEGORIES", "ROLES", "KeyIds", "featurize", "spans"]

CATEGORIES: tuple[str, ...]
ROLES: tuple[str, ...]

@disjoint_base
class KeyIds:
    """Feature keys (64-bit) to dense int32 ids, 0, 1, ... in order of first insertion."""

    def __new__(cls) -> KeyIds: ...
    def __len__(self) -> int: ...
    def keys(self) -> NDArray[np.uint64]: ...
    @classmethod
    def from_keys(cls, keys: NDArray[np.uint64]) -> KeyIds: ...

def featurize(
    texts: Sequence[str], ids: KeyIds, grow: bool, preset: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int32]]: ...
def spans(
    text: str, labels: NDArray[np.int32], roles: NDArray[np.int8]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint8], NDArray[np.int64],
           NDArray[np.int64]]: ...
