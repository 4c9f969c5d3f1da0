"""How many threads a kernel may use: the one place every ``n_jobs`` is checked."""

from __future__ import annotations

import os

import numpy as np

from cseq.exceptions import InputError

__all__ = ["resolve_n_jobs", "usable_cpus"]


def usable_cpus() -> int:
    """CPUs this process may run on: its affinity mask where the OS has one, else all."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS and Windows have no affinity call in os
        return os.cpu_count() or 1


def resolve_n_jobs(n_jobs) -> int:
    """Number of threads for ``n_jobs``: the one place every thread count is checked.

    ``-1`` or ``None`` means every usable CPU (:func:`usable_cpus`: the
    process's affinity mask, so a container or ``taskset`` limit counts).  A
    positive count above that is clamped to it, as OpenMP libraries do
    (XGBoost's ``nthread``): more threads than CPUs cannot run at once, each
    OpenMP thread of a kernel keeps scratch (a CRF or MEMM fit: a gradient
    buffer as large as the model), and tens of thousands of threads exhaust
    the process (libgomp aborts, thread stacks run out).  So the kernels
    never see more threads than CPUs.  Results depend on the count only
    through float rounding (the chunks of a training pass).  Raises
    InputError for anything but a positive int or -1.
    """
    if n_jobs is None:
        return usable_cpus()
    if type(n_jobs) is int and n_jobs == 1:
        return 1  # the common case, without the affinity system call (per predict call)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or (
            n_jobs < 1 and n_jobs != -1):
        raise InputError(f"n_jobs must be a positive int or -1, got {n_jobs!r}")
    return usable_cpus() if n_jobs == -1 else min(int(n_jobs), usable_cpus())
