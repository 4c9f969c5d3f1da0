"""The sparse feature difference of the margin learners (passive-aggressive, AROW).

Both learners decode a sequence with Viterbi under the current weights and,
when the path is wrong, update along ``Phi(gold) - Phi(pred)``, scaled by a
step that depends on a norm of that difference.  :func:`margin_delta`
gathers the difference as a sparse vector: the shared path-features kernel
(:func:`cseq._weights.add_path_features`) writes it into a dense accumulator
(zero between calls), and the entries that may have been touched (the
weights of the attributes on the tokens whose labels differ, and the
transition block) are moved out into ``keys``/``vals`` and zeroed again, so
a weight touched by both paths (or twice) appears once.
"""

from libc.stdlib cimport calloc, free, malloc

from cseq._decode cimport viterbi_back_size, viterbi_delta_size
from cseq._types cimport index_t, label_t, weight_t
from cseq._weights cimport Chain, ParamSink, add_path_features


cdef struct MarginScratch:
    # Viterbi scratch for one sequence of up to max_len tokens.
    weight_t* em
    weight_t* vdelta
    label_t* back
    label_t* pred
    # Phi(gold) - Phi(pred): acc dense over the parameters (all 0 between
    # calls), keys/vals the n nonzero entries after margin_delta.
    weight_t* acc
    index_t* keys
    weight_t* vals
    index_t n


cdef inline int margin_scratch_init(MarginScratch* m, const Chain* ch) except -1:
    """Allocate the scratch for the corpus and layout of ``ch``; MemoryError on failure.

    ``keys`` holds at most two weights per feature occurrence of a sequence
    (the gold and the predicted label's) plus the transition block.
    """
    cdef index_t L = ch.layout.n_labels
    cdef index_t max_len = max(1, ch.max_len)
    cdef index_t s, occ, max_occ = 0
    for s in range(ch.corpus.n_seqs):
        occ = (ch.corpus.tok_ptr[ch.corpus.seq_ptr[s + 1]]
               - ch.corpus.tok_ptr[ch.corpus.seq_ptr[s]])
        max_occ = max(max_occ, occ)
    cdef index_t cap = 2 * max_occ + (ch.layout.n_params - ch.layout.n_state)
    m.em = <weight_t*>malloc(max_len * L * sizeof(weight_t))
    m.vdelta = <weight_t*>malloc(viterbi_delta_size(L, ch.layout.order) * sizeof(weight_t))
    m.back = <label_t*>malloc(viterbi_back_size(max_len, L, ch.layout.order) * sizeof(label_t))
    m.pred = <label_t*>malloc(max_len * sizeof(label_t))
    m.acc = <weight_t*>calloc(max(1, ch.layout.n_params), sizeof(weight_t))
    m.keys = <index_t*>malloc(max(1, cap) * sizeof(index_t))
    m.vals = <weight_t*>malloc(max(1, cap) * sizeof(weight_t))
    m.n = 0
    if (m.em == NULL or m.vdelta == NULL or m.back == NULL or m.pred == NULL or m.acc == NULL
            or m.keys == NULL or m.vals == NULL):
        margin_scratch_free(m)
        raise MemoryError()
    return 0


cdef inline void margin_scratch_free(MarginScratch* m) noexcept:
    free(m.em)
    free(m.vdelta)
    free(m.back)
    free(m.pred)
    free(m.acc)
    free(m.keys)
    free(m.vals)
    m.em = m.vdelta = m.acc = m.vals = NULL
    m.back = m.pred = NULL
    m.keys = NULL


cdef inline void _take(MarginScratch* m, index_t k) noexcept nogil:
    # Move acc[k] into the sparse list if nonzero (a second visit finds 0).
    if m.acc[k] != 0.0:
        m.keys[m.n] = k
        m.vals[m.n] = m.acc[k]
        m.n += 1
        m.acc[k] = 0.0


cdef inline void margin_delta(const Chain* ch, index_t t0, index_t n, const label_t* gold,
                              const label_t* pred, MarginScratch* m) noexcept nogil:
    """Set ``m.keys``, ``m.vals`` (``m.n`` entries) to ``Phi(gold) - Phi(pred)`` on tokens
    ``t0:t0 + n``."""
    cdef ParamSink sink
    cdef index_t t, f, k
    sink.w = m.acc
    sink.u = NULL
    sink.age = 0.0
    add_path_features(ch.layout, ch.index, ch.corpus, t0, n, gold, pred, 1.0, &sink)
    add_path_features(ch.layout, ch.index, ch.corpus, t0, n, pred, gold, -1.0, &sink)
    m.n = 0
    for t in range(n):
        if gold[t] == pred[t]:
            continue
        for f in range(ch.corpus.tok_ptr[t0 + t], ch.corpus.tok_ptr[t0 + t + 1]):
            for k in range(ch.index.attr_ptr[ch.corpus.attr_ids[f]],
                           ch.index.attr_ptr[ch.corpus.attr_ids[f] + 1]):
                _take(m, k)
    for k in range(ch.layout.n_state, ch.layout.n_params):
        _take(m, k)


cdef inline index_t n_wrong(const label_t* gold, const label_t* pred, index_t n) noexcept nogil:
    """Positions where ``pred`` differs from ``gold``."""
    cdef index_t t, d = 0
    for t in range(n):
        if gold[t] != pred[t]:
            d += 1
    return d
