# What other compiled modules take from the packer: a few sequences packed
# into C memory, for the one-call path of prediction (cseq/learners/_one_call.pyx).
from libc.stdint cimport int32_t, int64_t


cdef struct Packed:
    # seq_ptr (n_seqs + 1), tok_ptr (n_tok + 1), attr and values (n_feat
    # kept), malloc'd by pack_small and freed by packed_free.
    int64_t* seq_ptr
    int64_t* tok_ptr
    int32_t* attr
    float* values
    Py_ssize_t n_seqs, n_tok, n_feat


cdef int pack_small(object X, object vocab, bint crfsuite, Py_ssize_t max_features,
                    Packed* out) except -2

cdef void packed_free(Packed* p) noexcept
