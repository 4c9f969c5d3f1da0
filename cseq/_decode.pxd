from cseq._types cimport weight_t, label_t, index_t
from cseq._weights cimport Chain, Transitions


cdef weight_t viterbi_path(const weight_t* emissions, index_t n, const Transitions* tr,
                           weight_t* delta, label_t* back, label_t* path) noexcept nogil

cdef int decode_range(const Chain* ch, const weight_t* params, const Transitions* tr,
                      index_t s0, index_t s1, label_t* out, index_t* bad_seq) noexcept nogil

cdef void add_cost(weight_t* emissions, index_t n, int L, const label_t* gold,
                   const weight_t* cost, weight_t scale) noexcept nogil

cdef weight_t path_score(const weight_t* emissions, index_t n, const Transitions* tr,
                         const label_t* path) noexcept nogil

cdef weight_t loss_augmented_path(weight_t* emissions, index_t n, const Transitions* tr,
                                  const label_t* gold, const weight_t* cost, weight_t scale,
                                  weight_t* delta, label_t* back,
                                  label_t* path) noexcept nogil
