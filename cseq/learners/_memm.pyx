"""Kernels of the maximum-entropy Markov model (MEMM): a locally normalised chain.

The MEMM uses the linear-chain parameters (state weights ``W``, transitions
``T``, ``start``) with one softmax per position and previous label::

    P(y_0 = j | x)                   = exp(E[0, j] + start[j]) / Z_0
    P(y_t = j | y_{t-1} = p, x)      = exp(E[t, j] + T[p, j]) / Z_t(p)

where ``E[t, j] = sum over features (a, v) of token t of v * W[a, j]``.  The
``end`` block is not used (the chain is normalised locally, so it has no end
score); training leaves it at zero.

* :func:`memm_objective`: the negative local log-likelihood
  ``sum_t log Z_t(y_{t-1}) - E[t, y_t] - T[y_{t-1}, y_t]`` (start for t = 0)
  and its gradient, expected minus observed features of each local softmax,
  in one GIL-free pass parallel over sequences like the CRF objective.
* :func:`memm_decode`: Viterbi over log-probabilities.  The term
  ``-log Z_t(y_{t-1})`` depends on the label at ``t - 1`` only, so it is
  folded into the emission score of position ``t - 1``; the first-order
  Viterbi of :mod:`cseq.chain._decode` then maximises ``log P(y | x)`` exactly.
* :func:`memm_marginals`: the marginals of the chain, by the forward
  recursion of a Markov chain, ``p_t(j) = sum_p p_{t-1}(p) P(j | p, x_t)``;
  a locally normalised chain needs no backward pass.

References
----------
McCallum, A., Freitag, D., Pereira, F. (2000). Maximum entropy Markov models
for information extraction and segmentation. ICML.
Ratnaparkhi, A. (1996). A maximum entropy model for part-of-speech tagging.
EMNLP.
"""

from cython.parallel cimport prange
from libc.math cimport exp, log
from libc.stdlib cimport free, malloc

import numpy as np

from cseq.chain._decode cimport viterbi_path
from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._chain cimport (Chain, ChainIndex, CorpusView, Layout, Transitions,
                                  add_state_features, chain_of, emissions_finite, sequence_emissions)

# Below this, a scaled exponential sum may have lost its terms to underflow:
# the local log Z is then recomputed by a plain log-sum-exp.
cdef weight_t _SAFE_SUM = 1e-200


cdef inline weight_t _lse2(const weight_t* a, const weight_t* b, int L) noexcept nogil:
    """``log sum_j exp(a[j] + b[j])`` with max subtraction (exact for finite inputs)."""
    cdef weight_t m = a[0] + b[0], s = 0.0
    cdef int j
    for j in range(1, L):
        if a[j] + b[j] > m:
            m = a[j] + b[j]
    for j in range(L):
        s += exp(a[j] + b[j] - m)
    return m + log(s)


cdef inline weight_t _softmax2(const weight_t* a, const weight_t* b, int L,
                               weight_t* out) noexcept nogil:
    """``out = softmax(a + b)``; returns the log normaliser."""
    cdef weight_t lz = _lse2(a, b, L)
    cdef int j
    for j in range(L):
        out[j] = exp(a[j] + b[j] - lz)
    return lz


cdef struct LocalTables:
    # exp(T[p, j] - rowmax[p]) once per parameter vector, for the local log Z of
    # every previous label at a cost of L exponentials per position.
    const weight_t* trans
    const weight_t* start
    weight_t* exp_trans
    weight_t* row_max
    int n_labels


cdef int _tables_init(LocalTables* tb, const Layout* lay, const weight_t* params) noexcept nogil:
    cdef int L = lay.n_labels
    cdef int p, j
    cdef weight_t m
    tb.trans = params + lay.trans
    tb.start = params + lay.start
    tb.n_labels = L
    tb.exp_trans = <weight_t*>malloc((L * L + L) * sizeof(weight_t))
    if tb.exp_trans == NULL:
        return -1
    tb.row_max = tb.exp_trans + L * L
    for p in range(L):
        m = tb.trans[p * L]
        for j in range(1, L):
            if tb.trans[p * L + j] > m:
                m = tb.trans[p * L + j]
        tb.row_max[p] = m
        for j in range(L):
            tb.exp_trans[p * L + j] = exp(tb.trans[p * L + j] - m)
    return 0


