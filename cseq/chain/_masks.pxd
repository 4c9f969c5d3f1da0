# Constraints as masks over score arrays, for constrained decoding and
# forward-backward (header-only: every helper is inline, nothing to import at
# run time; cimport from cseq.chain._masks).
#
# A constraint never changes a kernel: a disallowed label at a position gets
# the emission score -inf, a disallowed label pair the transition score -inf,
# after the scores are computed and before Viterbi or forward-backward runs.
# Viterbi's max-plus step and the log-space forward-backward never produce
# NaN from -inf (no +inf is ever added to it; the log-space recursions treat
# an all -inf term as -inf), so a disallowed path never wins Viterbi and has
# probability exactly 0.  Masked emissions alone keep forward-backward's
# scaled mode (its underflow bound holds: every allowed label is reachable
# from any previous one); masked transitions (-inf in the table) make
# fb_tables_init choose the log-space mode (infinite spread).
#
# Before a kernel runs on masked scores, dead_position() must say -1 (some
# label path has only finite terms); otherwise there is no allowed path and
# the caller reports an error instead of running the kernel.
#
# Start and end constraints are masks of the first and the last row.

from libc.math cimport INFINITY

from cseq._core._types cimport index_t, label_t, weight_t


cdef struct Constraints:
    # Per-token constraints of a packed corpus (any pointer may be NULL: no
    # constraint of that kind).
    # allowed: (n_tokens, n_labels) row-major, indexed by corpus token; 0 = the
    #     label is not allowed at that token.
    # start_ok, end_ok: (n_labels,), labels allowed first / last in a sequence.
    # trans_ok: (n_labels, n_labels), trans_ok[i * L + j] = 0 forbids i -> j;
    #     the kernels apply it once per call to the transition table
    #     (mask_transitions), not per sequence.
    const unsigned char* allowed
    const unsigned char* start_ok
    const unsigned char* end_ok
    const unsigned char* trans_ok


cdef inline void mask_rows(weight_t* em, index_t n, int L,
                           const unsigned char* allowed) noexcept nogil:
    # em[t, j] = -inf where allowed[t * L + j] == 0, for t < n (allowed NULL: nothing).
    cdef index_t k
    if allowed == NULL:
        return
    for k in range(n * L):
        if not allowed[k]:
            em[k] = -INFINITY


cdef inline void clamp_rows(weight_t* em, index_t n, int L, const label_t* labels) noexcept nogil:
    # Where labels[t] >= 0, only that label stays allowed at t (the others
    # get -inf); labels[t] < 0 leaves position t free (a partial labelling).
    cdef index_t t
    cdef int j
    cdef label_t y
    cdef weight_t keep
    if labels == NULL:
        return
    for t in range(n):
        y = labels[t]
        if y < 0:
            continue
        keep = em[t * L + y]
        for j in range(L):
            em[t * L + j] = -INFINITY
        em[t * L + y] = keep


cdef inline void mask_ends(weight_t* em, index_t n, int L, const unsigned char* start_ok,
                           const unsigned char* end_ok) noexcept nogil:
    # The first row masked by start_ok, the last by end_ok (either may be NULL).
    if n < 1:
        return
    mask_rows(em, 1, L, start_ok)
    mask_rows(em + (n - 1) * L, 1, L, end_ok)


cdef inline void constrain_rows(const Constraints* c, index_t t0, index_t n, int L,
                                weight_t* em) noexcept nogil:
    # Apply c's per-token and start/end masks to the emissions (n x L) of
    # the sequence at corpus tokens t0 .. t0 + n - 1 (c NULL: nothing).
    if c == NULL:
        return
    if c.allowed != NULL:
        mask_rows(em, n, L, c.allowed + t0 * L)
    mask_ends(em, n, L, c.start_ok, c.end_ok)


cdef inline void mask_transitions(const weight_t* trans, int L, const unsigned char* trans_ok,
                                  weight_t* out) noexcept nogil:
    # out (L x L) = trans with -inf where trans_ok is 0 (trans_ok NULL: a copy).
    cdef index_t k
    for k in range(<index_t> L * L):
        out[k] = trans[k] if trans_ok == NULL or trans_ok[k] else -INFINITY


cdef inline index_t dead_position(const weight_t* em, index_t n, int L, const weight_t* trans,
                                  unsigned char* scratch) noexcept nogil:
    # -1 when some label path through the n x L scores em has only entries
    # > -inf (emissions and transitions trans, L x L; a second order adds
    # finite trigram scores, so the same test holds); else the first position
    # that no such path reaches.  scratch: 2 * L bytes.
    cdef unsigned char* reach = scratch
    cdef unsigned char* nxt = scratch + L
    cdef unsigned char* swap
    cdef index_t t
    cdef int i, j
    cdef bint any_reached
    any_reached = False
    for j in range(L):
        reach[j] = em[j] > -INFINITY
        any_reached = any_reached or reach[j]
    if not any_reached:
        return 0
    for t in range(1, n):
        any_reached = False
        for j in range(L):
            nxt[j] = 0
            if em[t * L + j] > -INFINITY:
                for i in range(L):
                    if reach[i] and trans[<index_t> i * L + j] > -INFINITY:
                        nxt[j] = 1
                        break
            any_reached = any_reached or nxt[j]
        if not any_reached:
            return t
        swap = reach
        reach = nxt
        nxt = swap
    return -1


cdef class MaskSet:
    # Validated constraint arrays (uint8, any may be absent) and their
    # Constraints struct; built in Python by cseq.chain._masks.MaskSet(...).
    cdef Constraints c
    cdef object _keep
    cdef readonly int n_labels
    cdef readonly long long n_rows
    cdef readonly bint masks_transitions
