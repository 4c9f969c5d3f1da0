from cseq._core._types cimport weight_t, label_t, index_t
from cseq.chain._chain cimport Chain, Transitions


cdef inline size_t viterbi_delta_size(int n_labels, int order) noexcept nogil:
    # Scores viterbi_path needs as scratch (``delta``) for a chain of this order.
    if order == 2:
        return <size_t> 3 * n_labels * n_labels
    return <size_t> 3 * n_labels

cdef inline size_t viterbi_back_size(index_t n, int n_labels, int order) noexcept nogil:
    # Back-pointers viterbi_path needs (``back``) for up to n positions.
    if order == 2:
        return <size_t> n * n_labels * n_labels
    return <size_t> n * n_labels

cdef weight_t viterbi_path(const weight_t* emissions, index_t n, const Transitions* tr,
                           weight_t* delta, label_t* back, label_t* path) noexcept nogil

cdef void add_cost(weight_t* emissions, index_t n, int L, const label_t* gold,
                   const weight_t* cost, weight_t scale) noexcept nogil

cdef weight_t path_score(const weight_t* emissions, index_t n, const Transitions* tr,
                         const label_t* path) noexcept nogil

cdef weight_t loss_augmented_path(weight_t* emissions, index_t n, const Transitions* tr,
                                  const label_t* gold, const weight_t* cost, weight_t scale,
                                  weight_t* delta, label_t* back,
                                  label_t* path) noexcept nogil

cdef int decode_all(const Chain* ch, const weight_t* params, label_t* out,
                    index_t* bad_seq) noexcept nogil
