# OpenMP shim: compiles to serial code when the compiler has no OpenMP.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define CSEQ_OPENMP_ENABLED 1
    #else
    #define CSEQ_OPENMP_ENABLED 0
    static int omp_get_max_threads(void) { return 1; }
    static int omp_get_thread_num(void) { return 0; }
    #endif
    """
    const int CSEQ_OPENMP_ENABLED
    int omp_get_max_threads() noexcept nogil
    int omp_get_thread_num() noexcept nogil
