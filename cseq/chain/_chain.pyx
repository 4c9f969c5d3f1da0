"""Model storage: the parameter layout, sparse state weights, emission scoring, path features.

All parameters of a chain live in one flat float64 vector whose blocks
(state weights, transitions, start, end, and for second order the label
trigrams) are placed by :c:func:`layout_init`, the one definition of the
layout.  State weights are grouped by attribute (a CSR layout): attribute
``a`` owns the weights ``w[attr_ptr[a]:attr_ptr[a + 1]]``, one for each label
listed in ``attr_labels`` over the same range.  Only pairs seen in training
get a weight unless every pair is asked for, which is what CRFsuite does too.

Kernel call setup happens here once: :class:`ChainIndex` (a model's
structure) and :class:`CorpusView` (a packed corpus) hold the arrays and the
C structs every kernel module reads, so the other modules take
``(ChainIndex, params, CorpusView, ...)`` and never rebuild them.

References
----------
Daume III, H. (2006). Practical structured learning techniques for natural
language processing. PhD thesis, USC (lazy averaging, section 2.1.1).
"""

from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from cseq._core._prefetch cimport cseq_prefetch
from cseq._core._types cimport attr_t, index_t, label_t, weight_t

#: Largest label count the kernels accept: L*L*L must fit comfortably in index_t
#: and every per-position buffer of L*L entries in memory.
MAX_LABELS = 1 << 20


cdef int layout_init(Layout* lay, index_t n_state, int n_labels, int order) except -1:
    """Place the parameter blocks for ``n_state`` state weights and ``n_labels`` labels."""
    cdef index_t L = n_labels
    if n_labels < 1 or n_labels > MAX_LABELS:
        raise ValueError(f"n_labels must be between 1 and {MAX_LABELS}, got {n_labels}")
    if order != 1 and order != 2:
        raise ValueError(f"order must be 1 or 2, got {order}")
    if n_state < 0:
        raise ValueError("n_state must be non-negative")
    lay.n_labels = n_labels
    lay.order = order
    lay.n_state = n_state
    lay.trans = n_state
    lay.start = lay.trans + L * L
    lay.end = lay.start + L
    lay.trans2 = lay.end + L
    lay.n_params = lay.trans2 + (L * L * L if order == 2 else 0)
    return 0


cdef void transitions_of(const Layout* lay, const weight_t* params,
                         Transitions* tr) noexcept nogil:
    """Point ``tr`` at the transition blocks of ``params`` (``trans2`` NULL for order 1)."""
    tr.trans = params + lay.trans
    tr.start = params + lay.start
    tr.end = params + lay.end
    tr.trans2 = params + lay.trans2 if lay.order == 2 else NULL
    tr.n_labels = lay.n_labels


def param_layout(index_t n_state, int n_labels, int order=1):
    """The parameter layout as a dict of block offsets (the Python mirror of ``Layout``).

    Keys: ``n_state``, ``trans``, ``start``, ``end``, ``trans2``, ``n_params``
    (offsets and sizes into the flat vector), ``n_labels``, ``order``.
    """
    cdef Layout lay
    layout_init(&lay, n_state, n_labels, order)
    return dict(lay)


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


cdef void add_path_features(const Layout* lay, const StateIndex* index, const Corpus* corpus,
                            index_t t0, index_t n, const label_t* path, const label_t* other,
                            weight_t scale, ParamSink* sink) noexcept nogil:
    """Add ``scale * Phi(x, path)`` for tokens ``t0:t0 + n`` into ``sink``: the one path-features kernel.

    ``Phi`` counts, for every token ``t``, the value of each feature ``(a, v)``
    on the weight of ``(a, path[t])`` (pairs without a weight are skipped),
    and one for the start label, the end label and each label bigram; with a
    second-order layout (``lay.order == 2``) also one for each label trigram
    ``(path[t - 2], path[t - 1], path[t])`` in the ``trans2`` block.

    With ``other`` given (another path of the same length) only the parts
    where the two paths differ are added: tokens whose labels differ,
    start/end when the first/last labels differ, and bigrams (trigrams)
    touching a difference.  ``add(gold, other=pred, +1)`` then ``add(pred, other=gold,
    -1)`` is the perceptron update ``Phi(gold) - Phi(pred)`` without touching
    the weights the two paths share (so their values are not rounded).
    """
    cdef index_t t, f, k
    cdef index_t L = lay.n_labels
    if n <= 0:
        return
    for t in range(n):
        if other != NULL and other[t] == path[t]:
            continue
        for f in range(corpus.tok_ptr[t0 + t], corpus.tok_ptr[t0 + t + 1]):
            k = find_weight(index, corpus.attr_ids[f], path[t])
            if k >= 0:
                sink_add(sink, k, scale * corpus.values[f])
    if other == NULL or other[0] != path[0]:
        sink_add(sink, lay.start + path[0], scale)
    if other == NULL or other[n - 1] != path[n - 1]:
        sink_add(sink, lay.end + path[n - 1], scale)
    for t in range(1, n):
        if other == NULL or other[t - 1] != path[t - 1] or other[t] != path[t]:
            sink_add(sink, lay.trans + path[t - 1] * L + path[t], scale)
    if lay.order == 2:
        for t in range(2, n):
            if (other == NULL or other[t - 2] != path[t - 2] or other[t - 1] != path[t - 1]
                    or other[t] != path[t]):
                sink_add(sink, lay.trans2 + (path[t - 2] * L + path[t - 1]) * L + path[t],
                         scale)


