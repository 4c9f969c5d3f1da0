"""Interning a corpus: the columns templates read, as ids into one table of distinct strings.

:func:`intern_columns` (fitting) and :func:`intern_for_lookup` (prediction)
walk the user's sentences once, under the GIL, and give every cell string an
id in a :class:`~cseq.features._tokens.Values` table, then run the token
functions of :mod:`cseq.features._tokens` once per distinct cell (through a
thread's :class:`~cseq.features._tokens.FunctionCache` for a short input).
Ids are given in the order the plain-Python featurizer gave them: the cells,
sentence by sentence and column by column, then each function's values over
the distinct cells in id order, then the padding strings.
"""

from cpython.object cimport PyObject
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memcpy, memset

from cseq.features._hash cimport hash_bytes
from cseq.features._tokens cimport (GIL_MIN_CELLS, MAX_ID, N_FUNCTIONS, Buf, FCache, FunctionCache,
                                    Values, _apply, _cache_entry, _encode, _room, cseq_tok_units)

import numpy as np

__all__ = ["intern_columns", "intern_for_lookup", "intern_strings"]


# --------------------------------------------------------------------------
# Interning a corpus
# --------------------------------------------------------------------------


cdef struct Ids:
    int32_t* p
    int64_t n, cap


cdef int _ids_push(Ids* a, int32_t v) except -1:
    cdef void* q
    if a.n == a.cap:
        a.cap = max(<int64_t> 1024, 2 * a.cap)
        q = realloc(a.p, a.cap * sizeof(int32_t))
        if q == NULL:
            raise MemoryError()
        a.p = <int32_t*> q
    a.p[a.n] = v
    a.n += 1
    return 0


cdef int _intern_str(Values vals, object s, Buf* buf, Ids* ids) except -1:
    cdef int kind, ascii
    cdef const void* data
    cdef Py_ssize_t n
    cdef int64_t k
    if not cseq_tok_units(<PyObject*> s, &kind, &data, &n, &ascii):
        s = str.__str__(s)  # a str subclass from the checking path: its exact value
        cseq_tok_units(<PyObject*> s, &kind, &data, &n, &ascii)
    if 4 * n > buf.cap:
        _room(buf, 4 * n)
    k = _encode(kind, data, n, ascii, buf.p)
    return _ids_push(ids, vals.add(buf.p, k))


def intern_strings(Values vals not None, list strings):
    """Intern each ``str`` of ``strings`` into ``vals``; their ids (int32, in order).

    How values that come from outside the token columns (the classes of the
    ``tags`` function, :mod:`cseq.features.tagdict`) join the interned cells.
    """
    cdef Py_ssize_t i, n = len(strings)
    cdef Buf buf
    cdef Ids ids
    for i in range(n):
        if type(strings[i]) is not str:
            raise TypeError(f"intern_strings: item {i} is {type(strings[i]).__name__}, not str")
    buf.p = NULL
    buf.cap = 0
    ids.p = NULL
    ids.n = 0
    ids.cap = 0
    out = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] o = out
    try:
        for i in range(n):
            _intern_str(vals, strings[i], &buf, &ids)
        for i in range(n):
            o[i] = ids.p[i]
    finally:
        free(buf.p)
        free(ids.p)
    return out


cdef inline bint _exact_str(object o) noexcept:
    return type(o) is str


cdef int _fast_kind(object sent, Py_ssize_t n, Py_ssize_t need, const int32_t[::1] columns):
    """1: every token an exact str (and need <= 1); 2: every token an exact
    tuple or list of one width >= need whose read cells are exact str; 0: else."""
    cdef Py_ssize_t j, k, w = -1
    cdef object tok
    if n == 0:
        return 1
    tok = sent[0]
    if _exact_str(tok):
        if need > 1:
            return 0
        for j in range(n):
            if not _exact_str(sent[j]):
                return 0
        return 1
    for j in range(n):
        tok = sent[j]
        if type(tok) is not tuple and type(tok) is not list:
            return 0
        if w == -1:
            w = len(tok)
            if w < need:
                return 0
        elif len(tok) != w:
            return 0
        for k in range(columns.shape[0]):
            if not _exact_str(tok[columns[k]]):
                return 0
    return 2


