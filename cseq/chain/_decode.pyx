"""Viterbi decoding of first- and second-order linear chains, plain and cost-augmented.

Cost-augmented (loss-augmented) decoding finds
``argmax_y score(x, y) + sum_t cost[gold_t, y_t]``: the cost decomposes over
positions, so it is added to the emission scores and the same Viterbi runs
(Tsochantaridis et al. 2005, section 4; Taskar et al. 2004).

References
----------
Viterbi, A. (1967). Error bounds for convolutional codes and an asymptotically
optimum decoding algorithm. IEEE Trans. Information Theory 13(2).
Taskar, B., Guestrin, C., Koller, D. (2004). Max-margin Markov networks. NIPS.
Tsochantaridis, I., Joachims, T., Hofmann, T., Altun, Y. (2005). Large margin
methods for structured and interdependent output variables. JMLR 6.
"""

from cython.parallel cimport prange
from libc.math cimport isfinite
from libc.stdlib cimport free, malloc

import numpy as np

from cseq.chain._masks cimport Constraints, MaskSet, constrain_rows, dead_position, mask_transitions
from cseq._core._gil cimport GIL_MIN_WORK
from cseq._core._prefetch cimport cseq_prefetch
from cseq.chain._masks import NoAllowedPath
from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._chain cimport (Chain, ChainIndex, CorpusView, Transitions, chain_of,
                               emissions_finite, sequence_emissions, transitions_of)


