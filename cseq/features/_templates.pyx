"""Compiled feature templates: 64-bit feature keys.

:mod:`cseq.features._tokens` interns every distinct cell string and token function
value once and hands this module integer arrays.  From there on no Python object is
created per token or per feature:

* :func:`hash_strings` gives each distinct string a 64-bit hash of its UTF-8
  bytes (stable across processes and platforms, unlike ``hash(str)``).
* :func:`extract_keys` combines, for every token and template, the template's
  seed with the hashes of the cells the template reads (with BOS/EOS padding)
  into one 64-bit key.
* :mod:`cseq.features._keytable` maps the keys to dense attribute ids (the
  ``KeyTable``, template plans and word memos); the key of a template at a
  token is :func:`_key` of ``_templates.pxd``, compiled into both modules.

Keys are hashes, so two different feature strings may in principle share a
key.  With a well-mixed 64-bit hash and ``n`` distinct features the chance
that any two collide is about ``n**2 / 2**65`` (``2.7e-6`` for ten million
features); see ``docs/templates.md``.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t

from cseq.features._hash cimport combine, hash_bytes

import numpy as np

__all__ = ["hash_strings", "hash_pieces", "attribute_keys", "extract_keys", "hash_rows", "name_cells"]


def hash_strings(strings):
    """Hash each string of a sequence to a uint64.

    Parameters
    ----------
    strings : sequence of str
        Encoded as UTF-8 (lone surrogates pass through, so every ``str`` works).

    Returns
    -------
    ndarray of uint64, shape (len(strings),)
        The hash of each string's UTF-8 bytes; the same on every platform and
        in every process.
    """
    cdef Py_ssize_t n = len(strings), i
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef bytes b
    cdef const uint8_t[::1] view
    for i in range(n):
        s = strings[i]
        if not isinstance(s, str):
            raise TypeError(f"hash_strings: item {i} is {type(s).__name__}, not str")
        b = (<str> s).encode("utf-8", "surrogatepass")
        if len(b) == 0:
            o[i] = hash_bytes(NULL, 0)
        else:
            view = b
            o[i] = hash_bytes(&view[0], len(b))
    return out


def hash_pieces(const uint8_t[::1] blob not None, const int64_t[::1] offsets not None):
    """:func:`hash_strings` of the UTF-8 strings ``blob[offsets[i]:offsets[i + 1]]``.

    The bytes are hashed as they are, without making a ``str`` of each.
    """
    cdef Py_ssize_t n = offsets.shape[0] - 1, i
    if n < 0 or offsets[0] != 0 or offsets[n] > blob.shape[0]:
        raise ValueError("hash_pieces: offsets must run from 0 to at most len(blob)")
    for i in range(n):
        if offsets[i + 1] < offsets[i]:
            raise ValueError("hash_pieces: offsets must be non-decreasing")
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef const uint8_t* base = &blob[0] if blob.shape[0] else NULL
    with nogil:
        for i in range(n):
            o[i] = hash_bytes(base + offsets[i] if offsets[i + 1] > offsets[i] else NULL,
                              offsets[i + 1] - offsets[i])
    return out


def attribute_keys(const uint64_t[::1] seeds not None, const int32_t[::1] n_cells not None,
                   const int32_t[::1] tmpl not None, const int32_t[::1] cells not None,
                   const uint64_t[::1] hashes not None):
    """The key of each attribute from its template and the strings it read.

    Attribute ``a`` read, under template ``tmpl[a]``, the strings
    ``cells[k:k + n_cells[tmpl[a]]]`` (``k`` the cells of the attributes
    before it), whose hashes are in ``hashes``: its key is
    ``combine(...combine(seeds[tmpl[a]], hash_1)..., hash_m)``, as
    :func:`extract_keys` makes it (used to check a loaded table).
    """
    cdef Py_ssize_t n_attr = tmpl.shape[0], n_tmpl = seeds.shape[0], a, c, k = 0, total = 0
    cdef uint64_t h
    if n_cells.shape[0] != n_tmpl:
        raise ValueError("attribute_keys: seeds and n_cells differ in length")
    for a in range(n_attr):
        if not (0 <= tmpl[a] < n_tmpl) or n_cells[tmpl[a]] < 0:
            raise ValueError("attribute_keys: template out of range")
        total += n_cells[tmpl[a]]
    if total != cells.shape[0]:
        raise ValueError("attribute_keys: cells do not match the templates' cell counts")
    if cells.shape[0] and not _in_range(&cells[0], cells.shape[0], hashes.shape[0]):
        raise ValueError("attribute_keys: cells out of range of hashes")
    out = np.empty(n_attr, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    with nogil:
        for a in range(n_attr):
            h = seeds[tmpl[a]]
            for c in range(n_cells[tmpl[a]]):
                h = combine(h, hashes[cells[k + c]])
            k += n_cells[tmpl[a]]
            o[a] = h
    return out


cdef bint _in_range(const int32_t* ids, Py_ssize_t n, Py_ssize_t hi) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if ids[i] < 0 or ids[i] >= hi:
            return False
    return True


cdef Spec _spec(
    const int32_t[:, ::1] cells,
    const uint64_t[::1] hashes,
    const int64_t[::1] seq_ptr,
    const int32_t[::1] tmpl_ptr,
    const int32_t[::1] cell_row,
    const int32_t[::1] cell_slot,
    const uint64_t[::1] tmpl_seed,
    const int32_t[::1] pad_before,
    const int32_t[::1] pad_after,
    str name,
) except *:
    """Check everything the unchecked kernels index with; the pointers to read."""
    cdef Py_ssize_t n_tmpl = tmpl_seed.shape[0], n_cells = cell_row.shape[0]
    cdef Py_ssize_t i, max_slot = -1, min_row = 0, max_row = 0
    if tmpl_ptr.shape[0] != n_tmpl + 1 or tmpl_ptr[0] != 0 or tmpl_ptr[n_tmpl] != n_cells:
        raise ValueError(f"{name}: tmpl_ptr must run from 0 to n_cells")
    for i in range(n_tmpl):
        if tmpl_ptr[i + 1] < tmpl_ptr[i]:
            raise ValueError(f"{name}: tmpl_ptr must be non-decreasing")
    if cell_slot.shape[0] != n_cells:
        raise ValueError(f"{name}: cell_row and cell_slot differ in length")
    for i in range(n_cells):
        if cell_slot[i] < 0:
            raise ValueError(f"{name}: cell_slot out of range")
        max_slot = max(max_slot, cell_slot[i])
        min_row = min(min_row, cell_row[i])
        max_row = max(max_row, cell_row[i])
    return _corpus_spec(cells, hashes, seq_ptr, pad_before, pad_after, name, &tmpl_ptr[0],
                        &cell_row[0] if n_cells else NULL, &cell_slot[0] if n_cells else NULL,
                        &tmpl_seed[0] if n_tmpl else NULL, n_tmpl, n_cells, max_slot, min_row,
                        max_row)


cdef Spec _corpus_spec(const int32_t[:, ::1] cells, const uint64_t[::1] hashes,
                       const int64_t[::1] seq_ptr, const int32_t[::1] pad_before,
                       const int32_t[::1] pad_after, str name, const int32_t* tmpl_ptr,
                       const int32_t* cell_row, const int32_t* cell_slot, const uint64_t* seeds,
                       Py_ssize_t n_tmpl, Py_ssize_t n_cells, Py_ssize_t max_slot,
                       Py_ssize_t min_row, Py_ssize_t max_row) except *:
    """The Spec of a corpus read by checked template arrays (``max_slot``,
    ``min_row`` and ``max_row``: the largest slot and the row offsets they
    name), after checking the corpus against them: :func:`_spec` (template
    arrays checked per call) and :func:`_plan_spec` (checked in the plan)."""
    cdef Py_ssize_t n_tok = cells.shape[0], n_slots = cells.shape[1]
    cdef Py_ssize_t i, n_str = hashes.shape[0]
    cdef Spec sp
    if seq_ptr.shape[0] < 1 or seq_ptr[0] != 0 or seq_ptr[seq_ptr.shape[0] - 1] != n_tok:
        raise ValueError(f"{name}: seq_ptr must run from 0 to n_tokens")
    for i in range(seq_ptr.shape[0] - 1):
        if seq_ptr[i + 1] < seq_ptr[i]:
            raise ValueError(f"{name}: seq_ptr must be non-decreasing")
    if max_slot >= n_slots:
        raise ValueError(f"{name}: cell_slot out of range")
    if min_row < -pad_before.shape[0] or max_row > pad_after.shape[0]:
        raise ValueError(f"{name}: cell_row beyond the padding")
    if n_tok and n_cells and not _ids_in_range(cells, n_str):
        raise ValueError(f"{name}: cells out of range of hashes")
    for i in range(pad_before.shape[0]):
        if not (0 <= pad_before[i] < n_str):
            raise ValueError(f"{name}: pad_before out of range of hashes")
    for i in range(pad_after.shape[0]):
        if not (0 <= pad_after[i] < n_str):
            raise ValueError(f"{name}: pad_after out of range of hashes")
    sp.cells = &cells[0, 0] if n_tok and n_slots else NULL
    sp.n_slots = n_slots
    sp.hashes = &hashes[0] if n_str else NULL
    sp.hashes_len = n_str
    sp.seq_ptr = &seq_ptr[0]
    sp.n_seq = seq_ptr.shape[0] - 1
    sp.tmpl_ptr = tmpl_ptr
    sp.cell_row = cell_row
    sp.cell_slot = cell_slot
    sp.seeds = seeds
    sp.n_tmpl = n_tmpl
    sp.pad_before = &pad_before[0] if pad_before.shape[0] else NULL
    sp.pad_after = &pad_after[0] if pad_after.shape[0] else NULL
    return sp


cdef void _extract(const Spec* sp, uint64_t* out) noexcept nogil:
    cdef Py_ssize_t s, t
    cdef int64_t start, end, p
    for s in range(sp.n_seq):
        start = sp.seq_ptr[s]
        end = sp.seq_ptr[s + 1]
        for p in range(start, end):
            for t in range(sp.n_tmpl):
                out[p * sp.n_tmpl + t] = _key(sp, p, start, end, t)


def extract_keys(
    const int32_t[:, ::1] cells not None,
    const uint64_t[::1] hashes not None,
    const int64_t[::1] seq_ptr not None,
    const int32_t[::1] tmpl_ptr not None,
    const int32_t[::1] cell_row not None,
    const int32_t[::1] cell_slot not None,
    const uint64_t[::1] tmpl_seed not None,
    const int32_t[::1] pad_before not None,
    const int32_t[::1] pad_after not None,
):
    """Compute the 64-bit key of every (token, template) pair.

    Parameters
    ----------
    cells : ndarray of int32, shape (n_tokens, n_slots)
        Interned id of the string in each slot (a column, or a token function
        of a column) of each token.
    hashes : ndarray of uint64, shape (n_strings,)
        Hash of each interned string (:func:`hash_strings`).
    seq_ptr : ndarray of int64, shape (n_sequences + 1,)
        Sequence ``s`` spans rows ``seq_ptr[s]:seq_ptr[s + 1]`` of ``cells``.
    tmpl_ptr : ndarray of int32, shape (n_templates + 1,)
        Template ``t`` reads cells ``tmpl_ptr[t]:tmpl_ptr[t + 1]``.
    cell_row, cell_slot : ndarray of int32, shape (n_cells,)
        Row offset (relative to the current token) and slot of each cell.
    tmpl_seed : ndarray of uint64, shape (n_templates,)
        Hash of each template's literal text.
    pad_before, pad_after : ndarray of int32, shape (max_offset,)
        Interned ids of the padding strings ``_B-1, _B-2, ...`` and
        ``_B+1, _B+2, ...`` used for rows outside the sequence.

    Returns
    -------
    ndarray of uint64, shape (n_tokens, n_templates)
        ``combine(...combine(seed, cell_1)..., cell_k)`` per token and template.
    """
    cdef Spec sp = _spec(cells, hashes, seq_ptr, tmpl_ptr, cell_row, cell_slot, tmpl_seed,
                         pad_before, pad_after, "extract_keys")
    out = np.empty((cells.shape[0], tmpl_seed.shape[0]), dtype=np.uint64)
    cdef uint64_t[:, ::1] o = out
    if out.size:
        with nogil:
            _extract(&sp, &o[0, 0])
    return out


cdef bint _ids_in_range(const int32_t[:, ::1] ids, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    for i in range(ids.shape[0]):
        for j in range(ids.shape[1]):
            if ids[i, j] < 0 or ids[i, j] >= n:
                return False
    return True


def hash_rows(
    const uint64_t[::1] seeds not None,
    const uint64_t[:, ::1] values not None,
    const int32_t[::1] counts not None,
):
    """Fold ``values[i, :counts[i]]`` into ``seeds[i]``, row by row.

    This recomputes keys from stored (template, cell strings) pairs, with the
    same ``combine`` as :func:`extract_keys`; used to check a loaded table.

    Returns
    -------
    ndarray of uint64, shape (n_rows,)
    """
    cdef Py_ssize_t n = seeds.shape[0], i, j
    if values.shape[0] != n or counts.shape[0] != n:
        raise ValueError("hash_rows: seeds, values and counts differ in length")
    for i in range(n):
        if counts[i] < 0 or counts[i] > values.shape[1]:
            raise ValueError("hash_rows: counts out of range")
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef uint64_t h
    with nogil:
        for i in range(n):
            h = seeds[i]
            for j in range(counts[i]):
                h = combine(h, values[i, j])
            o[i] = h
    return out


def name_cells(
    const int32_t[:, ::1] cells not None,
    const int64_t[::1] seq_ptr not None,
    const int32_t[::1] tmpl_ptr not None,
    const int32_t[::1] cell_row not None,
    const int32_t[::1] cell_slot not None,
    const int32_t[::1] pad_before not None,
    const int32_t[::1] pad_after not None,
    const int64_t[::1] first_tok not None,
    const int32_t[::1] first_tmpl not None,
    Py_ssize_t n_strings,
):
    """The strings each attribute read where it was first seen, renumbered densely.

    Attribute ``a`` was first seen at token ``first_tok[a]`` under template
    ``first_tmpl[a]``; its cells are read as :func:`extract_keys` reads them
    (same arguments).  The string ids used by any attribute are then
    renumbered ``0, 1, ...`` in increasing order, as ``np.unique`` with
    ``return_inverse`` would.

    Returns
    -------
    used : ndarray of int64
        The string ids used, ascending.
    out : ndarray of int32
        Index into ``used`` of each cell of each attribute, attributes
        concatenated (template ``t`` contributes ``tmpl_ptr[t + 1] - tmpl_ptr[t]``).
    """
    cdef Py_ssize_t n_attr = first_tok.shape[0], n_tok = cells.shape[0]
    cdef Py_ssize_t n_seq = seq_ptr.shape[0] - 1, n_tmpl = tmpl_ptr.shape[0] - 1
    cdef Py_ssize_t a, c, s, i, total = 0
    cdef int64_t p, q, start, end
    cdef int32_t t, v
    if first_tmpl.shape[0] != n_attr:
        raise ValueError("name_cells: first_tok and first_tmpl differ in length")
    if seq_ptr.shape[0] < 1 or seq_ptr[0] != 0 or seq_ptr[n_seq] != n_tok:
        raise ValueError("name_cells: seq_ptr must run from 0 to n_tokens")
    for s in range(n_seq):
        if seq_ptr[s + 1] < seq_ptr[s]:
            raise ValueError("name_cells: seq_ptr must be non-decreasing")
    if n_tmpl < 0 or tmpl_ptr[0] != 0 or tmpl_ptr[n_tmpl] != cell_row.shape[0] \
            or cell_slot.shape[0] != cell_row.shape[0]:
        raise ValueError("name_cells: tmpl_ptr, cell_row and cell_slot do not agree")
    for t in range(n_tmpl):
        if tmpl_ptr[t + 1] < tmpl_ptr[t]:
            raise ValueError("name_cells: tmpl_ptr must be non-decreasing")
    for c in range(cell_row.shape[0]):
        if not (0 <= cell_slot[c] < cells.shape[1]):
            raise ValueError("name_cells: cell_slot out of range")
        if cell_row[c] < -pad_before.shape[0] or cell_row[c] > pad_after.shape[0]:
            raise ValueError("name_cells: cell_row beyond the padding")
    for a in range(n_attr):
        if not (0 <= first_tok[a] < n_tok) or not (0 <= first_tmpl[a] < n_tmpl):
            raise ValueError("name_cells: first_tok or first_tmpl out of range")
        total += tmpl_ptr[first_tmpl[a] + 1] - tmpl_ptr[first_tmpl[a]]
    if n_tok and cell_row.shape[0] and not _ids_in_range(cells, n_strings):
        raise ValueError("name_cells: cells out of range")
    for i in range(pad_before.shape[0]):
        if not (0 <= pad_before[i] < n_strings) or not (0 <= pad_after[i] < n_strings):
            raise ValueError("name_cells: padding out of range")
    seq_np = np.empty(n_tok, dtype=np.int64)
    out_np = np.empty(total, dtype=np.int32)
    used_np = np.zeros(max(n_strings, 1), dtype=np.int32)
    cdef int64_t[::1] seq_of = seq_np
    cdef int32_t[::1] out = out_np
    cdef int32_t[::1] rank = used_np
    with nogil:
        for s in range(n_seq):
            for p in range(seq_ptr[s], seq_ptr[s + 1]):
                seq_of[p] = s
        i = 0
        for a in range(n_attr):
            p = first_tok[a]
            t = first_tmpl[a]
            start = seq_ptr[seq_of[p]]
            end = seq_ptr[seq_of[p] + 1]
            for c in range(tmpl_ptr[t], tmpl_ptr[t + 1]):
                q = p + cell_row[c]
                if q < start:
                    v = pad_before[start - q - 1]
                elif q >= end:
                    v = pad_after[q - end]
                else:
                    v = cells[q, cell_slot[c]]
                out[i] = v
                rank[v] = 1
                i += 1
        # rank[v] = number of used ids below v, then each cell renumbered.
        p = 0
        for i in range(n_strings):
            if rank[i]:
                rank[i] = <int32_t> p
                p += 1
            else:
                rank[i] = -1
        for i in range(total):
            out[i] = rank[out[i]]
    used = np.flatnonzero(used_np[:n_strings] >= 0)
    return used, out_np
