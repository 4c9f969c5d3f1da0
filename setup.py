"""Build the compiled modules of cseq.

Everything about the C build lives here: the extensions (every ``.pyx`` under
``cseq/``), the Cython directives (set once, for every module) and the OpenMP probe.

Environment variables
---------------------
CSEQ_CYTHON_DEBUG=1
    Build the same sources with bounds checks, initialisation checks and
    ``-O0 -g``, for running the test suite against a checked build.
CSEQ_OPENMP=auto|0|1
    ``auto`` (default) probes the compiler for OpenMP and builds serial code
    when it is missing; ``0`` never uses OpenMP; ``1`` requires it.
"""

import os
import sys
import tempfile
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("CSEQ_CYTHON_DEBUG", "0") == "1"
OPENMP = os.environ.get("CSEQ_OPENMP", "auto").lower()

HERE = Path(__file__).resolve().parent


def compiled_modules() -> list[str]:
    """Every ``.pyx`` under ``cseq/`` as a dotted module name (``cseq.chain._chain``).

    Found, not listed: a kernel is added, moved or renamed by its file alone.
    ``scripts/check_dist_contents.py`` and ``tests/package/test_typing.py`` find them
    the same way.
    """
    return sorted(".".join(p.relative_to(HERE).with_suffix("").parts)
                  for p in (HERE / "cseq").rglob("*.pyx"))


DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "cdivision": not DEBUG,
    "initializedcheck": DEBUG,
    "embedsignature": True,
}


def _openmp_flags(compiler):
    """Return (compile_args, link_args) for OpenMP on this compiler."""
    if compiler.compiler_type == "msvc":
        return ["/openmp"], []
    if sys.platform == "darwin":
        return ["-Xpreprocessor", "-fopenmp"], ["-lomp"]
    return ["-fopenmp"], ["-fopenmp"]


def _compiler_has_openmp(compiler, cflags, lflags):
    """Compile and link a tiny OpenMP program; True when that works."""
    code = (
        "#include <omp.h>\n"
        "int main(void) { int n = 0;\n"
        "#pragma omp parallel reduction(+:n)\n"
        "n += 1; return omp_get_max_threads() > 0 ? 0 : 1; }\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write(code)
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
            compiler.link_executable(objs, "probe", output_dir=tmp, extra_postargs=lflags)
        except Exception:
            return False
    return True


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        # The C files compile independently: one compiler per core unless
        # `build_ext -j N` says otherwise (a fresh build takes about half the
        # time on two cores).
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        cflags, lflags = _openmp_flags(self.compiler)
        if OPENMP == "0":
            use_openmp = False
        else:
            use_openmp = _compiler_has_openmp(self.compiler, cflags, lflags)
            if OPENMP == "1" and not use_openmp:
                raise RuntimeError("CSEQ_OPENMP=1 but the compiler cannot build OpenMP code")
        if not use_openmp:
            print("cseq: building without OpenMP (parallel loops run serially)")
        is_msvc = self.compiler.compiler_type == "msvc"
        for ext in self.extensions:
            if use_openmp:
                ext.extra_compile_args += cflags
                ext.extra_link_args += lflags
            if is_msvc:
                ext.extra_compile_args += ["/Od"] if DEBUG else ["/O2"]
            else:
                ext.extra_compile_args += ["-O0", "-g"] if DEBUG else ["-O3"]
        super().build_extensions()


extensions = [
    Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in compiled_modules()
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES),
    cmdclass={"build_ext": BuildExt},
)
