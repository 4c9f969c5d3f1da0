"""Column interning and token functions in C, for the template featurizer.

:mod:`cseq.templates` hands this module the user's sentences and gets back
integer arrays: every cell a template reads, and every token function of a
cell (``lower``, ``prefix3``, ``shape``, ...), becomes the id of a string in a
:class:`Values` table, and each string carries the 64-bit hash of its UTF-8
bytes that :mod:`cseq.features._templates` folds into feature keys.  Reading the
lists holds the GIL; the token functions, once per distinct cell string and
function, run without it.  No Python object is made per cell or per function
value.

Strings are kept as UTF-8 (lone surrogates encoded as three bytes, as
Python's ``"surrogatepass"`` does), so a string and its hash are the same
whichever of CPython's three widths it came in.  Ids are given in the order
the plain-Python featurizer gave them: the cells, sentence by sentence and
column by column, then each function's values over the distinct cells in id
order, then the padding strings.

The token functions are the ones of :data:`cseq.templates.TOKEN_FUNCTIONS`,
which stays their definition: the character classes are CPython's own
(``Py_UNICODE_ISUPPER``, ``ISLOWER``, ``ISTITLE``, ``ISDIGIT``, the tables
``str.isupper`` and friends read), the punctuation class is
``unicodedata.category`` (asked once per code point and remembered), and
``lower`` of a string with a non-ASCII character is ``str.lower`` itself
(Unicode's special casing and final sigma).  The tests compare every
function with its Python definition on random Unicode strings.
"""

from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from cseq.features._hash cimport hash_bytes, slots_for, table_free, table_grow, table_init, table_probe

import unicodedata

import numpy as np

__all__ = ["FUNCTIONS", "FunctionCache", "Values", "apply_function"]

#: Token functions by code (the code is the index).
FUNCTIONS = (
    "lower",
    "prefix1", "prefix2", "prefix3", "prefix4", "prefix5", "prefix6",
    "suffix1", "suffix2", "suffix3", "suffix4", "suffix5", "suffix6",
    "shape", "shortshape", "istitle", "isupper", "hasdigit", "alldigits",
    "hashyphen", "ispunct", "len",
)



cdef extern from "Python.h":
    # CPython's character classes: static tables, safe without the GIL.
    bint Py_UNICODE_ISUPPER(uint32_t ch) nogil
    bint Py_UNICODE_ISLOWER(uint32_t ch) nogil
    bint Py_UNICODE_ISTITLE(uint32_t ch) nogil
    bint Py_UNICODE_ISDIGIT(uint32_t ch) nogil
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)


# --------------------------------------------------------------------------
# UTF-8
# --------------------------------------------------------------------------


