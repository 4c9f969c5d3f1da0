"""Word rows: the summed state weights of a word's attributes, computed once per word.

``predict`` on the template featurizer looks up the attributes that read one
word once per distinct word (``KeyTable.word_memo``); :func:`word_rows` sums
their state weights into one emission row per word and window offset, which
:func:`cseq.chain._decode.decode_corpus` adds per token
(``LinearChain.word_rows``).  :class:`WordRowCache` keeps a thread's sums
between calls, so one sentence at a time reads the model's rows only for
words it has not seen.
"""

from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

import numpy as np

from cseq._core._gil cimport GIL_MIN_WORK
from cseq._core._types cimport index_t, weight_t
from cseq.chain._chain cimport ChainIndex, StateIndex

__all__ = ["word_rows", "WordRowCache"]


cdef void _sum_word_rows(const StateIndex* index, const weight_t* wt, const int* attrs,
                         const int* group, index_t n_words, Py_ssize_t n_cols, int n_groups,
                         int L, weight_t* out) noexcept nogil:
    """:func:`word_rows`' sums into ``out`` (zeroed, n_words x n_groups x L), unchecked."""
    cdef index_t w, k
    cdef Py_ssize_t j
    cdef int g, a
    cdef weight_t* row
    for w in range(n_words):
        for g in range(n_groups):
            row = out + (w * n_groups + g) * L
            for j in range(n_cols):
                a = attrs[w * n_cols + j]
                if group[j] != g or a < 0:
                    continue
                for k in range(index.attr_ptr[a], index.attr_ptr[a + 1]):
                    row[index.attr_labels[k]] += 1.0 * wt[k]


def word_rows(ChainIndex ix, const weight_t[::1] params, const int[:, ::1] attrs,
              const int[::1] group, int n_groups, WordRowCache cache=None):
    """Summed state-weight rows of sets of attributes (``LinearChain.word_rows``).

    ``out[w, g, :]`` is the sum, over the columns ``j`` of ``attrs`` with
    ``group[j] == g`` in ascending order, of the state weights of attribute
    ``attrs[w, j]`` (value 1; negative: none), each row starting at 0: the
    additions :func:`score_corpus_emissions` makes for a token holding those
    attributes in that order, so a word row equals, bit for bit, the
    emission such a token gets.  Computed here rather than by packing a
    corpus of (word, group) tokens: for the few words of one sentence that
    packing was most of the cost.

    With ``cache`` (a :class:`WordRowCache` kept for ``ix``, ``params`` and
    ``group``, never shared between threads), a word whose attribute row
    the cache holds gets its sums copied from there, and the others' sums
    are put there: the same numbers, without reading the model's rows
    again (one sentence's words are mostly words seen before).

    Returns
    -------
    ndarray of float64, shape (n_words, n_groups, n_labels)

    Raises
    ------
    ValueError
        If ``group`` does not give each column of ``attrs`` a group in
        ``0 .. n_groups - 1``, an attribute id is not the model's, or
        ``cache`` was made for other parameters, groups or columns.
    """
    cdef int L = ix.layout.n_labels
    cdef index_t n_words = attrs.shape[0], w
    cdef Py_ssize_t n_cols = attrs.shape[1], j
    if group.shape[0] != n_cols or n_groups < 0:
        raise ValueError(f"word_rows: group must give each of the {n_cols} columns a group")
    for j in range(n_cols):
        if not 0 <= group[j] < n_groups:
            raise ValueError(f"word_rows: group must give each of the {n_cols} columns a "
                             f"group in 0..{n_groups - 1}")
    for w in range(n_words):
        for j in range(n_cols):
            if attrs[w, j] >= ix.index.n_attrs:
                raise ValueError(f"word_rows: attribute id {attrs[w, j]} but the model has "
                                 f"{ix.index.n_attrs} attributes")
    # np.empty and memset, not np.zeros: NumPy's calloc of 1 KiB or more releases
    # the GIL, which on one sentence hands it to any busy thread (the convoy
    # effect, see decode_corpus); memset keeps it
    out_np = np.empty((n_words, n_groups, L), dtype=np.float64)
    if n_words == 0 or n_groups == 0 or L == 0:
        return out_np
    cdef weight_t[:, :, ::1] out = out_np
    memset(&out[0, 0, 0], 0, n_words * n_groups * L * sizeof(weight_t))
    if n_cols == 0:
        return out_np
    cdef const weight_t* wt = &params[0] if params.shape[0] else NULL
    if cache is not None:
        cache.check(ix, wt, params.shape[0], group, n_groups, L)
        cache.fill(&ix.index, wt, &attrs[0, 0], &group[0], n_words, &out[0, 0, 0])
        return out_np
    if <index_t> n_words * n_cols * L < GIL_MIN_WORK:
        # One sentence's words: done holding the GIL (see decode_corpus).
        _sum_word_rows(&ix.index, wt, &attrs[0, 0], &group[0], n_words, n_cols, n_groups, L,
                       &out[0, 0, 0])
    else:
        with nogil:
            _sum_word_rows(&ix.index, wt, &attrs[0, 0], &group[0], n_words, n_cols, n_groups,
                           L, &out[0, 0, 0])
    return out_np



