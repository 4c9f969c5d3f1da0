# 64-bit hashing shared by the template extractor and the string table.
# Inline, so each module gets its own copy of these few instructions.

from libc.stdint cimport uint64_t, uint8_t


cdef inline uint64_t fmix64(uint64_t k) noexcept nogil:
    """MurmurHash3's 64-bit finalizer: a bijection with full avalanche."""
    k ^= k >> 33
    k *= 0xFF51AFD7ED558CCDULL
    k ^= k >> 33
    k *= 0xC4CEB9FE1A85EC53ULL
    k ^= k >> 33
    return k


cdef inline uint64_t combine(uint64_t h, uint64_t v) noexcept nogil:
    """Fold one 64-bit word into a running hash (order matters).

    ``v`` is multiplied by an odd constant (2**64 / golden ratio) and added to
    a rotation of ``h`` and the odd xxHash prime 2 before the finalizer, so
    for a fixed prefix ``h`` distinct words ``v`` always give distinct results.
    """
    return fmix64(((h << 23) | (h >> 41)) + v * 0x9E3779B97F4A7C15ULL + 0xC2B2AE3D27D4EB4FULL)


cdef inline uint64_t hash_bytes(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """64-bit hash of a byte string, independent of the machine's endianness.

    Seeded with the digits of pi (so "" does not hash to 0) and the length.
    """
    cdef uint64_t h = 0x243F6A8885A308D3ULL ^ (<uint64_t> n * 0xC2B2AE3D27D4EB4FULL)
    cdef uint64_t w
    cdef Py_ssize_t i = 0, j
    while i + 8 <= n:
        w = 0
        for j in range(8):
            w |= (<uint64_t> p[i + j]) << (8 * j)
        h = combine(h, w)
        i += 8
    if i < n:
        w = 0
        j = 0
        while i < n:
            w |= (<uint64_t> p[i]) << (8 * j)
            i += 1
            j += 1
        h = combine(h, w)
    return fmix64(h)


# Open-addressing tables (templates' KeyTable, packing's StringTable): slot
# counts are powers of two, at most 2**32, filled to at most 70% so that
# linear probing stays short with well-mixed hashes.  Ids are int32, so a
# table holds at most MAX_IDS entries (ids 0 .. MAX_IDS - 1); each table
# checks that bound itself, since 70% of 2**32 slots is more than 2**31.
cdef enum:
    MIN_SLOTS = 16
    MAX_IDS = 2147483647

cdef inline Py_ssize_t max_slots() noexcept nogil:
    return (<Py_ssize_t> 1) << 32


cdef inline Py_ssize_t slot_limit(Py_ssize_t slots) noexcept nogil:
    """Most entries a table of ``slots`` slots holds before it must grow."""
    return slots * 7 // 10


cdef inline Py_ssize_t slots_for(Py_ssize_t n) noexcept nogil:
    """Fewest slots (a power of two, at least MIN_SLOTS) that hold ``n`` entries."""
    cdef Py_ssize_t slots = MIN_SLOTS
    while slot_limit(slots) < n:
        slots *= 2
    return slots
