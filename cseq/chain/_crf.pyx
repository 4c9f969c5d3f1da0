"""The CRF training objective: negative log-likelihood and its gradient, per sequence and per corpus.

A linear-chain CRF (Lafferty et al. 2001) is trained by minimising
``sum_s log Z(x_s) - score(x_s, y_s)`` (plus a penalty the Python layer
adds).  Its gradient is the expected feature counts under the model minus
the gold ones, both from forward-backward (:mod:`cseq.chain._forward_backward`,
which this module only calls):

* :func:`crf_sequence_update`: one sequence's loss, and its gradient times a
  gain added into a vector; the stochastic gradient step of
  :class:`cseq.learners._crf_sgd.CRFSGDTrainer` (``gain = eta``) and, for tests, the exact
  per-sequence gradient (``gain = -1``, :func:`sequence_loss_and_gradient`).
* :func:`crf_log_z_and_expectations`: the corpus sums L-BFGS needs (Sha and
  Pereira 2003), in threads over fixed chunks of sequences.

Partially labelled sequences have their own objective, ``log Z - log
Z_clamped``, in :mod:`cseq.chain._clamped`.

References
----------
Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields.
ICML.
Sha, F., Pereira, F. (2003). Shallow parsing with conditional random fields.
HLT-NAACL.
"""

from cython.parallel cimport prange
from libc.math cimport isfinite
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from cseq.chain._forward_backward cimport (FBTables, FBWork, fb_add_pairs, fb_add_triples,
                                           fb_marginals, fb_run, fb_tables_for, fb_tables_free,
                                           fb_work_free, fb_work_init)
from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._chain cimport (Chain, ChainIndex, CorpusView, ParamSink, add_path_features,
                                  add_state_features, chain_of, sequence_emissions)


cdef weight_t crf_sequence_update(const Chain* ch, const FBTables* tb, FBWork* wk,
                                  const weight_t* w, weight_t w_scale, index_t s, weight_t gain,
                                  weight_t* marg, weight_t* pairs, weight_t* out) noexcept nogil:
    """One sequence's negative log-likelihood, and its gradient times ``-gain`` added into ``out``.

    The state weights are ``w_scale * w[:n_state]``; ``tb`` holds the
    transitions (already scaled).  Adds ``gain * (Phi(x, gold) - E[Phi(x, y)])``
    to ``out`` (a sparse update: only the state weights of the sequence's
    attributes and the transition blocks), so ``gain = -1`` adds the gradient
    of ``log Z - score(gold)`` and ``gain = eta`` is a stochastic gradient step.
    ``marg`` has room for ``wk.capacity * L`` values, ``pairs`` for ``L * L``
    (second order: ``L * L + L^3``, the trigram counts after the bigrams).
    Returns ``log Z - score(gold)``, or a non-finite value (and ``out``
    untouched) when log Z is not finite.
    """
    cdef int L = ch.layout.n_labels
    cdef index_t t0, t, k
    cdef index_t n = sequence_emissions(ch, w, w_scale, s, wk.em, &t0)
    cdef const label_t* gold = ch.corpus[0].labels + t0
    cdef int j
    cdef weight_t gold_score, lz
    cdef weight_t* triples
    cdef ParamSink sink
    if n == 0:
        return 0.0
    # The gold path's score, before fb_run overwrites the emissions.
    gold_score = tb.tr.start[gold[0]] + tb.tr.end[gold[n - 1]]
    for t in range(n):
        gold_score += wk.em[t * L + gold[t]]
    for t in range(1, n):
        gold_score += tb.tr.trans[gold[t - 1] * L + gold[t]]
    if tb.order == 2:
        for t in range(2, n):
            gold_score += tb.tr.trans2[(<index_t> gold[t - 2] * L + gold[t - 1]) * L + gold[t]]
    lz = fb_run(tb, wk, n)
    if not isfinite(lz):
        return lz
    fb_marginals(tb, wk, n, marg)
    for t in range(n):
        add_state_features(ch.index, ch.corpus, t0 + t, marg + t * L, L, -gain, out)
    memset(pairs, 0, L * L * sizeof(weight_t))
    for t in range(n - 1):
        fb_add_pairs(tb, wk, t, pairs)
    for k in range(L * L):
        out[ch.layout.trans + k] -= gain * pairs[k]
    if tb.order == 2:
        triples = pairs + L * L
        memset(triples, 0, <size_t> L * L * L * sizeof(weight_t))
        for t in range(n - 2):
            fb_add_triples(tb, wk, t, triples)
        for k in range(<index_t> L * L * L):
            out[ch.layout.trans2 + k] -= gain * triples[k]
    for j in range(L):
        out[ch.layout.start + j] -= gain * marg[j]
        out[ch.layout.end + j] -= gain * marg[(n - 1) * L + j]
    sink.w = out
    sink.u = NULL
    sink.age = 0.0
    add_path_features(ch.layout, ch.index, ch.corpus, t0, n, gold, NULL, gain, &sink)
    return lz - gold_score


