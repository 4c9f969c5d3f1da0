from cseq.chain._forward_backward cimport FBTables, FBWork
from cseq._core._types cimport index_t, weight_t
from cseq.chain._chain cimport Chain


cdef weight_t crf_sequence_update(const Chain* ch, const FBTables* tb, FBWork* wk,
                                  const weight_t* w, weight_t w_scale, index_t s, weight_t gain,
                                  weight_t* marg, weight_t* pairs, weight_t* out) noexcept nogil
