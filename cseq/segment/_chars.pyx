"""Character features of the segmenter, in C.

:mod:`cseq.segment.features` hands this module whole strings (paragraphs)
and gets back a packed corpus: one sequence per string, one token per
character, and for each character the ids of its features.  A feature is a
64-bit key, the fold (``_hash.combine``) of its template's number and the
values it reads (code points, a coarse character class, a Unicode category,
the hash of a whitespace-delimited chunk); :class:`KeyIds` gives each key an
id in order of first appearance, in the open-addressing table of
``cseq/features/_hash.pxd``.  No Python object is made per character: a
first pass reads the code points (and asks ``unicodedata.category`` once per
code point ever seen), the second, without the GIL, folds and looks up the
keys.

The features are defined again, in plain Python, by the reference in
``tests/segment/test_segmenter.py``, which checks that both give the same ids on
random Unicode strings.
"""

from cpython.object cimport PyObject
from libc.stdint cimport int8_t, int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc

from cseq._core._prefetch cimport cseq_prefetch
from cseq.features._hash cimport (MAX_IDS, Table, combine, slots_for, table_free, table_grow,
                                  table_init, table_probe)

import unicodedata

import numpy as np

from cseq.exceptions import InputError

__all__ = ["CATEGORIES", "ROLES", "KeyIds", "featurize", "spans"]

#: What a character's label says, by role number (the ``roles`` of :func:`spans`).
ROLES = ("outside", "begin", "sentence", "begin-multiword", "sentence-multiword", "inside",
         "split")

#: The Unicode general categories, by their number here (the category feature's value).
CATEGORIES = ("Cc", "Cf", "Cn", "Co", "Cs", "Ll", "Lm", "Lo", "Lt", "Lu", "Mc", "Me", "Mn",
              "Nd", "Nl", "No", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "Sc", "Sk", "Sm",
              "So", "Zl", "Zp", "Zs")

cdef enum:
    PAD = 3            # characters of context on each side
    BOS = 0x110001     # the code point values of the padding: outside Unicode
    EOS = 0x110002
    SPACE = 0x20       # every whitespace character reads as this one
    MAX_KEYS = 32      # room for the features of one character (alphabetic: 32, nospace: 23)
    AFFIX = 6          # most characters of the chunk affix features
    MAX_OFFSET = 15    # the chunk-offset feature caps the offset here
    BLOCK = 32         # characters whose keys are looked up together

    # Templates (the first word folded into each key).
    T_BIAS = 1
    T_CHAR = 2         # + offset + 3: the character at -3 .. +3
    T_BIGRAM = 10      # + first offset + 2: the pairs at -2 .. +1
    T_TRIGRAM = 14     # + first offset + 3: the triples at -3 .. +1
    T_CLASSES = 19
    T_CATEGORY = 20
    T_CHUNK = 21
    T_PREVIOUS = 22
    T_REST = 23
    T_BEFORE = 24
    T_PREVIOUS_CLASS = 25
    T_PREVIOUS_SHAPE = 26
    T_CHUNK_START = 27
    T_FOURGRAM = 28    # + first offset + 3: the quadruples at -3 .. 0
    T_NEXT_CLASS = 32
    T_NEXT_SHAPE = 33
    T_PAIR = 34
    T_PREVIOUS2 = 35
    T_QUOTE = 36
    T_NEXT_CHUNK = 37
    T_POSITION = 38
    T_ADDRESS = 39

    # Coarse character classes (3 bits each in the class-window feature).
    C_PAD = 0
    C_SPACE = 1
    C_UPPER = 2
    C_LOWER = 3
    C_LETTER = 4       # other letters, and combining marks
    C_DIGIT = 5
    C_PUNCT = 6
    C_OTHER = 7

    # Presets.
    ALPHABETIC = 0
    NOSPACE = 1

cdef uint64_t SEED = 0x5E61E47C4A125EEDULL


cdef extern from "Python.h":
    # CPython's character tables: static, safe without the GIL.
    bint Py_UNICODE_ISSPACE(uint32_t ch) nogil
    uint32_t Py_UNICODE_TOLOWER(uint32_t ch) nogil


