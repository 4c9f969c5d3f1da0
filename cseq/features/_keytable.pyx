"""The key table: 64-bit template keys to dense attribute ids, and the plans that look them up.

* :class:`KeyTable` is an open-addressing hash table ``uint64 key -> int32 id``
  with linear probing and growth, used to give keys dense attribute ids;
  its lookups read the keys of a corpus straight from its interned cells
  (:func:`cseq.features._templates._key`), never building the key array.
* :class:`TemplatePlan` holds a template set's arrays checked once, and
  :class:`WordMemo` the attributes that read one word, looked up once per
  distinct word.
"""

cimport cython
from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memmove, memset

from cython.parallel cimport prange, threadid

from cseq.features._hash cimport (MAX_IDS, Table, combine, slots_for, table_copy, table_free,
                                  table_grow, table_init, table_probe)
from cseq.features._templates cimport Spec, _corpus_spec, _ids_in_range, _key, _spec
from cseq._core._prefetch cimport cseq_prefetch

import numpy as np

from cseq.exceptions import InputError

__all__ = ["KeyTable", "TemplatePlan", "WordMemo"]


cdef inline int32_t _id_of(Table tab, uint64_t key) noexcept nogil:
    """Id of ``key`` in the key table ``tab`` (the key is its own hash; slot
    value id + 1), or -1."""
    return <int32_t> (tab.slots[table_probe(tab, key, NULL, NULL)].value - 1)


cdef enum:
    # Keys ahead whose slots are prefetched while one is probed.
    AHEAD = 24
    # Tokens whose keys are made before any is probed (a few kB of keys).
    BLOCK = 32
    # Below this many keys (tens of microseconds of probing), word_memo and
    # lookup_packed on one thread keep the GIL: releasing it would let another
    # busy Python thread keep it for up to the switch interval (5 ms) before
    # this one got it back (the convoy effect; cseq/chain/_decode.pyx's GIL_MIN_WORK).
    GIL_MIN_KEYS = 2048


cdef void _probe_all(Table tab, const uint64_t* keys,
                     const int64_t* where, Py_ssize_t m, int32_t* out) noexcept nogil:
    """``out[where[k]]`` = id of ``keys[k]`` (-1 if absent), prefetching AHEAD keys ahead."""
    cdef Py_ssize_t k
    for k in range(min(<Py_ssize_t> AHEAD, m)):
        cseq_prefetch(&tab.slots[keys[k] & tab.mask])
    for k in range(m):
        if k + AHEAD < m:
            cseq_prefetch(&tab.slots[keys[k + AHEAD] & tab.mask])
        out[where[k]] = _id_of(tab, keys[k])


cdef void _memo_words(const Spec* sp, Table tab,
                      const int32_t* word_cells, int32_t* memo, const int32_t* tmpl_memo,
                      Py_ssize_t n_memo, Py_ssize_t w0, Py_ssize_t w1, uint64_t* buf,
                      int64_t* where) noexcept nogil:
    """``memo[w, j]`` for strings ``w0 <= w < w1``: the id of memo template
    ``tmpl_memo[j]`` read on ``w``, or -2 (left) when ``w`` lacks a slot it reads."""
    cdef Py_ssize_t w, j, t, c, m = 0
    cdef uint64_t h
    cdef int32_t v
    cdef bint ok
    for w in range(w0, w1):
        for j in range(n_memo):
            t = tmpl_memo[j]
            h = sp.seeds[t]
            ok = True
            for c in range(sp.tmpl_ptr[t], sp.tmpl_ptr[t + 1]):
                v = word_cells[w * sp.n_slots + sp.cell_slot[c]]
                if v < 0:
                    ok = False
                    break
                h = combine(h, sp.hashes[v])
            if ok:
                buf[m] = h
                where[m] = w * n_memo + j
                m += 1
    _probe_all(tab, buf, where, m, memo)


cdef Py_ssize_t _add_block(const Spec* sp, Py_ssize_t p, Py_ssize_t nb, Py_ssize_t* s,
                           const int32_t* words, Py_ssize_t n_wcols, const int32_t* memo,
                           Py_ssize_t n_memo, const int32_t* memo_col, int64_t* counts,
                           int32_t* out, uint64_t* buf, int64_t* where,
                           int64_t* mpos) noexcept nogil:
    """Keys of tokens ``p .. p + nb - 1`` still to insert, with where their ids
    go (and which memo entry they fill, or -1); memo hits are written and
    counted at once.  The number of keys to insert."""
    cdef Py_ssize_t n_tmpl = sp.n_tmpl, q, t, j, m = 0, mi
    cdef int64_t start, end
    cdef int32_t a
    for q in range(p, p + nb):
        while sp.seq_ptr[s[0] + 1] <= q:
            s[0] += 1
        start = sp.seq_ptr[s[0]]
        end = sp.seq_ptr[s[0] + 1]
        j = 0
        for t in range(n_tmpl):
            mi = -1
            if n_memo and memo_col[t] >= 0:
                mi = words[q * n_wcols + memo_col[t]] * n_memo + j
                j += 1
                a = memo[mi]
                if a >= 0:
                    out[q * n_tmpl + t] = a
                    counts[a] += 1
                    continue
            buf[m] = _key(sp, q, start, end, t)
            where[m] = q * n_tmpl + t
            mpos[m] = mi
            m += 1
    return m


cdef Py_ssize_t _check_memo(const Spec* sp, const int32_t[:, ::1] words,
                            const int32_t[:, ::1] word_cells, const int32_t[::1] memo_col,
                            str name) except -1:
    """Validate the per-string memo arguments; the number of memo templates."""
    cdef Py_ssize_t n_tok = sp.seq_ptr[sp.n_seq], n_words = word_cells.shape[0]
    cdef Py_ssize_t t, c, i, j, n_memo = 0
    if memo_col.shape[0] != sp.n_tmpl or words.shape[0] != n_tok \
            or word_cells.shape[1] != sp.n_slots:
        raise ValueError(f"{name}: words, word_cells or memo_col do not match cells "
                         "and the templates")
    for t in range(sp.n_tmpl):
        if memo_col[t] >= 0:
            if memo_col[t] >= words.shape[1]:
                raise ValueError(f"{name}: memo_col out of range")
            for c in range(sp.tmpl_ptr[t], sp.tmpl_ptr[t + 1]):
                if sp.cell_row[c] != 0:
                    raise ValueError(f"{name}: a memo template reads another row")
            n_memo += 1
    if n_memo and n_tok and not _ids_in_range(words, n_words):
        raise ValueError(f"{name}: words out of range")
    for i in range(n_words):
        for j in range(sp.n_slots):
            if not (-1 <= word_cells[i, j] < sp.hashes_len):
                raise ValueError(f"{name}: word_cells out of range")
    return n_memo