cdef object _setup(str who, Py_ssize_t need, const int32_t[::1] columns,
                   const int32_t[::1] slot_col, const int32_t[::1] slot_func, Py_ssize_t n_seq,
                   Buf* buf, Ids* cells):
    """What :func:`intern_columns` and :func:`intern_for_lookup` (``who``) check and set up
    first: the slots and columns in range, empty scratch, and the sentence lengths' array."""
    cdef Py_ssize_t n_cols = columns.shape[0], s, k
    for s in range(slot_col.shape[0]):
        if not (0 <= slot_col[s] < n_cols) or not (-1 <= slot_func[s] < N_FUNCTIONS):
            raise ValueError(f"{who}: slot out of range")
    for k in range(n_cols):
        if not (0 <= columns[k] < need):
            raise ValueError(f"{who}: column beyond need")
    buf.p = NULL
    buf.cap = 0
    cells.p = NULL
    cells.n = 0
    cells.cap = 0
    return np.empty(n_seq, dtype=np.int64)


def intern_columns(list X, Py_ssize_t need, const int32_t[::1] columns not None,
                   const int32_t[::1] slot_col not None, const int32_t[::1] slot_func not None,
                   Py_ssize_t max_offset, rows_of):
    """Intern the cells of ``X`` and their token function values.

    Parameters
    ----------
    X : list of sentences
        A sentence is a list (or tuple) of tokens, a token an exact ``str``
        or a tuple/list of column strings.  Any other sentence (another
        container, str subclasses, mixed or bad tokens) goes through
        ``rows_of``.
    need : int
        Columns a token must have.
    columns : int32 array
        The columns read, ascending.
    slot_col, slot_func : int32 arrays, one entry per slot
        Index into ``columns`` and token function code (:data:`FUNCTIONS`;
        -1 for the cell as it is) of each slot.
    max_offset : int
        Padding strings ``_B-1 .. _B-max_offset`` and ``_B+1 ..`` are interned.
    rows_of : callable
        ``rows_of(sentence, index, need)`` validates an unusual sentence and
        returns its tokens as tuples of column strings, or raises.

    Returns
    -------
    values : Values
    slot_ids : ndarray of int32, shape (n_tokens, n_slots)
    lengths : ndarray of int64, shape (len(X),)
    pad_before, pad_after : ndarray of int32, shape (max_offset,)
    words : ndarray of int32, shape (n_tokens, len(columns))
        The cell string (its value id) of each token in each column read.
    word_slots : ndarray of int32, shape (n_cell_strings, n_slots)
        Each slot's value id for each cell string (-1 where the string is not
        in the slot's column): ``slot_ids[p, s] == word_slots[words[p, k], s]``
        for the column ``k`` of slot ``s``.
    """
    cdef Py_ssize_t n_seq = len(X), n_cols = columns.shape[0], n_slots = slot_col.shape[0]
    cdef Values vals = Values()
    cdef Buf buf
    cdef Ids cells
    cdef int64_t n_tok
    lengths_np = _setup("intern_columns", need, columns, slot_col, slot_func, n_seq, &buf,
                        &cells)
    cdef int64_t[::1] lengths = lengths_np
    try:
        _intern_cells(X, need, columns, rows_of, vals, &buf, &cells, lengths)
        n_tok = cells.n // n_cols if n_cols else int(np.sum(lengths_np))
        slot_ids_np = np.zeros((n_tok, max(n_slots, 1)), dtype=np.int32)
        words_np = np.zeros((n_tok, max(n_cols, 1)), dtype=np.int32)
        word_slots_np = np.full((len(vals), max(n_slots, 1)), -1, dtype=np.int32)
        pad_before_np = np.empty(max_offset, dtype=np.int32)
        pad_after_np = np.empty(max_offset, dtype=np.int32)
        if n_tok and n_slots:
            _fill_slots(vals, cells.p, lengths, n_cols, slot_col, slot_func, slot_ids_np,
                        words_np, word_slots_np)
        _pads(vals, max_offset, pad_before_np, pad_after_np)
    finally:
        free(buf.p)
        free(cells.p)
    return vals, slot_ids_np, lengths_np, pad_before_np, pad_after_np, words_np, word_slots_np


cdef int _intern_cells(list X, Py_ssize_t need, const int32_t[::1] columns, rows_of,
                       Values vals, Buf* buf, Ids* cells, int64_t[::1] lengths) except -1:
    """Intern the cells of ``X`` read by ``columns`` (see :func:`intern_columns`).

    Column-major within each sentence: ``cells.p[k * len + j]`` is column
    ``k`` of token ``j``, sentence after sentence; ``lengths`` gets each
    sentence's length.
    """
    cdef Py_ssize_t n_seq = len(X), n_cols = columns.shape[0], si, j, k, n, kind
    cdef object sent, rows
    for si in range(n_seq):
        sent = X[si]
        kind = 0
        if type(sent) is list or type(sent) is tuple:
            n = len(sent)
            kind = _fast_kind(sent, n, need, columns)
        if kind == 0:
            rows = rows_of(sent, si, need)
            n = len(rows)
            for k in range(n_cols):
                for j in range(n):
                    _intern_str(vals, rows[j][columns[k]], buf, cells)
        elif kind == 1:
            for k in range(n_cols):  # no-cython-lint: each column reads the one string of a str token
                for j in range(n):
                    _intern_str(vals, sent[j], buf, cells)
        else:
            for k in range(n_cols):
                for j in range(n):
                    _intern_str(vals, sent[j][columns[k]], buf, cells)
        lengths[si] = n
    return 0