cdef extern from *:
    """
    /* The code units of a str (or of a str subclass: the same characters),
       from a borrowed reference.  0 if not one. */
    static inline int cseq_seg_units(PyObject* s, int* kind, const void** data,
                                     Py_ssize_t* n) {
        if (!PyUnicode_Check(s)) return 0;
        *kind = (int) PyUnicode_KIND(s);
        *data = PyUnicode_DATA(s);
        *n = PyUnicode_GET_LENGTH(s);
        return 1;
    }
    static inline uint32_t cseq_seg_read(int kind, const void* data, Py_ssize_t i) {
        return (uint32_t) PyUnicode_READ(kind, data, i);
    }
    """
    bint cseq_seg_units(PyObject* s, int* kind, const void** data, Py_ssize_t* n) noexcept
    uint32_t cseq_seg_read(int kind, const void* data, Py_ssize_t i) noexcept nogil


# Per code point: its category's number + 1 (0: not asked yet).
cdef uint8_t* _category = <uint8_t*> calloc(0x110000, 1)
if _category == NULL:
    raise MemoryError()
_CATEGORY_NUMBER = {name: i for i, name in enumerate(CATEGORIES)}


cdef uint8_t _ask_category(uint32_t c) except 0:
    _category[c] = _CATEGORY_NUMBER[unicodedata.category(chr(c))] + 1
    return _category[c]


cdef inline uint8_t _class_of(uint32_t c, uint8_t category) noexcept nogil:
    """The coarse class of a (whitespace-normalized) code point of category number ``category``."""
    if c == SPACE:
        return C_SPACE
    if category == 9 or category == 8:       # Lu, Lt
        return C_UPPER
    if category == 5:                        # Ll
        return C_LOWER
    if 5 <= category <= 12:                  # Lm, Lo, Mc, Me, Mn
        return C_LETTER
    if 13 <= category <= 15:                 # Nd, Nl, No
        return C_DIGIT
    if 16 <= category <= 22:                 # P*
        return C_PUNCT
    return C_OTHER


cdef class KeyIds:
    """Feature keys (64-bit) to dense int32 ids, 0, 1, ... in order of first insertion.

    The keys are kept in id order too (:meth:`keys`), which is what a model
    file stores; :meth:`from_keys` rebuilds the table.
    """

    cdef Table _tab        # slot value: the key's id + 1
    cdef uint64_t* _keys
    cdef Py_ssize_t _n, _cap

    def __cinit__(self):
        table_init(&self._tab, slots_for(0))
        self._cap = 1024
        self._keys = <uint64_t*> malloc(self._cap * sizeof(uint64_t))
        if self._keys == NULL:
            raise MemoryError()

    def __dealloc__(self):
        table_free(&self._tab)
        free(self._keys)

    def __len__(self) -> int:
        return self._n

    def keys(self) -> np.ndarray:
        """The keys in id order (uint64)."""
        out = np.empty(self._n, dtype=np.uint64)
        cdef uint64_t[::1] view = out
        cdef Py_ssize_t i
        for i in range(self._n):
            view[i] = self._keys[i]
        return out

    @classmethod
    def from_keys(cls, const uint64_t[::1] keys) -> KeyIds:
        """A table holding ``keys`` with ids ``0 .. len(keys) - 1``; ValueError on a repeated key."""
        cdef KeyIds self = cls()
        cdef Py_ssize_t i
        for i in range(keys.shape[0]):
            if self._add(keys[i], True) != i:
                raise ValueError("KeyIds.from_keys: repeated key")
        return self

    cdef int64_t _add(self, uint64_t key, bint grow) except -2 nogil:
        """The id of ``key``; with ``grow`` a new key gets the next id, else -1."""
        cdef uint64_t s = table_probe(self._tab, key, NULL, NULL)
        cdef uint64_t* grown
        if self._tab.slots[s].value != 0:
            return self._tab.slots[s].value - 1
        if not grow:
            return -1
        if self._n >= MAX_IDS:
            with gil:
                raise InputError(f"the segmenter's features exceed {MAX_IDS} ids")
        if self._n == self._cap:
            with gil:
                grown = <uint64_t*> malloc(2 * self._cap * sizeof(uint64_t))
                if grown == NULL:
                    raise MemoryError()
                for s in range(<uint64_t> self._n):
                    grown[s] = self._keys[s]
                free(self._keys)
                self._keys = grown
                self._cap *= 2
        if self._n >= self._tab.limit:
            table_grow(&self._tab)
        s = table_probe(self._tab, key, NULL, NULL)
        self._tab.slots[s].hash = key
        self._tab.slots[s].value = self._n + 1
        self._keys[self._n] = key
        self._n += 1
        return self._n - 1


