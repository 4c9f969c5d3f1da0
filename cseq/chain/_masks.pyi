"""Type stubs for the compiled module :mod:`cseq.chain._masks` (``_masks.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import disjoint_base

from cseq.exceptions import InputError

class NoAllowedPath(InputError):
    position: int
    sequence: int | None
    def __init__(self, position: int, sequence: int | None = None) -> None: ...

@disjoint_base
class MaskSet:
    n_labels: int
    n_rows: int
    masks_transitions: bool
    def __new__(cls, n_labels: int, allowed: NDArray[np.uint8] | None = None,
                trans_ok: NDArray[np.uint8] | None = None,
                start_ok: NDArray[np.uint8] | None = None,
                end_ok: NDArray[np.uint8] | None = None) -> MaskSet: ...
    @property
    def arrays(self) -> tuple[NDArray[np.uint8] | None, NDArray[np.uint8] | None,
                              NDArray[np.uint8] | None, NDArray[np.uint8] | None]: ...

def masked_chain(masks: MaskSet, emissions: NDArray[np.float64],
                 transitions: NDArray[np.float64],
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]: ...
def clamp_array(emissions: NDArray[np.float64],
                labels: NDArray[np.int32]) -> NDArray[np.float64]: ...
