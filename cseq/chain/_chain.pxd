from libc.math cimport isfinite

from cseq._core._types cimport weight_t, value_t, attr_t, label_t, index_t


cdef struct Layout:
    # Where each block of parameters lives in the one flat float64 vector.
    # This struct, filled by layout_init, is the only definition of the
    # layout: kernels read offsets from it, and LinearChain mirrors it
    # through param_layout().
    index_t n_state     # state weights: [0, n_state), grouped by attribute
    index_t trans       # first-order transitions, L*L, row = previous label
    index_t start       # start scores, L
    index_t end         # end scores, L
    index_t trans2      # second-order block, L*L*L (order 2), else == n_params
    index_t n_params
    int n_labels
    int order


cdef struct StateIndex:
    # For attribute a, its weights are w[attr_ptr[a]:attr_ptr[a + 1]], one per
    # label in attr_labels[attr_ptr[a]:attr_ptr[a + 1]] (sorted ascending).
    const index_t* attr_ptr
    const label_t* attr_labels
    index_t n_attrs


cdef struct Corpus:
    # A packed corpus (see cseq.chain.sequences.Sequences); labels may be NULL.
    const index_t* seq_ptr
    const index_t* tok_ptr
    const attr_t* attr_ids
    const value_t* values
    const label_t* labels
    index_t n_seqs


cdef struct Transitions:
    # Dense label transitions: trans[i * n_labels + j] scores label i followed
    # by label j; start[j] and end[j] score the first and the last label.
    # Second order: trans2[(a * n_labels + b) * n_labels + c] scores the
    # labels a, b, c at three consecutive positions (on top of the bigrams
    # trans[a, b] and trans[b, c]); NULL for a first-order chain.
    const weight_t* trans
    const weight_t* start
    const weight_t* end
    const weight_t* trans2
    int n_labels


cdef struct ParamSink:
    # Where updates go.  With u == NULL a plain vector: w[k] += d.  Otherwise
    # lazily averaged (Daume III 2006): also u[k] += age * d, where age is
    # the number of examples seen before the current one; after c examples
    # the average of the c weight vectors is w - u / c.  (With a scale
    # factor, see AveragedParams, age is the sum of the scales so far.)
    weight_t* w
    weight_t* u
    weight_t age


cdef inline void sink_add(ParamSink* sink, index_t k, weight_t d) noexcept nogil:
    sink.w[k] += d
    if sink.u != NULL:
        sink.u[k] += sink.age * d


cdef struct Chain:
    # Everything a kernel reads besides the parameter values: the model's
    # structure and a corpus.  Built by chain_of(), the one place that sets
    # up a kernel call; pointers into a ChainIndex and a CorpusView, which
    # must outlive it.
    const StateIndex* index
    const Layout* layout
    const Corpus* corpus
    index_t max_len


cdef int layout_init(Layout* lay, index_t n_state, int n_labels, int order) except -1

cdef void transitions_of(const Layout* lay, const weight_t* params,
                         Transitions* tr) noexcept nogil

cdef inline index_t n_path_states(int n_labels, int order) noexcept nogil:
    # States of the dynamic programs: labels (first order) or label pairs
    # (y_{t-1}, y_t) (second order).
    return <index_t> n_labels if order == 1 else <index_t> n_labels * n_labels

cdef void score_emissions(const StateIndex* index, const weight_t* w, const Corpus* corpus,
                          index_t t0, index_t t1, int n_labels, weight_t* out) noexcept nogil

cdef index_t find_weight(const StateIndex* index, attr_t a, label_t y) noexcept nogil

cdef void add_state_features(const StateIndex* index, const Corpus* corpus, index_t t,
                             const weight_t* scores, int n_labels, weight_t scale,
                             weight_t* grad) noexcept nogil

cdef void add_path_features(const Layout* lay, const StateIndex* index, const Corpus* corpus,
                            index_t t0, index_t n, const label_t* path, const label_t* other,
                            weight_t scale, ParamSink* sink) noexcept nogil