cdef inline uint64_t _key1(uint64_t t, uint64_t a) noexcept nogil:
    return combine(combine(SEED, t), a)


cdef inline uint64_t _key2(uint64_t t, uint64_t a, uint64_t b) noexcept nogil:
    return combine(combine(combine(SEED, t), a), b)


cdef inline uint64_t _key3(uint64_t t, uint64_t a, uint64_t b, uint64_t c) noexcept nogil:
    return combine(combine(combine(combine(SEED, t), a), b), c)


cdef inline uint64_t _bucket(int64_t x) noexcept nogil:
    """``x`` (a count of chunks) in one of 8 buckets: 0, 1, 2, 3, 4-5, 6-9, 10-19, 20 on."""
    if x < 4:
        return x
    if x < 6:
        return 4
    if x < 10:
        return 5
    if x < 20:
        return 6
    return 7


cdef int _keys_of(const uint32_t* ch, const uint32_t* low, const uint8_t* cls,
                  const uint8_t* cat, const int64_t* chunk_start, const int64_t* chunk_end,
                  const uint64_t* chunk_hash, const uint64_t* prev_hash,
                  const uint64_t* prev_shape, const uint8_t* quote, const int64_t* position,
                  const uint8_t* address,
                  Py_ssize_t n, Py_ssize_t i,
                  int preset, uint64_t* out) noexcept nogil:
    """The feature keys of the character at padded position ``i``; their number.

    ``ch``, ``low``, ``cls`` and ``cat`` are padded (``PAD`` entries each
    side); the chunk arrays are indexed by the unpadded position ``i - PAD``.
    """
    cdef int k = 0, d
    cdef uint64_t h, window = 0
    cdef Py_ssize_t j, p = i - PAD, stop
    out[k] = _key1(T_BIAS, 0); k += 1
    for d in range(-3, 4):
        out[k] = _key1(T_CHAR + d + 3, ch[i + d]); k += 1
    for d in range(-2, 2):
        out[k] = _key2(T_BIGRAM + d + 2, ch[i + d], ch[i + d + 1]); k += 1
    for d in range(-3, 2):
        if preset == ALPHABETIC and (d == -3 or d == 1):
            continue
        out[k] = _key3(T_TRIGRAM + d + 3, ch[i + d], ch[i + d + 1], ch[i + d + 2]); k += 1
    if preset == NOSPACE:
        # Without spaces the words are only in the n-grams: 4-grams too.
        for d in range(-3, 1):
            out[k] = combine(_key3(T_FOURGRAM + d + 3, ch[i + d], ch[i + d + 1], ch[i + d + 2]),
                             ch[i + d + 3]); k += 1
    for d in range(-3, 4):
        window = (window << 3) | cls[i + d]
    out[k] = _key1(T_CLASSES, window); k += 1
    out[k] = _key1(T_CATEGORY, cat[i]); k += 1
    if preset == NOSPACE or ch[i] == SPACE:
        return k
    # The whitespace-delimited chunk holding the character (lower-cased).
    out[k] = _key2(T_CHUNK, chunk_hash[p], min(p - chunk_start[p], <int64_t> MAX_OFFSET)); k += 1
    if p == chunk_start[p] and prev_hash[p] != 0:
        # The chunk before, alone and with this character's class (after
        # "Mr." a capital starts no sentence, after "end." it does), and
        # that chunk's last character, length and first class, which carry
        # over to abbreviations not seen in training.
        out[k] = _key1(T_PREVIOUS, prev_hash[p]); k += 1
        out[k] = _key2(T_PREVIOUS_CLASS, prev_hash[p], cls[i]); k += 1
        out[k] = _key2(T_PREVIOUS_SHAPE, prev_shape[p], cls[i]); k += 1
        # This chunk with its first character's class and the class of the
        # previous chunk's last character: a capitalized sentence opener
        # after a word with no final punctuation.
        out[k] = _key3(T_CHUNK_START, chunk_hash[p], cls[i], (prev_shape[p] >> 8) & 7); k += 1
        # The chunk before it with this one (a pair seen in training:
        # "Thanks, Sean" ends a signature, "Thanks for" does not), and the
        # shapes of the two chunks before it (a run of capitalized names in a
        # signature or a list, "W. Graae").
        out[k] = _key2(T_PAIR, prev_hash[p], chunk_hash[p]); k += 1
        j = p - 1
        while ch[j + PAD] == SPACE:
            j -= 1
        out[k] = _key3(T_PREVIOUS2, prev_shape[j], prev_shape[p], cls[i]); k += 1
        # Whether a double quote or a bracket is open before this chunk, with
        # its first class and the previous chunk's last: '." He' ends a
        # quoted sentence, ', "The' opens a quote inside one.
        out[k] = _key3(T_QUOTE, quote[p], cls[i], (prev_shape[p] >> 8) & 7); k += 1
        # How many chunks into the string (the paragraph) this one is: a
        # letter's greeting and head, with no final punctuation, come first.
        out[k] = _key3(T_POSITION, _bucket(position[p]), cls[i], (prev_shape[p] >> 8) & 7); k += 1
    if address[p] != 0:
        # A web address or an e-mail address: kept whole, whatever its "/"
        # or "-", but for the brackets around it.
        out[k] = _key3(T_ADDRESS, address[p], ch[i], cls[i + 1]); k += 1
    # Up to AFFIX characters of the chunk from this one on, and before it; the
    # last word says whether the affix reached the chunk's end (start).
    stop = min(chunk_end[p], p + AFFIX)
    h = combine(SEED, T_REST)
    for j in range(p, stop):
        h = combine(h, low[j + PAD])
    out[k] = combine(h, stop == chunk_end[p]); k += 1
    stop = max(chunk_start[p], p - AFFIX)
    h = combine(SEED, T_BEFORE)
    for j in range(p - 1, stop - 1, -1):
        h = combine(h, low[j + PAD])
    out[k] = combine(h, stop == chunk_start[p]); k += 1
    if p == chunk_end[p] - 1:
        # The chunk's last character with the class of the next chunk's first
        # (C_PAD at the end): whether a final "." is a token of its own
        # ("end." before a capital) or the end of an abbreviation ("Dr." before
        # one too, "etc." before a lower-case word) is decided here, and the
        # whitespace between chunks is labelled alone, so the chain carries
        # nothing of the next word back; the chunk itself, and its shape (last
        # character, length, first class) for chunks not seen in training.
        j = chunk_end[p]
        while j < n and ch[j + PAD] == SPACE:
            j += 1
        out[k] = _key2(T_NEXT_CLASS, chunk_hash[p], cls[j + PAD]); k += 1
        out[k] = _key2(T_NEXT_SHAPE, (<uint64_t> ch[i]) << 11
                       | <uint64_t> min(p + 1 - chunk_start[p], <int64_t> 8) << 3
                       | cls[chunk_start[p] + PAD], cls[j + PAD]); k += 1
        # The chunk's last character with the next chunk itself (0 at the
        # end): "." before "and" ends an abbreviation, before "the" a sentence.
        out[k] = _key2(T_NEXT_CHUNK, ch[i], chunk_hash[j] if j < n else 0); k += 1
    return k


