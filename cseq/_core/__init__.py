"""The shared low-level pieces every layer stands on.

- ``_types.pxd``, ``_openmp.pxd``, ``_prefetch.pxd``: Cython declarations the
  kernels of every sub-package cimport (C types, the OpenMP shim, a
  software-prefetch hint);
- :mod:`~cseq._core.dtypes`: the NumPy dtypes that mirror the C types;
- :mod:`~cseq._core._parallel`: whether the build has OpenMP;
- :mod:`~cseq._core.threads`: thread counts (``n_jobs``);
- :mod:`~cseq._core.vectors`: dot products and norms without BLAS threads.

Nothing here imports any other part of cseq but :mod:`cseq.exceptions`.
"""
