"""Exact n-best decoding of first- and second-order linear chains (k-best list Viterbi).

Every state (a label, or a label pair at second order) keeps its ``k`` best
partial paths, sorted; a state's list at position ``t`` is the ``k``-way merge
of its predecessors' lists shifted by the transition score, so the ``k`` best
complete paths are exact, not a beam (Schwartz and Chow 1990; Nilsson and
Goldberger 2001).  Disallowed entries (-inf scores, see ``_masks.pxd``) are
never listed, so with constraints ``k' <= k`` allowed paths come back.

Ties are broken deterministically and as :func:`cseq.viterbi` breaks them:
among paths of equal score, the one whose *reversed* label sequence is
lexicographically smallest comes first (lower last label, then lower label
before it, ...).  The merge takes the lower previous label (and the better
ranked of its partial paths) on equal scores, and that order is preserved
by extension, so it orders complete paths.  The best path is Viterbi's,
with the same score to the last bit: the sums are taken in the same order.

References
----------
Schwartz, R., Chow, Y.-L. (1990). The N-best algorithm: an efficient and
exact procedure for finding the N most likely sentence hypotheses. ICASSP.
Nilsson, D., Goldberger, J. (2001). Sequentially finding the N-best list in
hidden Markov models. IJCAI.
"""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

import numpy as np

from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._chain cimport Transitions


cdef struct NBestWork:
    # Scratch for sequences of up to `capacity` positions and lists of k.
    weight_t* sc      # (capacity, S, k) partial path scores, sorted per state
    index_t* bp       # (capacity, S, k) back-pointers: prev_state * k + prev_rank
    int* cnt          # (capacity, S) list lengths
    int* head         # (L + S) merge heads
    index_t capacity
    int k


cdef int nbest_work_init(NBestWork* wk, index_t capacity, int L, int order, int k) noexcept nogil:
    """Allocate the scratch of :c:func:`nbest_paths`; -1 when memory runs out."""
    cdef index_t S = <index_t> L * L if order == 2 else L
    cdef index_t cap = capacity if capacity > 0 else 1
    wk.capacity = cap
    wk.k = k
    wk.sc = <weight_t*>malloc(<size_t> (cap * S * k) * sizeof(weight_t))
    wk.bp = <index_t*>malloc(<size_t> (cap * S * k) * sizeof(index_t))
    wk.cnt = <int*>malloc(<size_t> (cap * S) * sizeof(int))
    wk.head = <int*>malloc(<size_t> (L + S) * sizeof(int))
    if wk.sc == NULL or wk.bp == NULL or wk.cnt == NULL or wk.head == NULL:
        nbest_work_free(wk)
        return -1
    return 0


cdef void nbest_work_free(NBestWork* wk) noexcept nogil:
    free(wk.sc); free(wk.bp); free(wk.cnt); free(wk.head)
    wk.sc = NULL; wk.bp = NULL; wk.cnt = NULL; wk.head = NULL


cdef inline int _merge(const weight_t* sc, const int* cnt, index_t stride, index_t step,
                       const weight_t* add, index_t add_step, int n_src, int k, int* head,
                       weight_t* out_sc, index_t* out_bp, index_t src0, index_t src_step) noexcept nogil:
    """k-way merge of ``n_src`` sorted lists, each shifted by its own score.

    List ``i`` starts at ``sc + i * step`` and has ``cnt[i * stride]``
    entries, best first; its shift is ``add[i * add_step]``.  Writes
    up to ``k`` merged values (``value + shift``, best first; on equal values
    the lower ``i``, then the lower rank) and their back-pointers
    ``(src0 + i * src_step) * k + rank``; returns how many (-inf values are
    dropped).
    """
    cdef int i, m, best_i
    cdef weight_t v, best
    for i in range(n_src):
        head[i] = 0
    for m in range(k):
        best = -INFINITY
        best_i = -1
        for i in range(n_src):
            if head[i] < cnt[i * stride]:
                v = sc[i * step + head[i]] + add[i * add_step]
                if v > best:
                    best = v
                    best_i = i
        if best_i < 0:
            return m
        out_sc[m] = best
        out_bp[m] = (src0 + best_i * src_step) * k + head[best_i]
        head[best_i] += 1
    return k