def featurize(texts, KeyIds ids, bint grow, int preset):
    """The packed corpus of ``texts``: one sequence per string, one token per character.

    Parameters
    ----------
    texts : sequence of str
        Copied into a tuple first, so that another thread changing the
        caller's list while the GIL is released changes nothing here.
    ids : KeyIds
        The known features; with ``grow`` new ones are added (training),
        otherwise unknown features are left out (prediction).
    preset : 0 ("alphabetic") or 1 ("nospace")

    Returns
    -------
    seq_ptr, tok_ptr : int64 arrays
    attr_ids : int32 array
    """
    if preset != ALPHABETIC and preset != NOSPACE:
        raise ValueError(f"featurize: unknown preset {preset}")
    cdef tuple items = tuple(texts)
    cdef Py_ssize_t n_texts = len(items), total = 0, s, n = 0
    cdef int kind = 1
    cdef const void* data = NULL
    cdef PyObject* obj
    for s in range(n_texts):
        obj = <PyObject*> items[s]
        if not cseq_seg_units(obj, &kind, &data, &n):
            raise InputError(f"segmenter input {s} is a {type(items[s]).__name__}, not a str (a "
                             "segmenter reads raw text, not tokens: cseq tag --segmenter SEG)")
        total += n
    seq_ptr = np.zeros(n_texts + 1, dtype=np.int64)
    tok_ptr = np.zeros(total + 1, dtype=np.int64)
    cdef int64_t[::1] sp = seq_ptr, tp = tok_ptr
    cdef int32_t[::1] ap
    cdef Py_ssize_t base = 0, n_attrs = 0, need
    # Room for the most features a string can have, grown by doubling: the
    # bound over all strings at once could be far more than they use.
    attrs = np.empty(0, dtype=np.int32)
    for s in range(n_texts):
        obj = <PyObject*> items[s]
        cseq_seg_units(obj, &kind, &data, &n)
        if n == 0:
            sp[s + 1] = base
            continue
        need = n_attrs + n * MAX_KEYS
        if need > attrs.shape[0]:
            grown = np.empty(max(need, 2 * attrs.shape[0]), dtype=np.int32)
            grown[:n_attrs] = attrs[:n_attrs]
            attrs = grown
        ap = attrs
        n_attrs = _featurize_one(kind, data, n, ids, grow, preset, &tp[base], &ap[0], n_attrs)
        base += n
        sp[s + 1] = base
    return seq_ptr, tok_ptr, attrs[:n_attrs].copy()


