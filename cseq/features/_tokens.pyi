"""Type stubs for the compiled module :mod:`cseq.features._tokens` (``_tokens.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

__all__ = ["FUNCTIONS", "FunctionCache", "Values", "apply_function"]

FUNCTIONS: tuple[str, ...]

@disjoint_base
class Values:
    """Distinct strings as UTF-8, ids ``0, 1, ...`` in order of first insertion."""

    def __new__(cls, capacity: int = 1024) -> Values: ...
    def __len__(self) -> int: ...
    def hashes(self) -> NDArray[np.uint64]: ...
    def hash_classes(self, word_slots: NDArray[np.int32], slot: int, table: dict[str, str],
                     unknown: str, hashes: NDArray[np.uint64],
                     cache: FunctionCache | None = None) -> None: ...
    def strings(self, ids: Iterable[int] | None = None) -> list[str]: ...

@disjoint_base
class FunctionCache:
    """The hashes of the token function values of the cell strings seen last, for one thread."""

    def __new__(cls, capacity: int = 4096) -> FunctionCache: ...
    def __len__(self) -> int: ...

def _fill_punct(c: int) -> None: ...
def apply_function(name: str, strings: Sequence[str]) -> list[str]: ...
