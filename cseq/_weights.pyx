"""Sparse state weights: the index of (attribute, label) pairs and emission scoring.

State weights are grouped by attribute (a CSR layout): attribute ``a`` owns the
weights ``w[attr_ptr[a]:attr_ptr[a + 1]]``, one for each label listed in
``attr_labels`` over the same range.  Only pairs seen in training get a weight
unless every pair is asked for, which is what CRFsuite does too.
"""

cimport cython
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from cseq._prefetch cimport cseq_prefetch
from cseq._types cimport attr_t, index_t, label_t, value_t, weight_t


cdef void score_emissions(const StateIndex* index, const weight_t* w, const Corpus* corpus,
                          index_t t0, index_t t1, int n_labels, weight_t* out) noexcept nogil:
    """Write the state scores of tokens ``t0:t1`` into ``out`` (row-major, (t1 - t0) x n_labels).

    ``out[t, y] = sum over features (a, v) of token t of v * W[a, y]``.
    """
    cdef index_t t, f, k, k1
    cdef weight_t v
    cdef weight_t* row
    memset(out, 0, <size_t>((t1 - t0) * n_labels) * sizeof(weight_t))
    for t in range(t0, t1):
        row = out + (t - t0) * n_labels
        # Each feature costs up to three cache misses in a row (its range in
        # attr_ptr, then its labels and weights).  Prefetching the ranges
        # two tokens ahead and the labels and weights one token ahead lets
        # the misses of different features overlap.
        if t + 2 < t1:
            for f in range(corpus.tok_ptr[t + 2], corpus.tok_ptr[t + 3]):
                cseq_prefetch(&index.attr_ptr[corpus.attr_ids[f]])
        if t + 1 < t1:
            for f in range(corpus.tok_ptr[t + 1], corpus.tok_ptr[t + 2]):
                k = index.attr_ptr[corpus.attr_ids[f]]
                cseq_prefetch(&index.attr_labels[k])
                cseq_prefetch(&w[k])
        for f in range(corpus.tok_ptr[t], corpus.tok_ptr[t + 1]):
            v = corpus.values[f]
            k1 = index.attr_ptr[corpus.attr_ids[f] + 1]
            for k in range(index.attr_ptr[corpus.attr_ids[f]], k1):
                row[index.attr_labels[k]] += v * w[k]


cdef index_t find_weight(const StateIndex* index, attr_t a, label_t y) noexcept nogil:
    """Position of the weight of (a, y) in the state weights, or -1 if the pair has none."""
    cdef index_t lo = index.attr_ptr[a], hi = index.attr_ptr[a + 1], mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if index.attr_labels[mid] < y:
            lo = mid + 1
        else:
            hi = mid
    if lo < index.attr_ptr[a + 1] and index.attr_labels[lo] == y:
        return lo
    return -1


cdef void add_state_features(const StateIndex* index, const Corpus* corpus, index_t t,
                             const weight_t* scores, int n_labels, weight_t scale,
                             weight_t* grad) noexcept nogil:
    """Add ``scale * v * scores[y]`` to the weight of every pair (a, y) of token ``t``.

    With ``scores`` the token's label marginals this accumulates expected
    feature counts (the CRF gradient); the transposed emission kernel.
    """
    cdef index_t f, k, k1
    cdef weight_t v
    for f in range(corpus.tok_ptr[t], corpus.tok_ptr[t + 1]):
        v = scale * corpus.values[f]
        k1 = index.attr_ptr[corpus.attr_ids[f] + 1]
        for k in range(index.attr_ptr[corpus.attr_ids[f]], k1):
            grad[k] += v * scores[index.attr_labels[k]]


cdef int init_index(StateIndex* index, const index_t[::1] attr_ptr,
                    const label_t[::1] attr_labels) except -1:
    """Point a StateIndex at validated arrays (which must outlive it)."""
    index.attr_ptr = &attr_ptr[0]
    index.attr_labels = &attr_labels[0] if attr_labels.shape[0] else NULL
    index.n_attrs = attr_ptr.shape[0] - 1
    return 0


