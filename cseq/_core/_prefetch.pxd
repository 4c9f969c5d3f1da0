# Software prefetch: a hint to start loading a cache line that will be read
# soon.  Compiles to nothing on compilers without the builtin.
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define cseq_prefetch(p) __builtin_prefetch((const void*) (p))
    #else
    #define cseq_prefetch(p) ((void) 0)
    #endif
    """
    void cseq_prefetch(const void* p) noexcept nogil
