"""The CRF on partially labelled sequences: forward-backward over the completions of the known labels.

A sequence whose labels are known at some positions only (label -1 where
not known) has the likelihood of all its completions (Tsuboi et al. 2008;
Bellare and McCallum 2007)::

    p(y_known | x) = sum over y consistent with y_known of p(y | x) = Z_clamped / Z,

where ``Z_clamped`` sums ``exp score(x, y)`` over the consistent label
sequences only.  Its negative logarithm ``log Z - log Z_clamped`` has the
gradient ``E[Phi] - E_clamped[Phi]``: the expected feature counts under the
model minus those under the model restricted to the consistent sequences.
``Z_clamped`` and ``E_clamped`` are one forward-backward pass whose
emissions have -inf for every label but the known one at the known
positions (``clamp_rows`` of :mod:`cseq.chain._masks`), so a disallowed sequence
has probability exactly 0 and the same kernels (first and second order,
scaled or log space) run.  A fully labelled sequence is left to the usual
``log Z - score(gold)`` (the sum over its one completion), so fully
labelled data gives the same results as before.

References
----------
Bellare, K., McCallum, A. (2007). Learning extractors from unlabeled text
using relevant databases. IIWeb workshop, AAAI.
Tsuboi, Y., Kashima, H., Mori, S., Oda, H., Matsumoto, Y. (2008). Training
conditional random fields using incomplete annotations. COLING.
"""

from cython.parallel cimport prange
from libc.math cimport isfinite
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from cseq.chain._forward_backward cimport (FBTables, FBWork, fb_add_pairs, fb_add_triples,
                                           fb_marginals, fb_run, fb_tables_for, fb_tables_free,
                                           fb_work_free, fb_work_init)
from cseq.chain._masks cimport clamp_rows
from cseq._core._types cimport index_t, weight_t
from cseq.chain._chain cimport (Chain, ChainIndex, CorpusView, add_state_features, chain_of,
                                  check_order, sequence_emissions)


cdef weight_t fb_expectations(const Chain* ch, const FBTables* tb, FBWork* wk,
                              const weight_t* w, weight_t w_scale, index_t s, bint clamp,
                              weight_t* marg, weight_t* pairs) noexcept nogil:
    """log Z of sequence ``s``, its label marginals into ``marg`` and summed pair counts into ``pairs``.

    With ``clamp``, over the completions of the sequence's known labels
    (``log Z_clamped``).  The state weights are ``w_scale * w[:n_state]``;
    ``tb`` holds the (scaled) transitions.  ``marg`` has room for
    ``wk.capacity * L`` values, ``pairs`` for ``L * L`` (second order: ``L *
    L + L^3``, the summed trigram marginals after the pairs).  Nothing is
    written anywhere else, so ``w`` may be the vector the caller updates
    next.  Returns a non-finite value when log Z is not finite.
    """
    cdef int L = ch.layout.n_labels
    cdef index_t t0, t
    cdef index_t n = sequence_emissions(ch, w, w_scale, s, wk.em, &t0)
    cdef weight_t lz
    if n == 0:
        return 0.0
    if clamp:
        clamp_rows(wk.em, n, L, ch.corpus[0].labels + t0)
    lz = fb_run(tb, wk, n)
    if not isfinite(lz):
        return lz
    fb_marginals(tb, wk, n, marg)
    memset(pairs, 0, L * L * sizeof(weight_t))
    for t in range(n - 1):
        fb_add_pairs(tb, wk, t, pairs)
    if tb.order == 2:
        memset(pairs + L * L, 0, <size_t> L * L * L * sizeof(weight_t))
        for t in range(n - 2):
            fb_add_triples(tb, wk, t, pairs + L * L)
    return lz


