"""Packing Python token lists into the flat arrays of a corpus.

This is the one compiled module that handles Python objects: it walks the
user's lists once and writes attribute ids and values straight into
preallocated arrays.  Kernels never see a string.

Feature strings are interned in a :class:`StringTable`, a C hash table over
the strings' own code units, rather than a ``dict``: it holds no Python
object per attribute, and lookups run without the GIL.  ``pack_features``
copies the code units of each feature string into a small scratch buffer
(with the GIL; the user's lists may change once it is released, the copy
may not) and every 65,536 strings interns them (training) or looks them up
in parallel without the GIL (prediction), in batches whose cache misses
overlap.  A flush is the only place where the GIL is released, and no
borrowed pointer into the user's lists is held across it: the walker
re-reads the token it is in afterwards, and a changed token is an error.
A short input of lists (a sentence, tagged one call at a time) is looked up
with the GIL held, after a walk that runs no user code: its strings are
then read in place, not copied.

Both tables give int32 ids and refuse more than ``2**31 - 1`` entries with
an ``InputError`` (``_hash.MAX_IDS``) instead of wrapping to negative ids.
"""

from cpython.object cimport PyObject
from cpython.sequence cimport PySequence_Fast_GET_SIZE, PySequence_Fast_ITEMS
from cpython.unicode cimport PyUnicode_FromKindAndData
from cython.parallel cimport prange
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from cseq.features._hash cimport (MAX_IDS, Table, slots_for, table_copy, table_free, table_grow,
                                  table_init, table_probe)
from cseq._core._prefetch cimport cseq_prefetch

import numpy as np

from cseq.exceptions import InputError, InputTypeError

__all__ = ["StringTable", "count_features", "pack_features"]

# Arena entry: int32 id, int32 byte length, uint8 kind (1, 2 or 4), then the code units.
cdef int64_t HEADER = 9


cdef extern from *:
    """
    /* The code units of a str as CPython stores them (PEP 393), from a
       borrowed reference: no reference count is touched.  0 if not a str. */
    static inline int cseq_str_units(PyObject* s, int* kind, const uint8_t** data,
                                     int64_t* nbytes) {
        if (!PyUnicode_CheckExact(s)) return 0;
        *kind = (int) PyUnicode_KIND(s);
        *data = (const uint8_t*) PyUnicode_DATA(s);
        *nbytes = (int64_t) PyUnicode_GET_LENGTH(s) * *kind;
        return 1;
    }
    """
    bint cseq_str_units(PyObject* s, int* kind, const uint8_t** data,
                        int64_t* nbytes) noexcept
# CPython keeps every string in the narrowest of its three widths (kind 1, 2
# or 4 bytes per code point), so two equal strings have equal kind and equal
# code units: the pair identifies a string.


cdef extern from *:
    """
    /* The hash of a StringTable string: its code units read 8 bytes at a time
       (unaligned loads; a last partial word overlaps the previous bytes,
       which is fine since the length is hashed too), each word folded in
       with one multiply, then MurmurHash3's finalizer.  About half the work
       of _hash.hash_bytes per string, which stays the hash of the template
       keys: a StringTable's hashes live only in its memory (model files
       keep its strings, rehashed on loading), so this one need not be the
       same on every machine, only in one process.  Lookups of prediction
       are mostly this hash and the probe (see _find_batch). */
    static inline uint64_t cseq_units_hash(const uint8_t* p, int64_t n) {
        uint64_t h = 0x243F6A8885A308D3ULL ^ ((uint64_t) n * 0xC2B2AE3D27D4EB4FULL);
        uint64_t w = 0;
        uint32_t a, b;
        int64_t i = 0;
        if (n >= 8) {
            for (; i + 8 <= n; i += 8) {
                memcpy(&w, p + i, 8);
                h = ((h ^ w) * 0x9E3779B97F4A7C15ULL);
                h ^= h >> 32;
            }
            if (i < n) {
                memcpy(&w, p + n - 8, 8);
                h = ((h ^ w) * 0x9E3779B97F4A7C15ULL);
            }
        } else if (n >= 4) {
            memcpy(&a, p, 4);
            memcpy(&b, p + n - 4, 4);
            h = ((h ^ (((uint64_t) a << 32) | b)) * 0x9E3779B97F4A7C15ULL);
        } else if (n > 0) {
            w = ((uint64_t) p[0] << 16) | ((uint64_t) p[n >> 1] << 8) | p[n - 1];
            h = ((h ^ w) * 0x9E3779B97F4A7C15ULL);
        }
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDULL;
        h ^= h >> 33;
        h *= 0xC4CEB9FE1A85EC53ULL;
        h ^= h >> 33;
        return h;
    }
    """
    uint64_t cseq_units_hash(const uint8_t* p, int64_t n) noexcept nogil


cdef int _units_of(object s, int* kind, const uint8_t** data, int64_t* nbytes) except -1:
    if not cseq_str_units(<PyObject*> s, kind, data, nbytes):
        raise TypeError(f"StringTable: expected str, got {type(s).__name__}")
    return 0


# Strings looked up together by one thread, their memory accesses overlapped.
cdef enum:
    BATCH = 16
    # Below this many feature strings (tens of microseconds of lookups),
    # looking them up on one thread keeps the GIL (see _lookup_scratch).
    GIL_MIN_STRINGS = 1024


cdef inline bint _entry_is(const uint8_t* entry, int kind, const uint8_t* data,
                           int64_t nbytes) noexcept nogil:
    cdef int32_t n
    memcpy(&n, entry + 4, 4)
    return n == nbytes and entry[8] == kind and memcmp(entry + HEADER, data, nbytes) == 0