cdef object _int32_filled(Py_ssize_t rows, Py_ssize_t cols, int byte):
    """An int32 array (rows, cols) with every byte ``byte``, made holding the GIL."""
    out = np.empty((rows, cols), dtype=np.int32)
    cdef int32_t[:, ::1] v = out
    if rows and cols:
        memset(&v[0, 0], byte, rows * cols * sizeof(int32_t))
    return out


def intern_for_lookup(list X, Py_ssize_t need, const int32_t[::1] columns not None,
                      const int32_t[::1] slot_col not None,
                      const int32_t[::1] slot_func not None, Py_ssize_t max_offset, rows_of,
                      int n_jobs=1, FunctionCache cache=None):
    """:func:`intern_columns` for looking attributes up, not for naming them.

    The cells are interned as there (then the padding strings), but the
    token function values are only hashed, not interned: the value of slot
    ``s`` of the cell string ``w`` gets an id of its own, ``len(values) + s
    * n_words + w``, whose hash is in ``hashes``.  Equal values of different
    strings get different ids with equal hashes, which is all the keys read.
    The token functions run without the GIL, in ``n_jobs`` threads; on one
    thread and a short input (fewer than GIL_MIN_CELLS cells), the values
    ``cache`` (this thread's :class:`FunctionCache`, optional) holds are
    taken from it and the others put in it.

    Returns
    -------
    values, slot_ids
        As :func:`intern_columns` returns them, with the ids above.
    seq_ptr : ndarray of int64, shape (n_sentences + 1,)
        Sentence ``s`` is tokens ``seq_ptr[s]:seq_ptr[s + 1]`` (the lengths
        :func:`intern_columns` returns, summed here rather than by NumPy).
    pad_before, pad_after, words, word_slots
        As :func:`intern_columns` returns them, with the ids above.
    hashes : ndarray of uint64
        The hash of every id: ``values.hashes()``, then the function values.
    """
    cdef Py_ssize_t n_seq = len(X), n_cols = columns.shape[0], n_slots = slot_col.shape[0]
    cdef Py_ssize_t s
    # Sized for a few sentences (it grows as needed; the ids do not depend on
    # its size): a table for a thousand strings costs more to clear than
    # interning one sentence.
    cdef Values vals = Values(min(1024, 64 * n_seq))
    cdef Buf buf
    cdef Ids cells
    cdef int64_t n_tok
    cdef uint64_t[::1] hv
    if n_jobs < 1:
        raise ValueError("intern_for_lookup: n_jobs must be >= 1")
    lengths_np = _setup("intern_for_lookup", need, columns, slot_col, slot_func, n_seq, &buf,
                        &cells)
    cdef int64_t[::1] lengths = lengths_np
    try:
        _intern_cells(X, need, columns, rows_of, vals, &buf, &cells, lengths)
        n_tok = cells.n // n_cols if n_cols else int(np.sum(lengths_np))
        n_words = len(vals)
        pad_before_np = np.empty(max_offset, dtype=np.int32)
        pad_after_np = np.empty(max_offset, dtype=np.int32)
        _pads(vals, max_offset, pad_before_np, pad_after_np)
        base = len(vals)
        if base + n_words * max(n_slots, 1) > MAX_ID:
            raise OverflowError("more than 2**31 - 1 distinct cell strings and values")
        # np.empty and memset, not np.zeros and fill (nor np.full, a Python function
        # dearer than one sentence's fill): NumPy releases the GIL to zero 1 KiB or to
        # fill over 500 items, which on one sentence hands it to any busy thread (the
        # convoy effect: GIL_MIN_CELLS); memset keeps it
        slot_ids_np = _int32_filled(n_tok, max(n_slots, 1), 0)
        words_np = _int32_filled(n_tok, max(n_cols, 1), 0)
        word_slots_np = _int32_filled(n_words, max(n_slots, 1), 0xFF)  # -1 in every item
        hashes_np = np.empty(base + n_words * n_slots, dtype=np.uint64)
        hv = hashes_np
        if base:  # vals.hashes(), without the array it makes
            memcpy(&hv[0], vals._hash, base * sizeof(uint64_t))
        if n_tok and n_slots:
            _hash_slots(vals, cells.p, lengths, n_cols, slot_col, slot_func, base, n_jobs,
                        slot_ids_np, words_np, word_slots_np, hashes_np,
                        &cache.c if cache is not None else NULL)
    finally:
        free(buf.p)
        free(cells.p)
    seq_ptr_np = np.empty(n_seq + 1, dtype=np.int64)
    cdef int64_t[::1] seq_ptr = seq_ptr_np
    seq_ptr[0] = 0
    for s in range(n_seq):
        seq_ptr[s + 1] = seq_ptr[s] + lengths[s]
    return (vals, slot_ids_np, seq_ptr_np, pad_before_np, pad_after_np, words_np, word_slots_np,
            hashes_np)


