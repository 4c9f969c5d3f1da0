# The key of a template at a token, shared by the key extraction (_templates.pyx)
# and the key table's lookups (_keytable.pyx): inline here, so that both compile it
# into their own innermost loops.
from libc.stdint cimport int32_t, int64_t, uint64_t

from cseq.features._hash cimport combine


cdef struct Spec:
    # Everything a token's keys are read from (see extract_keys); validated
    # by _spec before any kernel reads through it.
    const int32_t* cells
    Py_ssize_t n_slots
    const uint64_t* hashes
    Py_ssize_t hashes_len
    const int64_t* seq_ptr
    Py_ssize_t n_seq
    const int32_t* tmpl_ptr
    const int32_t* cell_row
    const int32_t* cell_slot
    const uint64_t* seeds
    Py_ssize_t n_tmpl
    const int32_t* pad_before
    const int32_t* pad_after


cdef inline uint64_t _key(const Spec* sp, int64_t p, int64_t start, int64_t end,
                          Py_ssize_t t) noexcept nogil:
    """Key of template ``t`` at token ``p`` of the sequence ``start:end``."""
    cdef uint64_t h = sp.seeds[t], v
    cdef Py_ssize_t c
    cdef int64_t q
    for c in range(sp.tmpl_ptr[t], sp.tmpl_ptr[t + 1]):
        q = p + sp.cell_row[c]
        if q < start:
            v = sp.hashes[sp.pad_before[start - q - 1]]
        elif q >= end:
            v = sp.hashes[sp.pad_after[q - end]]
        else:
            v = sp.hashes[sp.cells[q * sp.n_slots + sp.cell_slot[c]]]
        h = combine(h, v)
    return h


cdef Spec _spec(const int32_t[:, ::1] cells, const uint64_t[::1] hashes,
                const int64_t[::1] seq_ptr, const int32_t[::1] tmpl_ptr,
                const int32_t[::1] cell_row, const int32_t[::1] cell_slot,
                const uint64_t[::1] tmpl_seed, const int32_t[::1] pad_before,
                const int32_t[::1] pad_after, str name) except *

cdef Spec _corpus_spec(const int32_t[:, ::1] cells, const uint64_t[::1] hashes,
                       const int64_t[::1] seq_ptr, const int32_t[::1] pad_before,
                       const int32_t[::1] pad_after, str name, const int32_t* tmpl_ptr,
                       const int32_t* cell_row, const int32_t* cell_slot, const uint64_t* seeds,
                       Py_ssize_t n_tmpl, Py_ssize_t n_cells, Py_ssize_t max_slot,
                       Py_ssize_t min_row, Py_ssize_t max_row) except *

cdef bint _ids_in_range(const int32_t[:, ::1] ids, Py_ssize_t n) noexcept nogil