cdef extern from *:
    """
    /* The max-plus step of Viterbi for one position, in AVX2 (4 doubles per
       instruction), used when the CPU has AVX2: gcc does not vectorize the
       scalar loop at the x86-64 baseline (bench/internals/tagging.py times both).
       For each of nb blocks b (1 for a first-order step, L for the second
       order's, one per previous label):
       cur[b * L + j] = max over i of prev[i * nb + b] + trans[(i * nb + b) * L + j],
       bp[b * L + j] = the lowest such i (as a double, so every lane has one
       width); the same compares and selects as the scalar loop in
       _max_step, so the same result.  Each block's best scores and
       back-pointers are kept in registers across the loop on i, so a step
       loads one row of transitions per i and stores once. */
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #include <immintrin.h>
    /* One vector of 4 labels at step i: s = p + trans; where s > c (the
       new path better), c = s and b = i.  K a full load, KM masked. */
    #define CSEQ_VSTEP(c, b, ld) do { \
            __m256d s_ = _mm256_add_pd(vp, ld); \
            __m256d m_ = _mm256_cmp_pd(s_, c, _CMP_GT_OQ); \
            c = _mm256_blendv_pd(c, s_, m_); \
            b = _mm256_blendv_pd(b, vf, m_); } while (0)
    #define CSEQ_K(v) _mm256_loadu_pd(tr + 4 * (v))
    #define CSEQ_KM(v) _mm256_maskload_pd(tr + 4 * (v), tail)
    __attribute__((target("avx2")))
    static void cseq_viterbi_max_avx2(const double* prev, const double* trans, int L,
                                      int nb, double* cur, double* bp) {
        /* Labels j in groups of up to 20 (5 vectors), whose best scores and
           back-pointers stay in registers over the whole loop on i; the
           group's last vector loads and stores with a mask, so no lane
           reads past a row.  At most 20 labels: one group; more: groups of
           16, then the rest (at most 20). */
        int k, i, j, w, nv, r;
        __m256d vp, vf, c0, c1, c2, c3, c4, b0, b1, b2, b3, b4, z = _mm256_setzero_pd();
        __m256i tail;
        const double* tr;
        for (k = 0; k < nb; k++) {
            double* crow = cur + (size_t) k * L;
            double* brow = bp + (size_t) k * L;
            for (j = 0; j < L; j += w) {
                w = L - j <= 20 ? L - j : 16;
                nv = (w + 3) / 4;
                r = w - 4 * (nv - 1);  /* lanes of the last vector, 1..4 */
                tail = _mm256_set_epi64x(r > 3 ? -1 : 0, r > 2 ? -1 : 0, r > 1 ? -1 : 0, -1);
                tr = trans + (size_t) k * L + j;
                vp = _mm256_set1_pd(prev[k]);
                c0 = c1 = c2 = c3 = c4 = z;
                b0 = b1 = b2 = b3 = b4 = z;
                switch (nv) {
                case 5: c4 = _mm256_add_pd(vp, CSEQ_KM(4)); c3 = _mm256_add_pd(vp, CSEQ_K(3));
                        c2 = _mm256_add_pd(vp, CSEQ_K(2)); c1 = _mm256_add_pd(vp, CSEQ_K(1));
                        c0 = _mm256_add_pd(vp, CSEQ_K(0)); break;
                case 4: c3 = _mm256_add_pd(vp, CSEQ_KM(3)); c2 = _mm256_add_pd(vp, CSEQ_K(2));
                        c1 = _mm256_add_pd(vp, CSEQ_K(1)); c0 = _mm256_add_pd(vp, CSEQ_K(0));
                        break;
                case 3: c2 = _mm256_add_pd(vp, CSEQ_KM(2)); c1 = _mm256_add_pd(vp, CSEQ_K(1));
                        c0 = _mm256_add_pd(vp, CSEQ_K(0)); break;
                case 2: c1 = _mm256_add_pd(vp, CSEQ_KM(1)); c0 = _mm256_add_pd(vp, CSEQ_K(0));
                        break;
                default: c0 = _mm256_add_pd(vp, CSEQ_KM(0));
                }
                for (i = 1; i < L; i++) {
                    vp = _mm256_set1_pd(prev[(size_t) i * nb + k]);
                    vf = _mm256_set1_pd((double) i);
                    tr = trans + ((size_t) i * nb + k) * L + j;
                    switch (nv) {
                    case 5: CSEQ_VSTEP(c4, b4, CSEQ_KM(4)); CSEQ_VSTEP(c3, b3, CSEQ_K(3));
                            CSEQ_VSTEP(c2, b2, CSEQ_K(2)); CSEQ_VSTEP(c1, b1, CSEQ_K(1));
                            CSEQ_VSTEP(c0, b0, CSEQ_K(0)); break;
                    case 4: CSEQ_VSTEP(c3, b3, CSEQ_KM(3)); CSEQ_VSTEP(c2, b2, CSEQ_K(2));
                            CSEQ_VSTEP(c1, b1, CSEQ_K(1)); CSEQ_VSTEP(c0, b0, CSEQ_K(0));
                            break;
                    case 3: CSEQ_VSTEP(c2, b2, CSEQ_KM(2)); CSEQ_VSTEP(c1, b1, CSEQ_K(1));
                            CSEQ_VSTEP(c0, b0, CSEQ_K(0)); break;
                    case 2: CSEQ_VSTEP(c1, b1, CSEQ_KM(1)); CSEQ_VSTEP(c0, b0, CSEQ_K(0));
                            break;
                    default: CSEQ_VSTEP(c0, b0, CSEQ_KM(0));
                    }
                }
                switch (nv) {
                case 5: _mm256_storeu_pd(crow + j + 12, c3); _mm256_storeu_pd(brow + j + 12, b3);
                        _mm256_maskstore_pd(crow + j + 16, tail, c4);
                        _mm256_maskstore_pd(brow + j + 16, tail, b4);
                        _mm256_storeu_pd(crow + j + 8, c2); _mm256_storeu_pd(brow + j + 8, b2);
                        _mm256_storeu_pd(crow + j + 4, c1); _mm256_storeu_pd(brow + j + 4, b1);
                        _mm256_storeu_pd(crow + j, c0); _mm256_storeu_pd(brow + j, b0); break;
                case 4: _mm256_maskstore_pd(crow + j + 12, tail, c3);
                        _mm256_maskstore_pd(brow + j + 12, tail, b3);
                        _mm256_storeu_pd(crow + j + 8, c2); _mm256_storeu_pd(brow + j + 8, b2);
                        _mm256_storeu_pd(crow + j + 4, c1); _mm256_storeu_pd(brow + j + 4, b1);
                        _mm256_storeu_pd(crow + j, c0); _mm256_storeu_pd(brow + j, b0); break;
                case 3: _mm256_maskstore_pd(crow + j + 8, tail, c2);
                        _mm256_maskstore_pd(brow + j + 8, tail, b2);
                        _mm256_storeu_pd(crow + j + 4, c1); _mm256_storeu_pd(brow + j + 4, b1);
                        _mm256_storeu_pd(crow + j, c0); _mm256_storeu_pd(brow + j, b0); break;
                case 2: _mm256_maskstore_pd(crow + j + 4, tail, c1);
                        _mm256_maskstore_pd(brow + j + 4, tail, b1);
                        _mm256_storeu_pd(crow + j, c0); _mm256_storeu_pd(brow + j, b0); break;
                default: _mm256_maskstore_pd(crow + j, tail, c0);
                         _mm256_maskstore_pd(brow + j, tail, b0);
                }
            }
        }
    }
    static int cseq_cpu_has_avx2(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2");
    }
    #else
    static void cseq_viterbi_max_avx2(const double* prev, const double* trans, int L,
                                      int nb, double* cur, double* bp) {
        (void) prev; (void) trans; (void) L; (void) nb; (void) cur; (void) bp;
    }
    static int cseq_cpu_has_avx2(void) { return 0; }
    #endif
    """
    void cseq_viterbi_max_avx2(const weight_t* prev, const weight_t* trans, int L,
                               int nb, weight_t* cur, weight_t* bp) noexcept nogil
    int cseq_cpu_has_avx2() noexcept nogil


