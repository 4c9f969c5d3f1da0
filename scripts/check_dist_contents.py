"""Check what the sdist and a wheel of cseq hold.

    python scripts/check_dist_contents.py sdist dist/cseq_labeling-X.tar.gz
    python scripts/check_dist_contents.py wheel dist/cseq_labeling-X-cp311-...whl

A wheel holds what runs and nothing else: the Python modules, one compiled
extension per ``.pyx`` under ``cseq/`` (what ``setup.py`` builds) with its ``.pyi`` stub,
``py.typed``, the demo corpus with its README and CC BY-SA license, and the
license files in ``.dist-info/licenses/``; no ``.pyx``, ``.pxd``, ``.c`` or
test file.  The sdist holds everything needed to build, test and document:
``setup.py``, ``pyproject.toml``, ``mkdocs.yml``, the stubs, every file of
``cseq/`` and ``tests/`` that git tracks (when run in a git checkout; else
the ``.pyx``/``.pxd`` of every module), and no generated C or compiled file.
Exits 1 and names the files at fault.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST = "cseq_labeling"
NEVER_IN_WHEEL = (".pyx", ".pxd", ".c", ".cpp", ".h", ".html", ".pyc")
GENERATED = (".c", ".so", ".pyd", ".html", ".pyc", ".o")


def _modules() -> list[str]:
    """The compiled modules as paths under ``cseq/`` without suffix (``chain/_chain``).

    setup.py builds every ``.pyx`` under ``cseq/``; so does this list.
    """
    modules = sorted(p.relative_to(ROOT / "cseq").with_suffix("").as_posix()
                     for p in (ROOT / "cseq").rglob("*.pyx"))
    if not modules:
        raise SystemExit("no .pyx under cseq/")
    return modules


def _version() -> str:
    text = (ROOT / "cseq" / "_version.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"$', text, re.M).group(1)


def check_wheel(path: Path) -> list[str]:
    errors = []
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        info = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = zf.read(info[0]).decode("utf-8") if info else ""
        entry = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entry_points = zf.read(entry[0]).decode("utf-8") if entry else ""
    for n in names:
        base = n.rsplit("/", 1)[-1]
        if n.endswith(NEVER_IN_WHEEL):
            errors.append(f"source or build file in wheel: {n}")
        if n.startswith("tests/") or "/tests/" in n or base.startswith("test_") or base == "conftest.py":
            errors.append(f"test file in wheel: {n}")
        top = n.split("/", 1)[0]
        if top not in ("cseq", f"{DIST}.libs") and not top.endswith((".dist-info", ".data")):
            errors.append(f"unexpected top-level entry in wheel: {n}")
    required = ["cseq/__init__.py", "cseq/_version.py", "cseq/py.typed", "cseq/cli/__init__.py",
                "cseq/data/__init__.py", "cseq/data/ewt_sample.tsv", "cseq/data/ewt_train.tsv.gz",
                "cseq/data/en_ewt.cseqp",
                "cseq/data/en_glove6b.classes.gz", "cseq/data/LICENSE.txt",
                "cseq/data/README.md", "cseq/compat/__init__.py",
                "cseq/compat/sklearn_crfsuite/__init__.py"]
    errors += [f"missing from wheel: {r}" for r in required if r not in names]
    for lic in ("LICENSE", "cseq/data/LICENSE.txt"):
        if not any(n.endswith(f".dist-info/licenses/{lic}") for n in names):
            errors.append(f"missing from wheel: .dist-info/licenses/{lic}")
    for mod in _modules():
        pat = re.compile(rf"^cseq/{mod}\.[^/]*(\.so|\.pyd)$")
        if not any(pat.match(n) for n in names):
            errors.append(f"compiled module missing from wheel: cseq/{mod}")
        if f"cseq/{mod}.pyi" not in names:
            errors.append(f"type stub missing from wheel: cseq/{mod}.pyi")
    if "\nName: cseq-labeling\n" not in meta:
        errors.append("METADATA: Name is not cseq-labeling")
    if f"\nVersion: {_version()}\n" not in meta:
        errors.append(f"METADATA: Version is not {_version()}")
    if "cseq = cseq.cli:main" not in entry_points:
        errors.append("entry_points.txt: no `cseq` command")
    return errors


def _tracked() -> list[str] | None:
    try:
        out = subprocess.run(["git", "ls-files", "cseq", "tests"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.split() or None


def check_sdist(path: Path) -> list[str]:
    errors = []
    with tarfile.open(path) as tf:
        names = [m.name for m in tf.getmembers() if m.isfile()]
    prefix = names[0].split("/", 1)[0] + "/"
    rel = {n[len(prefix):] for n in names if n.startswith(prefix)}
    if len(rel) != len(names):
        errors.append("sdist: not all files are under one top-level directory")
    required = ["setup.py", "pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md",
                "PKG-INFO", "cseq/_version.py", "cseq/data/LICENSE.txt"]
    required += [f"cseq/{m}.pyx" for m in _modules()]
    required += [f"cseq/{m}.pyi" for m in _modules()] + ["cseq/py.typed", "mkdocs.yml"]
    tracked = _tracked()
    if tracked is not None:
        required += tracked
    else:
        required += [p.relative_to(ROOT).as_posix() for p in (ROOT / "cseq").rglob("*.pxd")]
    errors += [f"missing from sdist: {r}" for r in sorted(set(required)) if r not in rel]
    errors += [f"generated file in sdist: {n}" for n in sorted(rel) if n.endswith(GENERATED)]
    return errors


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("kind", choices=["sdist", "wheel"])
    p.add_argument("path", type=Path)
    args = p.parse_args()
    errors = (check_sdist if args.kind == "sdist" else check_wheel)(args.path)
    for e in errors:
        print(f"  {e}")
    print(f"{args.kind} {args.path.name}: {'OK' if not errors else f'{len(errors)} problem(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