cdef void add_expectations(const Chain* ch, index_t s, weight_t coef, const weight_t* marg,
                           const weight_t* pairs, weight_t* out) noexcept nogil:
    """``coef`` times the expected counts of :func:`fb_expectations` output, added into ``out``."""
    cdef int L = ch.layout.n_labels
    cdef index_t t0 = ch.corpus[0].seq_ptr[s]
    cdef index_t n = ch.corpus[0].seq_ptr[s + 1] - t0
    cdef index_t t, k
    cdef int j
    if n == 0:
        return
    for t in range(n):
        add_state_features(ch.index, ch.corpus, t0 + t, marg + t * L, L, coef, out)
    for k in range(L * L):
        out[ch.layout.trans + k] += coef * pairs[k]
    if ch.layout.order == 2:
        for k in range(<index_t> L * L * L):
            out[ch.layout.trans2 + k] += coef * pairs[L * L + k]
    for j in range(L):
        out[ch.layout.start + j] += coef * marg[j]
        out[ch.layout.end + j] += coef * marg[(n - 1) * L + j]


cdef weight_t fb_partial_update(const Chain* ch, const FBTables* tb, FBWork* wk,
                                const weight_t* w, weight_t w_scale, index_t s, weight_t gain,
                                weight_t* marg, weight_t* pairs, weight_t* marg2,
                                weight_t* pairs2, weight_t* out) noexcept nogil:
    """``crf_sequence_update`` for a partially labelled sequence.

    Adds ``gain * (E_clamped[Phi] - E[Phi])`` to ``out`` (``gain = -1``: the
    gradient of ``log Z - log Z_clamped``; ``gain = eta``: a stochastic
    gradient step; ``out`` may be ``w``: both passes run before it is
    written) and returns ``log Z - log Z_clamped``, or a non-finite value,
    ``out`` untouched, when either log partition function is not finite.
    ``marg2`` and ``pairs2`` are room for the second pass, as ``marg`` and
    ``pairs``.
    """
    cdef weight_t lz, lzc
    lz = fb_expectations(ch, tb, wk, w, w_scale, s, False, marg, pairs)
    if not isfinite(lz):
        return lz
    lzc = fb_expectations(ch, tb, wk, w, w_scale, s, True, marg2, pairs2)
    if not isfinite(lzc):
        return lzc
    add_expectations(ch, s, -gain, marg, pairs, out)
    add_expectations(ch, s, gain, marg2, pairs2, out)
    return lz - lzc


cdef int _clamped_range(const Chain* ch, const FBTables* tb, const weight_t* params,
                        const index_t* seqs, index_t i0, index_t i1, weight_t* grad,
                        weight_t* log_z_sum, index_t* bad_seq) noexcept nogil:
    """Sum of log Z_clamped and of E_clamped over sequences ``seqs[i0:i1]``; -1 on allocation failure."""
    cdef int L = ch.layout.n_labels
    cdef FBWork wk
    cdef index_t i
    cdef weight_t lz, total = 0.0
    cdef weight_t* marg
    cdef weight_t* pairs
    if fb_work_init(&wk, ch.max_len, L, ch.layout.order) != 0:
        return -1
    marg = <weight_t*>malloc(<size_t> (wk.capacity * L) * sizeof(weight_t))
    pairs = <weight_t*>malloc(<size_t> (L * L + (L * L * L if ch.layout.order == 2 else 0))
                              * sizeof(weight_t))
    if marg == NULL or pairs == NULL:
        free(marg)
        free(pairs)
        fb_work_free(&wk)
        return -1
    bad_seq[0] = -1
    for i in range(i0, i1):
        lz = fb_expectations(ch, tb, &wk, params, 1.0, seqs[i], True, marg, pairs)
        if not isfinite(lz):
            if bad_seq[0] < 0:
                bad_seq[0] = seqs[i]
            continue
        add_expectations(ch, seqs[i], 1.0, marg, pairs, grad)
        total += lz
    free(marg)
    free(pairs)
    fb_work_free(&wk)
    log_z_sum[0] = total
    return 0


cdef _check_view(ChainIndex ix, CorpusView cv):
    if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
        raise ValueError("partial labels need a labeled corpus view")