# Set once at import (and by the test hook below); read by every decode.
cdef bint _use_avx2 = cseq_cpu_has_avx2()


def _set_avx2(bint enabled):
    """Test hook: use the AVX2 Viterbi step when ``enabled`` and the CPU has it.

    Returns whether it is now in use.  Not thread-safe; for tests comparing
    the two paths.
    """
    global _use_avx2
    _use_avx2 = enabled and cseq_cpu_has_avx2()
    return bool(_use_avx2)


cdef inline void _max_step(const weight_t* prev, const weight_t* trans, int L, int nb,
                           weight_t* cur, weight_t* bp, label_t* back) noexcept nogil:
    """The max-plus step every Viterbi position runs, over ``nb`` blocks of ``L`` states.

    ``cur[b * L + j] = max_i prev[i * nb + b] + trans[(i * nb + b) * L + j]``
    and ``back[b * L + j]`` the lowest such ``i`` (``bp``: scratch of
    ``nb * L``).  First order: ``nb = 1``, ``prev`` the scores of the previous
    label, ``trans`` the (L, L) transitions.  Second order: ``nb = L``,
    ``prev[a * L + b]`` the scores of the label pairs, ``trans`` the (L, L, L)
    trigrams; block ``b`` is the previous label.
    """
    cdef int i, j, k
    cdef bint better
    cdef weight_t s, p
    cdef const weight_t* trow
    cdef weight_t* crow
    cdef label_t* brow
    if _use_avx2:
        cseq_viterbi_max_avx2(prev, trans, L, nb, cur, bp)
        for j in range(nb * L):
            back[j] = <label_t> bp[j]
        return
    for k in range(nb):
        p = prev[k]
        trow = trans + <index_t> k * L
        crow = cur + <index_t> k * L
        brow = back + <index_t> k * L
        for j in range(L):
            crow[j] = p + trow[j]
            brow[j] = 0
    # The previous label outside, so the inner loop runs along a contiguous
    # row of the transitions; second order: the nb blocks in between.
    for i in range(1, L):
        for k in range(nb):
            p = prev[<index_t> i * nb + k]
            trow = trans + (<index_t> i * nb + k) * L
            crow = cur + <index_t> k * L
            brow = back + <index_t> k * L
            for j in range(L):
                # Branch-free selects: the comparison is data-dependent, and
                # a mispredicted branch per (i, j) cost 5x the arithmetic.
                s = p + trow[j]
                better = s > crow[j]
                crow[j] = s if better else crow[j]
                brow[j] = i if better else brow[j]


cdef weight_t viterbi_path(const weight_t* emissions, index_t n, const Transitions* tr,
                           weight_t* delta, label_t* back, label_t* path) noexcept nogil:
    """Best label path of one sequence of ``n >= 1`` positions; returns its score.

    Parameters
    ----------
    emissions : (n, L) row-major state scores.
    tr : transitions, start and end scores (and the trigram block for a
        second-order chain, which is then decoded over label pairs).
    delta : scratch of :c:func:`viterbi_delta_size` scores.
    back : scratch of :c:func:`viterbi_back_size` back-pointers.
    path : output, n labels.

    Ties go to the lowest label id, so the result is deterministic: among
    tied best paths, the one whose reversed label sequence is smallest.
    """
    cdef int L = tr.n_labels
    cdef weight_t* prev = delta
    cdef weight_t* cur = delta + L
    cdef weight_t* bp = delta + 2 * L
    cdef weight_t* swap
    cdef const weight_t* row
    cdef index_t t
    cdef int j, best_j
    cdef weight_t s, best
    if tr.trans2 != NULL:
        return _viterbi_path2(emissions, n, tr, delta, back, path)
    for j in range(L):
        prev[j] = tr.start[j] + emissions[j]
    for t in range(1, n):
        row = emissions + t * L
        _max_step(prev, tr.trans, L, 1, cur, bp, back + t * L)
        for j in range(L):
            cur[j] += row[j]
        swap = prev
        prev = cur
        cur = swap
    best_j = 0
    best = prev[0] + tr.end[0]
    for j in range(1, L):
        s = prev[j] + tr.end[j]
        if s > best:
            best = s
            best_j = j
    path[n - 1] = best_j
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t * L + path[t]]
    return best


