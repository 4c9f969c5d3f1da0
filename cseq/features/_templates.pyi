"""Type stubs for the compiled module :mod:`cseq.features._templates` (``_templates.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from collections.abc import Sequence
import numpy as np
from numpy.typing import NDArray

__all__ = ["hash_strings", "hash_pieces", "attribute_keys", "extract_keys", "hash_rows", "name_cells"]

def hash_strings(strings: Sequence[str]) -> NDArray[np.uint64]: ...
def hash_pieces(blob: NDArray[np.uint8], offsets: NDArray[np.int64]) -> NDArray[np.uint64]: ...
def attribute_keys(seeds: NDArray[np.uint64], n_cells: NDArray[np.int32], tmpl: NDArray[np.int32],
                   cells: NDArray[np.int32], hashes: NDArray[np.uint64]) -> NDArray[np.uint64]: ...
def extract_keys(
    cells: NDArray[np.int32], hashes: NDArray[np.uint64], seq_ptr: NDArray[np.int64],
    tmpl_ptr: NDArray[np.int32], cell_row: NDArray[np.int32], cell_slot: NDArray[np.int32],
    tmpl_seed: NDArray[np.uint64], pad_before: NDArray[np.int32], pad_after: NDArray[np.int32],
) -> NDArray[np.uint64]: ...
def hash_rows(seeds: NDArray[np.uint64], values: NDArray[np.uint64],
              counts: NDArray[np.int32]) -> NDArray[np.uint64]: ...
def name_cells(
    cells: NDArray[np.int32], seq_ptr: NDArray[np.int64], tmpl_ptr: NDArray[np.int32],
    cell_row: NDArray[np.int32], cell_slot: NDArray[np.int32], pad_before: NDArray[np.int32],
    pad_after: NDArray[np.int32], first_tok: NDArray[np.int64], first_tmpl: NDArray[np.int32],
    n_strings: int,
) -> tuple[NDArray[np.int64], NDArray[np.int32]]: ...