cdef struct Wanted:
    # The string a probe looks for, and the arena its entries live in.
    const uint8_t* arena
    const uint8_t* data
    int64_t nbytes
    int kind


cdef bint _same_string(const void* ctx, int64_t value) noexcept nogil:
    # The table's same_entry for StringTable: a slot's value is the arena
    # offset of its entry + 1.
    cdef const Wanted* w = <const Wanted*> ctx
    return _entry_is(w.arena + value - 1, w.kind, w.data, w.nbytes)


cdef class StringTable:
    """Strings to dense int32 ids (0, 1, ... in order of first insertion), in C memory.

    An open-addressing table with linear probing over 64-bit hashes of each
    string's code units; a hit is confirmed by comparing the code units, so
    distinct strings never share an id.  Strings live in one growing arena.
    Lookups (:meth:`get`, and the parallel ones inside
    :func:`pack_features`) may run in several threads at once; adding
    strings while another thread looks strings up raises ``RuntimeError``.

    Parameters
    ----------
    capacity : int, optional
        Number of strings to make room for.
    max_ids : int, optional
        Most distinct strings, at most (and by default) ``2**31 - 1``, the
        number of int32 ids; a smaller bound is for tests.
    """

    cdef uint8_t* _arena
    cdef int64_t _arena_size, _arena_cap
    cdef int64_t* _entry
    cdef int64_t _n, _entry_cap
    cdef Table _tab       # slot value: the entry's arena offset + 1
    cdef int64_t _readers
    cdef int64_t _max_ids

    def __cinit__(self, Py_ssize_t capacity=1024, Py_ssize_t max_ids=MAX_IDS):
        if capacity < 0:
            raise ValueError("StringTable: capacity must be >= 0")
        if not 0 < max_ids <= MAX_IDS:
            raise ValueError(f"StringTable: max_ids must be in 1 .. {MAX_IDS}")
        self._max_ids = max_ids
        table_init(&self._tab, slots_for(capacity))
        self._entry_cap = max(capacity, 16)
        self._entry = <int64_t*> malloc(self._entry_cap * sizeof(int64_t))
        self._arena_cap = self._entry_cap * 24
        self._arena = <uint8_t*> malloc(self._arena_cap)
        if self._entry == NULL or self._arena == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self._arena)
        free(self._entry)
        table_free(&self._tab)

    cdef inline uint64_t _probe(self, uint64_t h, int kind, const uint8_t* data,
                                int64_t nbytes) noexcept nogil:
        """Slot holding the string, or the empty slot where it would go."""
        cdef Wanted w
        w.arena = self._arena
        w.data = data
        w.nbytes = nbytes
        w.kind = kind
        return table_probe(self._tab, h, _same_string, &w)

    cdef inline int32_t _find(self, int kind, const uint8_t* data, int64_t nbytes) noexcept nogil:
        """Id of the string, or -1."""
        return self._id_at(self._probe(cseq_units_hash(data, nbytes), kind, data, nbytes))

    cdef inline int32_t _id_at(self, uint64_t slot) noexcept nogil:
        cdef int64_t v = self._tab.slots[slot].value
        cdef int32_t a
        if v == 0:
            return -1
        memcpy(&a, self._arena + v - 1, 4)
        return a

    cdef int32_t _add(self, uint64_t h, int kind, const uint8_t* data, int64_t nbytes) except -1:
        """Id of the string whose hash is ``h``, inserting it when new."""
        cdef uint64_t slot = self._probe(h, kind, data, nbytes)
        cdef int64_t off
        cdef int32_t a = self._id_at(slot)
        if a != -1:
            return a
        if self._readers:
            raise RuntimeError("StringTable: cannot add strings while another thread "
                               "looks strings up in the same table")
        if self._n >= self._max_ids:
            raise InputError(f"more than {self._max_ids:,} distinct feature strings "
                             "(ids are int32)")
        if nbytes > MAX_IDS:
            raise InputError("a feature string longer than 2**31 - 1 bytes")
        self._reserve(nbytes)
        off = self._arena_size
        a = <int32_t> self._n
        cdef int32_t n32 = <int32_t> nbytes
        memcpy(self._arena + off, &a, 4)
        memcpy(self._arena + off + 4, &n32, 4)
        self._arena[off + 8] = <uint8_t> kind
        if nbytes:
            memcpy(self._arena + off + HEADER, data, nbytes)
        self._arena_size += HEADER + nbytes
        self._entry[self._n] = off
        self._n += 1
        self._tab.slots[slot].hash = h
        self._tab.slots[slot].value = off + 1
        if self._n > self._tab.limit:
            table_grow(&self._tab)
        return a

    cdef int _reserve(self, int64_t nbytes) except -1:
        cdef int64_t need = self._arena_size + HEADER + nbytes
        cdef int64_t cap
        cdef void* p
        if need > self._arena_cap:
            cap = max(need, 2 * self._arena_cap)
            p = realloc(self._arena, cap)
            if p == NULL:
                raise MemoryError()
            self._arena = <uint8_t*> p
            self._arena_cap = cap
        if self._n == self._entry_cap:
            p = realloc(self._entry, 2 * self._entry_cap * sizeof(int64_t))
            if p == NULL:
                raise MemoryError()
            self._entry = <int64_t*> p
            self._entry_cap *= 2
        return 0

    def __len__(self):
        return self._n

    def copy(self):
        """An independent copy: strings added to either table later are not in the other.

        Copies the slots, the entry offsets and the used arena (memory speed),
        so that an owner can grow a copy while readers keep looking strings up
        in this table (``partial_fit``'s copy-on-write, :mod:`cseq.learners.partial`).
        """
        cdef StringTable out = StringTable.__new__(StringTable, 0, self._max_ids)
        cdef uint8_t* arena = <uint8_t*> malloc(self._arena_cap)
        cdef int64_t* entry = <int64_t*> malloc(self._entry_cap * sizeof(int64_t))
        cdef Table tab
        if arena == NULL or entry == NULL:
            free(arena)
            free(entry)
            raise MemoryError()
        try:
            table_copy(&tab, &self._tab)
        except MemoryError:
            free(arena)
            free(entry)
            raise
        memcpy(arena, self._arena, self._arena_size)
        memcpy(entry, self._entry, self._n * sizeof(int64_t))
        table_free(&out._tab)
        free(out._arena)
        free(out._entry)
        out._tab, out._arena, out._entry = tab, arena, entry
        out._arena_size, out._arena_cap = self._arena_size, self._arena_cap
        out._n, out._entry_cap = self._n, self._entry_cap
        return out

    @property
    def max_ids(self):
        """Most distinct strings the table accepts (``2**31 - 1`` unless set lower)."""
        return self._max_ids

    def add(self, s) -> int:
        """Id of ``s`` (a str, not a subclass), inserting it when new."""
        cdef int kind
        cdef const uint8_t* data
        cdef int64_t nbytes
        _units_of(s, &kind, &data, &nbytes)
        return self._add(cseq_units_hash(data, nbytes), kind, data, nbytes)

    def get(self, s) -> int:
        """Id of ``s`` (a str, not a subclass), or -1 when it is not in the table."""
        cdef int kind
        cdef const uint8_t* data
        cdef int64_t nbytes
        _units_of(s, &kind, &data, &nbytes)
        return self._find(kind, data, nbytes)

    def __contains__(self, s) -> bool:
        return type(s) is str and self.get(s) >= 0

    def names(self) -> list:
        """Every string, in id order."""
        cdef list out = [None] * self._n
        cdef int64_t i
        cdef int32_t n32
        cdef const uint8_t* e
        for i in range(self._n):
            e = self._arena + self._entry[i]
            memcpy(&n32, e + 4, 4)
            out[i] = PyUnicode_FromKindAndData(e[8], e + HEADER, n32 // e[8])
        return out

    @classmethod
    def from_strings(cls, strings):
        """A table whose id ``i`` is ``strings[i]``; ValueError if a string repeats."""
        cdef StringTable table = cls(len(strings))
        cdef Py_ssize_t i
        for i, s in enumerate(strings):
            if type(s) is not str:
                raise TypeError(f"StringTable.from_strings: item {i} is "
                                f"{type(s).__name__}, not str")
            if table.add(s) != i:
                raise ValueError(f"StringTable.from_strings: item {i} repeats an earlier string")
        return table

    cdef void _find_batch(self, const uint8_t* const* ptrs, const int64_t* offs, const uint8_t* kinds,
                          int32_t* out, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
        """``out[i]`` for scratch strings ``start <= i < end`` (at most BATCH).

        Three passes over the batch, each prefetching what the next one reads
        (slot, then arena entry), so the batch's cache misses overlap instead
        of coming one after another.
        """
        cdef uint64_t hashes[BATCH]
        cdef uint64_t slots[BATCH]
        cdef Py_ssize_t i, k, n = end - start
        cdef int64_t v
        for k in range(n):
            i = start + k
            hashes[k] = cseq_units_hash(ptrs[i], offs[i + 1] - offs[i])
            cseq_prefetch(&self._tab.slots[hashes[k] & self._tab.mask])
        for k in range(n):
            v = self._tab.slots[hashes[k] & self._tab.mask].value
            if v != 0:
                cseq_prefetch(self._arena + v - 1)
        for k in range(n):
            i = start + k
            slots[k] = self._probe(hashes[k], kinds[i], ptrs[i], offs[i + 1] - offs[i])
            out[i] = self._id_at(slots[k])

    cdef int _add_scratch(self, const uint8_t* const* ptrs, const int64_t* offs, const uint8_t* kinds,
                          int32_t* out, Py_ssize_t n) except -1:
        """``out[i]`` = id of scratch string ``i``, inserting new strings in order.

        Batched like :meth:`_find_batch`: hashes and slot prefetches for a
        batch first, then the insertions one by one, in order.
        """
        cdef uint64_t hashes[BATCH]
        cdef Py_ssize_t start, i, k, m
        for start in range(0, n, BATCH):
            m = min(BATCH, n - start)
            for k in range(m):
                i = start + k
                hashes[k] = cseq_units_hash(ptrs[i], offs[i + 1] - offs[i])
                cseq_prefetch(&self._tab.slots[hashes[k] & self._tab.mask])
            for k in range(m):
                i = start + k
                out[i] = self._add(hashes[k], kinds[i], ptrs[i], offs[i + 1] - offs[i])
        return 0

    cdef int _lookup_scratch(self, const uint8_t* const* ptrs, const int64_t* offs,
                             const uint8_t* kinds, int32_t* out, Py_ssize_t n,
                             int n_jobs) except -1:
        """``out[i]`` = id of scratch string ``i`` or -1, in ``n_jobs`` threads."""
        cdef Py_ssize_t b, n_batches = (n + BATCH - 1) // BATCH
        self._readers += 1
        try:
            if n_jobs == 1 and n < GIL_MIN_STRINGS:
                # A few microseconds of lookups (one short sentence): done holding
                # the GIL, which another Python thread could otherwise keep for up
                # to the switch interval (5 ms) before this one got it back.
                for b in range(n_batches):
                    self._find_batch(ptrs, offs, kinds, out, b * BATCH, min((b + 1) * BATCH, n))
            else:
                for b in prange(n_batches, nogil=True, schedule="static", num_threads=n_jobs):
                    self._find_batch(ptrs, offs, kinds, out, b * BATCH,
                                     min((b + 1) * BATCH, n))
        finally:
            self._readers -= 1
        return 0


cdef struct Scratch:
    # Code units of up to `room` feature strings, back to back:
    # string i (0 <= i < n) is buf[offs[i]:offs[i + 1]], feature base + i;
    # a flush points ptrs[i] at its first code unit.  With `borrow`, nothing
    # is copied: ptrs[i] points into the str object itself and offs only
    # adds up the lengths (see pack_features for when that is safe).
    uint8_t* buf
    const uint8_t** ptrs
    bint borrow
    int64_t size, cap
    int64_t* offs
    uint8_t* kinds
    Py_ssize_t n, base, room
    # Where flushed ids go, and how.
    PyObject* vocab   # borrowed: the caller holds the table
    int32_t* attr
    bint grow
    int n_jobs


cdef enum:
    # Strings copied before they are interned or looked up: a few MB of
    # scratch that stays in cache, however large the corpus.
    SCRATCH_STRINGS = 1 << 16


cdef int _scratch_init(Scratch* sc, Py_ssize_t n_strings, StringTable vocab, int32_t* attr,
                       bint grow, int n_jobs, bint borrow) except -1:
    """Scratch for ``n_strings`` strings, or SCRATCH_STRINGS at a time if there are more."""
    sc.room = max(1, min(n_strings, <Py_ssize_t> SCRATCH_STRINGS))
    sc.cap = sc.room * 16
    sc.size = 0
    sc.n = 0
    sc.base = 0
    sc.buf = <uint8_t*> malloc(sc.cap)
    sc.offs = <int64_t*> malloc((sc.room + 1) * sizeof(int64_t))
    sc.kinds = <uint8_t*> malloc(sc.room)
    sc.ptrs = <const uint8_t**> malloc(sc.room * sizeof(uint8_t*))
    sc.borrow = borrow
    if sc.buf == NULL or sc.offs == NULL or sc.kinds == NULL or sc.ptrs == NULL:
        _scratch_free(sc)
        raise MemoryError()
    sc.offs[0] = 0
    sc.vocab = <PyObject*> vocab
    sc.attr = attr
    sc.grow = grow
    sc.n_jobs = n_jobs
    return 0


cdef void _scratch_free(Scratch* sc) noexcept:
    free(sc.buf); free(sc.offs); free(sc.kinds); free(sc.ptrs)
    sc.buf = NULL
    sc.ptrs = NULL
    sc.offs = NULL
    sc.kinds = NULL


# Testing seam: called with no argument (and the GIL) right after each
# prediction flush, i.e. where another thread may have run; see _set_after_flush.
cdef object _after_flush = None


def _set_after_flush(hook):
    """Call ``hook()`` after every prediction flush (``None`` removes it).

    For tests only: it stands for another thread that runs while a flush has
    released the GIL, deterministically instead of by the scheduler's luck.
    """
    global _after_flush
    _after_flush = hook


cdef int _scratch_flush(Scratch* sc) except -1:
    """Intern or look up the copied strings, writing their ids to ``attr[base:base + n]``."""
    cdef StringTable vocab = <StringTable> <object> sc.vocab
    cdef Py_ssize_t i
    if not sc.borrow:  # the copies are final now (buf no longer moves)
        for i in range(sc.n):
            sc.ptrs[i] = sc.buf + sc.offs[i]
    if sc.grow:
        vocab._add_scratch(sc.ptrs, sc.offs, sc.kinds, sc.attr + sc.base, sc.n)
    else:
        vocab._lookup_scratch(sc.ptrs, sc.offs, sc.kinds, sc.attr + sc.base, sc.n, sc.n_jobs)
        if _after_flush is not None:
            _after_flush()
    sc.base += sc.n
    sc.n = 0
    sc.size = 0
    return 0


cdef inline bint _make_room(Scratch* sc) except -1:
    """Flush the scratch when it is full; True when it did.

    A flush for prediction releases the GIL, so another thread may change the
    user's lists meanwhile: the caller must hold no borrowed pointer across
    this call, and re-read (and re-check) anything it borrowed before it.
    """
    if sc.n < sc.room:
        return False
    _scratch_flush(sc)
    return True


cdef int _scratch_push(Scratch* sc, int kind, const uint8_t* data, int64_t nbytes) except -1:
    """Copy one string into the scratch, which must have room (see :func:`_make_room`)."""
    cdef int64_t cap
    cdef void* p
    if sc.n >= sc.room:  # pragma: no cover - a caller that skipped _make_room
        raise RuntimeError("internal error: packing scratch is full")
    if sc.borrow:
        sc.ptrs[sc.n] = data
        sc.size += nbytes
        sc.kinds[sc.n] = <uint8_t> kind
        sc.n += 1
        sc.offs[sc.n] = sc.size
        return 0
    if sc.size + nbytes > sc.cap:
        cap = max(sc.size + nbytes, 2 * sc.cap)
        p = realloc(sc.buf, cap)
        if p == NULL:
            raise MemoryError()
        sc.buf = <uint8_t*> p
        sc.cap = cap
    if nbytes:
        memcpy(sc.buf + sc.size, data, nbytes)
    sc.size += nbytes
    sc.kinds[sc.n] = <uint8_t> kind
    sc.n += 1
    sc.offs[sc.n] = sc.size
    return 0


cdef inline str _describe(object obj):
    return type(obj).__name__


cdef object _changed():
    return InputError("X changed while it was being packed (another thread, or a "
                      "feature value's __float__ or __format__, modified it)")


def count_features(object X):
    """Validate the containers of X; return (tokens, upper bound on feature entries)."""
    return _count(X, False)[:2]


cdef tuple _count(object X, bint lenient):
    """:func:`count_features` and whether a token is a dict; with ``lenient``, None instead
    of an error for a bad container."""
    cdef Py_ssize_t i, j, m, n_tok = 0, n_feat = 0
    cdef bint dicts = False
    cdef object seq, tok
    for i in range(len(X)):
        seq = X[i]
        if type(seq) is not list and type(seq) is not tuple:
            if lenient:
                return None
            raise InputTypeError(
                f"X[{i}] must be a list of tokens, got {_describe(seq)}")
        n_tok += len(<object>seq)
        for j in range(len(<object>seq)):
            tok = seq[j]
            if type(tok) is dict and lenient:
                m = _nested_size(<dict>tok, 0)
                if m < 0:
                    return None
                n_feat += m
                dicts = True
            elif type(tok) is list or type(tok) is tuple or type(tok) is dict:
                n_feat += len(<object>tok)
                dicts = dicts or type(tok) is dict
            elif lenient:
                return None
            else:
                raise InputTypeError(
                    f"X[{i}][{j}] must be a list of feature strings or a dict, "
                    f"got {_describe(tok)}")
    return n_tok, n_feat, dicts


cdef enum:
    # Nesting python-crfsuite's items may have for the compiled reading
    # (deeper items are read by crfsuite_items.convert): it bounds the C
    # recursion of _nested_size and _emit_nested.
    MAX_NESTING = 16


cdef Py_ssize_t _nested_size(dict item, int depth) except -2:
    """Attributes a python-crfsuite dict item gives (nested dicts and lists of
    strings counted through), or -1 for one the compiled reading leaves to
    ``convert`` (too deep; the types are checked when the item is read)."""
    cdef Py_ssize_t n = 0, m
    cdef object value
    if depth >= MAX_NESTING:
        return -1
    for value in item.values():
        if type(value) is dict:
            m = _nested_size(<dict>value, depth + 1)
            if m < 0:
                return -1
            n += m
        elif type(value) is list:
            n += len(<list>value)
        else:
            n += 1
    return n


cdef int _emit_joined(Scratch* sc, str a, str b, str c, str d) except -1:
    """Copy the feature named ``a + b + c + d`` into the scratch, which must have room.

    When the four are one-byte strings (kind 1, as names and values mostly
    are), so is their concatenation: its code units are theirs back to back,
    copied without making the str.  Otherwise the str is made and copied.
    """
    cdef int k1, k2, k3, k4
    cdef const uint8_t* p1
    cdef const uint8_t* p2
    cdef const uint8_t* p3
    cdef const uint8_t* p4
    cdef int64_t n1, n2, n3, n4, cap
    cdef void* grown
    cseq_str_units(<PyObject*> a, &k1, &p1, &n1)
    cseq_str_units(<PyObject*> b, &k2, &p2, &n2)
    cseq_str_units(<PyObject*> c, &k3, &p3, &n3)
    cseq_str_units(<PyObject*> d, &k4, &p4, &n4)
    if (k1 | k2 | k3 | k4) != 1 or sc.borrow:
        joined = a + b + c + d
        return _emit(sc, <PyObject*> joined)
    if sc.n >= sc.room:  # pragma: no cover - a caller that skipped _make_room
        raise RuntimeError("internal error: packing scratch is full")
    if sc.size + n1 + n2 + n3 + n4 > sc.cap:
        cap = max(sc.size + n1 + n2 + n3 + n4, 2 * sc.cap)
        grown = realloc(sc.buf, cap)
        if grown == NULL:
            raise MemoryError()
        sc.buf = <uint8_t*> grown
        sc.cap = cap
    memcpy(sc.buf + sc.size, p1, n1)
    memcpy(sc.buf + sc.size + n1, p2, n2)
    memcpy(sc.buf + sc.size + n1 + n2, p3, n3)
    memcpy(sc.buf + sc.size + n1 + n2 + n3, p4, n4)
    sc.size += n1 + n2 + n3 + n4
    sc.kinds[sc.n] = 1
    sc.n += 1
    sc.offs[sc.n] = sc.size
    return 1


cdef int _crfsuite_value(object value, double* v) except -2:
    """How python-crfsuite reads a dict value: 0 with its attribute's value in ``v`` (a str
    is the value 1 of ``name:str``), 1 for a dict or list (attributes of their own), or
    -1 for what the compiled reading leaves to ``convert`` (another type, not finite in
    float32)."""
    if type(value) is str:
        v[0] = 1.0
        return 0
    if type(value) is dict or type(value) is list:
        return 1
    if type(value) is bool:
        v[0] = 1.0 if value else 0.0
    elif type(value) is float:
        v[0] = value
    elif type(value) is int:
        try:
            v[0] = float(value)
        except OverflowError:
            return -1
    else:
        return -1
    if not isfinite(v[0]) or not (-3.0e38 < v[0] < 3.0e38):
        return -1
    return 0


cdef int _emit_nested(Scratch* sc, str prefix, object item, float* valp, Py_ssize_t* n_feat,
                      Py_ssize_t cap, int depth) except -2:
    """Read a nested value of a python-crfsuite dict item: the attributes of dict or list
    ``item``, each named ``prefix`` + its own name.

    Returns 0, or -1 for what the compiled reading leaves to ``convert``
    (a name or value of another type, a value not finite in float32, too
    deep).  Raises for an item changed while it was read (a flush released
    the GIL) or one with more attributes than were counted.
    """
    cdef Py_ssize_t k, m
    cdef double v
    cdef int kind
    cdef object key, value
    if depth >= MAX_NESTING:
        return -1
    if type(item) is list:
        m = len(<list>item)
        for k in range(m):
            if len(<list>item) != m or n_feat[0] >= cap:
                raise _changed()
            key = (<list>item)[k]
            if type(key) is not str:
                return -1
            _make_room(sc)
            _emit_joined(sc, prefix, <str>key, "", "")
            valp[n_feat[0]] = 1.0
            n_feat[0] += 1
        return 0
    for key, value in (<dict>item).items():
        if type(key) is not str:
            return -1
        kind = _crfsuite_value(value, &v)
        if kind < 0:
            return -1
        if kind == 1:
            if _emit_nested(sc, prefix + <str>key + ":", value, valp, n_feat, cap,
                            depth + 1) < 0:
                return -1
            continue
        if n_feat[0] >= cap:
            raise _changed()
        _make_room(sc)
        if type(value) is str:
            _emit_joined(sc, prefix, <str>key, ":", <str>value)
        else:
            _emit_joined(sc, prefix, <str>key, "", "")
        valp[n_feat[0]] = <float> v
        n_feat[0] += 1
    return 0


cdef inline void _prefetch_items(PyObject* tok) noexcept:
    """Prefetch the objects a list or tuple token holds (borrowed, the GIL held)."""
    cdef PyObject** items
    cdef Py_ssize_t k
    if type(<object> tok) is list or type(<object> tok) is tuple:
        items = PySequence_Fast_ITEMS(<object> tok)
        for k in range(PySequence_Fast_GET_SIZE(<object> tok)):
            cseq_prefetch(items[k])


cdef inline int _emit(Scratch* sc, PyObject* key) except -1:
    """Copy the code units of the next feature, ``key``; returns 1, or 0 when it is not a str.

    The scratch must have room: nothing here releases the GIL, so ``key`` and
    its code units are only read while the GIL is held.
    """
    cdef int kind
    cdef const uint8_t* data
    cdef int64_t nbytes
    if not cseq_str_units(key, &kind, &data, &nbytes):
        return 0
    _scratch_push(sc, kind, data, nbytes)
    return 1


def pack_features(object X, StringTable vocab not None, bint grow, int n_jobs=1,
                  bint crfsuite=False):
    """Pack feature lists or dicts into CSR arrays.

    Parameters
    ----------
    X : list of sequences; a sequence is a list (or tuple) of tokens; a token
        is a list (or tuple) of feature strings, or a dict mapping a feature
        name to a number (its value), ``True`` (value 1), ``False`` (absent) or
        a string ``v`` (the feature ``name=v`` with value 1).
    vocab : the attribute table; extended in place when ``grow`` is true.
    grow : add unseen attributes to ``vocab`` (training) or drop them
        (prediction).
    n_jobs : threads for the lookups when ``grow`` is false.
    crfsuite : read the dict tokens as python-crfsuite reads its dict
        items (:mod:`cseq.compat.crfsuite_items`): a string ``v`` is the
        feature ``name:v``, ``False`` the value 0 (kept: in training it
        creates the feature's weights, as in CRFsuite), a nested dict or
        list of strings gives its own attributes with ``name:`` before their
        names (up to MAX_NESTING levels).  What this reading
        would not give exactly as ``crfsuite_items.convert`` does (containers
        other than lists and tuples, names that are not exact ``str``, values
        that are not exact ``str``, ``bool``, ``int`` or ``float`` or not
        finite in float32, one attribute twice in a dict token, whose values
        ``convert`` adds up) makes it return None, for the caller to convert
        ``X`` and pack that; with ``grow``, ``vocab`` may then hold some of
        ``X``'s attributes already, in the order the converted ``X`` adds them.

    Returns
    -------
    seq_ptr, tok_ptr : int64 arrays
    attr_ids : int32 array
    values : float32 array
    or None (only with ``crfsuite``, see above)
    """
    if type(X) is not list and type(X) is not tuple:
        if crfsuite:
            return None
        raise InputTypeError(f"X must be a list of sequences, got {_describe(X)}")
    if n_jobs < 1:
        raise ValueError("pack_features: n_jobs must be >= 1")
    counts = _count(X, crfsuite)
    if counts is None:
        return None
    n_tok_total, n_feat_total, dicts = counts
    seq_ptr_np = np.empty(len(X) + 1, dtype=np.int64)
    tok_ptr_np = np.empty(n_tok_total + 1, dtype=np.int64)
    attr_np = np.empty(n_feat_total, dtype=np.int32)
    val_np = np.empty(n_feat_total, dtype=np.float32)
    cdef int64_t[::1] seq_ptr = seq_ptr_np
    cdef int64_t[::1] tok_ptr = tok_ptr_np
    cdef int32_t[::1] attr_view = attr_np
    cdef float[::1] val_view = val_np
    # Raw pointers: the arrays may be empty, and the helpers write through them.
    cdef Py_ssize_t n_feat = _pack_into(
        X, vocab, grow, n_jobs, crfsuite, n_tok_total, n_feat_total, dicts, &seq_ptr[0],
        &tok_ptr[0], &attr_view[0] if n_feat_total else NULL,
        &val_view[0] if n_feat_total else NULL)
    if n_feat < 0:
        return None
    if n_feat < n_feat_total:
        # Unknown features dropped: a view of the kept ones, copied only when
        # it would hold less than half of its buffer (so a corpus never keeps
        # more than twice the memory it needs, and a sentence skips two copies).
        attr_np = attr_np[:n_feat]
        val_np = val_np[:n_feat]
        if 2 * n_feat < n_feat_total:
            attr_np = attr_np.copy()
            val_np = val_np.copy()
    return seq_ptr_np, tok_ptr_np, attr_np, val_np


cdef Py_ssize_t _pack_into(object X, StringTable vocab, bint grow, int n_jobs, bint crfsuite,
                           Py_ssize_t n_tok_total, Py_ssize_t n_feat_total, bint dicts,
                           int64_t* seq_ptr, int64_t* tok_ptr, int32_t* attr,
                           float* valp) except -2:
    """:func:`pack_features`'s walk of ``X``, counted by :func:`_count`, into the caller's
    arrays (``n_feat_total`` entries of ``attr`` and ``valp``; ``len(X) + 1`` of
    ``seq_ptr``, ``n_tok_total + 1`` of ``tok_ptr``).

    Returns the number of features kept (unknown ones dropped when not
    ``grow``), or -1 for what only ``crfsuite_items.convert`` reads exactly
    (with ``crfsuite``; see :func:`pack_features`).
    """
    cdef Py_ssize_t i, j, k, m, n, n_tok = 0, n_feat = 0
    cdef int kind
    cdef double v
    cdef object seq, tok, key, value
    cdef PyObject** items
    cdef Scratch sc
    # With crfsuite, which tokens are dicts: their attributes must not repeat.
    # C memory, not an array: most calls (prediction) never need it.
    cdef uint8_t* is_dict = NULL
    # A short corpus of lists looked up with the GIL held (one flush, at the
    # end, see _lookup_scratch) need not copy its strings: no user code runs
    # from here to that flush (only dict tokens call __float__/__format__,
    # and make new key strings), so the user's strings stay alive and
    # unchanged and the lookups may read them in place.
    _scratch_init(&sc, n_feat_total, vocab, attr, grow, n_jobs,
                  not grow and not dicts and n_jobs == 1 and n_feat_total < GIL_MIN_STRINGS)
    try:
        if crfsuite:
            is_dict = <uint8_t*> calloc(max(n_tok_total, 1), 1)
            if is_dict == NULL:
                raise MemoryError()
        seq_ptr[0] = 0
        tok_ptr[0] = 0
        for i in range(len(X)):
            # X was validated by count_features, but the dict path below may
            # run user code (__float__, __format__): every size is checked
            # again before a write, so a changed X is an error, never an overrun.
            seq = X[i]
            if type(seq) is not list and type(seq) is not tuple:
                raise _changed()
            n = PySequence_Fast_GET_SIZE(seq)
            if n_tok + n > n_tok_total:
                raise _changed()
            for j in range(n):
                if PySequence_Fast_GET_SIZE(seq) != n:
                    raise _changed()
                tok = <object> PySequence_Fast_ITEMS(seq)[j]
                if type(tok) is dict:
                    m = len(<dict>tok)
                    # (With crfsuite, nested values may give fewer attributes than
                    # keys, or more: each write is checked below instead.)
                    if not crfsuite and n_feat + m > n_feat_total:
                        raise _changed()
                    for key, value in (<dict>tok).items():
                        # key and value are owned references; only the dict
                        # itself may change during a flush, and that is an error.
                        if _make_room(&sc) and len(<dict>tok) != m:
                            raise _changed()
                        if type(key) is not str:
                            if crfsuite:
                                return -1
                            raise InputTypeError(
                                f"X[{i}][{j}]: feature names must be str, got {_describe(key)}")
                        if crfsuite:
                            kind = _crfsuite_value(value, &v)
                            if kind < 0:
                                return -1
                            if kind == 1:
                                if _emit_nested(&sc, <str>key + ":", value, valp, &n_feat,
                                                n_feat_total, 1) < 0:
                                    return -1
                                continue
                        elif value is True:
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
                        if n_feat >= n_feat_total:
                            raise _changed()
                        if crfsuite and type(value) is str:
                            _emit_joined(&sc, <str>key, ":", <str>value, "")
                        elif not _emit(&sc, <PyObject*> key):
                            raise _changed()
                        valp[n_feat] = <float>v
                        n_feat += 1
                    if crfsuite:
                        is_dict[n_tok] = 1
                elif type(tok) is list or type(tok) is tuple:
                    # Borrowed item pointers: no user code runs in this loop,
                    # and the strings' reference counts are never written,
                    # which keeps their cache lines clean.  Prefetching the
                    # token's strings first overlaps their cache misses.  Only
                    # a scratch flush releases the GIL; after one the items
                    # are read again from ``tok`` (which this frame owns).
                    items = PySequence_Fast_ITEMS(tok)
                    m = PySequence_Fast_GET_SIZE(tok)
                    if n_feat + m > n_feat_total:
                        raise _changed()
                    for k in range(m):
                        cseq_prefetch(items[k])
                    if j + 1 < n:  # and the next token's, read while this one is copied
                        _prefetch_items(PySequence_Fast_ITEMS(seq)[j + 1])
                    for k in range(m):
                        if _make_room(&sc):
                            # The flush released the GIL: the token may have
                            # been changed or freed meanwhile.  Re-read it.
                            if PySequence_Fast_GET_SIZE(tok) != m:
                                raise _changed()
                            items = PySequence_Fast_ITEMS(tok)
                        if not _emit(&sc, items[k]):
                            if crfsuite:
                                return -1
                            raise InputTypeError(
                                f"X[{i}][{j}]: features must be str, got "
                                f"{_describe(<object> items[k])}")
                        valp[n_feat] = 1.0
                        n_feat += 1
                else:
                    raise _changed()
                n_tok += 1
                tok_ptr[n_tok] = n_feat
            seq_ptr[i + 1] = n_tok
        if n_tok != n_tok_total:
            raise _changed()
        _scratch_flush(&sc)
        if crfsuite and _repeats(tok_ptr, attr, is_dict, n_tok):
            return -1
        if not grow:
            n_feat = _drop_unknown(tok_ptr, attr, valp, n_tok)
    finally:
        _scratch_free(&sc)
        free(is_dict)
    return n_feat


cdef int pack_small(object X, object vocab, bint crfsuite, Py_ssize_t max_features,
                    Packed* out) except -2:
    """Pack the list ``X`` for prediction (unknown attributes dropped) into C memory.

    What :func:`pack_features` with ``grow`` False and one thread gives, in
    ``out`` (free it with :func:`packed_free`) instead of NumPy arrays.
    Returns 0, or -1 with nothing allocated when ``X`` has more than
    ``max_features`` features or (with ``crfsuite``) needs
    ``crfsuite_items.convert``; raises what :func:`pack_features` raises.
    """
    out.seq_ptr = NULL
    out.tok_ptr = NULL
    out.attr = NULL
    out.values = NULL
    counts = _count(X, crfsuite)
    if counts is None:
        return -1
    cdef Py_ssize_t n_tok = counts[0], n_feat = counts[1], kept
    if n_feat > max_features:
        return -1
    out.seq_ptr = <int64_t*> malloc((len(X) + 1) * sizeof(int64_t))
    out.tok_ptr = <int64_t*> malloc((n_tok + 1) * sizeof(int64_t))
    out.attr = <int32_t*> malloc(max(n_feat, 1) * sizeof(int32_t))
    out.values = <float*> malloc(max(n_feat, 1) * sizeof(float))
    if out.seq_ptr == NULL or out.tok_ptr == NULL or out.attr == NULL or out.values == NULL:
        packed_free(out)
        raise MemoryError()
    try:
        kept = _pack_into(X, <StringTable?> vocab, False, 1, crfsuite, n_tok, n_feat, counts[2],
                          out.seq_ptr, out.tok_ptr, out.attr, out.values)
    except BaseException:
        packed_free(out)
        raise
    if kept < 0:
        packed_free(out)
        return -1
    out.n_seqs = len(X)
    out.n_tok = n_tok
    out.n_feat = kept
    return 0


cdef void packed_free(Packed* p) noexcept:
    free(p.seq_ptr)
    free(p.tok_ptr)
    free(p.attr)
    free(p.values)
    p.seq_ptr = NULL
    p.tok_ptr = NULL
    p.attr = NULL
    p.values = NULL


cdef bint _repeats(const int64_t* tok_ptr, const int32_t* attr, const uint8_t* is_dict,
                   Py_ssize_t n_tok) except -1:
    """Whether a dict token (``is_dict``) has an attribute id (not -1) twice.

    Each token's ids go into a small open-addressing set (ids are distinct
    non-negative ints, so the set needs no hashing beyond a multiply).
    """
    cdef Py_ssize_t t, k, cap = 0, need
    cdef uint64_t mask, h
    cdef int32_t a
    cdef int32_t* seen = NULL
    try:
        for t in range(n_tok):
            if not is_dict[t] or tok_ptr[t + 1] - tok_ptr[t] < 2:
                continue
            need = 4
            while need < 2 * (tok_ptr[t + 1] - tok_ptr[t]):
                need *= 2
            if need > cap:
                free(seen)
                seen = <int32_t*> malloc(need * sizeof(int32_t))
                if seen == NULL:
                    raise MemoryError()
                cap = need
            memset(seen, 0xff, need * sizeof(int32_t))
            mask = <uint64_t> (need - 1)
            for k in range(tok_ptr[t], tok_ptr[t + 1]):
                a = attr[k]
                if a < 0:
                    continue
                h = ((<uint64_t> a) * 0x9E3779B97F4A7C15ULL) >> 40
                while seen[h & mask] != -1:
                    if seen[h & mask] == a:
                        return True
                    h += 1
                seen[h & mask] = a
        return False
    finally:
        free(seen)


cdef Py_ssize_t _drop_unknown(int64_t* tok_ptr, int32_t* attr, float* val,
                              Py_ssize_t n_tok) noexcept:
    """Remove features with id -1 in place, fixing ``tok_ptr``; the new feature count."""
    cdef Py_ssize_t n
    if n_tok * 16 < GIL_MIN_STRINGS:  # a short sentence: the GIL kept, as in _lookup_scratch
        return _drop_unknown_nogil(tok_ptr, attr, val, n_tok)
    with nogil:
        n = _drop_unknown_nogil(tok_ptr, attr, val, n_tok)
    return n


cdef Py_ssize_t _drop_unknown_nogil(int64_t* tok_ptr, int32_t* attr, float* val,
                                    Py_ssize_t n_tok) noexcept nogil:
    cdef Py_ssize_t t, k, start = 0, end, n = 0
    for t in range(n_tok):
        end = tok_ptr[t + 1]
        for k in range(start, end):
            if attr[k] >= 0:
                attr[n] = attr[k]
                val[n] = val[k]
                n += 1
        tok_ptr[t + 1] = n
        start = end
    return n