cdef weight_t _viterbi_path2(const weight_t* emissions, index_t n, const Transitions* tr,
                             weight_t* delta, label_t* back, label_t* path) noexcept nogil:
    """Second-order Viterbi over label pairs: O(n L^3), the step of the first order per label.

    ``D_t[b, c]`` is the best score of a path whose labels at ``t - 1, t`` are
    ``b, c``:  ``D_1[b, c] = start[b] + E[0, b] + T[b, c] + E[1, c]`` and
    ``D_t[b, c] = max_a (D_{t-1}[a, b] + T2[a, b, c]) + T[b, c] + E[t, c]``.
    The max over ``a`` is the first order's max-plus step
    (:c:func:`_max_step`) with one block per ``b``.  The end takes the
    lowest ``c``, then the lowest ``b``; back-pointers the lowest ``a``: the
    same tie rule as the first order.
    """
    cdef int L = tr.n_labels
    cdef index_t LL = <index_t> L * L
    cdef weight_t* prev = delta
    cdef weight_t* cur = delta + LL
    cdef weight_t* bp = delta + 2 * LL
    cdef weight_t* swap
    cdef weight_t* crow
    cdef const weight_t* row
    cdef const weight_t* trow
    cdef index_t t
    cdef int b, c, best_b, best_c
    cdef weight_t s, best, p
    if n == 1:
        best_c = 0
        best = tr.start[0] + emissions[0] + tr.end[0]
        for c in range(1, L):
            s = tr.start[c] + emissions[c] + tr.end[c]
            if s > best:
                best = s
                best_c = c
        path[0] = best_c
        return best
    row = emissions + L
    for b in range(L):
        p = tr.start[b] + emissions[b]
        trow = tr.trans + <index_t> b * L
        for c in range(L):
            prev[<index_t> b * L + c] = p + trow[c] + row[c]
    for t in range(2, n):
        row = emissions + t * L
        _max_step(prev, tr.trans2, L, L, cur, bp, back + t * LL)
        for b in range(L):
            crow = cur + <index_t> b * L
            trow = tr.trans + <index_t> b * L
            for c in range(L):
                crow[c] += trow[c] + row[c]
        swap = prev
        prev = cur
        cur = swap
    best_b = 0
    best_c = 0
    best = prev[0] + tr.end[0]
    for c in range(L):
        for b in range(L):
            s = prev[<index_t> b * L + c] + tr.end[c]
            if s > best:
                best = s
                best_b = b
                best_c = c
    path[n - 1] = best_c
    path[n - 2] = best_b
    for t in range(n - 1, 1, -1):
        path[t - 2] = back[t * LL + <index_t> path[t - 1] * L + path[t]]
    return best


cdef void add_cost(weight_t* emissions, index_t n, int L, const label_t* gold,
                   const weight_t* cost, weight_t scale) noexcept nogil:
    """Add ``scale * cost[gold[t], y]`` to ``emissions[t, y]`` for the ``n`` positions.

    ``cost`` is an (L, L) row-major matrix (row: the gold label, column: the
    predicted one), or NULL for the Hamming cost ``1 - [y == gold[t]]``.
    """
    cdef index_t t
    cdef int j
    cdef weight_t* row
    cdef const weight_t* crow
    for t in range(n):
        row = emissions + t * L
        if cost == NULL:
            for j in range(L):
                row[j] += scale
            row[gold[t]] -= scale
        else:
            crow = cost + <index_t>gold[t] * L
            for j in range(L):
                row[j] += scale * crow[j]


