"""Type stubs for the compiled module :mod:`cseq.features._keytable` (``_keytable.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from typing_extensions import disjoint_base

__all__ = ["KeyTable", "TemplatePlan", "WordMemo"]

@disjoint_base
class TemplatePlan:
    """A featurizer's template arrays as :meth:`KeyTable.word_memo` and
    :meth:`KeyTable.lookup_packed` read them, checked once."""

    def __new__(cls, tmpl_ptr: ArrayLike, cell_row: ArrayLike, cell_slot: ArrayLike,
                tmpl_seed: ArrayLike, memo_col: ArrayLike, memo_row: ArrayLike | None = None,
                name: str = "TemplatePlan") -> TemplatePlan: ...
    @property
    def n_tmpl(self) -> int: ...
    @property
    def n_memo(self) -> int: ...
    @property
    def memo_layout(self) -> tuple[NDArray[np.int32], NDArray[np.int32]]: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@disjoint_base
class WordMemo:
    """Ids of the memo templates per distinct string, from :meth:`KeyTable.word_memo`."""

    def __new__(cls) -> WordMemo: ...
    @property
    def n_words(self) -> int: ...
    @property
    def n_memo(self) -> int: ...
    @property
    def memo_ids(self) -> NDArray[np.int32]: ...

@disjoint_base
class KeyTable:
    """Open-addressing hash table mapping uint64 keys to dense int32 ids."""

    def __new__(cls, capacity: int = 1024, max_ids: int = ...) -> KeyTable: ...
    def __len__(self) -> int: ...
    def copy(self) -> KeyTable: ...
    @classmethod
    def from_keys(cls, keys: NDArray[np.uint64], max_ids: int = ...) -> KeyTable: ...
    def add(self, keys: NDArray[np.uint64]) -> NDArray[np.int32]: ...
    def add_tokens(
        self, cells: NDArray[np.int32], hashes: NDArray[np.uint64], seq_ptr: NDArray[np.int64],
        tmpl_ptr: NDArray[np.int32], cell_row: NDArray[np.int32], cell_slot: NDArray[np.int32],
        tmpl_seed: NDArray[np.uint64], pad_before: NDArray[np.int32],
        pad_after: NDArray[np.int32], words: NDArray[np.int32] | None = None,
        word_cells: NDArray[np.int32] | None = None, memo_col: NDArray[np.int32] | None = None,
    ) -> NDArray[np.int32]: ...
    def lookup(self, keys: NDArray[np.uint64], n_jobs: int = 1) -> NDArray[np.int32]: ...
    def lookup_tokens(
        self, cells: NDArray[np.int32], hashes: NDArray[np.uint64], seq_ptr: NDArray[np.int64],
        tmpl_ptr: NDArray[np.int32], cell_row: NDArray[np.int32], cell_slot: NDArray[np.int32],
        tmpl_seed: NDArray[np.uint64], pad_before: NDArray[np.int32],
        pad_after: NDArray[np.int32], words: NDArray[np.int32], word_cells: NDArray[np.int32],
        memo_col: NDArray[np.int32], n_jobs: int = 1, memo_row: NDArray[np.int32] | None = None,
    ) -> NDArray[np.int32]: ...
    def word_memo(
        self, hashes: NDArray[np.uint64], tmpl_ptr: NDArray[np.int32],
        cell_row: NDArray[np.int32], cell_slot: NDArray[np.int32], tmpl_seed: NDArray[np.uint64],
        word_cells: NDArray[np.int32], memo_col: NDArray[np.int32],
        memo_row: NDArray[np.int32] | None = None, n_jobs: int = 1,
    ) -> WordMemo: ...
    def plan_word_memo(self, plan: TemplatePlan, hashes: NDArray[np.uint64],
                       word_cells: NDArray[np.int32], n_jobs: int = 1) -> WordMemo: ...
    def plan_lookup_packed(
        self, plan: TemplatePlan, cells: NDArray[np.int32], hashes: NDArray[np.uint64],
        seq_ptr: NDArray[np.int64], pad_before: NDArray[np.int32], pad_after: NDArray[np.int32],
        words: NDArray[np.int32], memo: WordMemo, n_jobs: int = 1, without_memo: bool = False,
    ) -> tuple[NDArray[np.int32], NDArray[np.int64]]: ...
    def lookup_packed(
        self, cells: NDArray[np.int32], hashes: NDArray[np.uint64], seq_ptr: NDArray[np.int64],
        tmpl_ptr: NDArray[np.int32], cell_row: NDArray[np.int32], cell_slot: NDArray[np.int32],
        tmpl_seed: NDArray[np.uint64], pad_before: NDArray[np.int32],
        pad_after: NDArray[np.int32], words: NDArray[np.int32], memo: WordMemo, n_jobs: int = 1,
        without_memo: bool = False,
    ) -> tuple[NDArray[np.int32], NDArray[np.int64]]: ...
    @property
    def keys(self) -> NDArray[np.uint64]: ...
    @property
    def counts(self) -> NDArray[np.int64]: ...
    @property
    def first_token(self) -> NDArray[np.int64]: ...
    @property
    def first_template(self) -> NDArray[np.int32]: ...
    @property
    def max_ids(self) -> int: ...
    @property
    def capacity(self) -> int: ...