cdef class ChainIndex:
    """The structure of a chain model: its state index and parameter layout.

    Parameters
    ----------
    attr_ptr : ndarray of int64, shape (n_attributes + 1,)
    attr_labels : ndarray of int32, shape (n_state,)
    n_labels : int
    order : int, 1 or 2

    The arrays must already be validated (``cseq.chain.model.LinearChain.validate``);
    this object keeps references to them for as long as kernels may read them.
    """

    def __cinit__(self, attr_ptr, attr_labels, int n_labels, int order=1):
        self.attr_ptr = attr_ptr
        self.attr_labels = attr_labels
        self._attr_ptr = attr_ptr
        self._attr_labels = attr_labels
        self.index.attr_ptr = &self._attr_ptr[0]
        self.index.attr_labels = &self._attr_labels[0] if self._attr_labels.shape[0] else NULL
        self.index.n_attrs = self._attr_ptr.shape[0] - 1
        layout_init(&self.layout, self._attr_labels.shape[0], n_labels, order)

    @property
    def layout(self):
        """The parameter layout (see :func:`param_layout`)."""
        return dict(self.layout)


cdef class CorpusView:
    """A packed corpus (:class:`cseq.chain.sequences.Sequences`, already validated) as kernels read it.

    ``labels`` is the gold label array or None.  ``max_len`` is the longest
    sequence, which sizes every per-sequence scratch buffer.  Labels -1
    (unknown, a partially labelled corpus) are refused unless ``partial``:
    only the kernels that train on partial labels read them.
    """

    def __cinit__(self, sequences, bint with_labels=True, bint partial=False):
        cdef index_t s
        cdef const index_t[::1] seq_ptr = sequences.seq_ptr
        self.sequences = sequences
        self._seq_ptr = seq_ptr
        self._tok_ptr = sequences.tok_ptr
        self._attr_ids = sequences.attr_ids
        self._values = sequences.values
        self.corpus.seq_ptr = &self._seq_ptr[0]
        self.corpus.tok_ptr = &self._tok_ptr[0]
        self.corpus.attr_ids = &self._attr_ids[0] if self._attr_ids.shape[0] else NULL
        self.corpus.values = &self._values[0] if self._values.shape[0] else NULL
        self.corpus.labels = NULL
        if with_labels and sequences.labels is not None:
            self._labels = sequences.labels
            if self._labels.shape[0]:
                if not partial and sequences.labels.min() < 0:
                    raise ValueError("the corpus has unknown labels (-1): this kernel needs "
                                     "every label")
                self.corpus.labels = &self._labels[0]
        self.corpus.n_seqs = seq_ptr.shape[0] - 1
        self.max_len = 0
        for s in range(self.corpus.n_seqs):
            self.max_len = max(self.max_len, seq_ptr[s + 1] - seq_ptr[s])


cdef Chain chain_of(ChainIndex ix, CorpusView cv) noexcept:
    """The kernel-call setup for ``ix`` over ``cv`` (both must outlive the result)."""
    cdef Chain ch
    ch.index = &ix.index
    ch.layout = &ix.layout
    ch.corpus = &cv.corpus
    ch.max_len = cv.max_len
    return ch


#: Below this scale factor AveragedParams.shrink folds the scale into w (an
#: O(n_params) pass) so that w stays far from overflow.
cdef int check_order(const index_t[::1] order, index_t n_seqs) except -1:
    """Raise IndexError unless every entry of ``order`` is in ``[0, n_seqs)``.

    The one check of a visiting order: every training entry (``train_epoch``,
    ``epoch``) calls it before running its nogil loop without bounds checks.
    """
    cdef index_t i
    for i in range(order.shape[0]):
        if order[i] < 0 or order[i] >= n_seqs:
            raise IndexError(f"sequence index {order[i]} out of range")
    return 0