cdef void _compact(const int32_t* rows, const int32_t* count, int32_t* out,
                   Py_ssize_t n_tmpl, Py_ssize_t p0, Py_ssize_t p1, int64_t* ptr) noexcept nogil:
    """The ids >= 0 among the first ``count[p - p0]`` of each row of ``rows``
    (tokens ``p0:p1``, ``n_tmpl`` wide) written in order from row ``p0`` of
    ``out`` on; ``ptr[p + 1]`` = how many token ``p`` kept."""
    cdef Py_ssize_t p, t, k = p0 * n_tmpl, n, base
    cdef int32_t a
    for p in range(p0, p1):
        n = k
        base = (p - p0) * n_tmpl
        for t in range(base, base + count[p - p0]):
            # Without a branch: about one id in six is absent when tagging.
            a = rows[t]
            out[k] = a
            k += a >= 0
        ptr[p + 1] = k - n


cdef void _gather(int32_t* out, Py_ssize_t n_tmpl, Py_ssize_t n_tok, Py_ssize_t chunk,
                  int64_t* ptr) noexcept nogil:
    """After :func:`_compact` of every ``chunk`` rows: the chunks' ids moved
    together at the front of ``out`` and ``ptr`` summed into offsets."""
    cdef Py_ssize_t p0, p1, p
    cdef int64_t n, dest = 0
    ptr[0] = 0
    p0 = 0
    while p0 < n_tok:
        p1 = min(p0 + chunk, n_tok)
        n = 0
        for p in range(p0, p1):
            n += ptr[p + 1]
            ptr[p + 1] = dest + n
        # dest <= p0 * n_tmpl: the chunk moves left over data already moved.
        if dest != p0 * n_tmpl and n:
            memmove(out + dest, out + p0 * n_tmpl, <size_t> n * sizeof(int32_t))
        dest += n
        p0 = p1


cdef struct Plan:
    # What _lookup_tok reads besides the Spec: the slots whose string hashes
    # it prefetches, and (leaving the memo's ids out) the templates without
    # a memo and the (column, row) of the words the memo templates read.
    const int32_t* hot
    Py_ssize_t n_hot
    const int32_t* plain
    Py_ssize_t n_plain
    const int32_t* group_col
    const int32_t* group_row
    Py_ssize_t n_groups


@cython.auto_pickle(False)  # pickled by __reduce__, from its arrays
cdef class TemplatePlan:
    """A featurizer's template arrays as :meth:`KeyTable.word_memo` and
    :meth:`KeyTable.lookup_packed` read them, checked once.

    ``tmpl_ptr``, ``cell_row``, ``cell_slot`` and ``tmpl_seed`` as for
    :func:`extract_keys`; ``memo_col`` and ``memo_row`` (None: zeros) the
    memo layout (see :meth:`KeyTable.lookup_tokens`).  Made once per
    featurizer and given to :meth:`KeyTable.plan_word_memo` and
    :meth:`KeyTable.plan_lookup_packed` call after call, which then check
    only what depends on the corpus: checking and reading the template
    arrays, and deriving the lookup plan from them, cost more than looking a
    short sentence up.  It keeps copies of its own that nothing can change,
    so threads share it.
    """

    cdef readonly Py_ssize_t n_tmpl, n_memo
    cdef Py_ssize_t n_cells, max_slot, min_row, max_row, max_memo_col
    cdef const int32_t[::1] tmpl_ptr, cell_row, cell_slot, memo_col, memo_row, tmpl_memo
    cdef const int32_t[::1] hot, plain, group_col, group_row
    cdef const uint64_t[::1] seeds

    def __cinit__(self, tmpl_ptr, cell_row, cell_slot, tmpl_seed, memo_col, memo_row=None,
                  str name="TemplatePlan"):
        cdef Py_ssize_t t, c
        self.tmpl_ptr = _own(tmpl_ptr, np.int32)
        self.cell_row = _own(cell_row, np.int32)
        self.cell_slot = _own(cell_slot, np.int32)
        self.seeds = _own(tmpl_seed, np.uint64)
        self.memo_col = _own(memo_col, np.int32)
        self.memo_row = _own(np.zeros(len(self.memo_col), dtype=np.int32) if memo_row is None
                             else memo_row, np.int32)
        cdef Py_ssize_t n_tmpl = self.seeds.shape[0], n_cells = self.cell_row.shape[0]
        self.n_tmpl = n_tmpl
        self.n_cells = n_cells
        if self.memo_col.shape[0] != n_tmpl:
            raise ValueError(f"{name}: memo_col does not match the templates")
        if self.memo_row.shape[0] != n_tmpl:
            raise ValueError(f"{name}: memo_row does not match the templates")
        if self.tmpl_ptr.shape[0] != n_tmpl + 1 or self.tmpl_ptr[0] != 0 \
                or self.tmpl_ptr[n_tmpl] != n_cells:
            raise ValueError(f"{name}: tmpl_ptr must run from 0 to n_cells")
        if self.cell_slot.shape[0] != n_cells:
            raise ValueError(f"{name}: cell_row and cell_slot differ in length")
        self.max_slot = -1
        self.min_row = 0
        self.max_row = 0
        for c in range(n_cells):
            if self.cell_slot[c] < 0:
                raise ValueError(f"{name}: cell_slot out of range")
            self.max_slot = max(self.max_slot, self.cell_slot[c])
            self.min_row = min(self.min_row, self.cell_row[c])
            self.max_row = max(self.max_row, self.cell_row[c])
        self.n_memo = 0
        self.max_memo_col = -1
        for t in range(n_tmpl):
            if self.tmpl_ptr[t + 1] < self.tmpl_ptr[t]:
                raise ValueError(f"{name}: tmpl_ptr must be non-decreasing")
            if self.memo_col[t] < -1:
                raise ValueError(f"{name}: memo_col out of range")
            if self.memo_col[t] >= 0:
                for c in range(self.tmpl_ptr[t], self.tmpl_ptr[t + 1]):
                    if self.cell_row[c] != self.memo_row[t]:
                        raise ValueError(f"{name}: a memo template reads another row")
                self.n_memo += 1
                self.max_memo_col = max(self.max_memo_col, self.memo_col[t])
        cols = np.asarray(self.memo_col)
        rows = np.asarray(self.memo_row)
        self.tmpl_memo = _own(np.flatnonzero(cols >= 0), np.int32)
        # The lookup plan (_lookup_tok's Plan): the slots whose strings'
        # hashes the keys made per token read, the templates without a memo,
        # and the distinct (column, row) pairs the memo's words are at, sorted.
        hot = np.zeros(self.max_slot + 1, dtype=np.uint8)
        for t in range(n_tmpl):
            if self.memo_col[t] < 0:
                for c in range(self.tmpl_ptr[t], self.tmpl_ptr[t + 1]):
                    hot[self.cell_slot[c]] = 1
        pairs = sorted({(c_, r_) for c_, r_ in zip(cols.tolist(), rows.tolist()) if c_ >= 0})
        self.hot = _own(np.flatnonzero(hot), np.int32)
        self.plain = _own(np.flatnonzero(cols < 0), np.int32)
        self.group_col = _own([p[0] for p in pairs], np.int32)
        self.group_row = _own([p[1] for p in pairs], np.int32)

    cdef int same_layout(self, TemplatePlan other) except -1:
        """Whether ``other`` has this plan's memo layout (memo_col and memo_row)."""
        if other is self:
            return True
        return np.array_equal(np.asarray(self.memo_col), np.asarray(other.memo_col)) \
            and np.array_equal(np.asarray(self.memo_row), np.asarray(other.memo_row))

    @property
    def memo_layout(self):
        """``(memo_col, memo_row)``, copies."""
        return np.array(self.memo_col), np.array(self.memo_row)

    def __reduce__(self):
        # Pickled as the arrays it is made from (a featurizer that holds it is
        # pickled with it).
        return TemplatePlan, (np.array(self.tmpl_ptr), np.array(self.cell_row),
                              np.array(self.cell_slot), np.array(self.seeds),
                              np.array(self.memo_col), np.array(self.memo_row))