cdef void _local_log_z(const LocalTables* tb, const weight_t* em, weight_t* scratch,
                       weight_t* log_z) noexcept nogil:
    """``log_z[p] = log sum_j exp(em[j] + T[p, j])`` for every previous label ``p``.

    Scaled sums (``L`` exponentials, ``L * L`` products); a row whose sum may
    have underflowed is recomputed in log space, so the result is exact to
    rounding for any finite scores.
    """
    cdef int L = tb.n_labels
    cdef int p, j
    cdef weight_t m = em[0], s
    cdef const weight_t* row
    for j in range(1, L):
        if em[j] > m:
            m = em[j]
    for j in range(L):
        scratch[j] = exp(em[j] - m)
    for p in range(L):
        row = tb.exp_trans + p * L
        s = 0.0
        for j in range(L):
            s += row[j] * scratch[j]
        if s > _SAFE_SUM:
            log_z[p] = m + tb.row_max[p] + log(s)
        else:
            log_z[p] = _lse2(em, tb.trans + p * L, L)


cdef int _objective_range(const Chain* ch, const weight_t* params, index_t s0, index_t s1,
                          weight_t* grad, weight_t* nll_sum, weight_t* seq_nll) noexcept nogil:
    """Local negative log-likelihood and its gradient over sequences ``s0:s1``; -1 on failure."""
    cdef int L = ch.layout.n_labels
    cdef const weight_t* trans = params + ch.layout.trans
    cdef const weight_t* start = params + ch.layout.start
    cdef weight_t* g_trans = grad + ch.layout.trans
    cdef weight_t* g_start = grad + ch.layout.start
    cdef const label_t* labels = ch.corpus.labels
    cdef weight_t* em = <weight_t*>malloc((ch.max_len * L + L + 1) * sizeof(weight_t))
    cdef weight_t* prob
    cdef weight_t* g_row
    cdef const weight_t* prev_row
    cdef index_t s, t, t0, n
    cdef int j, y, p
    cdef weight_t lz, total = 0.0, seq_total
    if em == NULL:
        return -1
    prob = em + ch.max_len * L
    for s in range(s0, s1):
        n = sequence_emissions(ch, params, 1.0, s, em, &t0)
        seq_total = 0.0
        if n > 0:
            for t in range(n):
                y = labels[t0 + t]
                if t == 0:
                    prev_row = start
                    g_row = g_start
                else:
                    p = labels[t0 + t - 1]
                    prev_row = trans + p * L
                    g_row = g_trans + p * L
                lz = _softmax2(em + t * L, prev_row, L, prob)
                seq_total += lz - em[t * L + y] - prev_row[y]
                if grad != NULL:
                    prob[y] -= 1.0
                    add_state_features(ch.index, ch.corpus, t0 + t, prob, L, 1.0, grad)
                    for j in range(L):
                        g_row[j] += prob[j]
        total += seq_total
        if seq_nll != NULL:
            seq_nll[s] = seq_total
    free(em)
    nll_sum[0] = total
    return 0


def memm_objective(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                   const index_t[::1] chunks, weight_t[:, ::1] grad_buffers, int n_jobs,
                   bint with_grad=True, per_sequence=None):
    """Negative local log-likelihood of the gold labels and its gradient, in one nogil pass.

    Parameters
    ----------
    ix : the model's structure (state index and parameter layout).
    params : the flat parameter vector (``ix.layout``).
    cv : the packed corpus, with labels.
    chunks : sequence boundaries of the work chunks; chunk ``c`` runs on one
        thread and accumulates into ``grad_buffers[c]``.
    grad_buffers : (n_chunks, n_params) scratch, overwritten.
    n_jobs : number of threads.
    with_grad : compute the gradient (else only the value).
    per_sequence : optional float64 array (n_sequences,) that receives each
        sequence's negative log-probability ``-log P(y | x)``.

    Returns
    -------
    value : float
        ``sum_s -log P(y_s | x_s)`` under the locally normalised chain.
    grad : ndarray (n_params,) or None
        Expected minus observed features of every local softmax, summed over
        chunks in chunk order (so it depends on the chunking only, never on
        thread timing).  The ``end`` block is zero.
    """
    cdef index_t n_chunks = chunks.shape[0] - 1
    cdef index_t c
    cdef int failed = 0
    cdef weight_t[::1] seq_view
    cdef weight_t* seq_ptr = NULL
    if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
        raise ValueError("the MEMM objective needs a labeled corpus")
    if per_sequence is not None:
        seq_view = per_sequence
        if seq_view.shape[0] != cv.corpus.n_seqs:
            raise ValueError("per_sequence must hold one value per sequence")
        if seq_view.shape[0]:
            seq_ptr = &seq_view[0]
    nll_np = np.zeros(n_chunks, dtype=np.float64)
    cdef weight_t[::1] nll = nll_np
    grad_np = np.asarray(grad_buffers)
    grad_np[:] = 0.0
    cdef Chain ch = chain_of(ix, cv)
    for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_jobs):
        failed += -_objective_range(&ch, &params[0], chunks[c], chunks[c + 1],
                                    &grad_buffers[c, 0] if with_grad else NULL, &nll[c],
                                    seq_ptr)
    if failed:
        raise MemoryError("cseq: out of memory in the MEMM objective")
    if not with_grad:
        return float(nll_np.sum()), None
    return float(nll_np.sum()), grad_np.sum(axis=0) if n_chunks > 1 else grad_np[0].copy()