cdef Py_ssize_t _featurize_one(int kind, const void* data, Py_ssize_t n, KeyIds ids, bint grow,
                               int preset, int64_t* tok_ptr, int32_t* attrs,
                               Py_ssize_t n_attrs) except -1:
    """Featurize one string into ``tok_ptr[1 .. n]`` and ``attrs[n_attrs ..]``; the new
    number of attribute occurrences."""
    if n == 0:
        return n_attrs
    cdef Py_ssize_t m = n + 2 * PAD, i, p, start
    cdef uint32_t c
    cdef uint8_t category
    cdef uint32_t* ch = <uint32_t*> malloc(m * sizeof(uint32_t))
    cdef uint32_t* low = <uint32_t*> malloc(m * sizeof(uint32_t))
    cdef uint8_t* cls = <uint8_t*> malloc(m)
    cdef uint8_t* cat = <uint8_t*> malloc(m)
    cdef int64_t* chunk_start = <int64_t*> malloc(n * sizeof(int64_t))
    cdef int64_t* chunk_end = <int64_t*> malloc(n * sizeof(int64_t))
    cdef uint64_t* chunk_hash = <uint64_t*> malloc(n * sizeof(uint64_t))
    cdef uint64_t* prev_hash = <uint64_t*> malloc(n * sizeof(uint64_t))
    cdef uint64_t* prev_shape = <uint64_t*> malloc(n * sizeof(uint64_t))
    cdef uint8_t* quote = <uint8_t*> malloc(n)
    cdef int64_t* position = <int64_t*> malloc(n * sizeof(int64_t))
    cdef uint8_t* address = <uint8_t*> malloc(n)
    cdef uint8_t chunk_kind
    cdef int64_t n_chunks = 0
    cdef int quotes = 0, depth = 0
    cdef uint64_t keys[BLOCK * MAX_KEYS]
    cdef int counts[BLOCK]
    cdef Py_ssize_t block, stop
    cdef uint64_t h, prev, shape
    cdef int k, j
    cdef int64_t a
    try:
        if (ch == NULL or low == NULL or cls == NULL or cat == NULL or chunk_start == NULL
                or chunk_end == NULL or chunk_hash == NULL or prev_hash == NULL
                or prev_shape == NULL or quote == NULL or position == NULL
                or address == NULL):
            raise MemoryError()
        for i in range(PAD):
            ch[i] = low[i] = BOS
            ch[m - 1 - i] = low[m - 1 - i] = EOS
            cls[i] = cls[m - 1 - i] = C_PAD
            cat[i] = cat[m - 1 - i] = 0
        for i in range(n):
            c = cseq_seg_read(kind, data, i)
            if Py_UNICODE_ISSPACE(c):
                c = SPACE
            category = _category[c]
            if category == 0:
                category = _ask_category(c)
            ch[i + PAD] = c
            low[i + PAD] = Py_UNICODE_TOLOWER(c)
            cat[i + PAD] = category
            cls[i + PAD] = _class_of(c, category - 1)
        with nogil:
            # The chunks: maximal runs of non-space characters, each with the
            # hash of its lower-cased characters and of the chunk before it,
            # whether an odd number of '"' and an unclosed '(' come before it,
            # and how many chunks do.
            prev = shape = 0
            i = 0
            while i < n:
                if ch[i + PAD] == SPACE:
                    chunk_start[i] = i
                    chunk_end[i] = i + 1
                    chunk_hash[i] = prev_hash[i] = prev_shape[i] = 0
                    quote[i] = 0
                    position[i] = 0
                    address[i] = 0
                    i += 1
                    continue
                start = i
                h = combine(SEED, T_CHUNK)
                while i < n and ch[i + PAD] != SPACE:
                    h = combine(h, low[i + PAD])
                    i += 1
                for p in range(start, i):
                    chunk_start[p] = start
                    chunk_end[p] = i
                    chunk_hash[p] = h
                    prev_hash[p] = prev
                    prev_shape[p] = shape
                    quote[p] = (quotes & 1) | (depth > 0) << 1
                    position[p] = n_chunks
                n_chunks += 1
                # 1: a web address ("://" in it, or "www." first), 2: an "@" in it
                chunk_kind = 0
                if (i - start >= 4 and low[start + PAD] == 0x77 and low[start + 1 + PAD] == 0x77
                        and low[start + 2 + PAD] == 0x77 and ch[start + 3 + PAD] == 0x2E):
                    chunk_kind = 1
                for p in range(start, i):
                    if ch[p + PAD] == 0x40:
                        chunk_kind |= 2
                    elif (ch[p + PAD] == 0x3A and p + 2 < i and ch[p + 1 + PAD] == 0x2F
                          and ch[p + 2 + PAD] == 0x2F):
                        chunk_kind |= 1
                for p in range(start, i):
                    address[p] = chunk_kind
                for p in range(start, i):
                    c = ch[p + PAD]
                    if c == 0x22:
                        quotes += 1
                    elif c == 0x28:
                        depth += 1
                    elif c == 0x29 and depth > 0:
                        depth -= 1
                prev = h
                shape = ((<uint64_t> ch[i - 1 + PAD]) << 11 | <uint64_t> cls[i - 1 + PAD] << 8
                         | <uint64_t> min(i - start, 8) << 3 | cls[start + PAD])
            # A block of characters at a time: every key of the block is
            # folded and its slot prefetched before the first lookup, so
            # that the cache misses of a large table overlap.
            block = 0
            while block < n:
                stop = min(n, block + BLOCK)
                k = 0
                for i in range(block, stop):
                    counts[i - block] = _keys_of(ch, low, cls, cat, chunk_start, chunk_end,
                                                 chunk_hash, prev_hash, prev_shape, quote,
                                                 position, address, n,
                                                 i + PAD,
                                                 preset, &keys[k])
                    k += counts[i - block]
                for j in range(k):
                    cseq_prefetch(&ids._tab.slots[keys[j] & ids._tab.mask])
                k = 0
                for i in range(block, stop):
                    for j in range(k, k + counts[i - block]):
                        a = ids._add(keys[j], grow)
                        if a >= 0:
                            attrs[n_attrs] = <int32_t> a
                            n_attrs += 1
                    k += counts[i - block]
                    tok_ptr[i + 1] = n_attrs
                block = stop
        return n_attrs
    finally:
        free(ch)
        free(low)
        free(cls)
        free(cat)
        free(chunk_start)
        free(chunk_end)
        free(chunk_hash)
        free(prev_hash)
        free(prev_shape)
        free(quote)
        free(position)
        free(address)