cdef int _hash_slots(Values vals, const int32_t* cells, const int64_t[::1] lengths,
                     Py_ssize_t n_cols, const int32_t[::1] slot_col,
                     const int32_t[::1] slot_func, int64_t base, int n_jobs,
                     int32_t[:, ::1] slot_ids, int32_t[:, ::1] words,
                     int32_t[:, ::1] word_slots, uint64_t[::1] hashes,
                     FCache* cache) except -1:
    """:func:`_fill_slots` with the function values hashed (ids from ``base``), in threads;
    a short input on one thread through ``cache`` (NULL: none)."""
    cdef Py_ssize_t c, n_chunks
    cdef int64_t n_words = word_slots.shape[0], n_tok = slot_ids.shape[0]
    cdef uint8_t* present = <uint8_t*> calloc(max(n_words * n_cols, 1), 1)
    if present == NULL:
        raise MemoryError()
    cdef Py_ssize_t chunk = 256
    try:
        if n_jobs == 1 and n_tok * n_cols < GIL_MIN_CELLS:
            # A short sentence: done holding the GIL, which another busy Python
            # thread could otherwise keep for up to the switch interval (5 ms)
            # before this one got it back (the convoy effect).
            _mark_words(cells, lengths, n_cols, n_words, present, words)
            _hash_words(vals, present, n_words, slot_col, slot_func, base, 0, n_words,
                        word_slots, hashes, cache)
            _slot_rows(words, word_slots, slot_col, 0, n_tok, slot_ids)
            return 0
        with nogil:
            _mark_words(cells, lengths, n_cols, n_words, present, words)
        n_chunks = (n_words + chunk - 1) // chunk
        for c in prange(n_chunks, nogil=True, schedule="dynamic", num_threads=n_jobs):
            _hash_words(vals, present, n_words, slot_col, slot_func, base, c * chunk,
                        min((c + 1) * chunk, n_words), word_slots, hashes, NULL)
        n_chunks = (n_tok + chunk - 1) // chunk
        for c in prange(n_chunks, nogil=True, schedule="static", num_threads=n_jobs):
            _slot_rows(words, word_slots, slot_col, c * chunk, min((c + 1) * chunk, n_tok),
                       slot_ids)
    finally:
        free(present)
    return 0


cdef int _hash_words(Values vals, const uint8_t* present, int64_t n_words,
                     const int32_t[::1] slot_col, const int32_t[::1] slot_func, int64_t base,
                     int64_t w0, int64_t w1, int32_t[:, ::1] word_slots,
                     uint64_t[::1] hashes, FCache* cache) except -1 nogil:
    """Slots of the cell strings ``w0 <= w < w1``: each value's id and hash, the
    hash from ``cache`` when it has it (NULL: no cache; one thread only)."""
    cdef Py_ssize_t n_slots = slot_col.shape[0], s
    cdef int64_t w, m, v, e = -1
    cdef int f
    cdef Buf out
    out.p = NULL
    out.cap = 0
    try:
        for w in range(w0, w1):
            if cache != NULL:
                e = _cache_entry(cache, vals, w)
            for s in range(n_slots):
                if not present[slot_col[s] * n_words + w]:
                    continue
                f = slot_func[s]
                if f == -1:
                    word_slots[w, s] = <int32_t> w
                    continue
                # Slot-major: the values of one slot (e.g. every "lower"),
                # which the keys of a template read, lie together.
                v = base + s * n_words + w
                word_slots[w, s] = <int32_t> v
                if e >= 0 and (cache.known[e] >> f) & 1:
                    hashes[v] = cache.vals[e * N_FUNCTIONS + f]
                    continue
                m = _apply(f, vals._arena + vals._offs[w], vals._offs[w + 1] - vals._offs[w],
                           &out)
                hashes[v] = hash_bytes(out.p, m)
                if e >= 0:
                    cache.vals[e * N_FUNCTIONS + f] = hashes[v]
                    cache.known[e] |= (<uint32_t> 1) << f
    finally:
        free(out.p)
    return 0


