from libc.math cimport INFINITY, exp

from cseq._core._types cimport weight_t, label_t, index_t
from cseq.chain._chain cimport Chain, Layout, Transitions


cdef struct FBTables:
    # Transitions prepared once per parameter vector. In scaled mode the
    # exponentiated, max-shifted tables are used; in log mode the raw ones.
    # Second order (tr.trans2 != NULL): k2[(a * L + b) * L + c] is the step
    # weight trans2[a, b, c] + trans[b, c] from pair (a, b) to pair (b, c),
    # exponentiated and shifted by k2_max in scaled mode.
    Transitions tr
    weight_t* exp_trans
    weight_t* exp_start
    weight_t* exp_end
    weight_t* k2
    weight_t trans_max
    weight_t start_max
    weight_t end_max
    weight_t k2_max
    int order
    bint scaled


cdef struct FBWork:
    # Per-thread scratch for sequences of up to `capacity` positions; alpha
    # and beta hold one row of n_path_states(L, order) per position.
    weight_t* em
    weight_t* alpha
    weight_t* beta
    weight_t* scale
    weight_t* tmp
    weight_t zp
    weight_t log_z
    index_t capacity


cdef int fb_tables_init(FBTables* tb, const weight_t* trans, const weight_t* start,
                        const weight_t* end, const weight_t* trans2, int n_labels) noexcept nogil
cdef void fb_tables_free(FBTables* tb) noexcept nogil
cdef int fb_work_init(FBWork* wk, index_t capacity, int n_labels, int order) noexcept nogil
cdef void fb_work_free(FBWork* wk) noexcept nogil
cdef weight_t fb_run(const FBTables* tb, FBWork* wk, index_t n) noexcept nogil
cdef void fb_marginals(const FBTables* tb, FBWork* wk, index_t n, weight_t* out) noexcept nogil
cdef void fb_add_pairs2(const FBTables* tb, FBWork* wk, index_t t, weight_t* out) noexcept nogil
cdef void fb_add_triples(const FBTables* tb, FBWork* wk, index_t t, weight_t* out) noexcept nogil
cdef int fb_tables_for(FBTables* tb, const Layout* lay, const weight_t* params,
                       const weight_t* trans) except -1
cdef int marginals_all(const Chain* ch, const weight_t* params, weight_t* out,
                       index_t* bad_seq) except -1


cdef inline void fb_add_pairs(const FBTables* tb, FBWork* wk, index_t t, weight_t* out) noexcept nogil:
    """Add the (L, L) pair marginals P(y_t = i, y_{t+1} = j) of the last run to ``out``.

    Inline, so that the kernels that call it once per position (the CRF
    objective in ``_crf``, partial labels in ``_clamped``) compile their own
    copy: called through the module's function-pointer table it was not
    inlined, and the CRF objective ran about 5% slower per L-BFGS iteration.
    """
    cdef int L = tb.tr.n_labels
    cdef int i, j
    cdef weight_t a, c
    cdef const weight_t* al = wk.alpha + t * L
    cdef const weight_t* be = wk.beta + (t + 1) * L
    cdef const weight_t* em = wk.em + (t + 1) * L
    cdef const weight_t* trow
    cdef weight_t* orow
    cdef weight_t* tmp = wk.tmp
    if tb.order == 2:
        fb_add_pairs2(tb, wk, t, out)
        return
    if tb.scaled:
        c = 1.0 / (wk.scale[t + 1] * wk.zp)
        for j in range(L):
            tmp[j] = em[j] * be[j] * c
        for i in range(L):
            a = al[i]
            trow = tb.exp_trans + <index_t> i * L
            orow = out + <index_t> i * L
            for j in range(L):
                orow[j] += a * trow[j] * tmp[j]
    else:
        # Shifted logs: normalise the L x L block by its own log-sum-exp.
        for j in range(L):
            tmp[j] = em[j] + be[j]
        c = -INFINITY
        for i in range(L):
            trow = tb.tr.trans + <index_t> i * L
            for j in range(L):
                if al[i] + trow[j] + tmp[j] > c:
                    c = al[i] + trow[j] + tmp[j]
        a = 0.0
        for i in range(L):
            trow = tb.tr.trans + <index_t> i * L
            for j in range(L):
                a += exp(al[i] + trow[j] + tmp[j] - c)
        a = 1.0 / a
        for i in range(L):
            trow = tb.tr.trans + <index_t> i * L
            orow = out + <index_t> i * L
            for j in range(L):
                orow[j] += exp(al[i] + trow[j] + tmp[j] - c) * a