cdef int _objective_range(const Chain* ch, const FBTables* tb, const weight_t* params,
                          index_t s0, index_t s1, weight_t* grad, weight_t* log_z_sum,
                          index_t* bad_seq) noexcept nogil:
    """Sum of log Z and expected counts over sequences ``s0:s1``; -1 on allocation failure."""
    cdef int L = ch.layout.n_labels
    cdef FBWork wk
    cdef index_t s, t, t0, n
    cdef weight_t lz, total = 0.0
    cdef weight_t* g_trans = grad + ch.layout.trans
    cdef weight_t* g_start = grad + ch.layout.start
    cdef weight_t* g_end = grad + ch.layout.end
    cdef weight_t* g_trans2 = grad + ch.layout.trans2
    cdef weight_t* marg
    cdef int j
    if fb_work_init(&wk, ch.max_len, L, ch.layout.order) != 0:
        return -1
    marg = <weight_t*>malloc(<size_t> (wk.capacity * L) * sizeof(weight_t))
    if marg == NULL:
        fb_work_free(&wk)
        return -1
    bad_seq[0] = -1
    for s in range(s0, s1):
        n = sequence_emissions(ch, params, 1.0, s, wk.em, &t0)
        if n == 0:
            continue
        lz = fb_run(tb, &wk, n)
        if not isfinite(lz):
            if bad_seq[0] < 0:
                bad_seq[0] = s
            continue
        total += lz
        fb_marginals(tb, &wk, n, marg)
        for t in range(n):
            add_state_features(ch.index, ch.corpus, t0 + t, marg + t * L, L, 1.0, grad)
        for t in range(n - 1):
            fb_add_pairs(tb, &wk, t, g_trans)
        if ch.layout.order == 2:
            for t in range(n - 2):
                fb_add_triples(tb, &wk, t, g_trans2)
        for j in range(L):
            g_start[j] += marg[j]
            g_end[j] += marg[(n - 1) * L + j]
    free(marg)
    fb_work_free(&wk)
    log_z_sum[0] = total
    return 0


# ---------------------------------------------------------------------------
# Python entry points (arrays validated by the caller).

def crf_log_z_and_expectations(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                               const index_t[::1] chunks, weight_t[:, ::1] grad_buffers,
                               int n_jobs):
    """Sum of log Z and of expected feature counts over a corpus, in one nogil pass.

    Parameters
    ----------
    ix : the model's structure (state index and parameter layout).
    params : the flat parameter vector (``ix.layout``).
    cv : the packed corpus.
    chunks : boundaries of the work chunks over sequences; chunk ``c`` runs on
        one thread and accumulates into ``grad_buffers[c]``.
    grad_buffers : (n_chunks, n_params) scratch, overwritten.
    n_jobs : number of threads.

    Returns
    -------
    log_z : float
        Sum of log partition functions.
    expected : ndarray (n_params,)
        Expected feature counts, summed over chunks in chunk order so the result
        depends only on the chunking, never on thread timing.

    Raises
    ------
    FloatingPointError
        When a sequence's log Z is not finite; the message names the sequence.
    """
    cdef index_t n_chunks = chunks.shape[0] - 1
    cdef FBTables tb
    lz_np = np.zeros(n_chunks, dtype=np.float64)
    bad_np = np.full(n_chunks, -1, dtype=np.int64)
    cdef weight_t[::1] lz = lz_np
    cdef index_t[::1] bad = bad_np
    cdef index_t c
    cdef int failed = 0
    grad_np = np.asarray(grad_buffers)
    grad_np[:] = 0.0
    cdef Chain ch = chain_of(ix, cv)
    fb_tables_for(&tb, &ix.layout, &params[0], NULL)
    for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_jobs):
        failed += -_objective_range(&ch, &tb, &params[0], chunks[c], chunks[c + 1],
                                    &grad_buffers[c, 0], &lz[c], &bad[c])
    fb_tables_free(&tb)
    if failed:
        raise MemoryError("cseq: out of memory in forward-backward")
    for c in range(n_chunks):
        if bad[c] >= 0:
            raise FloatingPointError(f"log Z is not finite for sequence {bad[c]}")
    return float(lz_np.sum()), grad_np.sum(axis=0) if n_chunks > 1 else grad_np[0].copy()


def sequence_loss_and_gradient(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                               index_t s):
    """``log Z - score(gold)`` of sequence ``s`` of a labeled corpus and its gradient.

    The Python face of :func:`crf_sequence_update` (``gain = -1``, unit scale),
    for tests; ``s`` and the corpus are validated by the caller.
    """
    cdef int L = ix.layout.n_labels
    cdef FBTables tb
    cdef FBWork wk
    cdef weight_t loss
    cdef Chain ch = chain_of(ix, cv)
    if cv.corpus.labels == NULL or not 0 <= s < cv.corpus.n_seqs:
        raise ValueError("need a labeled corpus and a sequence index in range")
    grad_np = np.zeros(ix.layout.n_params, dtype=np.float64)
    cdef weight_t[::1] grad = grad_np
    marg_np = np.empty((max(cv.max_len, 1), L), dtype=np.float64)
    pairs_np = np.empty(L * L + (L * L * L if ix.layout.order == 2 else 0), dtype=np.float64)
    cdef weight_t[:, ::1] marg = marg_np
    cdef weight_t[::1] pairs = pairs_np
    fb_tables_for(&tb, &ix.layout, &params[0], NULL)
    if fb_work_init(&wk, cv.max_len, L, ix.layout.order) != 0:
        fb_tables_free(&tb)
        raise MemoryError()
    loss = crf_sequence_update(&ch, &tb, &wk, &params[0], 1.0, s, -1.0, &marg[0, 0],
                              &pairs[0], &grad[0])
    fb_work_free(&wk)
    fb_tables_free(&tb)
    return float(loss), grad_np