cdef void _mark_words(const int32_t* cells, const int64_t[::1] lengths, Py_ssize_t n_cols,
                      int64_t n_words, uint8_t* present, int32_t[:, ::1] words) noexcept nogil:
    """``words[p, k]``, the cell string of token ``p`` in column ``k``, and
    ``present[k * n_words + w]``: whether string ``w`` occurs in column ``k``."""
    cdef Py_ssize_t si, j, k, n
    cdef int64_t t = 0, b = 0, w
    for si in range(lengths.shape[0]):
        n = lengths[si]
        for k in range(n_cols):
            for j in range(n):
                w = cells[b + k * n + j]
                present[k * n_words + w] = 1
                words[t + j, k] = <int32_t> w
        b += n * n_cols
        t += n


cdef void _slot_rows(const int32_t[:, ::1] words, const int32_t[:, ::1] word_slots,
                     const int32_t[::1] slot_col, int64_t t0, int64_t t1,
                     int32_t[:, ::1] slot_ids) noexcept nogil:
    """``slot_ids[t, k]``, slot ``k``'s value of token ``t``, for ``t0 <= t < t1``."""
    cdef int64_t t
    cdef Py_ssize_t k
    for t in range(t0, t1):
        for k in range(slot_col.shape[0]):
            slot_ids[t, k] = word_slots[words[t, slot_col[k]], k]


cdef int _fill_slots(Values vals, const int32_t* cells, const int64_t[::1] lengths,
                     Py_ssize_t n_cols, const int32_t[::1] slot_col,
                     const int32_t[::1] slot_func, int32_t[:, ::1] slot_ids,
                     int32_t[:, ::1] words, int32_t[:, ::1] word_slots) except -1:
    """Each slot's value id per token; function values interned in the reference order.

    ``word_slots[w, s]`` is slot ``s`` of the cell string ``w`` (-1 when ``w``
    is not in the slot's column), ``words[p, k]`` the cell string of token
    ``p`` in column ``k``.
    """
    cdef Py_ssize_t n_slots = slot_col.shape[0], n_seq = lengths.shape[0]
    cdef Py_ssize_t s, si, j, k, n
    cdef int64_t t, base, w, n_words = word_slots.shape[0]
    cdef int64_t m
    # present[k * n_words + w]: w occurs in column k.
    cdef uint8_t* present = <uint8_t*> calloc(max(n_words * n_cols, 1), 1)
    cdef int32_t* row
    cdef Buf out
    out.p = NULL
    out.cap = 0
    if present == NULL:
        raise MemoryError()
    try:
        with nogil:
            base = 0
            t = 0
            for si in range(n_seq):
                n = lengths[si]
                for k in range(n_cols):
                    for j in range(n):
                        w = cells[base + k * n + j]
                        present[k * n_words + w] = 1
                        words[t + j, k] = <int32_t> w
                base += n * n_cols
                t += n
            for s in range(n_slots):
                k = slot_col[s]
                for w in range(n_words):
                    if not present[k * n_words + w]:
                        word_slots[w, s] = -1
                    elif slot_func[s] == -1:
                        word_slots[w, s] = <int32_t> w
                    else:
                        # Once per distinct string of the column, in id order.
                        m = _apply(slot_func[s], vals._arena + vals._offs[w],
                                   vals._offs[w + 1] - vals._offs[w], &out)
                        word_slots[w, s] = vals.add(out.p, m)
            for t in range(slot_ids.shape[0]):
                row = &slot_ids[t, 0]
                for s in range(n_slots):
                    row[s] = word_slots[words[t, slot_col[s]], s]
    finally:
        free(present)
        free(out.p)
    return 0


cdef int _pads(Values vals, Py_ssize_t m, int32_t[::1] before, int32_t[::1] after) except -1:
    """Intern ``_B-1 .. _B-m`` then ``_B+1 .. _B+m`` (the reference order)."""
    cdef Py_ssize_t k
    for k in range(1, m + 1):
        b = f"_B-{k}".encode()
        before[k - 1] = vals.add(b, len(b))
    for k in range(1, m + 1):
        b = f"_B+{k}".encode()
        after[k - 1] = vals.add(b, len(b))
    return 0
