"""Timing a call: every run's wall time, or the best of several."""

from __future__ import annotations

import time


def times(fn, repeat: int) -> list[float]:
    """Wall seconds of ``repeat`` calls of ``fn()``, in order."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def best_of(fn, repeat: int) -> float:
    """The fastest of ``repeat`` calls of ``fn()``, in wall seconds."""
    return min(times(fn, repeat))
