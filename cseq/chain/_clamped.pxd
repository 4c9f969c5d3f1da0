from cseq.chain._forward_backward cimport FBTables, FBWork
from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._chain cimport Chain


cdef weight_t fb_expectations(const Chain* ch, const FBTables* tb, FBWork* wk,
                              const weight_t* w, weight_t w_scale, index_t s, bint clamp,
                              weight_t* marg, weight_t* pairs) noexcept nogil

cdef void add_expectations(const Chain* ch, index_t s, weight_t coef, const weight_t* marg,
                           const weight_t* pairs, weight_t* out) noexcept nogil

cdef weight_t fb_partial_update(const Chain* ch, const FBTables* tb, FBWork* wk,
                                const weight_t* w, weight_t w_scale, index_t s, weight_t gain,
                                weight_t* marg, weight_t* pairs, weight_t* marg2,
                                weight_t* pairs2, weight_t* out) noexcept nogil