cdef double _MIN_SCALE = 1e-9
MIN_SCALE = _MIN_SCALE


cdef class AveragedParams:
    """Parameters of an online learner and their lazy-averaging accumulator.

    ``w`` are the current weights and ``u`` the accumulator of Daume III
    (2006): every update ``w[k] += d`` made while processing the example
    numbered ``age + 1`` also does ``u[k] += age * d``, so that after
    ``n_examples`` examples the average of the weight vectors held after each
    of them is ``w - u / n_examples``, and an update touches only what it
    changes.  The arrays belong to Python: trainers receive an
    ``AveragedParams`` (for warm starts and ``partial_fit``) and update it in
    place.

    A learner with an L2 term (the structured SVM) also multiplies all
    weights by a factor at every step; that costs O(1) here: the weights
    are ``scale * w`` and :meth:`shrink` only changes ``scale`` (Shalev-Shwartz
    et al. 2011, section 2.4).  The average may also weigh example ``i`` by
    ``c_i`` (Lacoste-Julien et al. 2012 weigh step ``t`` by ``t``).  It stays
    lazy: with ``A`` the sum of ``c_i * scale`` after each example
    (``scale_sum``, in the units of the current ``w``), the weighted sum of
    the weight vectors so far is ``A * w - u`` when every update adds
    ``A * d`` to ``u`` (``age = A``), so the average is
    ``(A * w - u) / sum(c_i)`` (``weight_sum``).  With ``scale`` and every
    ``c_i`` 1, ``A`` is the number of examples and this is the rule above.

    Parameters
    ----------
    w : ndarray of float64, optional
        Initial weights (not copied: updated in place); ``n_params`` zeros
        when omitted.
    u : ndarray of float64, optional
        The accumulator matching ``w`` (zeros when omitted).
    n_examples : int
        Examples processed so far.
    n_params : int
        Size when ``w`` is omitted.
    scale : float
        The weights are ``scale * w`` (1 when omitted).
    scale_sum : float, optional
        ``A`` above; ``n_examples`` when omitted.
    weight_sum : float, optional
        The sum of the examples' weights ``c_i``; ``n_examples`` when omitted.

    References
    ----------
    Shalev-Shwartz, S., Singer, Y., Srebro, N., Cotter, A. (2011). Pegasos:
    primal estimated sub-gradient solver for SVM. Mathematical Programming 127.
    Lacoste-Julien, S., Schmidt, M., Bach, F. (2012). A simpler approach to
    obtaining an O(1/t) convergence rate for the projected stochastic
    subgradient method. arXiv:1212.2002.
    """

    def __cinit__(self, w=None, u=None, long long n_examples=0, index_t n_params=0,
                  double scale=1.0, scale_sum=None, weight_sum=None):
        if w is None:
            w = np.zeros(n_params, dtype=np.float64)
        if u is None:
            u = np.zeros_like(w)
        if not (isinstance(w, np.ndarray) and isinstance(u, np.ndarray)
                and w.dtype == np.float64 and u.dtype == np.float64 and w.ndim == 1
                and w.shape == u.shape and w.flags.c_contiguous and u.flags.c_contiguous
                and w.flags.writeable and u.flags.writeable):
            raise ValueError("w and u must be writeable contiguous 1-d float64 arrays "
                             "of one length")
        if n_examples < 0:
            raise ValueError("n_examples must be non-negative")
        if not (scale > 0 and scale < float("inf")):
            raise ValueError("scale must be positive and finite")
        self.w = w
        self.u = u
        self._w = w
        self._u = u
        self.n_examples = n_examples
        self.scale = scale
        self.scale_sum = float(n_examples if scale_sum is None else scale_sum)
        self.weight_sum = float(n_examples if weight_sum is None else weight_sum)

    cdef ParamSink sink(self) noexcept:
        cdef ParamSink s
        s.w = &self._w[0] if self._w.shape[0] else NULL
        s.u = &self._u[0] if self._u.shape[0] else NULL
        s.age = self.scale_sum
        return s

    cdef void begin_example(self, ParamSink* sink) noexcept nogil:
        """Set ``sink.age`` for the updates of the next example."""
        sink.age = self.scale_sum

    cdef void end_example(self, weight_t weight) noexcept nogil:
        """Count the example just processed into the average, with weight ``c_i``."""
        self.n_examples += 1
        self.scale_sum += weight * self.scale
        self.weight_sum += weight

    cdef void shrink(self, weight_t factor) noexcept nogil:
        """Multiply the weights by ``factor >= 0``: O(1), except rarely O(n_params).

        When ``scale`` falls below :data:`MIN_SCALE` it is folded into ``w``
        (``w *= scale``, ``A /= scale``, which leaves ``A * w`` unchanged).
        ``factor == 0`` sets the weights to zero (``u -= A * w`` keeps the
        running sum of the past weight vectors).
        """
        cdef index_t k, n = self._w.shape[0]
        if factor > 0:
            self.scale *= factor
            if self.scale < _MIN_SCALE:
                for k in range(n):
                    self._w[k] *= self.scale
                self.scale_sum /= self.scale
                self.scale = 1.0
        else:
            for k in range(n):
                self._u[k] -= self.scale_sum * self._w[k]
                self._w[k] = 0.0
            self.scale = 1.0

    def scale_by(self, double factor):
        """Multiply the current weights by ``factor >= 0`` (see the C method ``shrink``).

        The average of the past weight vectors does not change.
        """
        if not (factor >= 0 and factor < float("inf")):
            raise ValueError("factor must be finite and non-negative")
        self.shrink(factor)

    def weights(self):
        """The current weights, ``scale * w`` (a new array)."""
        return self.w * self.scale

    def averaged(self):
        """The (weighted) average of the weights after each example (the weights before any)."""
        if self.n_examples == 0 or self.weight_sum <= 0:
            return self.weights()
        n = self.weight_sum
        # (A / n) is exactly 1.0 when scale and weights stay 1: w - u / n.
        return (self.scale_sum / n) * self.w - self.u / n


