"""Label strings to the label ids of a packed corpus.

The labels of a :class:`~cseq.chain.sequences.Sequences` are int32 ids, one
per token; this walks the user's ``y`` (lists of label strings) once, under
the GIL, against the token counts of the packed ``X``.
"""

from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.object cimport PyObject

import numpy as np

from cseq.exceptions import InputError, InputTypeError

__all__ = ["pack_labels"]


def pack_labels(object y, const long long[::1] seq_ptr, dict label_index, bint grow,
                bint unknown=False):
    """Label ids of y (a list of label-string sequences) matched to a packed X.

    With ``unknown``, a label ``None`` (not known at that position: a
    partially labelled sequence) gets the id -1.

    Raises InputError when a sequence's length differs from the tokens of X or
    a label is unknown (and ``grow`` is false); InputTypeError for labels that
    are not strings (None too, without ``unknown``).
    """
    if type(y) is not list and type(y) is not tuple:
        raise InputTypeError(f"y must be a list of label sequences, got {type(y).__name__}")
    cdef Py_ssize_t n_seq = seq_ptr.shape[0] - 1
    if len(y) != n_seq:
        raise InputError(f"X has {n_seq} sequences but y has {len(y)}")
    out_np = np.empty(seq_ptr[n_seq], dtype=np.int32)
    cdef int[::1] out = out_np
    cdef Py_ssize_t i, j, n
    cdef long long k
    cdef object seq, lab
    cdef PyObject* hit
    for i in range(n_seq):
        seq = y[i]
        if type(seq) is not list and type(seq) is not tuple:
            raise InputTypeError(f"y[{i}] must be a list of label strings, got {type(seq).__name__}")
        n = seq_ptr[i + 1] - seq_ptr[i]
        if len(seq) != n:
            raise InputError(f"sequence {i}: X has {n} tokens but y has {len(seq)} labels")
        for j in range(n):
            lab = seq[j]
            if lab is None:
                if not unknown:
                    raise InputTypeError(
                        f"y[{i}][{j}] is None (an unknown label): only the CRF, the structured "
                        "perceptron and the structured SVM train on partially labelled "
                        "sequences, and scoring needs every label")
                out[seq_ptr[i] + j] = -1
                continue
            if type(lab) is not str:
                raise InputTypeError(f"y[{i}][{j}]: labels must be str, got {type(lab).__name__}")
            hit = PyDict_GetItem(label_index, lab)
            if hit != NULL:
                k = <long long><object>hit
            elif grow:
                k = len(label_index)
                PyDict_SetItem(label_index, lab, k)
            else:
                raise InputError(f"y[{i}][{j}]: unknown label {lab!r}")
            out[seq_ptr[i] + j] = <int>k
    return out_np