cdef object _own(a, dtype):
    """A contiguous copy of ``a`` of its own, read-only (a plan's arrays)."""
    out = np.array(a, dtype=dtype, copy=True, order="C")
    out.flags.writeable = False
    return out


cdef Spec _plan_spec(TemplatePlan plan, const int32_t[:, ::1] cells,
                     const uint64_t[::1] hashes, const int64_t[::1] seq_ptr,
                     const int32_t[::1] pad_before, const int32_t[::1] pad_after,
                     str name) except *:
    """:func:`_spec` with the template arrays of ``plan`` (checked when it was
    made): what is left to check is the corpus's."""
    return _corpus_spec(cells, hashes, seq_ptr, pad_before, pad_after, name,
                        &plan.tmpl_ptr[0], &plan.cell_row[0] if plan.n_cells else NULL,
                        &plan.cell_slot[0] if plan.n_cells else NULL,
                        &plan.seeds[0] if plan.n_tmpl else NULL, plan.n_tmpl, plan.n_cells,
                        plan.max_slot, plan.min_row, plan.max_row)


cdef class WordMemo:
    """Ids of the memo templates per distinct string, from :meth:`KeyTable.word_memo`.

    Only the table that made it reads it, and only while that table is
    unchanged; it holds no pointer, so it may be shared by threads.
    """

    cdef object table
    cdef Py_ssize_t table_size
    cdef readonly Py_ssize_t n_words, n_memo
    cdef object ids
    # The templates it was made for (their memo layout is what it answers).
    cdef TemplatePlan plan
    # pending[w]: 1 when a memo template of string w is looked up per token (-2).
    cdef object pending

    def __cinit__(self):
        self.table = None

    @property
    def memo_ids(self):
        """int32 (n_words, n_memo): the id of each memo template for each string
        (-1 absent, -2 looked up per token), a copy (by memcpy: ndarray.copy
        releases the GIL over 500 items, handing it to any busy thread)."""
        out = np.empty_like(self.ids)
        cdef const int32_t[:, ::1] src = self.ids
        cdef int32_t[:, ::1] dst = out
        if src.shape[0] and src.shape[1]:
            memcpy(&dst[0, 0], &src[0, 0], src.shape[0] * src.shape[1] * sizeof(int32_t))
        return out