cdef class ChainIndex:
    # The structure of a model (which weights exist and where), without values.
    cdef readonly object attr_ptr
    cdef readonly object attr_labels
    cdef const index_t[::1] _attr_ptr
    cdef const label_t[::1] _attr_labels
    cdef StateIndex index
    cdef Layout layout


cdef class CorpusView:
    # A packed corpus as the kernels read it.  Holds the arrays it points into.
    cdef readonly object sequences
    cdef const index_t[::1] _seq_ptr
    cdef const index_t[::1] _tok_ptr
    cdef const attr_t[::1] _attr_ids
    cdef const value_t[::1] _values
    cdef const label_t[::1] _labels
    cdef Corpus corpus
    cdef readonly index_t max_len


cdef Chain chain_of(ChainIndex ix, CorpusView cv) noexcept


cdef inline bint all_finite(const weight_t* x, index_t n) noexcept nogil:
    """True when none of ``x[0:n]`` is NaN or infinite (feature values times
    weights can overflow float64 even though each is finite)."""
    cdef index_t k
    for k in range(n):
        if not isfinite(x[k]):
            return False
    return True


cdef inline index_t sequence_emissions(const Chain* ch, const weight_t* w, weight_t w_scale,
                                       index_t s, weight_t* em, index_t* t0) noexcept nogil:
    """The prologue every corpus kernel runs on a sequence, written once.

    Slices sequence ``s`` (its first token into ``t0[0]``), scores its
    emissions into ``em`` ((n, L), row-major) and scales them by ``w_scale``
    (the state weights are ``w_scale * w``; a learner that shrinks its
    weights lazily passes its scale, the others 1.0, which leaves the scores
    as they are).  Returns the length n; nothing is written when it is 0.
    """
    cdef int L = ch.layout.n_labels
    cdef index_t k, n
    t0[0] = ch.corpus.seq_ptr[s]
    n = ch.corpus.seq_ptr[s + 1] - t0[0]
    if n > 0:
        score_emissions(ch.index, w, ch.corpus, t0[0], t0[0] + n, L, em)
        if w_scale != 1.0:
            for k in range(n * L):
                em[k] *= w_scale
    return n


cdef inline bint emissions_finite(const weight_t* em, index_t n, int n_labels, index_t s,
                                  index_t* bad_seq) noexcept nogil:
    """Whether the (n, L) emissions of sequence ``s`` are all finite; when not,
    ``s`` goes to ``bad_seq[0]`` unless an earlier bad sequence is there (the
    caller skips the sequence and raises after its nogil loop, naming it)."""
    if all_finite(em, n * n_labels):
        return True
    if bad_seq[0] < 0:
        bad_seq[0] = s
    return False


# IndexError unless every entry of an epoch's visiting order is a sequence
# index in [0, n_seqs): the check every training entry makes before its
# unchecked nogil loop.
cdef int check_order(const index_t[::1] order, index_t n_seqs) except -1


cdef class AveragedParams:
    # Weights and their lazy-averaging accumulator, owned by Python.  The
    # weights are scale * w (scale 1 unless a learner shrinks them, e.g. an
    # L2 step); the average weighs example i by c_i (1 unless a learner
    # says otherwise); scale_sum is the sum of c_i * scale after each
    # example, in the units of the current w, and weight_sum the sum of the
    # c_i (both == n_examples while scale and every c_i are 1).
    cdef readonly object w
    cdef readonly object u
    cdef weight_t[::1] _w
    cdef weight_t[::1] _u
    cdef public long long n_examples
    cdef public double scale
    cdef public double scale_sum
    cdef public double weight_sum
    cdef ParamSink sink(self) noexcept
    cdef void begin_example(self, ParamSink* sink) noexcept nogil
    cdef void end_example(self, weight_t weight) noexcept nogil
    cdef void shrink(self, weight_t factor) noexcept nogil


cdef inline bint has_unknown(const label_t* labels, index_t n) noexcept nogil:
    # Whether one of the n labels is -1 (unknown: a partially labelled sequence).
    cdef index_t t
    for t in range(n):
        if labels[t] < 0:
            return True
    return False
