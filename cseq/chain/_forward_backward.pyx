"""Forward-backward for first- and second-order linear chains: log Z, marginals, expected counts.

Two numerically safe variants share one interface:

* **scaled** (the fast path): emissions are shifted by their per-position
  maximum and exponentiated once, transitions once per parameter vector;
  forward vectors are renormalised at every position (Rabiner 1989) and the
  logarithms of the scale factors sum to log Z.  It is exact to rounding as
  long as no quantity that matters underflows.  With a spread of at most
  ``SCALED_MAX_SPREAD`` between the largest and smallest transition (and
  start, and end) score, any label the scaled tables lose to underflow has a
  probability below exp(-(745 - 2 * spread)), far below double resolution.
* **log-space** (the fallback for wider spreads): log-sum-exp with max
  subtraction at every step; about three times slower, exact for any finite
  scores.

A second-order chain (a trigram block ``trans2``) runs the same recursions
over label pairs ``(y_{t-1}, y_t)``: ``alpha_t[b, c] = sum_a alpha_{t-1}[a, b]
* exp(trans2[a, b, c] + trans[b, c]) * exp(E[t, c])``, O(n L^3), in the same
two variants, on the same emission buffer, behind the same functions
(``fb_run``, ``fb_marginals``, ``fb_add_pairs``, plus ``fb_add_triples`` for
the trigram marginals); the first position has single labels and the second
the first-order transition.

The CRF training objective built on these functions (a sequence's loss and
gradient, the corpus sums for L-BFGS) is :mod:`cseq.chain._crf`.

References
----------
Rabiner, L. R. (1989). A tutorial on hidden Markov models and selected
applications in speech recognition. Proc. IEEE 77(2).
Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields.
ICML.
Sha, F., Pereira, F. (2003). Shallow parsing with conditional random fields.
HLT-NAACL.
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY, exp, isfinite, log
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

from cseq.chain._decode import check_masks, raise_bad_sequence
from cseq.chain._masks cimport Constraints, MaskSet, constrain_rows, dead_position, mask_transitions
from cseq._core._types cimport index_t, weight_t
from cseq.chain._chain cimport (Chain, ChainIndex, CorpusView, Layout, chain_of, emissions_finite,
                                  n_path_states, sequence_emissions)

#: Largest spread (max - min) of transition, start or end scores for the scaled path.
SCALED_MAX_SPREAD = 250.0
cdef weight_t _SCALED_MAX_SPREAD = SCALED_MAX_SPREAD


cdef inline weight_t _spread(const weight_t* x, index_t n, weight_t* mx) noexcept nogil:
    cdef weight_t lo = x[0], hi = x[0]
    cdef index_t k
    for k in range(1, n):
        if x[k] < lo:
            lo = x[k]
        if x[k] > hi:
            hi = x[k]
    mx[0] = hi
    return hi - lo


cdef int fb_tables_init(FBTables* tb, const weight_t* trans, const weight_t* start,
                        const weight_t* end, const weight_t* trans2, int n_labels) noexcept nogil:
    """Prepare the transition tables (``trans2`` NULL: first order); -1 when memory runs out."""
    cdef int L = n_labels
    cdef index_t k, ab, LL = <index_t> n_labels * n_labels, L3 = LL * n_labels
    cdef int b, c
    tb.tr.trans = trans
    tb.tr.start = start
    tb.tr.end = end
    tb.tr.trans2 = trans2
    tb.tr.n_labels = L
    tb.order = 1 if trans2 == NULL else 2
    tb.exp_trans = NULL
    tb.exp_start = NULL
    tb.exp_end = NULL
    tb.k2 = NULL
    tb.k2_max = 0.0
    if tb.order == 2:
        tb.k2 = <weight_t*>malloc(<size_t> L3 * sizeof(weight_t))
        if tb.k2 == NULL:
            return -1
        for ab in range(LL):
            b = ab % L
            for c in range(L):
                tb.k2[ab * L + c] = trans2[ab * L + c] + trans[<index_t> b * L + c]
    tb.scaled = (_spread(trans, LL, &tb.trans_max) <= _SCALED_MAX_SPREAD
                 and _spread(start, L, &tb.start_max) <= _SCALED_MAX_SPREAD
                 and _spread(end, L, &tb.end_max) <= _SCALED_MAX_SPREAD
                 and (tb.order == 1 or _spread(tb.k2, L3, &tb.k2_max) <= _SCALED_MAX_SPREAD))
    if not tb.scaled:
        return 0
    tb.exp_trans = <weight_t*>malloc(<size_t> (LL + 2 * L) * sizeof(weight_t))
    if tb.exp_trans == NULL:
        fb_tables_free(tb)
        return -1
    tb.exp_start = tb.exp_trans + LL
    tb.exp_end = tb.exp_start + L
    for k in range(LL):
        tb.exp_trans[k] = exp(trans[k] - tb.trans_max)
    for k in range(L):
        tb.exp_start[k] = exp(start[k] - tb.start_max)
        tb.exp_end[k] = exp(end[k] - tb.end_max)
    if tb.order == 2:
        for k in range(L3):
            tb.k2[k] = exp(tb.k2[k] - tb.k2_max)
    return 0


cdef void fb_tables_free(FBTables* tb) noexcept nogil:
    free(tb.exp_trans)
    free(tb.k2)
    tb.exp_trans = NULL
    tb.k2 = NULL


cdef int fb_work_init(FBWork* wk, index_t capacity, int n_labels, int order) noexcept nogil:
    """Allocate scratch for sequences of up to ``capacity`` positions; -1 on failure."""
    cdef index_t cap = capacity if capacity > 0 else 1
    cdef index_t S = n_path_states(n_labels, order)
    wk.capacity = cap
    wk.em = <weight_t*>malloc(<size_t> (cap * n_labels) * sizeof(weight_t))
    wk.alpha = <weight_t*>malloc(<size_t> (cap * S) * sizeof(weight_t))
    wk.beta = <weight_t*>malloc(<size_t> (cap * S) * sizeof(weight_t))
    wk.scale = <weight_t*>malloc(<size_t> cap * sizeof(weight_t))
    wk.tmp = <weight_t*>malloc(<size_t> 2 * S * sizeof(weight_t))
    if wk.em == NULL or wk.alpha == NULL or wk.beta == NULL or wk.scale == NULL or wk.tmp == NULL:
        fb_work_free(wk)
        return -1
    return 0


cdef void fb_work_free(FBWork* wk) noexcept nogil:
    free(wk.em); free(wk.alpha); free(wk.beta); free(wk.scale); free(wk.tmp)
    wk.em = NULL; wk.alpha = NULL; wk.beta = NULL; wk.scale = NULL; wk.tmp = NULL


cdef inline weight_t _row_max(const weight_t* x, index_t L) noexcept nogil:
    cdef weight_t m = x[0]
    cdef index_t j
    for j in range(1, L):
        if x[j] > m:
            m = x[j]
    return m


cdef weight_t _run_scaled(const FBTables* tb, FBWork* wk, index_t n) noexcept nogil:
    cdef int L = tb.tr.n_labels
    cdef index_t t
    cdef int i, j
    cdef weight_t m, s, a, log_z = 0.0
    cdef weight_t* em
    cdef weight_t* al
    cdef weight_t* prev
    cdef weight_t* be
    cdef weight_t* tmp = wk.tmp
    cdef const weight_t* trow
    for t in range(n):
        em = wk.em + t * L
        m = _row_max(em, L)
        for j in range(L):
            em[j] = exp(em[j] - m)
        al = wk.alpha + t * L
        if t == 0:
            for j in range(L):
                al[j] = tb.exp_start[j] * em[j]
            log_z += m + tb.start_max
        else:
            prev = al - L
            memset(al, 0, L * sizeof(weight_t))
            for i in range(L):
                a = prev[i]
                trow = tb.exp_trans + <index_t> i * L
                for j in range(L):
                    al[j] += a * trow[j]
            for j in range(L):
                al[j] *= em[j]
            log_z += m + tb.trans_max
        s = 0.0
        for j in range(L):
            s += al[j]
        wk.scale[t] = s
        s = 1.0 / s
        for j in range(L):
            al[j] *= s
        log_z -= log(s)
    al = wk.alpha + (n - 1) * L
    be = wk.beta + (n - 1) * L
    s = 0.0
    for j in range(L):
        be[j] = tb.exp_end[j]
        s += al[j] * be[j]
    wk.zp = s
    log_z += log(s) + tb.end_max
    for t in range(n - 2, -1, -1):
        be = wk.beta + t * L
        em = wk.em + (t + 1) * L
        s = 1.0 / wk.scale[t + 1]
        for j in range(L):
            tmp[j] = em[j] * be[L + j] * s
        for i in range(L):
            trow = tb.exp_trans + <index_t> i * L
            a = 0.0
            for j in range(L):
                a += trow[j] * tmp[j]
            be[i] = a
    return log_z


cdef inline weight_t _log_sum_exp(const weight_t* x, index_t L) noexcept nogil:
    cdef weight_t m = _row_max(x, L), s = 0.0
    cdef index_t j
    for j in range(L):
        s += exp(x[j] - m)
    return m + log(s)


cdef weight_t _run_log(const FBTables* tb, FBWork* wk, index_t n) noexcept nogil:
    # Log-alpha and log-beta are shifted by their maximum at every position,
    # so they stay O(one step) whatever the length: unshifted, they grow to
    # n * |score| and lose absolute precision (1e9 for 1e5 tokens at 1e4).
    cdef int L = tb.tr.n_labels
    cdef const weight_t* T = tb.tr.trans
    cdef index_t t
    cdef int i, j
    cdef weight_t m, s, v, log_z
    cdef weight_t* al
    cdef weight_t* prev
    cdef weight_t* be
    cdef weight_t* nxt
    cdef weight_t* em
    cdef weight_t* tmp = wk.tmp
    for j in range(L):
        wk.alpha[j] = tb.tr.start[j] + wk.em[j]
    log_z = _row_max(wk.alpha, L)
    for j in range(L):
        wk.alpha[j] -= log_z
    for t in range(1, n):
        al = wk.alpha + t * L
        prev = al - L
        em = wk.em + t * L
        for j in range(L):
            m = -INFINITY
            for i in range(L):
                v = prev[i] + T[<index_t> i * L + j]
                if v > m:
                    m = v
            if m == -INFINITY:
                al[j] = -INFINITY   # unreachable (masked): no NaN from -inf - -inf
                continue
            s = 0.0
            for i in range(L):
                s += exp(prev[i] + T[<index_t> i * L + j] - m)
            al[j] = m + log(s) + em[j]
        m = _row_max(al, L)
        for j in range(L):
            al[j] -= m
        log_z += m
    al = wk.alpha + (n - 1) * L
    be = wk.beta + (n - 1) * L
    m = _row_max(tb.tr.end, L)
    for j in range(L):
        be[j] = tb.tr.end[j] - m
        tmp[j] = al[j] + be[j]
    wk.log_z = log_z + m + _log_sum_exp(tmp, L)
    for t in range(n - 2, -1, -1):
        be = wk.beta + t * L
        nxt = be + L
        em = wk.em + (t + 1) * L
        for j in range(L):
            tmp[j] = em[j] + nxt[j]
        for i in range(L):
            m = -INFINITY
            for j in range(L):
                v = T[<index_t> i * L + j] + tmp[j]
                if v > m:
                    m = v
            if m == -INFINITY:
                be[i] = -INFINITY
                continue
            s = 0.0
            for j in range(L):
                s += exp(T[<index_t> i * L + j] + tmp[j] - m)
            be[i] = m + log(s)
        m = _row_max(be, L)
        for i in range(L):
            be[i] -= m
    return wk.log_z


cdef weight_t fb_run(const FBTables* tb, FBWork* wk, index_t n) noexcept nogil:
    """Forward-backward over ``wk.em`` (n x L emission scores, n >= 1); returns log Z.

    In scaled mode ``wk.em`` is overwritten with its shifted exponentials.
    """
    if tb.order == 2:
        if tb.scaled:
            wk.log_z = _run_scaled2(tb, wk, n)
        else:
            _run_log2(tb, wk, n)
        return wk.log_z
    if tb.scaled:
        wk.log_z = _run_scaled(tb, wk, n)
    else:
        _run_log(tb, wk, n)
    return wk.log_z


# ---------------------------------------------------------------------------
# Second order: the recursions over label pairs (see the module docstring).
# Row t of alpha and beta has L * L entries, (y_{t-1}, y_t) = (b, c) at
# b * L + c; row 0 only L (the first label).


cdef weight_t _run_scaled2(const FBTables* tb, FBWork* wk, index_t n) noexcept nogil:
    cdef int L = tb.tr.n_labels
    cdef index_t LL = <index_t> L * L, t, k, width
    cdef int a, b, c
    cdef weight_t m, s, p, acc, log_z = 0.0
    cdef weight_t* em
    cdef weight_t* al
    cdef weight_t* prev
    cdef weight_t* be
    cdef weight_t* nxt
    cdef weight_t* orow
    cdef weight_t* tmp = wk.tmp
    cdef const weight_t* krow
    cdef const weight_t* trow
    cdef const weight_t* nrow
    for t in range(n):
        em = wk.em + t * L
        m = _row_max(em, L)
        for c in range(L):
            em[c] = exp(em[c] - m)
        al = wk.alpha + t * LL
        if t == 0:
            for c in range(L):
                al[c] = tb.exp_start[c] * em[c]
            log_z += m + tb.start_max
            width = L
        elif t == 1:
            prev = wk.alpha
            for b in range(L):
                p = prev[b]
                trow = tb.exp_trans + <index_t> b * L
                orow = al + <index_t> b * L
                for c in range(L):
                    orow[c] = p * trow[c] * em[c]
            log_z += m + tb.trans_max
            width = LL
        else:
            prev = al - LL
            memset(al, 0, <size_t> LL * sizeof(weight_t))
            for a in range(L):
                for b in range(L):
                    p = prev[<index_t> a * L + b]
                    krow = tb.k2 + (<index_t> a * L + b) * L
                    orow = al + <index_t> b * L
                    for c in range(L):
                        orow[c] += p * krow[c]
            for b in range(L):
                orow = al + <index_t> b * L
                for c in range(L):
                    orow[c] *= em[c]
            log_z += m + tb.k2_max
            width = LL
        s = 0.0
        for k in range(width):
            s += al[k]
        wk.scale[t] = s
        s = 1.0 / s
        for k in range(width):
            al[k] *= s
        log_z -= log(s)
    s = 0.0
    al = wk.alpha + (n - 1) * LL
    be = wk.beta + (n - 1) * LL
    if n == 1:
        for c in range(L):
            be[c] = tb.exp_end[c]
            s += al[c] * be[c]
    else:
        for b in range(L):
            for c in range(L):
                be[<index_t> b * L + c] = tb.exp_end[c]
                s += al[<index_t> b * L + c] * tb.exp_end[c]
    wk.zp = s
    log_z += log(s) + tb.end_max
    for t in range(n - 2, -1, -1):
        be = wk.beta + t * LL
        nxt = be + LL
        em = wk.em + (t + 1) * L
        s = 1.0 / wk.scale[t + 1]
        for c in range(L):
            tmp[c] = em[c] * s
        if t == 0:
            for b in range(L):
                trow = tb.exp_trans + <index_t> b * L
                nrow = nxt + <index_t> b * L
                acc = 0.0
                for c in range(L):
                    acc += trow[c] * tmp[c] * nrow[c]
                be[b] = acc
        else:
            for a in range(L):
                for b in range(L):
                    krow = tb.k2 + (<index_t> a * L + b) * L
                    nrow = nxt + <index_t> b * L
                    acc = 0.0
                    for c in range(L):
                        acc += krow[c] * tmp[c] * nrow[c]
                    be[<index_t> a * L + b] = acc
    return log_z


cdef weight_t _run_log2(const FBTables* tb, FBWork* wk, index_t n) noexcept nogil:
    # As _run_log: every row shifted by its maximum, whose sum goes to log Z.
    cdef int L = tb.tr.n_labels
    cdef index_t LL = <index_t> L * L, t, k, width
    cdef int a, b, c
    cdef weight_t m, s, v, log_z
    cdef const weight_t* T = tb.tr.trans
    cdef const weight_t* K = tb.k2
    cdef weight_t* em
    cdef weight_t* al
    cdef weight_t* prev
    cdef weight_t* be
    cdef weight_t* nxt
    cdef weight_t* tmp = wk.tmp
    for c in range(L):
        wk.alpha[c] = tb.tr.start[c] + wk.em[c]
    log_z = _row_max(wk.alpha, L)
    for c in range(L):
        wk.alpha[c] -= log_z
    for t in range(1, n):
        al = wk.alpha + t * LL
        prev = al - LL
        em = wk.em + t * L
        if t == 1:
            for b in range(L):
                for c in range(L):
                    al[<index_t> b * L + c] = prev[b] + T[<index_t> b * L + c] + em[c]
        else:
            for b in range(L):
                for c in range(L):
                    m = -INFINITY
                    for a in range(L):
                        v = prev[<index_t> a * L + b] + K[(<index_t> a * L + b) * L + c]
                        if v > m:
                            m = v
                    if m == -INFINITY:
                        al[<index_t> b * L + c] = -INFINITY
                        continue
                    s = 0.0
                    for a in range(L):
                        s += exp(prev[<index_t> a * L + b] + K[(<index_t> a * L + b) * L + c] - m)
                    al[<index_t> b * L + c] = m + log(s) + em[c]
        m = _row_max(al, LL)
        for k in range(LL):
            al[k] -= m
        log_z += m
    al = wk.alpha + (n - 1) * LL
    be = wk.beta + (n - 1) * LL
    m = _row_max(tb.tr.end, L)
    width = L if n == 1 else LL
    for k in range(width):
        be[k] = tb.tr.end[k % L] - m
        tmp[k] = al[k] + be[k]
    wk.log_z = log_z + m + _log_sum_exp(tmp, width)
    for t in range(n - 2, -1, -1):
        be = wk.beta + t * LL
        nxt = be + LL
        em = wk.em + (t + 1) * L
        width = L if t == 0 else LL
        for k in range(width):
            # k = b (t == 0: the first label) or a * L + b; the step to (b, c).
            b = k % L
            m = -INFINITY
            for c in range(L):
                v = (T[<index_t> b * L + c] if t == 0 else K[k * L + c]) + em[c] \
                    + nxt[<index_t> b * L + c]
                if v > m:
                    m = v
            if m == -INFINITY:
                be[k] = -INFINITY
                continue
            s = 0.0
            for c in range(L):
                v = (T[<index_t> b * L + c] if t == 0 else K[k * L + c]) + em[c] \
                    + nxt[<index_t> b * L + c]
                s += exp(v - m)
            be[k] = m + log(s)
        m = _row_max(be, width)
        for k in range(width):
            be[k] -= m
    return wk.log_z


cdef void _marginals2(const FBTables* tb, FBWork* wk, index_t n, weight_t* out) noexcept nogil:
    cdef int L = tb.tr.n_labels
    cdef index_t LL = <index_t> L * L, t, k, width
    cdef int c
    cdef weight_t mx, a, inv
    cdef weight_t* al
    cdef weight_t* be
    cdef weight_t* o
    for t in range(n):
        al = wk.alpha + t * LL
        be = wk.beta + t * LL
        o = out + t * L
        width = L if t == 0 else LL
        for c in range(L):
            o[c] = 0.0
        if tb.scaled:
            inv = 1.0 / wk.zp
            for k in range(width):
                o[k % L] += al[k] * be[k] * inv
        else:
            for k in range(width):
                wk.tmp[k] = al[k] + be[k]
            mx = _row_max(wk.tmp, width)
            a = 0.0
            for k in range(width):
                wk.tmp[k] = exp(wk.tmp[k] - mx)
                a += wk.tmp[k]
            a = 1.0 / a
            for k in range(width):
                o[k % L] += wk.tmp[k] * a


cdef void fb_add_triples(const FBTables* tb, FBWork* wk, index_t t, weight_t* out) noexcept nogil:
    """Add the (L, L, L) marginals P(y_t = a, y_{t+1} = b, y_{t+2} = c) of the last run to ``out``.

    Second order only, ``0 <= t <= n - 3``.
    """
    cdef int L = tb.tr.n_labels
    cdef index_t LL = <index_t> L * L, ab
    cdef int b, c
    cdef weight_t p, mx, v, total
    cdef const weight_t* al = wk.alpha + (t + 1) * LL
    cdef const weight_t* be = wk.beta + (t + 2) * LL
    cdef const weight_t* em = wk.em + (t + 2) * L
    cdef const weight_t* krow
    cdef const weight_t* brow
    cdef weight_t* orow
    if tb.scaled:
        p = 1.0 / (wk.scale[t + 2] * wk.zp)
        for ab in range(LL):
            v = al[ab] * p
            b = ab % L
            krow = tb.k2 + ab * L
            brow = be + <index_t> b * L
            orow = out + ab * L
            for c in range(L):
                orow[c] += v * krow[c] * em[c] * brow[c]
        return
    # Shifted logs: normalise the L^3 block by its own log-sum-exp.
    mx = -INFINITY
    for ab in range(LL):
        b = ab % L
        for c in range(L):
            v = al[ab] + tb.k2[ab * L + c] + em[c] + be[<index_t> b * L + c]
            if v > mx:
                mx = v
    total = 0.0
    for ab in range(LL):
        b = ab % L
        for c in range(L):
            total += exp(al[ab] + tb.k2[ab * L + c] + em[c] + be[<index_t> b * L + c] - mx)
    total = 1.0 / total
    for ab in range(LL):
        b = ab % L
        orow = out + ab * L
        for c in range(L):
            orow[c] += exp(al[ab] + tb.k2[ab * L + c] + em[c] + be[<index_t> b * L + c]
                           - mx) * total


cdef void fb_add_pairs2(const FBTables* tb, FBWork* wk, index_t t, weight_t* out) noexcept nogil:
    # P(y_t = b, y_{t+1} = c) is the pair-state marginal at t + 1.
    cdef index_t LL = <index_t> tb.tr.n_labels * tb.tr.n_labels, k
    cdef const weight_t* al = wk.alpha + (t + 1) * LL
    cdef const weight_t* be = wk.beta + (t + 1) * LL
    cdef weight_t mx, a
    if tb.scaled:
        a = 1.0 / wk.zp
        for k in range(LL):
            out[k] += al[k] * be[k] * a
        return
    for k in range(LL):
        wk.tmp[k] = al[k] + be[k]
    mx = _row_max(wk.tmp, LL)
    a = 0.0
    for k in range(LL):
        wk.tmp[k] = exp(wk.tmp[k] - mx)
        a += wk.tmp[k]
    a = 1.0 / a
    for k in range(LL):
        out[k] += wk.tmp[k] * a



cdef void fb_marginals(const FBTables* tb, FBWork* wk, index_t n, weight_t* out) noexcept nogil:
    """Write the (n, L) label marginals of the last :func:`fb_run` into ``out``."""
    cdef int L = tb.tr.n_labels
    cdef index_t k, t
    cdef int j
    cdef weight_t c, a
    if tb.order == 2:
        _marginals2(tb, wk, n, out)
        return
    if tb.scaled:
        c = 1.0 / wk.zp
        for k in range(n * L):
            out[k] = wk.alpha[k] * wk.beta[k] * c
    else:
        # Shifted log-alpha + log-beta is log P(y_t) up to a constant per
        # position: normalise each row.
        # Dividing by the sum, not subtracting its log: with huge scores the
        # log of the sum may vanish next to the maximum (1e20 + log 2 == 1e20).
        for t in range(n):
            for j in range(L):
                wk.tmp[j] = wk.alpha[t * L + j] + wk.beta[t * L + j]
            c = _row_max(wk.tmp, L)
            a = 0.0
            for j in range(L):
                out[t * L + j] = exp(wk.tmp[j] - c)
                a += out[t * L + j]
            a = 1.0 / a
            for j in range(L):
                out[t * L + j] *= a


# ---------------------------------------------------------------------------
# Python entry points (arrays validated by the caller).

def forward_backward_array(const weight_t[:, ::1] emissions, const weight_t[:, ::1] transitions,
                           const weight_t[::1] start, const weight_t[::1] end, transitions2=None):
    """Forward-backward on validated dense arrays (n >= 1); see :func:`cseq.forward_backward`.

    Returns ``(log_z, marginals, pair_marginals)``, and with ``transitions2``
    ((L, L, L), second order) also the (n - 2, L, L, L) trigram marginals.
    """
    return _dense(emissions, transitions, start, end, transitions2, False, False)


def forward_backward_sums(const weight_t[:, ::1] emissions, const weight_t[:, ::1] transitions,
                          const weight_t[::1] start, const weight_t[::1] end, transitions2=None,
                          bint with_beta=False):
    """:func:`forward_backward_array` with the pair (and trigram) marginals summed over positions.

    Returns ``(log_z, marginals, pair_sum)`` with ``pair_sum[i, j] = sum_t
    P(y_t = i, y_{t+1} = j)`` ((L, L)), and with ``transitions2`` also the
    (L, L, L) sum of the trigram marginals: what the expected score, and so
    the entropy ``log Z - E[score]``, needs.  The sums are accumulated one
    position at a time, so memory is the messages' O(n L) (O(n L^2) at
    second order, over label pairs), not the O(n L^2) (O(n L^3)) of the
    per-position marginals.

    With ``with_beta``, a last result: the backward messages as logarithms,
    (n, S) with ``S = L`` (second order ``L * L``, pairs ``(y_{t-1}, y_t)``;
    row 0 has L entries and then zeros), each row up to a constant of its
    own.  The posterior's transitions follow from them, one row at a time:
    ``P(y_{t+1} = j | y_t = i) = softmax_j(T[i, j] + E[t + 1, j] +
    log_beta[t + 1, j])``.
    """
    return _dense(emissions, transitions, start, end, transitions2, True, with_beta)


cdef tuple _dense(const weight_t[:, ::1] emissions, const weight_t[:, ::1] transitions,
                  const weight_t[::1] start, const weight_t[::1] end, transitions2, bint summed,
                  bint with_beta):
    # summed: one (L, L) (and (L, L, L)) block that every position adds into.
    cdef index_t n = emissions.shape[0]
    cdef int L = emissions.shape[1]
    cdef int order = 1 if transitions2 is None else 2
    cdef FBTables tb
    cdef FBWork wk
    cdef index_t t, k
    cdef const weight_t[:, :, ::1] t2
    cdef const weight_t* t2_ptr = NULL
    if transitions2 is not None:
        t2 = transitions2
        t2_ptr = &t2[0, 0, 0]
    marg_np = np.empty((n, L), dtype=np.float64)
    pairs_np = np.zeros((1 if summed else max(n - 1, 0), L, L), dtype=np.float64)
    triples_np = np.zeros(((1 if summed else max(n - 2, 0)) if order == 2 else 0, L, L, L),
                          dtype=np.float64)
    cdef weight_t[:, ::1] marg = marg_np
    cdef weight_t[:, :, ::1] pairs = pairs_np
    cdef weight_t[:, :, :, ::1] triples = triples_np
    cdef weight_t log_z
    cdef index_t S = n_path_states(L, order)
    beta_np = np.zeros((n if with_beta else 0, S), dtype=np.float64)
    cdef weight_t[:, ::1] beta = beta_np
    if fb_tables_init(&tb, &transitions[0, 0], &start[0], &end[0], t2_ptr, L) != 0:
        raise MemoryError()
    if fb_work_init(&wk, n, L, order) != 0:
        fb_tables_free(&tb)
        raise MemoryError()
    with nogil:
        for t in range(n * L):
            wk.em[t] = (&emissions[0, 0])[t]
        log_z = fb_run(&tb, &wk, n)
        fb_marginals(&tb, &wk, n, &marg[0, 0])
        for t in range(n - 1):
            fb_add_pairs(&tb, &wk, t, &pairs[0 if summed else t, 0, 0])
        if order == 2:
            for t in range(n - 2):
                fb_add_triples(&tb, &wk, t, &triples[0 if summed else t, 0, 0, 0])
        if with_beta:
            # Row 0 of a second-order run has L entries: the rest stay 0.
            for t in range(n):
                for k in range(L if (order == 2 and t == 0) else S):
                    beta[t, k] = log(wk.beta[t * S + k]) if tb.scaled else wk.beta[t * S + k]
    fb_work_free(&wk)
    fb_tables_free(&tb)
    if summed:
        pairs_np, triples_np = pairs_np[0], triples_np[0] if order == 2 else None
    out = (float(log_z), marg_np, pairs_np) + ((triples_np,) if order == 2 else ())
    return out + (beta_np,) if with_beta else out


cdef int _marginals_range(const Chain* ch, const FBTables* tb, const weight_t* params,
                          const Constraints* cons, index_t s0, index_t s1, weight_t* out,
                          index_t* bad_seq) noexcept nogil:
    """Label marginals of sequences ``s0:s1`` into ``out`` (rows indexed by token).

    A sequence whose emission scores or log Z are not finite (feature values
    times weights overflow float64) gets no marginals, and the first one is
    written to ``bad_seq[0]`` (else -1).  ``cons`` (or NULL) masks each
    sequence's emissions (the transitions of ``tb`` are already masked); the
    first sequence left without an allowed path goes to ``bad_seq[1]`` and
    the position none reaches to ``bad_seq[2]``.  Returns -1 on allocation
    failure.
    """
    cdef FBWork wk
    cdef index_t s, t0, n, dead
    cdef int L = ch.layout.n_labels
    cdef unsigned char* reach = <unsigned char*>malloc(2 * L)
    bad_seq[0] = -1
    bad_seq[1] = -1
    bad_seq[2] = -1
    if reach == NULL:
        return -1
    if fb_work_init(&wk, ch.max_len, L, ch.layout.order) != 0:
        free(reach)
        return -1
    for s in range(s0, s1):
        n = sequence_emissions(ch, params, 1.0, s, wk.em, &t0)
        if n > 0:
            if not emissions_finite(wk.em, n, L, s, bad_seq):
                continue
            if cons != NULL:
                constrain_rows(cons, t0, n, L, wk.em)
                dead = dead_position(wk.em, n, L, tb.tr.trans, reach)
                if dead >= 0:
                    if bad_seq[1] < 0:
                        bad_seq[1] = s
                        bad_seq[2] = dead
                    continue
            if not isfinite(fb_run(tb, &wk, n)):
                if bad_seq[0] < 0:
                    bad_seq[0] = s
                continue
            fb_marginals(tb, &wk, n, out + t0 * L)
    fb_work_free(&wk)
    free(reach)
    return 0


cdef weight_t* masked_trans_of(const Layout* lay, const weight_t* params,
                               const Constraints* cons) noexcept nogil:
    """A malloc'd copy of the (L, L) transitions of ``params`` masked by ``cons.trans_ok``.

    NULL when ``cons`` is NULL or has no transition mask (use the raw
    block), or when memory runs out (check ``cons.trans_ok``).
    """
    cdef int L = lay.n_labels
    cdef weight_t* out
    if cons == NULL or cons.trans_ok == NULL:
        return NULL
    out = <weight_t*>malloc(<size_t> L * L * sizeof(weight_t))
    if out != NULL:
        mask_transitions(params + lay.trans, L, cons.trans_ok, out)
    return out


cdef int fb_tables_for(FBTables* tb, const Layout* lay, const weight_t* params,
                       const weight_t* trans) except -1:
    """:func:`fb_tables_init` for the transition blocks of ``params`` (laid out by ``lay``).

    ``trans``: the (L, L) transitions to use instead of those of ``params`` (a
    masked copy), or NULL.  Raises MemoryError.
    """
    if fb_tables_init(tb, params + lay.trans if trans == NULL else trans, params + lay.start,
                      params + lay.end, params + lay.trans2 if lay.order == 2 else NULL,
                      lay.n_labels) != 0:
        raise MemoryError()
    return 0


cdef int marginals_all(const Chain* ch, const weight_t* params, weight_t* out,
                       index_t* bad_seq) except -1:
    """Label marginals of every sequence of ``ch``'s corpus into ``out`` (rows by token).

    What :func:`corpus_marginals` computes without constraints, on one
    thread, with the GIL held: the one-call path of prediction
    (``cseq/learners/_one_call.pyx``).  ``bad_seq`` as for
    :c:func:`_marginals_range` (the rows of a sequence it names are not
    written).
    """
    cdef FBTables tb
    cdef int failed
    fb_tables_for(&tb, ch.layout, params, NULL)
    failed = _marginals_range(ch, &tb, params, NULL, 0, ch.corpus.n_seqs, out, bad_seq)
    fb_tables_free(&tb)
    if failed:
        raise MemoryError("cseq: out of memory in forward-backward")
    return 0


def corpus_marginals(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                     const index_t[::1] chunks, int n_jobs, MaskSet masks=None):
    """Label marginals (n_tokens, L) for every token of a validated corpus, without the GIL.

    With ``masks``, the marginals of the distribution restricted to the
    allowed label paths (disallowed labels get exactly 0).  Raises
    ``FloatingPointError`` with the index of the first sequence whose
    emission scores or log Z are not finite, ``NoAllowedPath`` for the first
    sequence the constraints leave without a path.
    """
    cdef int L = ix.layout.n_labels
    cdef index_t n_tok = cv.corpus.seq_ptr[cv.corpus.n_seqs]
    out_np = np.zeros((n_tok, L), dtype=np.float64)
    if n_tok == 0:
        return out_np
    cdef weight_t[:, ::1] out = out_np
    cdef index_t n_chunks = chunks.shape[0] - 1
    cdef FBTables tb
    cdef index_t c
    cdef int failed = 0
    bad_np = np.full((n_chunks, 3), -1, dtype=np.int64)
    cdef index_t[:, ::1] bad = bad_np
    cdef Chain ch = chain_of(ix, cv)
    check_masks(masks, L, n_tok)
    cdef const Constraints* cons = NULL if masks is None else &masks.c
    cdef weight_t* trans = masked_trans_of(&ix.layout, &params[0], cons)
    if cons != NULL and cons.trans_ok != NULL and trans == NULL:
        raise MemoryError()
    try:
        fb_tables_for(&tb, &ix.layout, &params[0], trans)
    except MemoryError:
        free(trans)
        raise
    # The tables point at `trans` (log space reads it): freed after the runs.
    for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1, num_threads=n_jobs):
        failed += -_marginals_range(&ch, &tb, &params[0], cons, chunks[c], chunks[c + 1],
                                    &out[0, 0], &bad[c, 0])
    fb_tables_free(&tb)
    free(trans)
    if failed:
        raise MemoryError("cseq: out of memory in forward-backward")
    raise_bad_sequence(bad_np)
    return out_np