cdef class KeyTable:
    """Open-addressing hash table mapping uint64 keys to dense int32 ids.

    Ids are given in order of first insertion, ``0 .. len(table) - 1``.  The
    table keeps, per id, its key, how often it was inserted and where it was
    first seen (token and template), which the Python layer uses for
    ``min_freq`` and for readable attribute names.  The per-id arrays are
    numpy arrays owned by this object; the slots are the open-addressing
    table the three interners share (:mod:`cseq.features._hash`, C memory this object
    frees), each key its own hash.  The probing loops run without the GIL.

    Parameters
    ----------
    capacity : int, optional
        Initial number of distinct keys to make room for.
    max_ids : int, optional
        Most distinct keys, at most (and by default) ``2**31 - 1``, the
        number of int32 ids; a smaller bound is for tests.
    """

    cdef object _keys_arr, _counts_arr, _first_tok_arr, _first_tmpl_arr
    cdef uint64_t* _keys
    cdef int64_t* _counts
    cdef int64_t* _first_tok
    cdef int32_t* _first_tmpl
    cdef Table _tab
    cdef Py_ssize_t _size, _limit, _max_ids

    def __cinit__(self, Py_ssize_t capacity=1024, Py_ssize_t max_ids=MAX_IDS):
        if capacity < 0:
            raise ValueError("KeyTable: capacity must be >= 0")
        if not 0 < max_ids <= MAX_IDS:
            raise ValueError(f"KeyTable: max_ids must be in 1 .. {MAX_IDS}")
        self._max_ids = max_ids
        self._size = 0
        table_init(&self._tab, slots_for(capacity))
        self._reserve_ids()

    def __dealloc__(self):
        table_free(&self._tab)

    cdef _reserve_ids(self):
        """Size the per-id arrays for as many ids as the slots hold (``_limit``)."""
        # Never more entries than int32 ids (70% of 2**32 slots would be):
        # ids, and id + 1 in the slots, stay below 2**31.
        cdef Py_ssize_t limit = min(<Py_ssize_t> self._tab.limit, self._max_ids)
        self._limit = limit
        if self._size == 0:
            self._keys_arr = np.empty(limit, dtype=np.uint64)
            self._counts_arr = np.empty(limit, dtype=np.int64)
            self._first_tok_arr = np.empty(limit, dtype=np.int64)
            self._first_tmpl_arr = np.empty(limit, dtype=np.int32)
        else:
            n = self._size
            self._keys_arr = np.concatenate([self._keys_arr[:n], np.empty(limit - n, np.uint64)])
            self._counts_arr = np.concatenate([self._counts_arr[:n], np.empty(limit - n, np.int64)])
            self._first_tok_arr = np.concatenate(
                [self._first_tok_arr[:n], np.empty(limit - n, np.int64)])
            self._first_tmpl_arr = np.concatenate(
                [self._first_tmpl_arr[:n], np.empty(limit - n, np.int32)])
        cdef uint64_t[::1] keys = self._keys_arr
        cdef int64_t[::1] counts = self._counts_arr
        cdef int64_t[::1] first_tok = self._first_tok_arr
        cdef int32_t[::1] first_tmpl = self._first_tmpl_arr
        self._keys = &keys[0]
        self._counts = &counts[0]
        self._first_tok = &first_tok[0]
        self._first_tmpl = &first_tmpl[0]

    cdef _grow(self):
        with nogil:
            table_grow(&self._tab)
        self._reserve_ids()

    def __len__(self):
        return self._size

    def copy(self):
        """An independent copy: keys added to either table later are not in the other.

        Copies the slots and the used part of the per-id arrays (memory
        speed), so that an owner can grow a copy while readers keep probing
        this table (``partial_fit``'s copy-on-write, :mod:`cseq.learners.partial`).
        """
        cdef KeyTable out = KeyTable.__new__(KeyTable, 0, self._max_ids)
        cdef Py_ssize_t n = self._size, limit = self._limit
        cdef Table tab
        table_copy(&tab, &self._tab)
        table_free(&out._tab)
        out._tab = tab
        out._keys_arr = np.empty(limit, dtype=np.uint64)
        out._counts_arr = np.empty(limit, dtype=np.int64)
        out._first_tok_arr = np.empty(limit, dtype=np.int64)
        out._first_tmpl_arr = np.empty(limit, dtype=np.int32)
        out._keys_arr[:n] = self._keys_arr[:n]
        out._counts_arr[:n] = self._counts_arr[:n]
        out._first_tok_arr[:n] = self._first_tok_arr[:n]
        out._first_tmpl_arr[:n] = self._first_tmpl_arr[:n]
        cdef uint64_t[::1] keys = out._keys_arr
        cdef int64_t[::1] counts = out._counts_arr
        cdef int64_t[::1] first_tok = out._first_tok_arr
        cdef int32_t[::1] first_tmpl = out._first_tmpl_arr
        out._keys = &keys[0]
        out._counts = &counts[0]
        out._first_tok = &first_tok[0]
        out._first_tmpl = &first_tmpl[0]
        out._limit = limit
        out._size = n
        return out

    @classmethod
    def from_keys(cls, keys, Py_ssize_t max_ids=MAX_IDS):
        """Build a table whose id ``i`` is ``keys[i]`` (keys must be distinct)."""
        cdef const uint64_t[::1] k = np.ascontiguousarray(keys, dtype=np.uint64)
        if k.shape[0] > max_ids:
            raise ValueError(f"KeyTable.from_keys: more than {max_ids:,} keys (ids are int32)")
        cdef KeyTable table = cls(k.shape[0], max_ids)
        cdef Py_ssize_t i
        cdef uint64_t slot
        for i in range(k.shape[0]):
            slot = table_probe(table._tab, k[i], NULL, NULL)
            if table._tab.slots[slot].value != 0:
                raise ValueError(
                    f"KeyTable.from_keys: key {i} repeats key {table._tab.slots[slot].value - 1}")
            table._tab.slots[slot].hash = k[i]
            table._tab.slots[slot].value = i + 1
        table._keys_arr[:k.shape[0]] = k
        table._counts_arr[:k.shape[0]] = 0
        table._first_tok_arr[:k.shape[0]] = -1
        table._first_tmpl_arr[:k.shape[0]] = -1
        table._size = k.shape[0]
        return table

    def add(self, const uint64_t[:, ::1] keys not None):
        """Insert every key, count it, and return the id of each.

        Parameters
        ----------
        keys : ndarray of uint64, shape (n_tokens, n_templates)
            As returned by :func:`extract_keys`.  A new key records row and
            column of its first occurrence.

        Returns
        -------
        ndarray of int32, shape (n_tokens, n_templates)
        """
        cdef Py_ssize_t n_rows = keys.shape[0], n_cols = keys.shape[1]
        cdef Py_ssize_t total = n_rows * n_cols
        out = np.empty((n_rows, n_cols), dtype=np.int32)
        cdef int32_t[:, ::1] o = out
        if total:
            self._insert(&keys[0, 0], NULL, total, &o[0, 0], n_cols)
        return out

    cdef int _insert(self, const uint64_t* keys, const int64_t* where, Py_ssize_t total,
                     int32_t* out, Py_ssize_t n_cols) except -1:
        """Insert ``keys[:total]``, key ``k`` being entry ``where[k]`` (``k`` when
        ``where`` is NULL) of an ``n_cols``-wide id array ``out``; grows the
        table when it fills."""
        cdef Py_ssize_t pos = 0
        while pos < total:
            pos = self._insert_run(keys, where, total, pos, out, n_cols)
            if pos < total:
                if self._size >= self._max_ids:
                    raise InputError(f"more than {self._max_ids:,} distinct attributes "
                                     "(ids are int32)")
                self._grow()
        return 0

    cdef Py_ssize_t _insert_run(self, const uint64_t* keys, const int64_t* where,
                                Py_ssize_t total, Py_ssize_t pos, int32_t* out,
                                Py_ssize_t n_cols) noexcept:
        """Insert from ``pos`` until done or the table is full; where it stopped."""
        cdef int64_t* counts = self._counts
        cdef uint64_t* ids_keys = self._keys
        cdef int64_t* first_tok = self._first_tok
        cdef int32_t* first_tmpl = self._first_tmpl
        cdef Table tab = self._tab
        cdef Py_ssize_t k, r, idx
        cdef uint64_t slot
        cdef int32_t a
        cdef uint64_t key
        with nogil:
            for k in range(pos, min(pos + AHEAD, total)):
                cseq_prefetch(&tab.slots[keys[k] & tab.mask])
            while pos < total:
                if pos + AHEAD < total:
                    cseq_prefetch(&tab.slots[keys[pos + AHEAD] & tab.mask])
                key = keys[pos]
                idx = where[pos] if where != NULL else pos
                slot = table_probe(tab, key, NULL, NULL)
                a = <int32_t> (tab.slots[slot].value - 1)
                if a == -1:
                    if self._size >= self._limit:
                        break
                    a = <int32_t> self._size
                    self._size += 1
                    tab.slots[slot].hash = key
                    tab.slots[slot].value = a + 1
                    ids_keys[a] = key
                    counts[a] = 0
                    r = idx // n_cols
                    first_tok[a] = r
                    first_tmpl[a] = <int32_t> (idx - r * n_cols)
                counts[a] += 1
                out[idx] = a
                pos += 1
        return pos

    def add_tokens(self, const int32_t[:, ::1] cells not None,
                   const uint64_t[::1] hashes not None, const int64_t[::1] seq_ptr not None,
                   const int32_t[::1] tmpl_ptr not None, const int32_t[::1] cell_row not None,
                   const int32_t[::1] cell_slot not None, const uint64_t[::1] tmpl_seed not None,
                   const int32_t[::1] pad_before not None, const int32_t[::1] pad_after not None,
                   words=None, word_cells=None, memo_col=None):
        """``add(extract_keys(...))`` with the same arguments, without the key array.

        Keys are made for BLOCK tokens at a time and inserted at once, so they
        never leave the cache.  With ``words``, ``word_cells`` and ``memo_col``
        (as for :meth:`lookup_tokens`), a template that reads only the
        current token's string ``w`` is probed for the first token with
        ``w`` only; later tokens reuse its id (and count it).
        """
        cdef Spec sp = _spec(cells, hashes, seq_ptr, tmpl_ptr, cell_row, cell_slot, tmpl_seed,
                             pad_before, pad_after, "KeyTable.add_tokens")
        cdef Py_ssize_t n_tok = cells.shape[0], n_tmpl = sp.n_tmpl, p = 0, s = 0, nb, m, k
        cdef Py_ssize_t n_memo = 0, n_words = 0, n_wcols = 1
        cdef const int32_t[:, ::1] wv
        cdef const int32_t[::1] mc
        cdef const int32_t* wp = NULL
        cdef const int32_t* mcp = NULL
        if words is not None:
            wv = words
            mc = memo_col
            n_memo = _check_memo(&sp, wv, word_cells, mc, "KeyTable.add_tokens")
            n_words = word_cells.shape[0]
            n_wcols = wv.shape[1]
            wp = &wv[0, 0] if wv.shape[0] else NULL
            mcp = &mc[0] if n_tmpl else NULL
        out = np.empty((n_tok, n_tmpl), dtype=np.int32)
        if n_tok == 0 or n_tmpl == 0:
            return out
        # An empty table starts with room for one key in 8 (as many as the
        # pos preset gives on EWT): growing by doubling costs more than the
        # zeroed, untouched pages of a table too large.
        cdef Py_ssize_t want = slots_for(min(n_tok * n_tmpl // 8, <Py_ssize_t> 1 << 28))
        if self._size == 0 and want > <Py_ssize_t> self._tab.mask + 1:
            table_free(&self._tab)
            table_init(&self._tab, want)
            self._reserve_ids()
        cdef int32_t[:, ::1] o = out
        memo_np = np.full((max(n_words, 1), max(n_memo, 1)), -1, dtype=np.int32)
        cdef int32_t[:, ::1] memo = memo_np
        keys_np = np.empty(BLOCK * n_tmpl, dtype=np.uint64)
        where_np = np.empty(BLOCK * n_tmpl, dtype=np.int64)
        mpos_np = np.empty(BLOCK * n_tmpl, dtype=np.int64)
        cdef uint64_t[::1] buf = keys_np
        cdef int64_t[::1] where = where_np
        cdef int64_t[::1] mpos = mpos_np
        cdef int32_t* memp = &memo[0, 0]
        cdef int32_t* op = &o[0, 0]
        while p < n_tok:
            with nogil:
                nb = min(<Py_ssize_t> BLOCK, n_tok - p)
                m = _add_block(&sp, p, nb, &s, wp, n_wcols, memp, n_memo, mcp,
                               self._counts, op, &buf[0], &where[0], &mpos[0])
            self._insert(&buf[0], &where[0], m, op, n_tmpl)
            for k in range(m):
                if mpos[k] >= 0:
                    memp[mpos[k]] = op[where[k]]
            p += nb
        return out

    def lookup(self, const uint64_t[:, ::1] keys not None, int n_jobs=1):
        """Id of each key, or -1 for keys not in the table, in ``n_jobs`` threads.

        Returns
        -------
        ndarray of int32, same shape as ``keys``
        """
        cdef Py_ssize_t n_rows = keys.shape[0], n_cols = keys.shape[1], r
        if n_jobs < 1:
            raise ValueError("KeyTable.lookup: n_jobs must be >= 1")
        out = np.empty((n_rows, n_cols), dtype=np.int32)
        cdef int32_t[:, ::1] o = out
        cdef Py_ssize_t chunk = 256, n_chunks = (n_rows + chunk - 1) // chunk
        if n_rows == 0 or n_cols == 0:
            return out
        for r in prange(n_chunks, nogil=True, schedule="static", num_threads=n_jobs):
            self._lookup_rows(&keys[0, 0], &o[0, 0], r * chunk * n_cols,
                              min((r + 1) * chunk, n_rows) * n_cols)
        return out

    cdef void _lookup_rows(self, const uint64_t* keys, int32_t* out, Py_ssize_t start,
                           Py_ssize_t end) noexcept nogil:
        """``out[k]`` for ``start <= k < end``, prefetching AHEAD keys ahead."""
        cdef Py_ssize_t k
        cdef Table tab = self._tab
        for k in range(start, min(start + AHEAD, end)):
            cseq_prefetch(&tab.slots[keys[k] & tab.mask])
        for k in range(start, end):
            if k + AHEAD < end:
                cseq_prefetch(&tab.slots[keys[k + AHEAD] & tab.mask])
            out[k] = _id_of(tab, keys[k])

    def lookup_tokens(self, const int32_t[:, ::1] cells not None,
                      const uint64_t[::1] hashes not None, const int64_t[::1] seq_ptr not None,
                      const int32_t[::1] tmpl_ptr not None, const int32_t[::1] cell_row not None,
                      const int32_t[::1] cell_slot not None,
                      const uint64_t[::1] tmpl_seed not None,
                      const int32_t[::1] pad_before not None,
                      const int32_t[::1] pad_after not None,
                      const int32_t[:, ::1] words not None,
                      const int32_t[:, ::1] word_cells not None,
                      const int32_t[::1] memo_col not None, int n_jobs=1, memo_row=None):
        """``lookup(extract_keys(...))`` with the same first arguments, in ``n_jobs`` threads.

        Templates whose cells all read one column ``memo_col[t]`` of one row
        ``memo_row[t]`` (0, the current token, when ``memo_row`` is None;
        ``memo_col[t] == -1``: any other template) are looked up once per
        distinct string of that column rather than once per token:
        ``words[p, k]`` is the string in column ``k`` of token ``p`` and
        ``word_cells[w]`` the row of ``cells`` every token whose string is
        ``w`` has (``-1`` where unknown; such words are looked up per token).
        A row outside the sequence (padding) is looked up per token.
        """
        cdef WordMemo memo = self.word_memo(hashes, tmpl_ptr, cell_row, cell_slot, tmpl_seed,
                                            word_cells, memo_col, memo_row, n_jobs)
        return self._lookup(cells, hashes, seq_ptr, tmpl_ptr, cell_row, cell_slot, tmpl_seed,
                            pad_before, pad_after, words, memo, n_jobs, False, False)

    def word_memo(self, const uint64_t[::1] hashes not None,
                  const int32_t[::1] tmpl_ptr not None, const int32_t[::1] cell_row not None,
                  const int32_t[::1] cell_slot not None, const uint64_t[::1] tmpl_seed not None,
                  const int32_t[:, ::1] word_cells not None,
                  const int32_t[::1] memo_col not None, memo_row=None, int n_jobs=1):
        """The ids of the memo templates (see :meth:`lookup_tokens`) for every string.

        Computed once for a corpus, then used by :meth:`lookup_packed` on any
        range of its tokens, in any thread, while the table is unchanged.
        :meth:`plan_word_memo` with ``TemplatePlan(tmpl_ptr, cell_row,
        cell_slot, tmpl_seed, memo_col, memo_row)``.

        Returns
        -------
        WordMemo
        """
        plan = TemplatePlan(tmpl_ptr.base, cell_row.base, cell_slot.base, tmpl_seed.base,
                            memo_col.base, memo_row, "KeyTable.word_memo")
        return self._word_memo(plan, hashes, word_cells, n_jobs)

    def plan_word_memo(self, TemplatePlan plan not None, const uint64_t[::1] hashes not None,
                       const int32_t[:, ::1] word_cells not None, int n_jobs=1):
        """:meth:`word_memo` with the template arrays of ``plan`` (made once)."""
        return self._word_memo(plan, hashes, word_cells, n_jobs)

    cdef WordMemo _word_memo(self, TemplatePlan plan, const uint64_t[::1] hashes,
                             const int32_t[:, ::1] word_cells, int n_jobs):
        cdef Py_ssize_t n_words = word_cells.shape[0], n_slots = word_cells.shape[1]
        cdef Py_ssize_t n_str = hashes.shape[0], i, j, n_memo = plan.n_memo
        if n_jobs < 1:
            raise ValueError("KeyTable.word_memo: n_jobs must be >= 1")
        if plan.max_slot >= n_slots:
            raise ValueError("KeyTable.word_memo: cell_slot out of range of word_cells")
        for i in range(n_words):
            for j in range(n_slots):
                if not (-1 <= word_cells[i, j] < n_str):
                    raise ValueError("KeyTable.word_memo: word_cells out of range")
        cdef WordMemo memo = WordMemo.__new__(WordMemo)
        memo.table = self
        memo.table_size = self._size
        memo.n_words = n_words
        memo.n_memo = n_memo
        memo.plan = plan
        # ids[w, j]: id of the j-th memo template for string w; -2: per token.
        # np.empty and a loop, not np.full and np.ones (Python functions that cost
        # more than the few words of a sentence they are made for) nor
        # ndarray.fill, which releases the GIL over 500 items and so hands it to
        # any busy thread on one sentence (the convoy effect: GIL_MIN_KEYS).
        memo.ids = np.empty((max(n_words, 1), max(n_memo, 1)), dtype=np.int32)
        pending_np = np.empty(max(n_words, 1), dtype=np.uint8)
        cdef int32_t[:, ::1] ids = memo.ids
        cdef uint8_t[::1] pending = pending_np
        cdef int32_t* idp = &ids[0, 0]
        for i in range(ids.shape[0] * ids.shape[1]):
            idp[i] = -2
        memset(&pending[0], 1, pending.shape[0])
        memo.pending = pending_np
        if n_memo == 0 or n_words == 0:
            return memo
        cdef Spec sp
        sp.n_slots = n_slots
        sp.hashes = &hashes[0] if n_str else NULL
        sp.hashes_len = n_str
        sp.tmpl_ptr = &plan.tmpl_ptr[0]
        sp.cell_slot = &plan.cell_slot[0] if plan.n_cells else NULL
        sp.seeds = &plan.seeds[0]
        sp.n_tmpl = plan.n_tmpl
        cdef Py_ssize_t chunk = 256, n_wchunks = (n_words + chunk - 1) // chunk
        # Scratch in C, not NumPy: for the few words of one sentence, making
        # arrays cost more than the lookups.  Each thread's keys of a chunk
        # and where their ids go, then the memo templates in order.
        cdef Py_ssize_t per_thread = chunk * n_memo
        cdef uint64_t* bufs = <uint64_t*> malloc(n_jobs * per_thread * sizeof(uint64_t))
        cdef int64_t* where = <int64_t*> malloc(n_jobs * per_thread * sizeof(int64_t))
        cdef const int32_t* tmpl_memo = &plan.tmpl_memo[0]
        try:
            if bufs == NULL or where == NULL:
                raise MemoryError()
            if n_jobs == 1 and n_words * n_memo < GIL_MIN_KEYS:
                for i in range(n_wchunks):  # a few words: the GIL kept (GIL_MIN_KEYS)
                    _memo_words(&sp, self._tab, &word_cells[0, 0], &ids[0, 0],
                                tmpl_memo, n_memo, i * chunk, min((i + 1) * chunk, n_words),
                                bufs, where)
            else:
                for i in prange(n_wchunks, nogil=True, schedule="static", num_threads=n_jobs):
                    _memo_words(&sp, self._tab, &word_cells[0, 0], &ids[0, 0],
                                tmpl_memo, n_memo, i * chunk, min((i + 1) * chunk, n_words),
                                bufs + threadid() * per_thread, where + threadid() * per_thread)
        finally:
            free(bufs)
            free(where)
        for i in range(n_words):
            pending[i] = 0
            for j in range(n_memo):
                if ids[i, j] == -2:
                    pending[i] = 1
                    break
        return memo

    def lookup_packed(self, const int32_t[:, ::1] cells not None,
                      const uint64_t[::1] hashes not None, const int64_t[::1] seq_ptr not None,
                      const int32_t[::1] tmpl_ptr not None, const int32_t[::1] cell_row not None,
                      const int32_t[::1] cell_slot not None,
                      const uint64_t[::1] tmpl_seed not None,
                      const int32_t[::1] pad_before not None,
                      const int32_t[::1] pad_after not None,
                      const int32_t[:, ::1] words not None, WordMemo memo not None,
                      int n_jobs=1, bint without_memo=False):
        """The ids of :meth:`lookup_tokens`, the absent ones (-1) left out, row by row.

        ``memo`` comes from :meth:`word_memo` of this table, unchanged since,
        for the strings ``words`` indexes; the other arguments are those of
        :meth:`lookup_tokens`, for any range of sequences of the corpus.
        With ``without_memo``, the ids a memo template takes from the memo
        (``memo.memo_ids`` >= -1, its row inside the sequence) are left out
        too: those a caller adds from the memo itself.

        Returns
        -------
        attr_ids : ndarray of int32
            The ids found, token after token, in template order.
        tok_ptr : ndarray of int64, shape (n_tokens + 1,)
            Token ``p`` has ``attr_ids[tok_ptr[p]:tok_ptr[p + 1]]``.
        """
        return self._lookup(cells, hashes, seq_ptr, tmpl_ptr, cell_row, cell_slot, tmpl_seed,
                            pad_before, pad_after, words, memo, n_jobs, True, without_memo)

    cdef _lookup(self, const int32_t[:, ::1] cells, const uint64_t[::1] hashes,
                 const int64_t[::1] seq_ptr, const int32_t[::1] tmpl_ptr,
                 const int32_t[::1] cell_row, const int32_t[::1] cell_slot,
                 const uint64_t[::1] tmpl_seed, const int32_t[::1] pad_before,
                 const int32_t[::1] pad_after, const int32_t[:, ::1] words, WordMemo memo,
                 int n_jobs, bint packed, bint without_memo):
        """:meth:`_plan_lookup` with these template arrays and ``memo``'s layout."""
        cols, rows = memo.plan.memo_layout
        plan = TemplatePlan(tmpl_ptr.base, cell_row.base, cell_slot.base, tmpl_seed.base, cols,
                            rows, "KeyTable.lookup_tokens")
        return self._plan_lookup(plan, cells, hashes, seq_ptr, pad_before, pad_after, words,
                                 memo, n_jobs, packed, without_memo)

    def plan_lookup_packed(self, TemplatePlan plan not None,
                           const int32_t[:, ::1] cells not None,
                           const uint64_t[::1] hashes not None,
                           const int64_t[::1] seq_ptr not None,
                           const int32_t[::1] pad_before not None,
                           const int32_t[::1] pad_after not None,
                           const int32_t[:, ::1] words not None, WordMemo memo not None,
                           int n_jobs=1, bint without_memo=False):
        """:meth:`lookup_packed` with the template arrays of ``plan`` (made once),
        which must have the memo layout ``memo`` was made with."""
        return self._plan_lookup(plan, cells, hashes, seq_ptr, pad_before, pad_after, words,
                                 memo, n_jobs, True, without_memo)

    cdef _plan_lookup(self, TemplatePlan plan, const int32_t[:, ::1] cells,
                      const uint64_t[::1] hashes, const int64_t[::1] seq_ptr,
                      const int32_t[::1] pad_before, const int32_t[::1] pad_after,
                      const int32_t[:, ::1] words, WordMemo memo, int n_jobs, bint packed,
                      bint without_memo):
        cdef Spec sp = _plan_spec(plan, cells, hashes, seq_ptr, pad_before, pad_after,
                                  "KeyTable.lookup_tokens")
        cdef Py_ssize_t n_tok = cells.shape[0], n_tmpl = sp.n_tmpl, i
        if n_jobs < 1:
            raise ValueError("KeyTable.lookup_tokens: n_jobs must be >= 1")
        if memo.table is not self or memo.table_size != self._size:
            raise ValueError("KeyTable.lookup_tokens: the word memo is of another table "
                             "or an older state of this one")
        if not plan.same_layout(memo.plan):
            raise ValueError("KeyTable.lookup_tokens: the word memo was made for other "
                             "templates")
        if words.shape[0] != n_tok:
            raise ValueError("KeyTable.lookup_tokens: words or the word memo do not match "
                             "cells and the templates")
        if plan.max_memo_col >= words.shape[1]:
            raise ValueError("KeyTable.lookup_tokens: memo_col out of range")
        if memo.n_memo and n_tok and not _ids_in_range(words, memo.n_words):
            raise ValueError("KeyTable.lookup_tokens: words out of range")
        cdef Plan pl
        pl.hot = &plan.hot[0] if plan.hot.shape[0] else NULL
        pl.n_hot = plan.hot.shape[0]
        pl.plain = &plan.plain[0] if plan.plain.shape[0] else NULL
        pl.n_plain = plan.plain.shape[0]
        pl.group_col = &plan.group_col[0] if plan.group_col.shape[0] else NULL
        pl.group_row = &plan.group_row[0] if plan.group_row.shape[0] else NULL
        pl.n_groups = plan.group_col.shape[0]
        out = np.empty((n_tok, n_tmpl), dtype=np.int32)
        ptr_np = np.zeros(n_tok + 1, dtype=np.int64)
        if n_tok == 0 or n_tmpl == 0:
            return (out.reshape(-1), ptr_np) if packed else out
        cdef int32_t[:, ::1] o = out
        cdef int32_t[:, ::1] mids = memo.ids
        cdef const uint8_t[::1] pending = memo.pending
        cdef const int32_t[::1] memo_col = plan.memo_col
        cdef const int32_t[::1] memo_row = plan.memo_row
        cdef int64_t[::1] ptr = ptr_np
        cdef Py_ssize_t chunk = 256, n_chunks = (n_tok + chunk - 1) // chunk
        # Scratch in C, not NumPy (for one sentence, making arrays cost more
        # than the lookups): each thread's keys of a block and where their ids
        # go; packed, the rows its chunk is looked up into (cached, and only
        # the kept ids reach out's pages; else into out) and their counts.
        cdef Py_ssize_t span = min(chunk, n_tok), n_bufs = BLOCK * n_tmpl
        cdef Py_ssize_t n_rows = span * n_tmpl if packed else 0
        cdef uint64_t* bufs = <uint64_t*> malloc(n_jobs * n_bufs * sizeof(uint64_t))
        cdef int64_t* where = <int64_t*> malloc(n_jobs * n_bufs * sizeof(int64_t))
        cdef int32_t* rows = <int32_t*> malloc((n_jobs * n_rows + 1) * sizeof(int32_t))
        cdef int32_t* counts = <int32_t*> malloc(n_jobs * span * sizeof(int32_t))
        try:
            if bufs == NULL or where == NULL or rows == NULL or counts == NULL:
                raise MemoryError()
            if n_jobs == 1 and n_tok * n_tmpl < GIL_MIN_KEYS:
                # A short sentence: the GIL kept (GIL_MIN_KEYS), one chunk after another.
                for i in range(n_chunks):
                    self._lookup_tok(&sp, i * chunk, min((i + 1) * chunk, n_tok), &words[0, 0],
                                     words.shape[1], &mids[0, 0], memo.n_memo, &memo_col[0],
                                     &memo_row[0], &pending[0] if without_memo else NULL,
                                     &pl, rows if packed else &o[i * chunk, 0], counts, bufs,
                                     where)
                    if packed:
                        _compact(rows, counts, &o[0, 0], n_tmpl, i * chunk,
                                 min((i + 1) * chunk, n_tok), &ptr[0])
                if packed:
                    _gather(&o[0, 0], n_tmpl, n_tok, chunk, &ptr[0])
            else:
                for i in prange(n_chunks, nogil=True, schedule="static", num_threads=n_jobs):
                    self._lookup_tok(&sp, i * chunk, min((i + 1) * chunk, n_tok),
                                     &words[0, 0], words.shape[1], &mids[0, 0], memo.n_memo,
                                     &memo_col[0], &memo_row[0],
                                     &pending[0] if without_memo else NULL, &pl,
                                     rows + threadid() * n_rows if packed else &o[i * chunk, 0],
                                     counts + threadid() * span, bufs + threadid() * n_bufs,
                                     where + threadid() * n_bufs)
                    if packed:
                        _compact(rows + threadid() * n_rows, counts + threadid() * span,
                                 &o[0, 0], n_tmpl, i * chunk, min((i + 1) * chunk, n_tok),
                                 &ptr[0])
                if packed:
                    with nogil:
                        _gather(&o[0, 0], n_tmpl, n_tok, chunk, &ptr[0])
        finally:
            free(bufs)
            free(where)
            free(rows)
            free(counts)
        if not packed:
            return out
        return out.reshape(-1)[:ptr[n_tok]], ptr_np

    cdef void _lookup_tok(self, const Spec* sp, Py_ssize_t p0, Py_ssize_t p1,
                          const int32_t* words, Py_ssize_t n_cols, const int32_t* memo,
                          Py_ssize_t n_memo, const int32_t* memo_col, const int32_t* memo_row,
                          const uint8_t* pending, const Plan* plan, int32_t* out,
                          int32_t* count, uint64_t* buf, int64_t* where) noexcept nogil:
        """Ids of tokens ``p0 <= p < p1``, in template order, at the front of
        row ``p - p0`` of ``out`` (``n_tmpl`` wide); ``count[p - p0]`` how many.
        Memo templates take theirs from the memo, the rest are made BLOCK
        tokens at a time, then probed with prefetching: ``count`` is
        ``n_tmpl`` for every token.  With ``pending`` (WordMemo.pending; the
        caller adds the memo's ids itself), the ids the memo answers are left
        out instead, and a token whose memo words are all inside its sequence
        and none pending makes the keys of ``plan.plain`` alone."""
        cdef Py_ssize_t n_tmpl = sp.n_tmpl, t, j, m, nb, p, q, s, lo, hi, mid, k, row, g
        cdef int64_t start, end, r
        cdef int32_t a, w
        cdef bint fast
        # The sequence holding p0: the last s with seq_ptr[s] <= p0.
        lo = 0
        hi = sp.n_seq
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if sp.seq_ptr[mid] <= p0:
                lo = mid
            else:
                hi = mid
        s = lo
        p = p0
        while p < p1:
            nb = min(<Py_ssize_t> BLOCK, p1 - p)
            # The string hashes the next block's keys read, loaded while
            # this block's are made and probed.
            for q in range(p + nb, min(p + 2 * nb, p1)):
                for k in range(plan.n_hot):
                    cseq_prefetch(&sp.hashes[sp.cells[q * sp.n_slots + plan.hot[k]]])
            m = 0
            for q in range(p, p + nb):
                while sp.seq_ptr[s + 1] <= q:
                    s += 1
                start = sp.seq_ptr[s]
                end = sp.seq_ptr[s + 1]
                row = (q - p0) * n_tmpl
                k = 0
                fast = pending != NULL
                if fast:
                    for g in range(plan.n_groups):
                        r = q + plan.group_row[g]
                        if r < start or r >= end \
                                or pending[words[r * n_cols + plan.group_col[g]]]:
                            fast = False
                            break
                if fast:
                    for j in range(plan.n_plain):
                        buf[m] = _key(sp, q, start, end, plan.plain[j])
                        where[m] = row + k
                        k += 1
                        m += 1
                    count[q - p0] = <int32_t> k
                    continue
                j = 0
                for t in range(n_tmpl):
                    if memo_col[t] >= 0:
                        r = q + memo_row[t]
                        j += 1
                        if start <= r < end:
                            w = words[r * n_cols + memo_col[t]]
                            if pending != NULL and not pending[w]:
                                continue
                            a = memo[w * n_memo + j - 1]
                            if a != -2:
                                if pending == NULL:
                                    out[row + k] = a
                                    k += 1
                                continue
                    buf[m] = _key(sp, q, start, end, t)
                    where[m] = row + k
                    k += 1
                    m += 1
                count[q - p0] = <int32_t> k
            _probe_all(self._tab, buf, where, m, out)
            p += nb

    @property
    def keys(self):
        """uint64 key of each id, in id order (a copy)."""
        return self._keys_arr[:self._size].copy()

    @property
    def counts(self):
        """How often each id was inserted by :meth:`add` (a copy)."""
        return self._counts_arr[:self._size].copy()

    @property
    def first_token(self):
        """Row of ``keys`` where each id was first inserted (-1: from_keys)."""
        return self._first_tok_arr[:self._size].copy()

    @property
    def first_template(self):
        """Column of ``keys`` where each id was first inserted (-1: from_keys)."""
        return self._first_tmpl_arr[:self._size].copy()

    @property
    def max_ids(self):
        """Most distinct keys the table accepts (``2**31 - 1`` unless set lower)."""
        return self._max_ids

    @property
    def capacity(self):
        """Number of slots (a power of two)."""
        return <Py_ssize_t> self._tab.mask + 1