cdef weight_t path_score(const weight_t* emissions, index_t n, const Transitions* tr,
                         const label_t* path) noexcept nogil:
    """Score of one label path of ``n >= 1`` positions, term by term (trigrams too if any)."""
    cdef int L = tr.n_labels
    cdef index_t t
    cdef weight_t s = tr.start[path[0]] + emissions[path[0]]
    for t in range(1, n):
        s += tr.trans[<index_t>path[t - 1] * L + path[t]] + emissions[t * L + path[t]]
    if tr.trans2 != NULL:
        for t in range(2, n):
            s += tr.trans2[(<index_t>path[t - 2] * L + path[t - 1]) * L + path[t]]
    return s + tr.end[path[n - 1]]


cdef weight_t loss_augmented_path(weight_t* emissions, index_t n, const Transitions* tr,
                                  const label_t* gold, const weight_t* cost, weight_t scale,
                                  weight_t* delta, label_t* back,
                                  label_t* path) noexcept nogil:
    """Best path under ``score + scale * cost(gold, .)``; returns that augmented score.

    Adds the cost to ``emissions`` in place (:c:func:`add_cost`), then runs
    :c:func:`viterbi_path` (same scratch, same tie-breaking: the lowest
    label ids; second order when ``tr`` has a trigram block).  With
    ``scale = 1 / s`` and emissions and transitions of ``w / s``, the path
    is the cost-augmented argmax under ``w`` (the SSVM keeps its weights as
    ``s * v``).
    """
    add_cost(emissions, n, tr.n_labels, gold, cost, scale)
    return viterbi_path(emissions, n, tr, delta, back, path)


cdef struct WordRows:
    # Emission rows precomputed per word, added to the scored emissions:
    # rows[(w * n_groups + g) * L + y] for word w and group g (a word's rows
    # side by side: the tokens around it read them one after the other).  Token t of a
    # sequence covering tokens t0 <= t < t1 adds, for each group g with
    # t0 <= t + offset[g] < t1, the row of word words[(t + offset[g]) *
    # n_cols + col[g]], where (col[g], offset[g]) = (groups[2 * g], groups[2 * g + 1]).
    const weight_t* rows
    const int* words
    index_t n_cols
    const int* groups
    int n_groups


cdef enum:
    # Tokens ahead whose word rows add_word_rows prefetches.
    WR_AHEAD = 2


cdef void add_word_rows(const WordRows* wr, index_t t0, index_t n, int L,
                        weight_t* em) noexcept nogil:
    """Add the word rows of tokens ``t0:t0 + n`` (one sequence) to ``em`` (n x L)."""
    cdef index_t t, r
    cdef int g, y
    cdef weight_t* row
    cdef const weight_t* src
    for t in range(n):
        row = em + t * L
        # The rows of the token WR_AHEAD on (each of another word, in a
        # table of megabytes) are loaded while this token's are added.
        if t + WR_AHEAD < n:
            for g in range(wr.n_groups):
                r = t + WR_AHEAD + wr.groups[2 * g + 1]
                if 0 <= r < n:
                    src = wr.rows + (wr.words[(t0 + r) * wr.n_cols + wr.groups[2 * g]]
                                     * wr.n_groups + g) * L
                    for y in range(0, L, 8):
                        cseq_prefetch(src + y)
                    cseq_prefetch(src + L - 1)
        for g in range(wr.n_groups):
            r = t + wr.groups[2 * g + 1]
            if 0 <= r < n:
                src = wr.rows + (wr.words[(t0 + r) * wr.n_cols + wr.groups[2 * g]]
                                 * wr.n_groups + g) * L
                for y in range(L):
                    row[y] += src[y]