cdef class WordRowCache:
    """The word rows of attribute rows already summed, for one model, one
    grouping and one thread (:func:`word_rows`' ``cache``).

    A direct-mapped table of ``capacity`` entries: an attribute row (the
    ids of one word's memo columns) hashes to one entry, which holds the
    last row that hashed there and its sums; a new row replaces it.  So the
    memory is fixed when it is made, and a hit gives exactly the numbers a
    miss computed (the key is the whole row, compared, not its hash).  It
    holds the identities of the index, parameters and groups it was made
    for and refuses others, and it is not locked: one per thread.
    """
    cdef object _ix, _params, _group
    cdef const weight_t* wt
    cdef Py_ssize_t n_params, n_cols, mask
    cdef int n_groups, L
    cdef int* keys
    cdef unsigned char* filled
    cdef weight_t* sums

    def __cinit__(self, ChainIndex ix, const weight_t[::1] params not None, group,
                  int n_groups, int capacity=4096):
        cdef Py_ssize_t cap = 1
        if capacity < 1 or n_groups < 0:
            raise ValueError("WordRowCache: capacity must be >= 1 and n_groups >= 0")
        while cap < capacity:
            cap *= 2
        self._ix, self._params = ix, params  # held: wt stays valid
        self.wt, self.n_params = (&params[0] if params.shape[0] else NULL), params.shape[0]
        self._group = np.array(group, dtype=np.intc)  # a copy: the key's meaning
        self.n_cols = self._group.shape[0]
        self.n_groups, self.L, self.mask = n_groups, ix.layout.n_labels, cap - 1
        self.keys = <int*> malloc(max(cap * self.n_cols, 1) * sizeof(int))
        self.filled = <unsigned char*> calloc(cap, 1)
        self.sums = <weight_t*> malloc(max(cap * n_groups * self.L, 1) * sizeof(weight_t))
        if self.keys == NULL or self.filled == NULL or self.sums == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.keys)
        free(self.filled)
        free(self.sums)

    @property
    def capacity(self) -> int:
        """Entries (attribute rows) the cache holds at most."""
        return self.mask + 1

    cdef int check(self, ChainIndex ix, const weight_t* wt, Py_ssize_t n_params,
                   const int[::1] group, int n_groups, int L) except -1:
        cdef const int[::1] mine = self._group
        if ix is not self._ix or wt != self.wt or n_params != self.n_params or n_groups != self.n_groups \
                or L != self.L or group.shape[0] != self.n_cols or (self.n_cols and memcmp(
                    &group[0], &mine[0], self.n_cols * sizeof(int)) != 0):
            raise ValueError("word_rows: the cache was made for another model or grouping")
        return 0

    cdef void fill(self, const StateIndex* index, const weight_t* wt, const int* attrs,
                   const int* group, index_t n_words, weight_t* out) noexcept:
        """``out`` (zeroed) as :func:`_sum_word_rows` fills it, through the cache."""
        cdef index_t w
        cdef Py_ssize_t j, n_cols = self.n_cols, e
        cdef size_t width = <size_t> self.n_groups * self.L
        cdef uint64_t h
        cdef const int* key
        for w in range(n_words):
            key = attrs + w * n_cols
            h = 1469598103934665603ULL
            for j in range(n_cols):
                h = (h ^ <unsigned int> key[j]) * 1099511628211ULL
            e = <Py_ssize_t> ((h ^ (h >> 29)) & <uint64_t> self.mask)
            if self.filled[e] and memcmp(self.keys + e * n_cols, key,
                                         n_cols * sizeof(int)) == 0:
                memcpy(out + w * width, self.sums + e * width, width * sizeof(weight_t))
                continue
            _sum_word_rows(index, wt, key, group, 1, n_cols, self.n_groups, self.L,
                           out + w * width)
            memcpy(self.keys + e * n_cols, key, n_cols * sizeof(int))
            memcpy(self.sums + e * width, out + w * width, width * sizeof(weight_t))
            self.filled[e] = 1