cdef index_t init_corpus(Corpus* corpus, const index_t[::1] seq_ptr, const index_t[::1] tok_ptr,
                         const attr_t[::1] attr_ids, const value_t[::1] values,
                         const label_t* labels) except -1:
    """Point a Corpus at validated arrays; returns the longest sequence's length."""
    cdef index_t s, longest = 0
    corpus.seq_ptr = &seq_ptr[0]
    corpus.tok_ptr = &tok_ptr[0]
    corpus.attr_ids = &attr_ids[0] if attr_ids.shape[0] else NULL
    corpus.values = &values[0] if values.shape[0] else NULL
    corpus.labels = labels
    corpus.n_seqs = seq_ptr.shape[0] - 1
    for s in range(corpus.n_seqs):
        longest = max(longest, seq_ptr[s + 1] - seq_ptr[s])
    return longest


def build_state_index(const index_t[::1] tok_ptr, const attr_t[::1] attr_ids,
                      const label_t[::1] labels, index_t n_attrs, int n_labels):
    """Collect the (attribute, label) pairs that occur in a labeled corpus.

    Parameters
    ----------
    tok_ptr, attr_ids, labels : arrays of a packed corpus (already validated).
    n_attrs : number of attributes (every id in ``attr_ids`` is below it).
    n_labels : number of labels.

    Returns
    -------
    attr_ptr : ndarray of int64, shape (n_attrs + 1,)
    attr_labels : ndarray of int32, labels of each attribute, sorted ascending.

    Notes
    -----
    O(number of feature occurrences): occurrences are bucketed by attribute
    (a counting sort), then each bucket is deduplicated with a stamp array of
    one entry per label, so no sort over all pairs is needed.
    """
    cdef index_t n_tok = tok_ptr.shape[0] - 1
    cdef index_t n_feat = attr_ids.shape[0]
    counts_np = np.zeros(n_attrs + 1, dtype=np.int64)
    cdef index_t[::1] counts = counts_np
    bucket_np = np.empty(n_feat, dtype=np.int32)
    cdef label_t[::1] bucket = bucket_np
    attr_ptr_np = np.zeros(n_attrs + 1, dtype=np.int64)
    cdef index_t[::1] attr_ptr = attr_ptr_np
    cdef index_t t, f, a, k, start, out, j
    cdef label_t y, tmp
    cdef index_t* stamp = <index_t*>malloc(max(n_labels, 1) * sizeof(index_t))
    if stamp == NULL:
        raise MemoryError()
    try:
        with nogil:
            for f in range(n_feat):
                counts[attr_ids[f] + 1] += 1
            for a in range(n_attrs):
                counts[a + 1] += counts[a]
            # counts[a] is now the write position of attribute a's bucket.
            for t in range(n_tok):
                y = labels[t]
                for f in range(tok_ptr[t], tok_ptr[t + 1]):
                    a = attr_ids[f]
                    bucket[counts[a]] = y
                    counts[a] += 1
            # Deduplicate each bucket in place, then sort it (buckets are short).
            for k in range(n_labels):
                stamp[k] = -1
            out = 0
            start = 0
            for a in range(n_attrs):
                attr_ptr[a] = out
                for f in range(start, counts[a]):
                    y = bucket[f]
                    if stamp[y] != a:
                        stamp[y] = a
                        j = out
                        while j > attr_ptr[a] and bucket[j - 1] > y:
                            bucket[j] = bucket[j - 1]
                            j -= 1
                        bucket[j] = y
                        out += 1
                start = counts[a]
            attr_ptr[n_attrs] = out
    finally:
        free(stamp)
    return attr_ptr_np, bucket_np[:out].copy()


def score_corpus_emissions(const index_t[::1] attr_ptr, const label_t[::1] attr_labels,
                           const weight_t[::1] state_weights, const index_t[::1] tok_ptr,
                           const attr_t[::1] attr_ids, const value_t[::1] values,
                           index_t t0, index_t t1, int n_labels):
    """Emission scores of tokens ``t0:t1`` as an array (t1 - t0, n_labels); for tests and tools."""
    out_np = np.zeros((t1 - t0, n_labels), dtype=np.float64)
    cdef weight_t[:, ::1] out = out_np
    cdef StateIndex index
    cdef Corpus corpus
    init_index(&index, attr_ptr, attr_labels)
    # Only tok_ptr, attr_ids and values are read: a one-sequence seq_ptr will do.
    whole_np = np.array([0, tok_ptr.shape[0] - 1], dtype=np.int64)
    cdef const index_t[::1] whole = whole_np
    init_corpus(&corpus, whole, tok_ptr, attr_ids, values, NULL)
    if t1 > t0:
        with nogil:
            score_emissions(&index, &state_weights[0] if state_weights.shape[0] else NULL,
                            &corpus, t0, t1, n_labels, &out[0, 0])
    return out_np