cdef int decode_range(const Chain* ch, const weight_t* params, const Transitions* tr,
                      const Constraints* cons, const WordRows* wr, index_t s0, index_t s1,
                      label_t* out, index_t* bad_seq) noexcept nogil:
    """Viterbi-decode sequences ``s0:s1`` of ``ch``'s corpus into ``out`` (indexed by token).

    Emissions come from the state weights of ``params``, plus the rows of
    ``wr`` (or NULL, see :c:type:`WordRows`); transitions from
    ``tr`` (already masked by ``cons.trans_ok`` if any: -inf where
    disallowed).  ``cons`` (or NULL) masks the emissions of each sequence
    (:c:func:`constrain_rows`).  Allocates its scratch once for the whole
    range.  A sequence whose emission scores or best path score are not
    finite (feature values times weights overflow float64) is left undecoded,
    and the first one is written to ``bad_seq[0]`` (else -1); the first
    sequence the constraints leave without a path to ``bad_seq[1]`` and the
    position no allowed path reaches to ``bad_seq[2]`` (else -1, -1).
    Returns -1 when memory runs out, else 0.
    """
    cdef int L = tr.n_labels
    cdef int order = 2 if tr.trans2 != NULL else 1
    cdef index_t s, t0, n, dead
    cdef weight_t* em = <weight_t*>malloc(<size_t> ch.max_len * L * sizeof(weight_t) + 1)
    cdef weight_t* delta = <weight_t*>malloc(viterbi_delta_size(L, order) * sizeof(weight_t))
    cdef label_t* back = <label_t*>malloc(viterbi_back_size(ch.max_len, L, order)
                                          * sizeof(label_t) + 1)
    cdef unsigned char* reach = <unsigned char*>malloc(2 * L)
    bad_seq[0] = -1
    bad_seq[1] = -1
    bad_seq[2] = -1
    if em == NULL or delta == NULL or back == NULL or reach == NULL:
        free(em); free(delta); free(back); free(reach)
        return -1
    for s in range(s0, s1):
        n = sequence_emissions(ch, params, 1.0, s, em, &t0)
        if n == 0:
            continue
        if wr != NULL:
            add_word_rows(wr, t0, n, L, em)
        if not emissions_finite(em, n, L, s, bad_seq):
            continue
        if cons != NULL:
            constrain_rows(cons, t0, n, L, em)
            dead = dead_position(em, n, L, tr.trans, reach)
            if dead >= 0:
                if bad_seq[1] < 0:
                    bad_seq[1] = s
                    bad_seq[2] = dead
                continue
        if not isfinite(viterbi_path(em, n, tr, delta, back, out + t0)):
            if bad_seq[0] < 0:
                bad_seq[0] = s
    free(em); free(delta); free(back); free(reach)
    return 0


cdef int decode_all(const Chain* ch, const weight_t* params, label_t* out,
                    index_t* bad_seq) noexcept nogil:
    """Viterbi-decode every sequence of ``ch``'s corpus with the model's own transitions.

    :c:func:`decode_range` over the whole corpus, without constraints or
    word rows: the one-call path of prediction (``cseq/learners/_one_call.pyx``)
    decodes through it, as :func:`decode_corpus` does through
    :c:func:`decode_range`.
    """
    cdef Transitions tr
    transitions_of(ch.layout, params, &tr)
    return decode_range(ch, params, &tr, NULL, NULL, 0, ch.corpus.n_seqs, out, bad_seq)


cdef class _DenseChain:
    """Validated dense arrays (``transitions2`` (L, L, L) or None) as a Transitions, with scratch."""

    cdef Transitions tr
    cdef const weight_t[:, ::1] _trans
    cdef const weight_t[::1] _start
    cdef const weight_t[::1] _end
    cdef const weight_t[:, :, ::1] _trans2
    cdef weight_t* delta
    cdef label_t* back

    def __cinit__(self, index_t n, const weight_t[:, ::1] transitions, const weight_t[::1] start,
                  const weight_t[::1] end, transitions2):
        cdef int L = transitions.shape[0]
        cdef int order = 1 if transitions2 is None else 2
        self._trans = transitions
        self._start = start
        self._end = end
        self.tr.trans = &self._trans[0, 0]
        self.tr.start = &self._start[0]
        self.tr.end = &self._end[0]
        self.tr.trans2 = NULL
        self.tr.n_labels = L
        if transitions2 is not None:
            self._trans2 = transitions2
            self.tr.trans2 = &self._trans2[0, 0, 0]
        self.delta = <weight_t*>malloc(viterbi_delta_size(L, order) * sizeof(weight_t))
        self.back = <label_t*>malloc(viterbi_back_size(n, L, order) * sizeof(label_t) + 1)
        if self.delta == NULL or self.back == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.delta)
        free(self.back)


def viterbi_array(const weight_t[:, ::1] emissions, const weight_t[:, ::1] transitions,
                  const weight_t[::1] start, const weight_t[::1] end, transitions2=None):
    """Viterbi on validated dense arrays (n >= 1); see :func:`cseq.viterbi`."""
    cdef index_t n = emissions.shape[0]
    cdef _DenseChain dc = _DenseChain(n, transitions, start, end, transitions2)
    path_np = np.empty(n, dtype=np.int32)
    cdef label_t[::1] path = path_np
    cdef weight_t score
    with nogil:
        score = viterbi_path(&emissions[0, 0], n, &dc.tr, dc.delta, dc.back, &path[0])
    return path_np, float(score)


