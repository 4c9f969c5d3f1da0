"""Type stubs for the compiled module :mod:`cseq._core._parallel` (``_parallel.pyx``).

Checked against the built module by ``tests/test_typing.py`` (mypy's stubtest).
"""

def openmp_enabled() -> bool: ...
