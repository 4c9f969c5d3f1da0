# OpenMP shim: compiles to serial code when the compiler has no OpenMP.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define CSEQ_OPENMP_ENABLED 1
    #else
    #define CSEQ_OPENMP_ENABLED 0
    #endif
    """
    const int CSEQ_OPENMP_ENABLED
