"""The sparse feature difference of the margin learners (passive-aggressive, AROW).

Both learners decode a sequence with Viterbi under the current weights and,
when the path is wrong, update along ``Phi(gold) - Phi(pred)``, scaled by a
step that depends on a norm of that difference.  :func:`margin_delta`
gathers the difference as a sparse vector: the shared path-features kernel
(:func:`cseq.chain._chain.add_path_features`) writes it into a dense accumulator
(zero between calls), and the entries that may have been touched (the
weights of the attributes on the tokens whose labels differ, and the
transition block) are moved out into ``keys``/``vals`` and zeroed again, so
a weight touched by both paths (or twice) appears once.
"""

from libc.stdlib cimport calloc, free, malloc

from libc.math cimport isfinite, sqrt

from cseq.chain._decode cimport path_score, viterbi_back_size, viterbi_delta_size, viterbi_path
from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._chain cimport (Chain, ParamSink, Transitions, add_path_features, check_order,
                                  sequence_emissions, transitions_of)


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


#: The cost added to the margin of a mistake (CRFsuite's losses): 1, the
#: square root of the wrong labels (PA's ``error_sensitive``), or their count (AROW).
cdef enum:
    COST_ONE = 0
    COST_SQRT = 1
    COST_COUNT = 2


cdef inline index_t margin_violation(const Chain* ch, const weight_t* w, index_t s, int cost,
                                     MarginScratch* m, weight_t* loss) noexcept nogil:
    """Decode sequence ``s`` under ``w``; the wrong labels ``d`` (0: no mistake, ``loss`` 0).

    On a mistake ``loss`` is ``score(pred) - score(gold) + cost(d)`` and, when
    it is finite, ``m`` holds Phi(gold) - Phi(pred) (:func:`margin_delta`);
    a non-finite loss leaves ``m`` as it was and the caller makes no update.
    The step PA and AROW share before their own updates.
    """
    cdef index_t t0
    cdef index_t n = sequence_emissions(ch, w, 1.0, s, m.em, &t0)
    cdef const label_t* gold = ch.corpus.labels + t0
    cdef Transitions tr
    cdef index_t d
    cdef weight_t best
    loss[0] = 0.0
    if n == 0:
        return 0
    transitions_of(ch.layout, w, &tr)
    best = viterbi_path(m.em, n, &tr, m.vdelta, m.back, m.pred)
    d = n_wrong(gold, m.pred, n)
    if d == 0:
        return 0
    loss[0] = best - path_score(m.em, n, &tr, gold) + (
        1.0 if cost == COST_ONE else sqrt(<weight_t>d) if cost == COST_SQRT else <weight_t>d)
    if isfinite(loss[0]):
        margin_delta(ch, t0, n, gold, m.pred, m)
    return d


# One online step of a margin learner on sequence s: decode, update on a
# mistake; returns the wrong labels and sets loss[0].  `learner` is the
# trainer object, borrowed (each trainer casts it back to call its method).
ctypedef index_t (*sequence_step)(void* learner, index_t s, weight_t* loss) noexcept nogil


cdef inline tuple margin_epoch(const index_t[::1] order, index_t n_seqs, sequence_step step,
                               void* learner):
    """One pass of a margin learner (PA, AROW) over the sequences in ``order``.

    Checks ``order`` (IndexError), then runs ``step`` on each sequence without
    the GIL, summing wrong labels and losses.  Returns ``(errors, loss)``, the
    ``train_epoch`` result; raises FloatingPointError, naming the sequence,
    when a loss leaves float64 (that sequence made no update; the pass stops).
    """
    cdef index_t i, errors = 0
    cdef weight_t loss, total = 0.0
    cdef bint finite = True
    check_order(order, n_seqs)
    with nogil:
        for i in range(order.shape[0]):
            errors += step(learner, order[i], &loss)
            total += loss
            if not isfinite(total):
                finite = False
                break
    if not finite:
        raise FloatingPointError(f"the loss left float64 at sequence {order[i]}")
    return int(errors), float(total)
