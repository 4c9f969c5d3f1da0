"""Constraint masks for decoding and forward-backward: the Python face of ``_masks.pxd``.

A :class:`MaskSet` holds validated uint8 arrays (allowed labels per token,
allowed transitions, allowed first and last labels) as the ``Constraints``
struct the nogil kernels read; :func:`masked_chain` applies one to dense
score arrays (for the array API).  The helpers themselves (``mask_rows``,
``clamp_rows``, ``mask_ends``, ``constrain_rows``, ``mask_transitions``,
``dead_position``) are inline in ``_masks.pxd``, for every kernel module to
cimport.
"""

import numpy as np

from cseq._core._types cimport index_t, label_t, weight_t
from cseq.exceptions import InputError


class NoAllowedPath(InputError):
    """The constraints leave no label path for a sequence.

    ``position`` is the first position no allowed path reaches; ``sequence``
    the index of the sequence in its corpus (None for a single one).
    """

    def __init__(self, position, sequence=None):
        self.position = int(position)
        self.sequence = None if sequence is None else int(sequence)
        where = "" if sequence is None else f"sequence {sequence}: "
        super().__init__(
            f"{where}the constraints allow no label path (no allowed labelling reaches "
            f"position {position}: every label there is disallowed, or reachable only "
            "through disallowed transitions, start or end labels)")


cdef const unsigned char* _ptr(arr) except? NULL:
    cdef const unsigned char[::1] flat
    if arr is None:
        return NULL
    flat = arr.reshape(-1)
    return &flat[0]


cdef class MaskSet:
    """Constraint arrays as the kernels read them (all uint8 0/1, C-contiguous, validated).

    Parameters
    ----------
    n_labels : int
    allowed : (n_tokens, n_labels) or None
        Row ``t``: the labels allowed at token ``t`` of the corpus (or
        position ``t`` of a single sequence).
    trans_ok : (n_labels, n_labels) or None
        ``trans_ok[i, j] == 0`` forbids label ``j`` right after label ``i``.
    start_ok, end_ok : (n_labels,) or None
        Labels allowed first / last in a sequence.
    """

    def __cinit__(self, int n_labels, allowed=None, trans_ok=None, start_ok=None, end_ok=None):
        self.n_labels = n_labels
        self._keep = (allowed, trans_ok, start_ok, end_ok)
        for arr, shape in zip(self._keep, ((None, n_labels), (n_labels, n_labels),
                                           (n_labels,), (n_labels,))):
            if arr is None:
                continue
            if (not isinstance(arr, np.ndarray) or arr.dtype != np.uint8
                    or not arr.flags.c_contiguous or arr.size == 0 or arr.ndim != len(shape)
                    or any(w is not None and g != w for g, w in zip(arr.shape, shape))):
                raise ValueError(f"mask arrays must be non-empty C-contiguous uint8 of shape "
                                 f"{shape} (None: any)")
        self.n_rows = -1 if allowed is None else allowed.shape[0]
        self.c.allowed = _ptr(allowed)
        self.c.trans_ok = _ptr(trans_ok)
        self.c.start_ok = _ptr(start_ok)
        self.c.end_ok = _ptr(end_ok)
        self.masks_transitions = trans_ok is not None and not bool(np.all(trans_ok))

    @property
    def arrays(self):
        """``(allowed, trans_ok, start_ok, end_ok)``, each an array or None."""
        return self._keep


def masked_chain(MaskSet masks, const weight_t[:, ::1] emissions,
                 const weight_t[:, ::1] transitions):
    """Copies of dense emissions (n >= 1, L) and transitions (L, L) with -inf where disallowed.

    ``masks.allowed`` (if any) has one row per position.  Raises
    :class:`NoAllowedPath` when no label path has only allowed terms.
    """
    cdef index_t n = emissions.shape[0]
    cdef int L = emissions.shape[1]
    em_np = np.array(emissions, dtype=np.float64)
    tr_np = np.empty((L, L), dtype=np.float64)
    scratch_np = np.empty(2 * L, dtype=np.uint8)
    cdef weight_t[:, ::1] em = em_np
    cdef weight_t[:, ::1] tr = tr_np
    cdef unsigned char[::1] scratch = scratch_np
    cdef index_t dead
    with nogil:
        constrain_rows(&masks.c, 0, n, L, &em[0, 0])
        mask_transitions(&transitions[0, 0], L, masks.c.trans_ok, &tr[0, 0])
        dead = dead_position(&em[0, 0], n, L, &tr[0, 0], &scratch[0])
    if dead >= 0:
        raise NoAllowedPath(dead)
    return em_np, tr_np


def clamp_array(const weight_t[:, ::1] emissions, const label_t[::1] labels):
    """A copy of emissions (n, L) with every label but ``labels[t]`` at -inf where it is >= 0.

    The Python face of ``clamp_rows`` (for tests).
    """
    em_np = np.array(emissions, dtype=np.float64)
    cdef weight_t[:, ::1] em = em_np
    if emissions.shape[0]:
        clamp_rows(&em[0, 0], emissions.shape[0], emissions.shape[1], &labels[0])
    return em_np
