"""What the compiled modules were built with: OpenMP or serial loops.

Every extension is compiled with the same flags (``setup.py``'s OpenMP probe,
``CSEQ_OPENMP=auto|0|1``), so this module's answer is every kernel's.
"""

from cseq._core._openmp cimport CSEQ_OPENMP_ENABLED


def openmp_enabled():
    """True when the compiled modules were built with OpenMP."""
    return bool(CSEQ_OPENMP_ENABLED)