def clamped_log_z_and_expectations(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                                   const index_t[::1] seqs, const index_t[::1] chunks,
                                   weight_t[:, ::1] grad_buffers, int n_jobs):
    """Sum of ``log Z_clamped`` and of ``E_clamped[Phi]`` over the sequences ``seqs``.

    The clamped half of the partial-label objective, as
    :func:`cseq.chain._crf.crf_log_z_and_expectations` computes the
    other: ``chunks`` are boundaries over positions of ``seqs`` (validated
    sequence indices of ``cv``, a labeled view), chunk ``c`` runs on one of
    ``n_jobs`` threads into ``grad_buffers[c]`` and the chunks are summed in
    order.

    Raises
    ------
    FloatingPointError
        When a sequence's clamped log Z is not finite.
    """
    cdef index_t n_chunks = chunks.shape[0] - 1
    cdef FBTables tb
    cdef index_t c
    cdef int failed = 0
    _check_view(ix, cv)
    if params.shape[0] != ix.layout.n_params or grad_buffers.shape[1] != ix.layout.n_params \
            or grad_buffers.shape[0] < n_chunks or n_chunks < 1:
        raise ValueError("params, chunks and grad_buffers do not match the layout")
    if chunks[0] != 0 or chunks[n_chunks] != seqs.shape[0]:
        raise ValueError("chunks must cover seqs")
    for c in range(n_chunks):
        if chunks[c] > chunks[c + 1]:
            raise ValueError("chunks must be non-decreasing")
    check_order(seqs, cv.corpus.n_seqs)
    lz_np = np.zeros(n_chunks, dtype=np.float64)
    bad_np = np.full(n_chunks, -1, dtype=np.int64)
    cdef weight_t[::1] lz = lz_np
    cdef index_t[::1] bad = bad_np
    grad_np = np.asarray(grad_buffers)
    grad_np[:] = 0.0
    cdef Chain ch = chain_of(ix, cv)
    cdef const index_t* sp = &seqs[0] if seqs.shape[0] else NULL
    fb_tables_for(&tb, &ix.layout, &params[0], NULL)
    for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_jobs):
        failed += -_clamped_range(&ch, &tb, &params[0], sp, chunks[c], chunks[c + 1],
                                  &grad_buffers[c, 0], &lz[c], &bad[c])
    fb_tables_free(&tb)
    if failed:
        raise MemoryError("cseq: out of memory in forward-backward")
    for c in range(n_chunks):
        if bad[c] >= 0:
            raise FloatingPointError(f"clamped log Z is not finite for sequence {bad[c]}")
    return float(lz_np.sum()), grad_np[:n_chunks].sum(axis=0)


def partial_sequence_loss_and_gradient(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                                       index_t s):
    """``log Z - log Z_clamped`` of sequence ``s`` of a labeled view, and its gradient.

    The Python face of :func:`fb_partial_update` (``gain = -1``), for tests;
    a fully labelled sequence gives ``log Z - score(gold)`` by the same
    formula (its one completion).
    """
    cdef int L = ix.layout.n_labels
    cdef FBTables tb
    cdef FBWork wk
    cdef weight_t loss
    _check_view(ix, cv)
    if cv.corpus.labels == NULL or not 0 <= s < cv.corpus.n_seqs:
        raise ValueError("need a labeled corpus and a sequence index in range")
    if params.shape[0] != ix.layout.n_params:
        raise ValueError("params does not match the layout")
    cdef Chain ch = chain_of(ix, cv)
    grad_np = np.zeros(ix.layout.n_params, dtype=np.float64)
    cdef weight_t[::1] grad = grad_np
    marg_np = np.empty((max(cv.max_len, 1), L), dtype=np.float64)
    pairs_np = np.empty(L * L + (L * L * L if ix.layout.order == 2 else 0), dtype=np.float64)
    marg2_np = np.empty_like(marg_np)
    pairs2_np = np.empty_like(pairs_np)
    cdef weight_t[:, ::1] marg = marg_np
    cdef weight_t[::1] pairs = pairs_np
    cdef weight_t[:, ::1] marg2 = marg2_np
    cdef weight_t[::1] pairs2 = pairs2_np
    fb_tables_for(&tb, &ix.layout, &params[0], NULL)
    if fb_work_init(&wk, cv.max_len, L, ix.layout.order) != 0:
        fb_tables_free(&tb)
        raise MemoryError()
    loss = fb_partial_update(&ch, &tb, &wk, &params[0], 1.0, s, -1.0, &marg[0, 0], &pairs[0],
                             &marg2[0, 0], &pairs2[0], &grad[0])
    fb_work_free(&wk)
    fb_tables_free(&tb)
    return float(loss), grad_np
