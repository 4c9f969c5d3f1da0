"""The typed API: a ``.pyi`` stub beside every compiled module, proven to match it.

* every compiled extension of the imported package has a stub, and
  ``py.typed`` is there (so a wheel that lost them fails here);
* mypy's ``stubtest`` compares each stub with the built module it describes
  (names, kinds, parameters and their defaults, properties and attributes);
  ``stubtest`` cannot see ``__cinit__`` (a cdef class's ``__init__`` takes
  ``*args`` at run time), so the stubs' ``__new__`` parameters are compared
  with the ``.pyx`` sources when they are beside the tests;
* ``tests/support/typed_user_program.py``, a user's program on the public API,
  passes ``mypy --strict`` and runs.

Run from a checkout (editable install) the stubs are found in the source tree
through ``MYPYPATH``; run against an installed wheel (``.ci/run`` step 2,
``scripts/check_dist.sh``, cibuildwheel) nothing points mypy at the sources, so
the stubs and ``py.typed`` that mypy uses are the installed ones.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cseq
from support.paths import TESTS

PACKAGE = Path(cseq.__file__).resolve().parent
CHECKOUT = PACKAGE.parent if (PACKAGE.parent / "pyproject.toml").exists() else None
SOURCES = TESTS.parent / "cseq"  # the .pyx beside the tests (a checkout or an unpacked sdist)
EXT = re.compile(r"^(?P<name>\w+?)(\.[\w-]+)?\.(so|pyd)$")

pytest.importorskip("mypy")


def _compiled_modules() -> list[str]:
    """The compiled extension modules in the imported package, as paths under it
    without suffix (``_labels``, or ``chain/_chain`` in a sub-package)."""
    names = sorted({p.parent.joinpath(m.group("name")).relative_to(PACKAGE).as_posix()
                    for p in PACKAGE.rglob("*") if (m := EXT.match(p.name))})
    assert names, f"no compiled module in {PACKAGE}"
    return names


def _mypy_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MYPYPATH", None)
    if CHECKOUT is not None:  # an editable install: mypy cannot follow its import hook
        env["MYPYPATH"] = str(CHECKOUT)
    return env


def test_every_compiled_module_has_a_stub():
    modules = _compiled_modules()
    missing = [m for m in modules if not (PACKAGE / f"{m}.pyi").is_file()]
    assert not missing, f"compiled modules without a .pyi stub in {PACKAGE}: {missing}"
    stray = sorted(s for p in PACKAGE.rglob("*.pyi")
                   if (s := p.relative_to(PACKAGE).with_suffix("").as_posix()) not in modules)
    assert not stray, f"stubs without a compiled module: {stray}"
    assert (PACKAGE / "py.typed").is_file()
    if CHECKOUT is not None:  # setup.py builds every .pyx under cseq/: all of them are built
        sources = sorted(p.relative_to(PACKAGE).with_suffix("").as_posix()
                         for p in PACKAGE.rglob("*.pyx"))
        assert sources == modules, "the .pyx sources and the built modules differ"


def test_stubtest_on_every_compiled_module(tmp_path):
    modules = ["cseq." + m.replace("/", ".") for m in _compiled_modules()]
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", *modules,
         "--mypy-config-file", str(_write_config(tmp_path)),
         "--allowlist", str(TESTS / "support" / "stubtest_allowlist.txt")],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, env=_mypy_env())
    assert r.returncode == 0, r.stdout[-20000:] + r.stderr[-5000:]
    assert "Success" in r.stdout, r.stdout


def _write_config(tmp_path: Path) -> Path:
    # follow_imports = silent: the package's own modules are type-checked for
    # what they export, but their bodies are not this test's subject.
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nfollow_imports = silent\ncache_dir = {tmp_path / '.mypy_cache'}\n")
    return config


# A cdef class and its __cinit__, not crossing into the next class.
_CINIT = re.compile(r"^cdef class (\w+)\b(?:(?!^cdef class ).)*?^    def __cinit__\(self,?(.*?)\):",
                    re.S | re.M)


def _pyx_params(text: str) -> list[str]:
    """Parameter names of a Cython signature (types, ``not None`` and defaults dropped)."""
    names = []
    for part in re.split(r",(?![^\[]*\])", text):
        part = part.split("=")[0].replace("not None", "").strip()
        if part:
            names.append(part.split()[-1].lstrip("*"))
    return names


@pytest.mark.skipif(not any(SOURCES.rglob("*.pyx")), reason="no .pyx sources beside the tests")
def test_stub_constructors_match_cinit():
    checked = 0
    for pyx in sorted(SOURCES.rglob("*.pyx")):
        text = pyx.read_text(encoding="utf-8")
        stub = ast.parse((PACKAGE / pyx.relative_to(SOURCES).with_suffix(".pyi"))
                         .read_text(encoding="utf-8"))
        inits = {node.name: [a.arg for a in item.args.args[1:] + item.args.kwonlyargs]
                 for node in stub.body if isinstance(node, ast.ClassDef)
                 for item in node.body
                 if isinstance(item, ast.FunctionDef) and item.name == "__new__"}
        for m in _CINIT.finditer(text):
            cls, params = m.group(1), _pyx_params(m.group(2))
            if cls.startswith("_"):
                continue
            assert cls in inits, f"{pyx.name}: the stub of {cls} has no __new__"
            assert inits[cls] == params, f"{pyx.name}: {cls}.__new__ {inits[cls]} != {params}"
            checked += 1
    assert checked >= 8  # StringTable, KeyTable, Values, ChainIndex, CorpusView, ... trainers


def test_pyx_params_parser():
    assert _pyx_params(" ChainIndex ix, const index_t[:, ::1] a not None, w=None, "
                       "Py_ssize_t capacity=1024") == ["ix", "a", "w", "capacity"]


def _public_callables():
    """(name, function) for every public function and method ``import cseq`` offers."""
    import inspect
    import types

    seen: set[int] = set()
    for module in (cseq, cseq.conll, cseq.metrics, cseq.templates):
        for name in getattr(module, "__all__", None) or [n for n in dir(module) if n[0] != "_"]:
            obj = getattr(module, name, None)
            if isinstance(obj, types.ModuleType) or id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                if issubclass(obj, BaseException):
                    continue
                for attr, member in inspect.getmembers(obj):
                    if (attr[0] != "_" or attr == "__init__") and inspect.isfunction(member):
                        yield f"{obj.__name__}.{attr}", member
            elif inspect.isfunction(obj):
                yield f"{module.__name__}.{name}", obj
            # compiled functions (cseq.openmp_enabled) are typed by their stubs


def test_public_api_is_fully_annotated():
    import inspect

    missing, checked = [], 0
    for name, fn in _public_callables():
        sig = inspect.signature(fn)
        checked += 1
        missing += [f"{name}({p.name})" for p in sig.parameters.values()
                    if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{name} (return)")
    assert checked > 80
    assert not missing, f"public callables without annotations: {missing}"


def test_mypy_strict_on_a_user_program(tmp_path):
    program = tmp_path / "typed_user_program.py"
    program.write_text((TESTS / "support" / "typed_user_program.py").read_text(encoding="utf-8"))
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--config-file", str(_write_config(tmp_path)), program.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, env=_mypy_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found in 1 source file" in r.stdout
    run = subprocess.run([sys.executable, program.name], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-2:] == ["NotFittedError", "ok"]
    assert (tmp_path / "tagger.cseq").is_file()