cdef int _decode_range(const Chain* ch, const weight_t* params, const LocalTables* tb,
                       index_t s0, index_t s1, label_t* out, index_t* bad_seq) noexcept nogil:
    """Most probable label paths of sequences ``s0:s1`` into ``out``; -1 on failure.

    The first sequence whose emission scores are not finite (feature values
    times weights overflow float64) goes to ``bad_seq`` (else -1), undecoded.
    """
    cdef int L = ch.layout.n_labels
    cdef index_t s, t, t0, n
    cdef int j
    cdef Transitions tr
    cdef weight_t* em = <weight_t*>malloc((ch.max_len * L + 6 * L) * sizeof(weight_t))
    cdef label_t* back = <label_t*>malloc((ch.max_len * L + 1) * sizeof(label_t))
    cdef weight_t* zero_end
    cdef weight_t* log_z
    cdef weight_t* scratch
    cdef weight_t* delta
    bad_seq[0] = -1
    if em == NULL or back == NULL:
        free(em); free(back)
        return -1
    zero_end = em + ch.max_len * L
    log_z = zero_end + L
    scratch = log_z + L
    delta = scratch + L      # 3 * L
    for j in range(L):
        zero_end[j] = 0.0
    tr.trans = tb.trans
    tr.start = tb.start
    tr.end = zero_end
    tr.trans2 = NULL
    tr.n_labels = L
    for s in range(s0, s1):
        n = sequence_emissions(ch, params, 1.0, s, em, &t0)
        if n == 0:
            continue
        if not emissions_finite(em, n, L, s, bad_seq):
            continue
        # log P(y | x) = start[y_0] + sum_t E[t, y_t] + sum_t T[y_{t-1}, y_t]
        #               - log Z_0 - sum_{t >= 1} log Z_t(y_{t-1}):
        # log Z_t(p) goes into the emission of label p at t - 1 (log Z_0 is a
        # constant and does not change the argmax).
        for t in range(1, n):
            _local_log_z(tb, em + t * L, scratch, log_z)
            for j in range(L):
                em[(t - 1) * L + j] -= log_z[j]
        viterbi_path(em, n, &tr, delta, back, out + t0)
    free(em); free(back)
    return 0


def memm_decode(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                const index_t[::1] chunks, int n_jobs):
    """The most probable label path of every sequence (int32 label ids per token), nogil."""
    cdef index_t n_tok = cv.corpus.seq_ptr[cv.corpus.n_seqs]
    out_np = np.zeros(n_tok, dtype=np.int32)
    if n_tok == 0:
        return out_np
    cdef label_t[::1] out = out_np
    cdef LocalTables tb
    cdef Chain ch = chain_of(ix, cv)
    cdef index_t n_chunks = chunks.shape[0] - 1
    cdef index_t c
    cdef int failed = 0
    bad_np = np.full(n_chunks, -1, dtype=np.int64)
    cdef index_t[::1] bad = bad_np
    if _tables_init(&tb, &ix.layout, &params[0]) != 0:
        raise MemoryError()
    for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_jobs):
        failed += -_decode_range(&ch, &params[0], &tb, chunks[c], chunks[c + 1], &out[0],
                                 &bad[c])
    free(tb.exp_trans)
    if failed:
        raise MemoryError("cseq: out of memory while decoding")
    for c in range(n_chunks):
        if bad[c] >= 0:
            raise FloatingPointError(bad[c])
    return out_np


