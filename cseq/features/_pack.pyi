"""Type stubs for the compiled module :mod:`cseq.features._pack` (``_pack.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

__all__ = ["StringTable", "count_features", "pack_features"]

@disjoint_base
class StringTable:
    """Strings to dense int32 ids (0, 1, ... in order of first insertion), in C memory."""

    def __new__(cls, capacity: int = 1024, max_ids: int = ...) -> StringTable: ...
    def __len__(self) -> int: ...
    def copy(self) -> StringTable: ...
    @property
    def max_ids(self) -> int: ...
    def add(self, s: str) -> int: ...
    def get(self, s: str) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...
    def names(self) -> list[str]: ...
    @classmethod
    def from_strings(cls, strings: Sequence[str]) -> StringTable: ...

def count_features(X: Sequence[Sequence[Any]]) -> tuple[int, int]: ...
_Packed = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int32], NDArray[np.float32]]

@overload
def pack_features(
    X: Sequence[Sequence[Any]], vocab: StringTable, grow: bool, n_jobs: int = 1,
    crfsuite: Literal[False] = False,
) -> _Packed: ...
@overload
def pack_features(
    X: Any, vocab: StringTable, grow: bool, n_jobs: int = 1, *, crfsuite: bool,
) -> _Packed | None: ...