def loss_augmented_viterbi_array(const weight_t[:, ::1] emissions,
                                 const weight_t[:, ::1] transitions, const weight_t[::1] start,
                                 const weight_t[::1] end, const label_t[::1] gold, cost,
                                 transitions2=None):
    """Cost-augmented Viterbi on validated arrays (n >= 1, ``cost`` (L, L) or None).

    See :func:`cseq.loss_augmented_viterbi`.  Returns the path and its
    augmented score.
    """
    cdef index_t n = emissions.shape[0]
    cdef const weight_t[:, ::1] cost_view
    cdef const weight_t* cost_ptr = NULL
    if cost is not None:
        cost_view = cost
        cost_ptr = &cost_view[0, 0]
    cdef _DenseChain dc = _DenseChain(n, transitions, start, end, transitions2)
    em_np = np.array(emissions, dtype=np.float64)   # a copy: the cost is added in place
    cdef weight_t[:, ::1] em = em_np
    path_np = np.empty(n, dtype=np.int32)
    cdef label_t[::1] path = path_np
    cdef weight_t score
    with nogil:
        score = loss_augmented_path(&em[0, 0], n, &dc.tr, &gold[0], cost_ptr, 1.0, dc.delta,
                                    dc.back, &path[0])
    return path_np, float(score)


def path_score_array(const weight_t[:, ::1] emissions, const weight_t[:, ::1] transitions,
                     const weight_t[::1] start, const weight_t[::1] end,
                     const label_t[::1] path, transitions2=None):
    """The kernels' score of one label path on validated arrays (n >= 1); for tests."""
    cdef _DenseChain dc = _DenseChain(1, transitions, start, end, transitions2)
    return float(path_score(&emissions[0, 0], emissions.shape[0], &dc.tr, &path[0]))


def decode_corpus(ChainIndex ix, const weight_t[::1] params, CorpusView cv,
                  const index_t[::1] chunks, int n_jobs, MaskSet masks=None, word_rows=None):
    """Viterbi labels for every token of a validated corpus, without the GIL.

    Parameters
    ----------
    ix : the model's structure (state index and parameter layout).
    params : the flat parameter vector (``ix.layout``).
    cv : the packed corpus.
    chunks : sequence boundaries of the work chunks (``chunks[0] == 0``,
        ``chunks[-1] == n_sequences``); chunk c covers sequences
        ``chunks[c]:chunks[c + 1]`` and runs on one thread.  None: one chunk.
    n_jobs : number of threads.
    masks : constraints (``masks.allowed`` indexed by token), or None.
    word_rows : ``(rows, words, groups)`` or None: emission rows added to
        the corpus's (see :c:type:`WordRows`): ``rows`` float64 (n_words,
        n_groups, L), ``words`` int32 (n_tokens, n_cols) word ids,
        ``groups`` int32 (n_groups, 2), the column and the offset of each
        group.  Checked here.

    Returns
    -------
    ndarray of int32, one label id per token.

    Raises
    ------
    FloatingPointError
        With the index of the first sequence whose emission or path scores
        are not finite.
    NoAllowedPath
        For the first sequence the constraints leave without a label path.
    """
    cdef index_t n_tok = cv.corpus.seq_ptr[cv.corpus.n_seqs]
    out_np = np.zeros(n_tok, dtype=np.int32)
    if n_tok == 0:
        return out_np
    cdef label_t[::1] out = out_np
    cdef Transitions tr
    transitions_of(&ix.layout, &params[0], &tr)
    cdef const Constraints* cons = NULL
    cdef weight_t[::1] masked
    check_masks(masks, ix.layout.n_labels, n_tok)
    if masks is not None:
        cons = &masks.c
        masked = np.empty(tr.n_labels * tr.n_labels, dtype=np.float64)
        mask_transitions(tr.trans, tr.n_labels, cons.trans_ok, &masked[0])
        tr.trans = &masked[0]
    cdef WordRows wr
    cdef const WordRows* wrp = NULL
    cdef const weight_t[:, :, ::1] rows
    cdef const int[:, ::1] words
    cdef const int[:, ::1] groups
    if word_rows is not None:
        rows, words, groups = word_rows
        _check_word_rows(rows, words, groups, ix.layout.n_labels, n_tok)
        wr.rows = &rows[0, 0, 0] if rows.shape[0] and rows.shape[1] else NULL
        wr.words = &words[0, 0] if words.shape[1] else NULL
        wr.n_cols = words.shape[1]
        wr.groups = &groups[0, 0] if groups.shape[0] else NULL
        wr.n_groups = rows.shape[1]
        wrp = &wr
    cdef Chain ch = chain_of(ix, cv)
    cdef index_t c, n_chunks = 1 if chunks is None else chunks.shape[0] - 1
    cdef index_t whole[2]
    whole[0] = 0
    whole[1] = cv.corpus.n_seqs
    cdef const index_t* bounds = &whole[0]
    if chunks is not None:
        bounds = &chunks[0]
    cdef int failed = 0
    # Per chunk: the first overflowing sequence, the first without an allowed
    # path and its dead position (raise_bad_sequence).
    cdef index_t* bad = <index_t*>malloc(<size_t> n_chunks * 3 * sizeof(index_t))
    if bad == NULL:
        raise MemoryError("cseq: out of memory while decoding")
    try:
        if n_jobs == 1 and n_chunks == 1 and <index_t> n_tok * tr.n_labels < GIL_MIN_WORK:
            # A few microseconds of work (one short sentence): done holding the GIL.
            # Releasing it would let another Python thread take it for up to the
            # switch interval (5 ms) before this one gets it back (the convoy
            # effect), for no overlap worth having.
            failed = -decode_range(&ch, &params[0], &tr, cons, wrp, bounds[0], bounds[1],
                                   &out[0], bad)
        else:
            for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1,
                            num_threads=n_jobs):
                # An in-place sum makes `failed` an OpenMP reduction, not lastprivate.
                failed += -decode_range(&ch, &params[0], &tr, cons, wrp, bounds[c],
                                        bounds[c + 1], &out[0], bad + 3 * c)
        if failed:
            raise MemoryError("cseq: out of memory while decoding")
        _raise_bad(bad, n_chunks)
    finally:
        free(bad)
    return out_np


