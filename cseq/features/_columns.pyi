"""Type stubs for the compiled module :mod:`cseq.features._columns` (``_columns.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cseq.features._tokens import FunctionCache, Values

__all__ = ["intern_columns", "intern_for_lookup", "intern_strings"]

def intern_strings(vals: Values, strings: list[str]) -> NDArray[np.int32]: ...
def intern_columns(
    X: list[Any], need: int, columns: NDArray[np.int32], slot_col: NDArray[np.int32],
    slot_func: NDArray[np.int32], max_offset: int,
    rows_of: Callable[[Any, int, int], Sequence[tuple[str, ...]]],
) -> tuple[Values, NDArray[np.int32], NDArray[np.int64], NDArray[np.int32], NDArray[np.int32],
           NDArray[np.int32], NDArray[np.int32]]: ...
def intern_for_lookup(
    X: list[Any], need: int, columns: NDArray[np.int32], slot_col: NDArray[np.int32],
    slot_func: NDArray[np.int32], max_offset: int,
    rows_of: Callable[[Any, int, int], Sequence[tuple[str, ...]]], n_jobs: int = 1,
    cache: FunctionCache | None = None,
) -> tuple[Values, NDArray[np.int32], NDArray[np.int64], NDArray[np.int32], NDArray[np.int32],
           NDArray[np.int32], NDArray[np.int32], NDArray[np.uint64]]: ...
