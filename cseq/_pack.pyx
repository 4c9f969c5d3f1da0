"""Packing Python token lists into the flat arrays of a corpus.

This is the one compiled module that handles Python objects: it walks the
user's lists once, interns feature strings through a dict and writes ids and
values straight into preallocated arrays.  Kernels never see a string.
"""

cimport cython
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.object cimport PyObject
from libc.math cimport isfinite

import numpy as np

from cseq.exceptions import InputError, InputTypeError


cdef inline str _describe(object obj):
    return type(obj).__name__


def count_features(object X):
    """Validate the containers of X; return (tokens, upper bound on feature entries)."""
    cdef Py_ssize_t i, j, n_tok = 0, n_feat = 0
    cdef object seq, tok
    for i in range(len(X)):
        seq = X[i]
        if type(seq) is not list and type(seq) is not tuple:
            raise InputTypeError(
                f"X[{i}] must be a list of tokens, got {_describe(seq)}")
        n_tok += len(<object>seq)
        for j in range(len(<object>seq)):
            tok = seq[j]
            if type(tok) is list or type(tok) is tuple or type(tok) is dict:
                n_feat += len(<object>tok)
            else:
                raise InputTypeError(
                    f"X[{i}][{j}] must be a list of feature strings or a dict, "
                    f"got {_describe(tok)}")
    return n_tok, n_feat


cdef inline long long _intern(dict vocab, object key, bint grow) except -2:
    """Id of ``key`` in ``vocab``; adds it when ``grow``; -1 if unknown."""
    cdef PyObject* hit = PyDict_GetItem(vocab, key)
    cdef long long new_id
    if hit != NULL:
        return <long long><object>hit
    if not grow:
        return -1
    new_id = len(vocab)
    if new_id >= 2147483647:
        raise InputError("more than 2**31 - 1 distinct attributes")
    PyDict_SetItem(vocab, key, new_id)
    return new_id


def pack_features(object X, dict vocab, bint grow):
    """Pack feature lists or dicts into CSR arrays.

    Parameters
    ----------
    X : list of sequences; a sequence is a list (or tuple) of tokens; a token
        is a list (or tuple) of feature strings, or a dict mapping a feature
        name to a number (its value), ``True`` (value 1), ``False`` (absent) or
        a string ``v`` (the feature ``name=v`` with value 1).
    vocab : dict mapping attribute strings to ids; extended in place when
        ``grow`` is true.
    grow : add unseen attributes to ``vocab`` (training) or drop them
        (prediction).

    Returns
    -------
    seq_ptr, tok_ptr : int64 arrays
    attr_ids : int32 array
    values : float32 array
    """
    if type(X) is not list and type(X) is not tuple:
        raise InputTypeError(f"X must be a list of sequences, got {_describe(X)}")
    n_tok_total, n_feat_total = count_features(X)
    seq_ptr_np = np.empty(len(X) + 1, dtype=np.int64)
    tok_ptr_np = np.empty(n_tok_total + 1, dtype=np.int64)
    attr_np = np.empty(n_feat_total, dtype=np.int32)
    val_np = np.empty(n_feat_total, dtype=np.float32)
    cdef long long[::1] seq_ptr = seq_ptr_np
    cdef long long[::1] tok_ptr = tok_ptr_np
    cdef int[::1] attr = attr_np
    cdef float[::1] val = val_np
    cdef Py_ssize_t i, j, n_tok = 0, n_feat = 0
    cdef long long a
    cdef double v
    cdef object seq, tok, key, value
    seq_ptr[0] = 0
    tok_ptr[0] = 0
    for i in range(len(X)):
        seq = X[i]
        for j in range(len(<object>seq)):
            tok = seq[j]
            if type(tok) is dict:
                for key, value in (<dict>tok).items():
                    if type(key) is not str:
                        raise InputTypeError(
                            f"X[{i}][{j}]: feature names must be str, got {_describe(key)}")
                    if value is True:
                        v = 1.0
                    elif value is False:
                        continue
                    elif isinstance(value, str):
                        key = f"{key}={value}"
                        v = 1.0
                    elif isinstance(value, (int, float)) or hasattr(value, "__float__"):
                        try:
                            v = float(value)
                        except (TypeError, ValueError):
                            raise InputTypeError(
                                f"X[{i}][{j}]: value of feature {key!r} is not a number")
                        if not isfinite(v) or not (-3.0e38 < v < 3.0e38):
                            raise InputError(
                                f"X[{i}][{j}]: value of feature {key!r} is not finite "
                                f"(or beyond float32): {value!r}")
                    else:
                        raise InputTypeError(
                            f"X[{i}][{j}]: value of feature {key!r} must be a number, bool "
                            f"or str, got {_describe(value)}")
                    a = _intern(vocab, key, grow)
                    if a >= 0:
                        attr[n_feat] = <int>a
                        val[n_feat] = <float>v
                        n_feat += 1
            else:
                for key in tok:
                    if type(key) is not str:
                        raise InputTypeError(
                            f"X[{i}][{j}]: features must be str, got {_describe(key)}")
                    a = _intern(vocab, key, grow)
                    if a >= 0:
                        attr[n_feat] = <int>a
                        val[n_feat] = 1.0
                        n_feat += 1
            n_tok += 1
            tok_ptr[n_tok] = n_feat
        seq_ptr[i + 1] = n_tok
    if n_feat < n_feat_total:
        attr_np = attr_np[:n_feat].copy()
        val_np = val_np[:n_feat].copy()
    return seq_ptr_np, tok_ptr_np, attr_np, val_np


def pack_labels(object y, const long long[::1] seq_ptr, dict label_index, bint grow):
    """Label ids of y (a list of label-string sequences) matched to a packed X.

    Raises InputError when a sequence's length differs from the tokens of X or
    a label is unknown (and ``grow`` is false); InputTypeError for labels that
    are not strings.
    """
    if type(y) is not list and type(y) is not tuple:
        raise InputTypeError(f"y must be a list of label sequences, got {_describe(y)}")
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
            raise InputTypeError(f"y[{i}] must be a list of label strings, got {_describe(seq)}")
        n = seq_ptr[i + 1] - seq_ptr[i]
        if len(seq) != n:
            raise InputError(f"sequence {i}: X has {n} tokens but y has {len(seq)} labels")
        for j in range(n):
            lab = seq[j]
            if type(lab) is not str:
                raise InputTypeError(f"y[{i}][{j}]: labels must be str, got {_describe(lab)}")
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
