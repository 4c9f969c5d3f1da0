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
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from cseq.features._hash cimport Table, hash_bytes, slots_for, table_free, table_grow, table_init, table_probe

import unicodedata

import numpy as np

__all__ = ["FUNCTIONS", "FunctionCache", "Values", "intern_columns", "intern_for_lookup",
           "intern_strings", "apply_function"]

#: Token functions by code (the code is the index).
FUNCTIONS = (
    "lower",
    "prefix1", "prefix2", "prefix3", "prefix4", "prefix5", "prefix6",
    "suffix1", "suffix2", "suffix3", "suffix4", "suffix5", "suffix6",
    "shape", "shortshape", "istitle", "isupper", "hasdigit", "alldigits",
    "hashyphen", "ispunct", "len",
)

cdef enum:
    # Below this many cells (tokens times columns) on one thread,
    # intern_for_lookup keeps the GIL (see _hash_slots).
    GIL_MIN_CELLS = 1024


cdef enum:
    F_LOWER = 0
    F_PREFIX1 = 1       # prefix n is F_PREFIX1 + n - 1
    F_SUFFIX1 = 7       # suffix n is F_SUFFIX1 + n - 1
    F_SHAPE = 13
    F_SHORTSHAPE = 14
    F_ISTITLE = 15
    F_ISUPPER = 16
    F_HASDIGIT = 17
    F_ALLDIGITS = 18
    F_HASHYPHEN = 19
    F_ISPUNCT = 20
    F_LEN = 21
    N_FUNCTIONS = 22

cdef int64_t MAX_ID = 2147483646


cdef extern from "Python.h":
    # CPython's character classes: static tables, safe without the GIL.
    bint Py_UNICODE_ISUPPER(uint32_t ch) nogil
    bint Py_UNICODE_ISLOWER(uint32_t ch) nogil
    bint Py_UNICODE_ISTITLE(uint32_t ch) nogil
    bint Py_UNICODE_ISDIGIT(uint32_t ch) nogil
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)


cdef extern from *:
    """
    /* The code units of an exact str, from a borrowed reference. 0 if not one. */
    static inline int cseq_tok_units(PyObject* s, int* kind, const void** data,
                                     Py_ssize_t* n, int* ascii) {
        if (!PyUnicode_CheckExact(s)) return 0;
        *kind = (int) PyUnicode_KIND(s);
        *data = PyUnicode_DATA(s);
        *n = PyUnicode_GET_LENGTH(s);
        *ascii = PyUnicode_IS_ASCII(s);
        return 1;
    }
    """
    bint cseq_tok_units(PyObject* s, int* kind, const void** data, Py_ssize_t* n,
                        int* ascii) noexcept


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

    cdef uint8_t* _arena
    cdef int64_t _arena_size, _arena_cap
    cdef int64_t* _offs       # string i is _arena[_offs[i]:_offs[i + 1]]
    cdef uint64_t* _hash
    cdef int64_t _n, _cap
    cdef Table _tab     # slot value: the string's id + 1

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


cdef enum:
    # Longest cell string (UTF-8 bytes) a FunctionCache keeps: longer ones,
    # rare, have their functions run every time.
    CACHED_BYTES = 24


cdef struct FCache:
    uint64_t mask       # entries - 1 (a power of two minus one)
    uint64_t* keys      # the string's hash (Values._hash)
    int32_t* lens       # its length in bytes; -1: an empty entry
    uint8_t* text       # its bytes, CACHED_BYTES per entry
    uint32_t* known     # bit f: vals[e * N_FUNCTIONS + f] holds function f's hash
    uint64_t* vals
    uint8_t* has_class  # classes[e] holds the hash of the string's tag class
    uint64_t* classes


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

    cdef FCache c
    # The tag dictionary (a dict, never changed once made: a fitted
    # TagDictionary's) and unknown class that c.classes are of; held, so
    # that no other dict can take its id.
    cdef object class_table, class_unknown

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


cdef inline int64_t _cache_entry(FCache* c, Values vals, int64_t w) noexcept nogil:
    """The entry of ``c`` for string ``w`` of ``vals``, made empty for it when it
    held another string; -1 when ``w`` is too long to be kept."""
    cdef int64_t n = vals._offs[w + 1] - vals._offs[w]
    if n > CACHED_BYTES:
        return -1
    cdef uint64_t h = vals._hash[w]
    cdef int64_t e = <int64_t> (h & c.mask)
    cdef const uint8_t* s = vals._arena + vals._offs[w]
    if c.lens[e] == n and c.keys[e] == h and memcmp(c.text + e * CACHED_BYTES, s, n) == 0:
        return e
    c.keys[e] = h
    c.lens[e] = <int32_t> n
    memcpy(c.text + e * CACHED_BYTES, s, n)
    c.known[e] = 0
    c.has_class[e] = 0
    return e


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


cdef struct Buf:
    uint8_t* p
    int64_t cap


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
    cdef Py_ssize_t k, s
    cdef Values vals = Values()
    cdef Buf buf
    cdef Ids cells
    cdef int64_t n_tok
    for s in range(n_slots):
        if not (0 <= slot_col[s] < n_cols) or not (-1 <= slot_func[s] < N_FUNCTIONS):
            raise ValueError("intern_columns: slot out of range")
    for k in range(n_cols):
        if not (0 <= columns[k] < need):
            raise ValueError("intern_columns: column beyond need")
    lengths_np = np.empty(n_seq, dtype=np.int64)
    cdef int64_t[::1] lengths = lengths_np
    buf.p = NULL
    buf.cap = 0
    cells.p = NULL
    cells.n = 0
    cells.cap = 0
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
    cdef Py_ssize_t s, k
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
    for s in range(n_slots):
        if not (0 <= slot_col[s] < n_cols) or not (-1 <= slot_func[s] < N_FUNCTIONS):
            raise ValueError("intern_for_lookup: slot out of range")
    for k in range(n_cols):
        if not (0 <= columns[k] < need):
            raise ValueError("intern_for_lookup: column beyond need")
    lengths_np = np.empty(n_seq, dtype=np.int64)
    cdef int64_t[::1] lengths = lengths_np
    buf.p = NULL
    buf.cap = 0
    cells.p = NULL
    cells.n = 0
    cells.cap = 0
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