cdef inline int _put(uint8_t* o, uint32_t c) noexcept nogil:
    """Write code point ``c`` as UTF-8 (surrogates too); the number of bytes."""
    if c < 0x80:
        o[0] = <uint8_t> c
        return 1
    if c < 0x800:
        o[0] = <uint8_t> (0xC0 | (c >> 6))
        o[1] = <uint8_t> (0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        o[0] = <uint8_t> (0xE0 | (c >> 12))
        o[1] = <uint8_t> (0x80 | ((c >> 6) & 0x3F))
        o[2] = <uint8_t> (0x80 | (c & 0x3F))
        return 3
    o[0] = <uint8_t> (0xF0 | (c >> 18))
    o[1] = <uint8_t> (0x80 | ((c >> 12) & 0x3F))
    o[2] = <uint8_t> (0x80 | ((c >> 6) & 0x3F))
    o[3] = <uint8_t> (0x80 | (c & 0x3F))
    return 4


cdef inline int _get(const uint8_t* p, uint32_t* c) noexcept nogil:
    """Read one code point of UTF-8 written by :func:`_put`; the number of bytes."""
    cdef uint8_t b = p[0]
    if b < 0x80:
        c[0] = b
        return 1
    if b < 0xE0:
        c[0] = ((b & 0x1F) << 6) | (p[1] & 0x3F)
        return 2
    if b < 0xF0:
        c[0] = ((b & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
        return 3
    c[0] = ((b & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F)
    return 4


cdef inline bint _is_cont(uint8_t b) noexcept nogil:
    return (b & 0xC0) == 0x80


cdef Py_ssize_t _encode(int kind, const void* data, Py_ssize_t n, bint ascii,
                        uint8_t* out) noexcept nogil:
    """UTF-8 of ``n`` code units of width ``kind`` into ``out`` (room for 4n)."""
    cdef Py_ssize_t i, k = 0
    cdef const uint8_t* d1
    cdef const uint16_t* d2
    cdef const uint32_t* d4
    if ascii:
        memcpy(out, data, n)
        return n
    if kind == 1:
        d1 = <const uint8_t*> data
        for i in range(n):
            k += _put(out + k, d1[i])
    elif kind == 2:
        d2 = <const uint16_t*> data
        for i in range(n):
            k += _put(out + k, d2[i])
    else:
        d4 = <const uint32_t*> data
        for i in range(n):
            k += _put(out + k, d4[i])
    return k



# --------------------------------------------------------------------------
# The value table
# --------------------------------------------------------------------------


cdef struct Wanted:
    # The string a probe looks for, and where the table's strings live.
    const uint8_t* arena
    const int64_t* offs
    const uint8_t* data
    int64_t n


cdef bint _same_bytes(const void* ctx, int64_t value) noexcept nogil:
    # The table's same_entry for Values: a slot's value is the string's id + 1.
    cdef const Wanted* w = <const Wanted*> ctx
    cdef int64_t a = value - 1
    return (w.offs[a + 1] - w.offs[a] == w.n
            and memcmp(w.arena + w.offs[a], w.data, w.n) == 0)


cdef class Values:
    """Distinct strings as UTF-8, ids ``0, 1, ...`` in order of first insertion.

    An open-addressing table over :func:`cseq.features._hash.hash_bytes` of the UTF-8
    bytes (the hash :func:`cseq.features._templates.hash_strings` gives), confirmed by
    comparing the bytes.  Made and filled by :func:`intern_columns`; Python
    reads it through :meth:`hashes` and :meth:`strings`.
    """


    def __cinit__(self, Py_ssize_t capacity=1024):
        if capacity < 0:
            raise ValueError("Values: capacity must be >= 0")
        self._cap = max(capacity, 16)
        self._offs = <int64_t*> malloc((self._cap + 1) * sizeof(int64_t))
        self._hash = <uint64_t*> malloc(self._cap * sizeof(uint64_t))
        self._arena_cap = self._cap * 8
        self._arena = <uint8_t*> malloc(self._arena_cap)
        if self._offs == NULL or self._hash == NULL or self._arena == NULL:
            raise MemoryError()
        self._offs[0] = 0
        table_init(&self._tab, slots_for(capacity))

    def __dealloc__(self):
        free(self._arena)
        free(self._offs)
        free(self._hash)
        table_free(&self._tab)

    cdef int32_t add(self, const uint8_t* s, int64_t n) except -1 nogil:
        """Id of the UTF-8 string ``s[:n]``, inserting it when new."""
        cdef uint64_t h = hash_bytes(s, n)
        cdef Wanted w
        w.arena = self._arena
        w.offs = self._offs
        w.data = s
        w.n = n
        cdef uint64_t i = table_probe(self._tab, h, _same_bytes, &w)
        cdef int64_t a = self._tab.slots[i].value - 1
        if a != -1:
            return <int32_t> a
        if self._n > MAX_ID:
            with gil:
                raise OverflowError("more than 2**31 - 1 distinct cell strings")
        self._reserve(n)
        a = self._n
        if n:
            memcpy(self._arena + self._arena_size, s, n)
        self._arena_size += n
        self._offs[a + 1] = self._arena_size
        self._hash[a] = h
        self._n += 1
        self._tab.slots[i].hash = h
        self._tab.slots[i].value = a + 1
        if self._n > self._tab.limit:
            table_grow(&self._tab)
        return <int32_t> a

    cdef int _reserve(self, int64_t n) except -1 nogil:
        cdef void* p
        cdef int64_t cap
        if self._arena_size + n > self._arena_cap:
            cap = max(self._arena_size + n, 2 * self._arena_cap)
            p = realloc(self._arena, cap)
            if p == NULL:
                with gil:
                    raise MemoryError()
            self._arena = <uint8_t*> p
            self._arena_cap = cap
        if self._n == self._cap:
            p = realloc(self._offs, (2 * self._cap + 1) * sizeof(int64_t))
            if p == NULL:
                with gil:
                    raise MemoryError()
            self._offs = <int64_t*> p
            p = realloc(self._hash, 2 * self._cap * sizeof(uint64_t))
            if p == NULL:
                with gil:
                    raise MemoryError()
            self._hash = <uint64_t*> p
            self._cap *= 2
        return 0

    def __len__(self):
        return self._n

    def hashes(self):
        """uint64 hash of each string's UTF-8 bytes, in id order."""
        out = np.empty(self._n, dtype=np.uint64)
        cdef uint64_t[::1] o = out
        if self._n:
            memcpy(&o[0], self._hash, self._n * sizeof(uint64_t))
        return out

    def hash_classes(self, const int32_t[:, ::1] word_slots not None, Py_ssize_t slot,
                     dict table not None, str unknown not None, uint64_t[::1] hashes not None,
                     FunctionCache cache=None):
        """Write ``hashes[ids[w]]`` = the hash of ``table.get(string(w).lower(), unknown)``
        for every string ``w`` with ``ids[w] >= 0``, ``ids = word_slots[:, slot]``.

        The tag dictionary's classes of a featurizer's words
        (``TemplateFeaturizer._tags_hashed``), hashed as
        :func:`cseq.features._templates.hash_strings` hashes (UTF-8 with
        surrogates passed), in one pass without the lists and NumPy
        temporaries that cost more than the lookups for one sentence.  With
        ``cache`` (this thread's :class:`FunctionCache`), the hashes of the
        strings it holds for ``table`` are taken from it and the others put
        in it: ``table`` must not change afterwards (a fitted tag
        dictionary's never does).
        """
        cdef int64_t w, e = -1, n = word_slots.shape[0]
        cdef int32_t i
        cdef bytes b
        cdef FCache* c = NULL
        if n > self._n or not 0 <= slot < word_slots.shape[1]:
            raise ValueError("Values.hash_classes: word_slots does not fit the strings")
        for w in range(n):
            if word_slots[w, slot] >= hashes.shape[0]:
                raise ValueError("Values.hash_classes: id out of range of hashes")
        if cache is not None:
            c = &cache.c
            if cache.class_table is not table or cache.class_unknown != unknown:
                memset(c.has_class, 0, <size_t> c.mask + 1)
                cache.class_table = table
                cache.class_unknown = unknown
        for w in range(n):
            i = word_slots[w, slot]
            if i < 0:
                continue
            if c != NULL:
                e = _cache_entry(c, self, w)
                if e >= 0 and c.has_class[e]:
                    hashes[i] = c.classes[e]
                    continue
            word = PyUnicode_DecodeUTF8(<const char*> self._arena + self._offs[w],
                                        self._offs[w + 1] - self._offs[w], "surrogatepass")
            cls = table.get(word.lower(), unknown)
            if type(cls) is not str:
                raise TypeError(f"Values.hash_classes: the class of {word!r} is not a str")
            b = (<str> cls).encode("utf-8", "surrogatepass")
            hashes[i] = hash_bytes(<const uint8_t*> (<char*> b), len(b))
            if e >= 0:
                c.classes[e] = hashes[i]
                c.has_class[e] = 1
        return None

    def strings(self, ids=None):
        """The strings with the given ids (all of them by default), as str."""
        cdef int64_t i, a
        if ids is None:
            ids = range(self._n)
        out = []
        for i in ids:
            a = i
            if not 0 <= a < self._n:
                raise IndexError(f"Values: id {a} out of range")
            out.append(PyUnicode_DecodeUTF8(<const char*> self._arena + self._offs[a],
                                            self._offs[a + 1] - self._offs[a],
                                            "surrogatepass"))
        return out


cdef class FunctionCache:
    """The hashes of the token function values of the cell strings seen last, for one thread.

    :func:`intern_for_lookup` on one thread and a short input (a sentence)
    takes a distinct cell string's function values from here when it has
    them instead of running the functions again: a direct-mapped table
    keyed by the string's bytes, compared whole (not only hashed), so a hit
    gives the very hashes a miss computes.  A token function's value depends
    on the string alone, so one cache serves every featurizer and every
    fitted model; it is not locked, so each thread has its own
    (``TemplateFeaturizer`` keeps one per thread).  It also keeps the hash
    of each string's class in one tag dictionary (:meth:`Values.hash_classes`),
    the dictionary it was last given: another one empties those.  About
    ``225 * capacity`` bytes (900 kB by default).

    Parameters
    ----------
    capacity : int, optional
        Entries, rounded down to a power of two (at least 16).
    """


    def __cinit__(self, Py_ssize_t capacity=4096):
        cdef Py_ssize_t n = 16, i
        while n * 2 <= capacity:
            n *= 2
        self.c.mask = <uint64_t> (n - 1)
        self.c.keys = <uint64_t*> malloc(n * sizeof(uint64_t))
        self.c.lens = <int32_t*> malloc(n * sizeof(int32_t))
        self.c.text = <uint8_t*> malloc(n * CACHED_BYTES)
        self.c.known = <uint32_t*> calloc(n, sizeof(uint32_t))
        self.c.vals = <uint64_t*> malloc(n * N_FUNCTIONS * sizeof(uint64_t))
        self.c.has_class = <uint8_t*> calloc(n, 1)
        self.c.classes = <uint64_t*> malloc(n * sizeof(uint64_t))
        if self.c.keys == NULL or self.c.lens == NULL or self.c.text == NULL \
                or self.c.known == NULL or self.c.vals == NULL or self.c.has_class == NULL \
                or self.c.classes == NULL:
            raise MemoryError()
        self.class_table = None
        self.class_unknown = None
        for i in range(n):
            self.c.lens[i] = -1

    def __dealloc__(self):
        free(self.c.keys)
        free(self.c.lens)
        free(self.c.text)
        free(self.c.known)
        free(self.c.vals)
        free(self.c.has_class)
        free(self.c.classes)

    def __len__(self):
        """The number of entries (strings it can hold)."""
        return <Py_ssize_t> self.c.mask + 1


# --------------------------------------------------------------------------
# Token functions
# --------------------------------------------------------------------------

# unicodedata.category(c)[0] in "PS", per code point: 0 not asked yet, 1 yes, 2 no.
cdef uint8_t* _punct = <uint8_t*> calloc(0x110000, 1)
if _punct == NULL:
    raise MemoryError()


def _fill_punct(Py_ssize_t c):
    _punct[c] = 1 if unicodedata.category(chr(c))[0] in "PS" else 2


for _c in range(128):
    _fill_punct(_c)


cdef bint _is_punct(uint32_t c) noexcept nogil:
    if _punct[c] == 0:
        with gil:
            _fill_punct(c)
    return _punct[c] == 1


cdef int _room(Buf* b, int64_t n) except -1 nogil:
    cdef void* q
    if n > b.cap:
        q = realloc(b.p, n)
        if q == NULL:
            with gil:
                raise MemoryError()
        b.p = <uint8_t*> q
        b.cap = n
    return 0


cdef int64_t _lower_python(const uint8_t* s, int64_t n, Buf* out) except -1 nogil:
    """``str.lower`` of a string with a non-ASCII character, written to ``out``."""
    cdef int kind, ascii
    cdef const void* data
    cdef Py_ssize_t m
    with gil:
        low = PyUnicode_DecodeUTF8(<const char*> s, n, "surrogatepass").lower()
        cseq_tok_units(<PyObject*> low, &kind, &data, &m, &ascii)
        _room(out, 4 * m + 1)
        return _encode(kind, data, m, ascii, out.p)


cdef inline const char* _flag(bint b) noexcept nogil:
    return "1" if b else "0"


cdef int64_t _apply(int f, const uint8_t* s, int64_t n, Buf* out) except -1 nogil:
    """Token function ``f`` of the UTF-8 string ``s[:n]``, as UTF-8 in ``out``.

    Each branch does what the Python definition in cseq.templates does.
    """
    cdef int64_t i, k, m, cnt
    cdef uint32_t c, prev
    cdef bint ascii = True, r, first
    cdef const char* lit
    for i in range(n):
        if s[i] >= 0x80:
            ascii = False
            break
    _room(out, 4 * n + 8)
    if f == F_LOWER:
        if not ascii:
            return _lower_python(s, n, out)
        for i in range(n):
            c = s[i]
            out.p[i] = <uint8_t> (c + 32 if 65 <= c <= 90 else c)
        return n
    if F_PREFIX1 <= f < F_PREFIX1 + 6:
        # w[:m]: the bytes before code point m.
        m = f - F_PREFIX1 + 1
        if ascii:
            k = min(n, m)
        else:
            k = 0
            cnt = 0
            while k < n:
                if not _is_cont(s[k]):
                    if cnt == m:
                        break
                    cnt += 1
                k += 1
        memcpy(out.p, s, k)
        return k
    if F_SUFFIX1 <= f < F_SUFFIX1 + 6:
        # w[-m:] (all of w when it is shorter): the bytes from code point len - m.
        m = f - F_SUFFIX1 + 1
        if ascii:
            k = max(<int64_t> 0, n - m)
        else:
            k = n
            cnt = 0
            while k > 0 and cnt < m:
                k -= 1
                if not _is_cont(s[k]):
                    cnt += 1
        memcpy(out.p, s + k, n - k)
        return n - k
    if f == F_SHAPE or f == F_SHORTSHAPE:
        # "X" upper, "x" lower, "d" digit, else the character; shortshape
        # then keeps one character of each run of equal ones.
        i = 0
        k = 0
        first = True
        prev = 0
        while i < n:
            i += _get(s + i, &c)
            if Py_UNICODE_ISUPPER(c):
                c = 88       # X
            elif Py_UNICODE_ISLOWER(c):
                c = 120      # x
            elif Py_UNICODE_ISDIGIT(c):
                c = 100      # d
            if f == F_SHORTSHAPE and not first and c == prev:
                continue
            first = False
            prev = c
            k += _put(out.p + k, c)
        return k
    if f == F_ISTITLE:
        # w[:1].isupper() and no later character isupper().
        r = False
        if n:
            i = _get(s, &c)
            r = Py_UNICODE_ISUPPER(c)
            while r and i < n:
                i += _get(s + i, &c)
                if Py_UNICODE_ISUPPER(c):
                    r = False
        lit = _flag(r)
    elif f == F_ISUPPER:
        # str.isupper: no lower or title case character, at least one upper.
        r = False
        i = 0
        while i < n:
            i += _get(s + i, &c)
            if Py_UNICODE_ISLOWER(c) or Py_UNICODE_ISTITLE(c):
                r = False
                break
            if Py_UNICODE_ISUPPER(c):
                r = True
        lit = _flag(r)
    elif f == F_HASDIGIT or f == F_ALLDIGITS:
        # any / all characters isdigit() (all of none is False, as str.isdigit).
        r = f == F_ALLDIGITS and n > 0
        i = 0
        while i < n:
            i += _get(s + i, &c)
            if Py_UNICODE_ISDIGIT(c):
                if f == F_HASDIGIT:
                    r = True
                    break
            elif f == F_ALLDIGITS:
                r = False
                break
        lit = _flag(r)
    elif f == F_HASHYPHEN:
        r = False
        for i in range(n):
            if s[i] == 45:
                r = True
                break
        lit = _flag(r)
    elif f == F_ISPUNCT:
        # Non-empty, every character in a Unicode P* or S* category.
        r = n > 0
        i = 0
        while i < n:
            i += _get(s + i, &c)
            if not _is_punct(c):
                r = False
                break
        lit = _flag(r)
    elif f == F_LEN:
        cnt = 0
        for i in range(n):
            if not _is_cont(s[i]):
                cnt += 1
        if cnt <= 4:
            out.p[0] = <uint8_t> (48 + cnt)
            return 1
        lit = "5-6" if cnt <= 6 else "7-9" if cnt <= 9 else "10+"
    else:
        with gil:
            raise ValueError(f"unknown token function code {f}")
    k = 0
    while lit[k]:
        out.p[k] = <uint8_t> lit[k]
        k += 1
    return k


def apply_function(name, strings):
    """The token function ``name`` of each string, computed here (for tests).

    Parameters
    ----------
    name : str
        One of :data:`FUNCTIONS`.
    strings : list of str

    Returns
    -------
    list of str
    """
    cdef int f = FUNCTIONS.index(name)
    cdef Buf word, out
    cdef int kind, ascii
    cdef const void* data
    cdef Py_ssize_t n
    cdef int64_t k, m
    word.p = NULL
    word.cap = 0
    out.p = NULL
    out.cap = 0
    res = []
    try:
        for s in strings:
            if not cseq_tok_units(<PyObject*> s, &kind, &data, &n, &ascii):
                raise TypeError(f"apply_function: expected str, got {type(s).__name__}")
            _room(&word, 4 * n + 1)
            k = _encode(kind, data, n, ascii, word.p)
            m = _apply(f, word.p, k, &out)
            res.append(PyUnicode_DecodeUTF8(<const char*> out.p, m, "surrogatepass"))
    finally:
        free(word.p)
        free(out.p)
    return res
