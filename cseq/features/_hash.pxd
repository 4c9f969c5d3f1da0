# 64-bit hashing, and the one open-addressing table, shared by the three
# interners: the template keys (_templates.KeyTable), the feature strings
# (_pack.StringTable) and the cell strings (_tokens.Values).  Inline, so each
# module gets its own copy of these few instructions (the probe sits in their
# hottest loops).

from libc.stdint cimport int64_t, uint64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy


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


# The open-addressing table behind the three interners (as preshed's one map
# serves spaCy): slot counts are powers of two, at most 2**32, filled to at
# most 70% so that linear probing stays short with well-mixed hashes.  A slot
# keeps the entry's 64-bit hash and the interner's payload (an id, or an arena
# offset) plus one, so 0 marks an empty slot and calloc'd memory is an empty
# table whose pages no entry lands on are never touched.  Ids are int32, so an
# interner holds at most MAX_IDS entries (ids 0 .. MAX_IDS - 1); each checks
# that bound itself, since 70% of 2**32 slots is more than 2**31.
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


# Large slot arrays ask for transparent huge pages, as numpy does for its own
# arrays of 4 MB and more: a probe lands on a random slot, so with 4 kB pages
# nearly every probe of a large table also misses the TLB.  Measured on EWT
# (1.5M template attributes, 64 MB of slots): lookups 27% and copies 2x
# slower without.  A hint only: nothing changes where the kernel ignores it.
cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    static void cseq_huge_pages(void* p, size_t n) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        size_t off = (4096u - (size_t) p % 4096u) % 4096u;
        if (n >= ((size_t) 1 << 22) && n > off)
            madvise((char*) p + off, n - off, MADV_HUGEPAGE);
    #else
        (void) p; (void) n;
    #endif
    }
    """
    void cseq_huge_pages(void* p, size_t n) noexcept nogil


cdef struct Slot:
    uint64_t hash   # the entry's hash (KeyTable: the key itself, already an fmix64 output)
    int64_t value   # the interner's payload + 1; 0: an empty slot


cdef struct Table:
    Slot* slots     # calloc'd, owned by the interner holding the Table
    uint64_t mask   # slots - 1
    int64_t limit   # entries it holds before it must grow (slot_limit)


# Whether the entry whose payload + 1 is ``value`` is the one ``ctx`` looks
# for (its hash already matched): string interners compare the bytes.
ctypedef bint (*same_entry)(const void* ctx, int64_t value) noexcept nogil


cdef inline int table_init(Table* t, Py_ssize_t slots) except -1 nogil:
    """Make ``t`` an empty table of ``slots`` slots (a power of two); ``t`` is
    left as it was when that fails."""
    cdef Slot* p
    if slots > max_slots():
        with gil:
            raise MemoryError("cseq: a hash table of more than 2**32 slots")
    p = <Slot*> calloc(<size_t> slots, sizeof(Slot))
    if p == NULL:
        with gil:
            raise MemoryError()
    cseq_huge_pages(p, <size_t> slots * sizeof(Slot))
    t.slots = p
    t.mask = <uint64_t> (slots - 1)
    t.limit = slot_limit(slots)
    return 0


cdef inline void table_free(Table* t) noexcept nogil:
    free(t.slots)
    t.slots = NULL


cdef inline uint64_t table_probe(Table t, uint64_t h, same_entry same,
                                 const void* ctx) noexcept nogil:
    """Slot of the entry with hash ``h`` that ``same(ctx, value)`` confirms (any
    entry with hash ``h`` when ``same`` is NULL), or the empty slot where it
    would go.

    ``t`` is passed by value so that the hot loops keep slots and mask in
    registers: a store into a slot cannot alias them.
    """
    # Hashes are fmix64 outputs, so their low bits are uniform.  Hash and
    # value share a cache line, so a probe costs one miss.
    cdef uint64_t i = h & t.mask
    while t.slots[i].value != 0 and (t.slots[i].hash != h
                                     or (same != NULL and not same(ctx, t.slots[i].value))):
        i = (i + 1) & t.mask
    return i


cdef inline int table_grow(Table* t) except -1 nogil:
    """Double the slots of ``t``, each entry re-placed by the hash its slot keeps
    (no entry is read, nothing is rehashed); ``t`` is unchanged when memory
    runs out."""
    cdef Table old = t[0]
    cdef uint64_t i, j
    table_init(t, 2 * (<Py_ssize_t> old.mask + 1))
    for i in range(old.mask + 1):
        if old.slots[i].value != 0:
            j = old.slots[i].hash & t.mask
            while t.slots[j].value != 0:
                j = (j + 1) & t.mask
            t.slots[j] = old.slots[i]
    free(old.slots)
    return 0


cdef inline int table_copy(Table* dst, const Table* src) except -1 nogil:
    """Make ``dst`` an independent copy of ``src`` (memory speed); ``dst`` is
    left as it was when memory runs out."""
    cdef size_t n = (<size_t> src.mask + 1) * sizeof(Slot)
    cdef Slot* p = <Slot*> malloc(n)
    if p == NULL:
        with gil:
            raise MemoryError()
    cseq_huge_pages(p, n)
    memcpy(p, src.slots, n)
    dst.slots = p
    dst.mask = src.mask
    dst.limit = src.limit
    return 0