cdef int _check_word_rows(const weight_t[:, :, ::1] rows, const int[:, ::1] words,
                          const int[:, ::1] groups, int n_labels, index_t n_tokens) except -1:
    """ValueError unless the word rows of :func:`decode_corpus` fit the corpus and the model."""
    cdef index_t n_words = rows.shape[0], i, j
    cdef int g
    if rows.shape[2] != n_labels or groups.shape[0] != rows.shape[1] \
            or groups.shape[1] != 2 or words.shape[0] != n_tokens:
        raise ValueError("decode_corpus: the word rows do not fit the model and the corpus")
    for g in range(groups.shape[0]):
        if not 0 <= groups[g, 0] < words.shape[1]:
            raise ValueError("decode_corpus: a word-row group reads a column out of range")
    for i in range(words.shape[0]):
        for j in range(words.shape[1]):
            if not 0 <= words[i, j] < n_words:
                raise ValueError("decode_corpus: word ids out of range of the word rows")
    return 0


def check_masks(MaskSet masks, int n_labels, index_t n_tokens):
    """ValueError unless ``masks`` (or None) fits a corpus of ``n_tokens`` tokens and ``n_labels``."""
    if masks is not None and (masks.n_labels != n_labels
                              or masks.n_rows not in (-1, n_tokens)):
        raise ValueError("the constraint masks do not fit the model and the corpus")


cdef int _raise_bad(const index_t* bad, index_t n_chunks) except -1:
    """:func:`raise_bad_sequence` over ``n_chunks`` records of three at ``bad``."""
    cdef index_t c
    cdef const index_t* row
    for c in range(n_chunks):
        row = bad + 3 * c
        if row[0] >= 0 and (row[1] < 0 or row[0] < row[1]):
            raise FloatingPointError(int(row[0]))
        if row[1] >= 0:
            raise NoAllowedPath(int(row[2]), int(row[1]))
    return 0


def raise_bad_sequence(const index_t[:, ::1] bad):
    """Raise for the first bad sequence of per-chunk records ``(overflow, dead, position)``.

    FloatingPointError(sequence) for an overflow, NoAllowedPath for a
    sequence without an allowed path, whichever comes first in the corpus.
    ``bad`` is int64 (n_chunks, 3).
    """
    if bad.shape[0] and bad.shape[1] != 3:
        raise ValueError("raise_bad_sequence: bad must have 3 columns")
    if bad.shape[0]:
        _raise_bad(&bad[0, 0], bad.shape[0])