def build_state_index(const index_t[::1] tok_ptr, const attr_t[::1] attr_ids,
                      const label_t[::1] labels, index_t n_attrs, int n_labels):
    """Collect the (attribute, label) pairs that occur in a labeled corpus.

    Tokens whose label is -1 (unknown) contribute no pair.

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
    cdef label_t y
    cdef index_t* stamp = <index_t*>malloc(max(n_labels, 1) * sizeof(index_t))
    if stamp == NULL:
        raise MemoryError()
    try:
        with nogil:
            for t in range(n_tok):
                if labels[t] < 0:
                    continue  # an unknown label (partial labelling) pairs with nothing
                for f in range(tok_ptr[t], tok_ptr[t + 1]):
                    counts[attr_ids[f] + 1] += 1
            for a in range(n_attrs):
                counts[a + 1] += counts[a]
            # counts[a] is now the write position of attribute a's bucket.
            for t in range(n_tok):
                y = labels[t]
                if y < 0:
                    continue
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


def score_corpus_emissions(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                           index_t t0, index_t t1):
    """Emission scores of tokens ``t0:t1`` as an array (t1 - t0, n_labels); for tests and tools."""
    cdef int L = ix.layout.n_labels
    out_np = np.zeros((t1 - t0, L), dtype=np.float64)
    cdef weight_t[:, ::1] out = out_np
    if t1 <= t0:
        return out_np
    if (t1 - t0) * L < 16384:
        # A few microseconds (the word rows of one sentence): done holding the
        # GIL, as decode_corpus does below GIL_MIN_WORK (the convoy effect).
        score_emissions(&ix.index, &params[0] if params.shape[0] else NULL,
                        &cv.corpus, t0, t1, L, &out[0, 0])
    else:
        with nogil:
            score_emissions(&ix.index, &params[0] if params.shape[0] else NULL,
                            &cv.corpus, t0, t1, L, &out[0, 0])
    return out_np


def path_feature_counts(ChainIndex ix, CorpusView cv, const label_t[::1] paths,
                        weight_t scale=1.0):
    """``scale`` times the features of the given label paths, summed over the corpus.

    ``paths`` holds one label per token (validated ids, or -1).  With the
    gold labels this is the empirical feature count of a CRF.  A sequence
    with a label -1 (unknown: a partially labelled sequence) is left out.

    Returns
    -------
    ndarray of float64, shape (n_params,)
    """
    out_np = np.zeros(ix.layout.n_params, dtype=np.float64)
    cdef weight_t[::1] out = out_np
    cdef ParamSink sink
    cdef index_t s, t0, n
    if paths.shape[0] != cv.corpus.seq_ptr[cv.corpus.n_seqs]:
        raise ValueError("paths must hold one label per token of the corpus")
    if paths.shape[0] == 0:
        return out_np
    cdef const label_t* path = &paths[0]
    sink.w = &out[0]
    sink.u = NULL
    sink.age = 0.0
    with nogil:
        for s in range(cv.corpus.n_seqs):
            t0 = cv.corpus.seq_ptr[s]
            n = cv.corpus.seq_ptr[s + 1] - t0
            if not has_unknown(path + t0, n):
                add_path_features(&ix.layout, &ix.index, &cv.corpus, t0, n, path + t0, NULL,
                                  scale, &sink)
    return out_np

