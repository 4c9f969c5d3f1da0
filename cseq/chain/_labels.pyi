"""Type stubs for the compiled module :mod:`cseq.chain._labels` (``_labels.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["pack_labels"]

def pack_labels(y: Sequence[Sequence[str | None]], seq_ptr: NDArray[np.int64],
                label_index: dict[str, int], grow: bool,
                unknown: bool = False) -> NDArray[np.int32]: ...