cdef int nbest_paths(const weight_t* em, index_t n, const Transitions* tr, NBestWork* wk,
                     label_t* paths, weight_t* scores) noexcept nogil:
    """The ``k`` best label paths of one sequence (n >= 1, n <= capacity); returns how many.

    ``paths`` receives ``k' * n`` labels (path ``m`` at ``paths[m * n]``),
    ``scores`` ``k'`` scores, best first (ties: see the module docstring);
    ``k'`` is ``k`` or the number of paths whose terms are all finite, if
    smaller.  Second order when ``tr.trans2`` is set.
    """
    if tr.trans2 != NULL:
        return _nbest2(em, n, tr, wk, paths, scores)
    cdef int L = tr.n_labels, k = wk.k
    cdef index_t t, kk
    cdef int j, m, got, r
    cdef const weight_t* row
    cdef weight_t* sc
    cdef weight_t* prev_sc
    cdef index_t* bp
    cdef index_t* fin_bp
    for j in range(L):
        wk.sc[<index_t> j * k] = tr.start[j] + em[j]
        wk.cnt[j] = 1 if wk.sc[<index_t> j * k] > -INFINITY else 0
    for t in range(1, n):
        row = em + t * L
        prev_sc = wk.sc + (t - 1) * L * k
        for j in range(L):
            sc = wk.sc + (t * L + j) * k
            bp = wk.bp + (t * L + j) * k
            if not row[j] > -INFINITY:
                wk.cnt[t * L + j] = 0
                continue
            # Sources: previous label i, list prev_sc[i * k ..], shift trans[i, j].
            got = _merge(prev_sc, wk.cnt + (t - 1) * L, 1, k, tr.trans + j, L, L, k, wk.head,
                         sc, bp, 0, 1)
            for m in range(got):
                sc[m] += row[j]
            wk.cnt[t * L + j] = got
    # The end: the last position's lists, shifted by end[j]; into the scores
    # output and the back-pointer scratch of position 0 (unused by then).
    prev_sc = wk.sc + (n - 1) * L * k
    fin_bp = wk.bp
    got = _merge(prev_sc, wk.cnt + (n - 1) * L, 1, k, tr.end, 1, L, k, wk.head, scores, fin_bp,
                 0, 1)
    for m in range(got):
        kk = fin_bp[m]
        j = <int> (kk // k)
        r = <int> (kk % k)
        for t in range(n - 1, -1, -1):
            paths[<index_t> m * n + t] = j
            if t > 0:
                kk = wk.bp[(t * L + j) * k + r]
                j = <int> (kk // k)
                r = <int> (kk % k)
    return got


cdef int _nbest2(const weight_t* em, index_t n, const Transitions* tr, NBestWork* wk,
                 label_t* paths, weight_t* scores) noexcept nogil:
    """Second order: lists per label pair (b, c) at positions t >= 1 (state b * L + c)."""
    cdef int L = tr.n_labels, k = wk.k
    cdef index_t LL = <index_t> L * L, t, kk, st
    cdef int b, c, m, got, r
    cdef const weight_t* row
    cdef weight_t* sc
    cdef index_t* bp
    cdef weight_t* prev_sc
    cdef weight_t p, step
    cdef weight_t* first = wk.sc   # position 0: one score per label, k apart
    for c in range(L):
        first[<index_t> c * k] = tr.start[c] + em[c]
        wk.cnt[c] = 1 if first[<index_t> c * k] > -INFINITY else 0
    if n == 1:
        got = _merge(first, wk.cnt, 1, k, tr.end, 1, L, k, wk.head, scores, wk.bp, 0, 1)
        for m in range(got):
            paths[m] = <label_t> (wk.bp[m] // k)
        return got
    row = em + L
    for b in range(L):
        p = first[<index_t> b * k]
        for c in range(L):
            st = <index_t> b * L + c
            sc = wk.sc + (LL + st) * k
            bp = wk.bp + (LL + st) * k
            sc[0] = p + tr.trans[st] + row[c]
            bp[0] = <index_t> b * k
            wk.cnt[LL + st] = 1 if wk.cnt[b] and sc[0] > -INFINITY else 0
    for t in range(2, n):
        row = em + t * L
        prev_sc = wk.sc + (t - 1) * LL * k
        for b in range(L):
            for c in range(L):
                st = <index_t> b * L + c
                sc = wk.sc + (t * LL + st) * k
                bp = wk.bp + (t * LL + st) * k
                step = tr.trans[st] + row[c]
                if not step > -INFINITY:
                    wk.cnt[t * LL + st] = 0
                    continue
                # Sources: pair (a, b) for each a, shift trans2[a, b, c].
                got = _merge(prev_sc + <index_t> b * k, wk.cnt + (t - 1) * LL + b, L, L * k,
                             tr.trans2 + st, LL, L, k, wk.head, sc, bp, b, L)
                for m in range(got):
                    sc[m] += step
                wk.cnt[t * LL + st] = got
    # The end: over c (the last label), then b, as Viterbi: source c * L + b
    # is pair (b, c), so lower c first on ties, then lower b.
    prev_sc = wk.sc + (n - 1) * LL * k
    got = _merge_end2(prev_sc, wk.cnt + (n - 1) * LL, tr.end, L, k, wk.head, scores, wk.bp)
    for m in range(got):
        kk = wk.bp[m]
        st = kk // k
        r = <int> (kk % k)
        for t in range(n - 1, 0, -1):
            paths[<index_t> m * n + t] = <label_t> (st % L)
            kk = wk.bp[(t * LL + st) * k + r]
            if t == 1:
                paths[<index_t> m * n] = <label_t> (kk // k)
            else:
                st = kk // k
                r = <int> (kk % k)
    return got


cdef int _merge_end2(const weight_t* sc, const int* cnt, const weight_t* end, int L, int k,
                     int* head, weight_t* out_sc, index_t* out_bp) noexcept nogil:
    # As _merge over the L * L pair lists (b, c) in the order c, then b; the
    # shift of pair (b, c) is end[c]; back-pointers (b * L + c) * k + rank.
    cdef index_t LL = <index_t> L * L, q, st, best_st
    cdef int m
    cdef weight_t v, best
    for q in range(LL):
        head[q] = 0
    for m in range(k):
        best = -INFINITY
        best_st = -1
        for q in range(LL):
            st = (q % L) * L + q // L      # q = c * L + b  ->  pair b * L + c
            if head[st] < cnt[st]:
                v = sc[st * k + head[st]] + end[q // L]
                if v > best:
                    best = v
                    best_st = st
        if best_st < 0:
            return m
        out_sc[m] = best
        out_bp[m] = best_st * k + head[best_st]
        head[best_st] += 1
    return k


def nbest_array(const weight_t[:, ::1] emissions, const weight_t[:, ::1] transitions,
                const weight_t[::1] start, const weight_t[::1] end, int k, transitions2=None):
    """The ``k`` best paths on validated dense arrays (n >= 1, k >= 1; -inf entries allowed).

    See :func:`cseq.viterbi_nbest`.  Returns ``(paths, scores)``: int32
    (k', n) and float64 (k',), best first.
    """
    cdef index_t n = emissions.shape[0]
    cdef int L = emissions.shape[1]
    cdef int order = 1 if transitions2 is None else 2
    cdef Transitions tr
    cdef NBestWork wk
    cdef const weight_t[:, :, ::1] t2
    cdef int got
    tr.trans = &transitions[0, 0]
    tr.start = &start[0]
    tr.end = &end[0]
    tr.trans2 = NULL
    tr.n_labels = L
    if transitions2 is not None:
        t2 = transitions2
        tr.trans2 = &t2[0, 0, 0]
    paths_np = np.zeros((k, n), dtype=np.int32)
    scores_np = np.zeros(k, dtype=np.float64)
    cdef label_t[:, ::1] paths = paths_np
    cdef weight_t[::1] scores = scores_np
    if nbest_work_init(&wk, n, L, order, k) != 0:
        raise MemoryError("cseq: out of memory for the n-best lists")
    with nogil:
        got = nbest_paths(&emissions[0, 0], n, &tr, &wk, &paths[0, 0], &scores[0])
    nbest_work_free(&wk)
    return paths_np[:got].copy(), scores_np[:got].copy()
