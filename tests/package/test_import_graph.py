"""The package's import graph has no cycle and no import that runs up a layer.

Every import counts: Python ``import`` and ``from ... import`` statements
anywhere in a module (inside functions and ``TYPE_CHECKING`` blocks too: an
import moved into a function to dodge a cycle is still the cycle), and the
Cython ``cimport`` / ``from ... cimport`` (and ``import``) lines of the
``.pyx`` and ``.pxd`` files, a ``.pyx`` and its ``.pxd`` being one module.
A cycle means no module of it can be understood, tested or replaced without
the others.  The layers are written once, in the table of
``docs/architecture.md`` ("Layers and what each may import"), which these
tests read: an import from a lower layer to a higher one fails, and so does a
module the table does not place.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from support.paths import ROOT



# A Cython import line: ``from a.b cimport x``, ``from a.b import x``,
# ``cimport a.b as c``, ``import a.b, c``.
_CYTHON_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+c?import\b")
_CYTHON_IMPORT = re.compile(r"^\s*c?import\s+([\w.\s,]+?)\s*$")


def _module_names(root: Path, package: str) -> dict[str, list[Path]]:
    """Dotted module name -> its source files (a .pyx and its .pxd share one name)."""
    modules: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".py", ".pyx", ".pxd") or "__pycache__" in path.parts:
            continue
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules.setdefault(".".join(parts), []).append(path)
    return modules


def _target(name: str, modules: dict) -> str | None:
    """The package module ``name`` refers to: itself, or its nearest enclosing module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _python_imports(path: Path, module: str, is_package: bool, modules: dict) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(_target(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{node.module}" if node.module else anchor
            else:
                base = node.module or ""
            for alias in node.names:
                # ``from pkg import sub`` imports the module pkg.sub, not pkg's
                # __init__ beyond what importing pkg.sub needs.
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in modules else _target(base, modules))
    return out


def _cython_imports(path: Path, modules: dict) -> set[str]:
    out: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0]
        m = _CYTHON_FROM.match(line)
        if m:
            out.add(_target(m.group(1), modules))
            continue
        m = _CYTHON_IMPORT.match(line)
        if m:
            for item in m.group(1).split(","):
                words = item.split()
                if words:
                    out.add(_target(words[0], modules))
    return out


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """``graph[a]``: the package's modules that module ``a`` imports or cimports."""
    modules = _module_names(root, package)
    graph: dict[str, set[str]] = {}
    for module, paths in modules.items():
        edges: set[str] = set()
        for path in paths:
            if path.suffix == ".py":
                edges |= _python_imports(path, module, path.stem == "__init__", modules)
            else:
                edges |= _cython_imports(path, modules)
        edges.discard(None)
        edges.discard(module)  # a .pyx reading its own .pxd
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles (``[a, b, ..., a]``) covering every module of each strongly connected
    component of ``graph`` that has more than one (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    out = []
    for component in components:
        covered: set[str] = set()
        for member in component:  # a cycle through every module of it, shortest first
            if member not in covered:
                out.append(_cycle_in(graph, set(component), member))
                covered.update(out[-1])
    return out


def _cycle_in(graph: dict[str, set[str]], members: set[str], start: str) -> list[str]:
    """A shortest cycle through ``start`` inside one strongly connected component."""
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start \
                        else [start, start]
                if child not in parent:
                    parent[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{start} is in no cycle")  # unreachable for a component


def test_the_package_has_no_import_cycle():
    # The sources beside the tests (a checkout or an unpacked sdist): an
    # installed wheel holds no .pyx/.pxd, so its cimports could not be read.
    graph = import_graph(ROOT / "cseq", "cseq")
    assert "cseq.learners.base" in graph and graph["cseq.learners.base"], "the walker found no imports"
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_walker_finds_cycles_through_functions_and_cimports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.a import f\n")
    (pkg / "a.py").write_text("from pkg import b\n\ndef f():\n    return b\n")
    # b closes the cycle a -> b -> a from inside a function, as base, decoding
    # and probability did.
    (pkg / "b.py").write_text("def g():\n    from pkg.a import f\n    return f\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "_k.pyx").write_text("# cimport pkg.nothing\nfrom pkg._m cimport h\n")
    (pkg / "_m.pxd").write_text("cdef int h()\n")
    (pkg / "_m.pyx").write_text("cimport cython\nimport pkg.sub._k as k\n")
    (pkg / "c.py").write_text("from . import a\nfrom .sub import _k\n")
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.c"] == {"pkg.a", "pkg.sub._k"}
    assert graph["pkg.sub._k"] == {"pkg._m"}  # the commented line is no import
    found = {tuple(c) for c in cycles(graph)}
    assert ("pkg.a", "pkg.b", "pkg.a") in found
    assert ("pkg._m", "pkg.sub._k", "pkg._m") in found
    assert len(found) == 2


_LAYER_ROW = re.compile(r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<modules>[^|]*)\|")


def layers(text: str) -> list[tuple[str, list[str]]]:
    """The layer table between ``<!-- layers`` and ``<!-- /layers -->``: (name, module prefixes), bottom first."""
    start = text.index("<!-- layers")
    block = text[start:text.index("<!-- /layers -->", start)].splitlines()[1:]
    out = []
    for line in block[2:]:  # the header row and its rule
        m = _LAYER_ROW.match(line)
        assert m, f"not a layer row: {line!r}"
        out.append((m.group("name"), re.findall(r"`([\w.]+)`", m.group("modules"))))
    return out


def layer_of(module: str, table: list[tuple[str, list[str]]]) -> int | None:
    """The index of the layer whose entry is the longest prefix of ``module`` (None: unplaced).

    The root package's name (an entry without a dot) stands for its
    ``__init__`` alone, not for everything under it.
    """
    best, length = None, -1
    for i, (_, prefixes) in enumerate(table):
        for prefix in prefixes:
            inside = "." in prefix and module.startswith(prefix + ".")
            if (module == prefix or inside) and len(prefix) > length:
                best, length = i, len(prefix)
    return best


def upward_imports(graph: dict[str, set[str]], table) -> tuple[list[str], list[str]]:
    """(modules no row places, ``a -> b`` imports from a lower layer to a higher one)."""
    unplaced = sorted(m for m in graph if layer_of(m, table) is None)
    up = sorted(f"{a} ({table[layer_of(a, table)][0]}) -> {b} ({table[layer_of(b, table)][0]})"
                for a, targets in graph.items() for b in targets
                if None not in (layer_of(a, table), layer_of(b, table))
                and layer_of(b, table) > layer_of(a, table))
    return unplaced, up


def test_no_import_runs_up_a_layer():
    table = layers((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert [name for name, _ in table][:2] == ["leaves", "io"], table
    graph = import_graph(ROOT / "cseq", "cseq")
    unplaced, up = upward_imports(graph, table)
    assert not unplaced, f"modules that no row of the layer table places: {unplaced}"
    assert not up, "imports that run up a layer:\n" + "\n".join(up)


def test_the_layer_check_finds_an_upward_import():
    text = ("<!-- layers -->\n| layer | modules | what |\n|---|---|---|\n"
            "| low | `pkg.low` | x |\n| high | `pkg.api` `pkg` | y |\n<!-- /layers -->\n")
    table = layers(text)
    assert table == [("low", ["pkg.low"]), ("high", ["pkg.api", "pkg"])]
    assert layer_of("pkg.low.deep", table) == 0 and layer_of("pkg.api", table) == 1
    assert layer_of("other", table) is None
    assert layer_of("pkg", table) == 1 and layer_of("pkg.other", table) is None
    graph = {"pkg.api": {"pkg.low"}, "pkg.low": {"pkg.api"}, "other": set()}
    unplaced, up = upward_imports(graph, table)
    assert unplaced == ["other"]
    assert up == ["pkg.low (low) -> pkg.api (high)"]
