# What the token functions (_tokens.pyx) and the interning of a corpus
# (_columns.pyx) share: the table of distinct strings, the function cache, the
# scratch buffer, and the function codes.
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libc.string cimport memcmp, memcpy

from cseq.features._hash cimport Table


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

cdef enum:
    # The largest id a Values table gives (int32, one kept free).
    MAX_ID = 2147483646


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


cdef struct Buf:
    uint8_t* p
    int64_t cap


cdef class Values:
    cdef uint8_t* _arena
    cdef int64_t _arena_size, _arena_cap
    cdef int64_t* _offs       # string i is _arena[_offs[i]:_offs[i + 1]]
    cdef uint64_t* _hash
    cdef int64_t _n, _cap
    cdef Table _tab     # slot value: the string's id + 1

    cdef int32_t add(self, const uint8_t* s, int64_t n) except -1 nogil
    cdef int _reserve(self, int64_t n) except -1 nogil


cdef class FunctionCache:
    cdef FCache c
    # The tag dictionary (a dict, never changed once made: a fitted
    # TagDictionary's) and unknown class that c.classes are of; held, so
    # that no other dict can take its id.
    cdef object class_table, class_unknown


cdef Py_ssize_t _encode(int kind, const void* data, Py_ssize_t n, bint ascii,
                        uint8_t* out) noexcept nogil
cdef int _room(Buf* b, int64_t n) except -1 nogil
cdef int64_t _apply(int f, const uint8_t* s, int64_t n, Buf* out) except -1 nogil


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