cdef enum:
    R_OUTSIDE = 0
    R_BEGIN = 1
    R_SENTENCE = 2
    R_BEGIN_MULTI = 3
    R_SENTENCE_MULTI = 4
    R_INSIDE = 5
    R_SPLIT = 6
    N_ROLES = 7

    # Token flags (spans' third array).
    F_SENTENCE = 1     # the token starts a sentence
    F_MULTIWORD = 2    # a multiword token
    F_SPACE_AFTER = 4  # whitespace follows it


def spans(text, const int32_t[::1] labels, const int8_t[::1] roles):
    """The tokens a labeling of ``text``'s characters gives.

    Every non-whitespace character ends up in exactly one token and no
    token starts or ends with whitespace, whatever the labels: a character
    labeled ``outside`` (or ``inside``/``split`` with no token open) begins
    a token, whitespace labeled anything but ``inside`` ends the open one,
    and a token ends at its last non-whitespace character.  The first token
    starts a sentence.  A token is multiword if its first label says so or
    it holds a ``split``; the split points are kept.

    Parameters
    ----------
    text : str
    labels : int32, one label id per character of ``text``
    roles : int8, the role (:data:`ROLES`) of each label id

    Returns
    -------
    starts, ends : int64 arrays, one entry per token (``text[starts[t]:ends[t]]``)
    flags : uint8 array (1: starts a sentence, 2: multiword, 4: whitespace follows)
    split_ptr : int64 array (n_tokens + 1): token ``t``'s split points are
        ``splits[split_ptr[t]:split_ptr[t + 1]]``
    splits : int64 array of character offsets
    """
    cdef int kind = 1
    cdef const void* data = NULL
    cdef Py_ssize_t n, i, t = -1, n_splits = 0
    if not cseq_seg_units(<PyObject*> text, &kind, &data, &n):
        raise InputError(f"spans: text is a {type(text).__name__}, not a str")
    if labels.shape[0] != n:
        raise InputError(f"spans: {labels.shape[0]} labels for {n} characters")
    cdef Py_ssize_t r_n = roles.shape[0]
    for i in range(n):
        if not 0 <= labels[i] < r_n:
            raise InputError(f"spans: label id {labels[i]} at {i} has no role")
    for i in range(r_n):
        if not 0 <= roles[i] < N_ROLES:
            raise InputError(f"spans: role {roles[i]} of label {i} is not one of {N_ROLES}")
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    flags = np.zeros(n, dtype=np.uint8)
    split_ptr = np.zeros(n + 1, dtype=np.int64)
    splits = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] st = starts, en = ends, sp = split_ptr, sl = splits
    cdef uint8_t[::1] fl = flags
    cdef bint open_ = False
    cdef int8_t r
    with nogil:
        for i in range(n):
            r = roles[labels[i]]
            if Py_UNICODE_ISSPACE(cseq_seg_read(kind, data, i)):
                if open_ and r != R_INSIDE:
                    open_ = False
                continue
            if open_ and r != R_INSIDE and r != R_SPLIT and r != R_OUTSIDE:
                open_ = False
            if not open_:
                # A new token (the previous one ended at its last non-space character).
                if t >= 0 and en[t] < i:
                    fl[t] |= F_SPACE_AFTER
                t += 1
                st[t] = i
                sp[t] = n_splits
                fl[t] = 0
                if t == 0 or r == R_SENTENCE or r == R_SENTENCE_MULTI:
                    fl[t] |= F_SENTENCE
                if r == R_BEGIN_MULTI or r == R_SENTENCE_MULTI:
                    fl[t] |= F_MULTIWORD
                open_ = True
            elif r == R_SPLIT:
                fl[t] |= F_MULTIWORD
                sl[n_splits] = i
                n_splits += 1
            en[t] = i + 1
            sp[t + 1] = n_splits
        if t >= 0 and en[t] < n:
            fl[t] |= F_SPACE_AFTER
    t += 1
    return (starts[:t].copy(), ends[:t].copy(), flags[:t].copy(), split_ptr[:t + 1].copy(),
            splits[:n_splits].copy())
