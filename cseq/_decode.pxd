from cseq._types cimport weight_t, label_t, index_t
from cseq._weights cimport StateIndex, Corpus


cdef struct Transitions:
    # Dense label transitions: trans[i * n_labels + j] scores label i followed
    # by label j; start[j] and end[j] score the first and the last label.
    const weight_t* trans
    const weight_t* start
    const weight_t* end
    int n_labels


cdef weight_t viterbi_path(const weight_t* emissions, index_t n, const Transitions* tr,
                           weight_t* delta, label_t* back, label_t* path) noexcept nogil

cdef int decode_range(const StateIndex* index, const weight_t* state_w, const Transitions* tr,
                      const Corpus* corpus, index_t s0, index_t s1, index_t max_len,
                      label_t* out) noexcept nogil
