from cseq._types cimport weight_t, value_t, attr_t, label_t, index_t


cdef struct StateIndex:
    # For attribute a, its weights are w[attr_ptr[a]:attr_ptr[a + 1]], one per
    # label in attr_labels[attr_ptr[a]:attr_ptr[a + 1]] (sorted ascending).
    const index_t* attr_ptr
    const label_t* attr_labels
    index_t n_attrs


cdef struct Corpus:
    # A packed corpus (see cseq.sequences.Sequences); labels may be NULL.
    const index_t* seq_ptr
    const index_t* tok_ptr
    const attr_t* attr_ids
    const value_t* values
    const label_t* labels
    index_t n_seqs


cdef void score_emissions(const StateIndex* index, const weight_t* w, const Corpus* corpus,
                          index_t t0, index_t t1, int n_labels, weight_t* out) noexcept nogil

cdef index_t find_weight(const StateIndex* index, attr_t a, label_t y) noexcept nogil

cdef void add_state_features(const StateIndex* index, const Corpus* corpus, index_t t,
                             const weight_t* scores, int n_labels, weight_t scale,
                             weight_t* grad) noexcept nogil

cdef int init_index(StateIndex* index, const index_t[::1] attr_ptr,
                    const label_t[::1] attr_labels) except -1

cdef index_t init_corpus(Corpus* corpus, const index_t[::1] seq_ptr, const index_t[::1] tok_ptr,
                         const attr_t[::1] attr_ids, const value_t[::1] values,
                         const label_t* labels) except -1
