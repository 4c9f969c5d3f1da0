"""Cython declarations shared by the kernels of every sub-package (no Python code)."""
