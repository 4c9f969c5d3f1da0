from cseq._core._types cimport weight_t, label_t, index_t
from cseq.chain._weights cimport Layout, Transitions


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
cdef void fb_add_pairs(const FBTables* tb, FBWork* wk, index_t t, weight_t* out) noexcept nogil
cdef void fb_add_triples(const FBTables* tb, FBWork* wk, index_t t, weight_t* out) noexcept nogil
cdef int fb_tables_for(FBTables* tb, const Layout* lay, const weight_t* params,
                       const weight_t* trans) except -1