cdef int _marginals_range(const Chain* ch, const weight_t* params, index_t s0, index_t s1,
                          weight_t* out, index_t* bad_seq) noexcept nogil:
    """Chain marginals of sequences ``s0:s1`` into ``out`` (rows indexed by token); -1 on failure.

    The first sequence whose emission scores are not finite goes to
    ``bad_seq`` (else -1), without marginals.
    """
    cdef int L = ch.layout.n_labels
    cdef const weight_t* trans = params + ch.layout.trans
    cdef const weight_t* start = params + ch.layout.start
    cdef weight_t* em = <weight_t*>malloc((ch.max_len * L + L + 1) * sizeof(weight_t))
    cdef weight_t* prob
    cdef weight_t* cur
    cdef const weight_t* prev
    cdef index_t s, t, t0, n
    cdef int p, j
    cdef weight_t a
    bad_seq[0] = -1
    if em == NULL:
        return -1
    prob = em + ch.max_len * L
    for s in range(s0, s1):
        n = sequence_emissions(ch, params, 1.0, s, em, &t0)
        if n == 0:
            continue
        if not emissions_finite(em, n, L, s, bad_seq):
            continue
        _softmax2(em, start, L, out + t0 * L)
        for t in range(1, n):
            prev = out + (t0 + t - 1) * L
            cur = out + (t0 + t) * L
            for j in range(L):
                cur[j] = 0.0
            for p in range(L):
                a = prev[p]
                if a == 0.0:
                    continue
                _softmax2(em + t * L, trans + p * L, L, prob)
                for j in range(L):
                    cur[j] += a * prob[j]
    free(em)
    return 0


def memm_marginals(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                   const index_t[::1] chunks, int n_jobs):
    """Label marginals (n_tokens, L) of the locally normalised chain, nogil, parallel over sequences."""
    cdef int L = ix.layout.n_labels
    cdef index_t n_tok = cv.corpus.seq_ptr[cv.corpus.n_seqs]
    out_np = np.zeros((n_tok, L), dtype=np.float64)
    if n_tok == 0:
        return out_np
    cdef weight_t[:, ::1] out = out_np
    cdef Chain ch = chain_of(ix, cv)
    cdef index_t n_chunks = chunks.shape[0] - 1
    cdef index_t c
    cdef int failed = 0
    bad_np = np.full(n_chunks, -1, dtype=np.int64)
    cdef index_t[::1] bad = bad_np
    for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_jobs):
        failed += -_marginals_range(&ch, &params[0], chunks[c], chunks[c + 1], &out[0, 0],
                                    &bad[c])
    if failed:
        raise MemoryError("cseq: out of memory in MEMM marginals")
    for c in range(n_chunks):
        if bad[c] >= 0:
            raise FloatingPointError(bad[c])
    return out_np


def local_distributions(ChainIndex ix, const weight_t[::1] params, CorpusView cv, index_t s):
    """The local distributions of sequence ``s``: for tests and tools.

    Returns
    -------
    first : ndarray (L,)
        ``P(y_0 = j | x)``.
    cond : ndarray (n - 1, L, L)
        ``cond[t - 1, p, j] = P(y_t = j | y_{t-1} = p, x)``.
    log_z : ndarray (n - 1, L)
        The local log normalisers ``log Z_t(p)`` as the decoder computes them.
    """
    cdef int L = ix.layout.n_labels
    if not 0 <= s < cv.corpus.n_seqs:
        raise ValueError("sequence index out of range")
    cdef index_t t0 = cv.corpus.seq_ptr[s]
    cdef index_t n = cv.corpus.seq_ptr[s + 1] - t0
    if n == 0:
        raise ValueError("the sequence is empty")
    first_np = np.zeros(L)
    cond_np = np.zeros((n - 1, L, L))
    lz_np = np.zeros((n - 1, L))
    em_np = np.zeros((n, L))
    scratch_np = np.zeros(L)
    cdef weight_t[::1] first = first_np
    cdef weight_t[:, :, ::1] cond = cond_np
    cdef weight_t[:, ::1] lz = lz_np
    cdef weight_t[:, ::1] em = em_np
    cdef weight_t[::1] scratch = scratch_np
    cdef const weight_t* p_params = &params[0]
    cdef LocalTables tb
    cdef index_t t
    cdef int p
    cdef Chain ch = chain_of(ix, cv)
    if _tables_init(&tb, &ix.layout, p_params) != 0:
        raise MemoryError()
    with nogil:
        sequence_emissions(&ch, p_params, 1.0, s, &em[0, 0], &t0)
        _softmax2(&em[0, 0], tb.start, L, &first[0])
        for t in range(1, n):
            _local_log_z(&tb, &em[t, 0], &scratch[0], &lz[t - 1, 0])
            for p in range(L):
                _softmax2(&em[t, 0], tb.trans + p * L, L, &cond[t - 1, p, 0])
    free(tb.exp_trans)
    return first_np, cond_np, lz_np
