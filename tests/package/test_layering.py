"""No shared module asks what kind of learner it holds.

A lint over the package's source (its syntax trees, so comments and strings
do not count): outside a learner's own module, no code

* branches on an estimator's class: ``isinstance(est, CRF)`` (any registered
  learner class), or a comparison of ``type(est)`` (or an attribute of it)
  with a learner class or with ``ChainEstimator`` (``type(est)._decode is
  ChainEstimator._decode``);
* reads a string flag that names a kind of learner (:data:`KIND_FLAGS`,
  e.g. ``_probabilities == "local"``);
* asks ``hasattr`` / ``getattr`` with a literal name for an attribute that
  only some learners have (their hyperparameters, fitted attributes and
  methods beyond the estimator base's: ``hasattr(est, "n_pruned_")``,
  ``getattr(est, "algorithm", ...)``, ``hasattr(est, "partial_fit")``).

Such a question belongs to the learner: a declared attribute or method of
the base that each learner answers, or its registration (:mod:`cseq.registry`).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import cseq
from cseq import registry
from cseq.learners.base import ChainEstimator

PACKAGE = Path(cseq.__file__).resolve().parent

#: Class attributes whose value says what kind of learner a class is.
KIND_FLAGS = frozenset({"_probabilities"})


def _learners() -> list[type]:
    """cseq's own registered learner classes (not one a test registers)."""
    return [learner.estimator for learner in registry.LEARNERS.values()
            if learner.estimator.__module__.startswith("cseq.")]


def _learner_attributes() -> frozenset[str]:
    """The attribute names some learners have and the estimator base does not (its
    methods and the fitted attributes every fit sets)."""
    names: set[str] = set()
    for cls in _learners():
        names.update(cls._param_names, cls._fitted_names, dir(cls))
    return frozenset(names - set(dir(ChainEstimator)) - set(ChainEstimator._fitted_names))


def _terminal(node: ast.AST) -> str | None:
    """The last name of ``a.b.C`` or ``C``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_type_call(node: ast.AST) -> bool:
    """``type(x)``, or an attribute of it (``type(x)._decode``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "type" and len(node.args) == 1)


def _names_in(node: ast.AST) -> set[str]:
    return {name for sub in ast.walk(node) if (name := _terminal(sub)) is not None}


def findings(source: str, learner_classes: frozenset[str], attributes: frozenset[str]
             ) -> list[tuple[int, str]]:
    """The lines of ``source`` that ask what kind of learner they hold, with what they do."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                hit = sorted(_names_in(node.args[1]) & learner_classes)
                if hit:
                    found.append((node.lineno, f"{node.func.id}(..., {', '.join(hit)})"))
            if node.func.id in ("hasattr", "getattr") and len(node.args) >= 2:
                name = node.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str) and (
                        name.value in attributes or name.value in KIND_FLAGS):
                    found.append((node.lineno, f"{node.func.id}(..., {name.value!r})"))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_type_call(s) for s in sides):
                hit = sorted(set().union(*map(_names_in, sides))
                             & (learner_classes | {"ChainEstimator"}))
                if hit:
                    found.append((node.lineno, f"type(...) compared with {', '.join(hit)}"))
        elif isinstance(node, ast.Attribute) and node.attr in KIND_FLAGS:
            found.append((node.lineno, f".{node.attr}"))
    return sorted(set(found))


def _shared_modules() -> list[Path]:
    """Every module of the package but a learner's own (the base is shared: it declares
    what a learner answers, and asks nothing else)."""
    own = {Path(inspect.getfile(cls)).resolve() for cls in _learners()}
    return sorted(p for p in PACKAGE.rglob("*.py") if p.resolve() not in own)


def test_the_lint_finds_each_pattern():
    # The rule must be able to fail: each pattern of the issue is found.
    classes = frozenset({"CRF", "MEMM"})
    source = "\n".join([
        "if isinstance(est, CRF): pass",
        "if isinstance(est, (cseq.MEMM, int)): pass",
        "if type(est)._decode is ChainEstimator._decode: pass",
        "if type(est) is CRF: pass",
        "if est._probabilities == 'local': pass",
        "if getattr(est, '_probabilities', None) is None: pass",
        "if hasattr(est, 'n_pruned_'): pass",
        "x = getattr(est, 'algorithm', 'sgd')",
        # what is allowed: a declared question, an estimator check, other objects' names
        "if isinstance(est, ChainEstimator): pass",
        "if est._linear_scores: pass",
        "x = getattr(featurizer, 'templates', None)",
        "if registry.LEARNERS[name].estimator is not type(est): pass",
    ])
    lines = [line for line, _ in findings(source, classes, frozenset({"n_pruned_", "algorithm"}))]
    assert lines == [1, 2, 3, 4, 5, 6, 7, 8]


def test_no_shared_module_asks_what_kind_of_learner_it_holds():
    classes = frozenset(cls.__name__ for cls in _learners())
    attributes = _learner_attributes()
    assert {"n_pruned_", "algorithm", "partial_fit", "max_iter"} <= attributes
    hits = [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}"
            for path in _shared_modules()
            for line, what in findings(path.read_text(encoding="utf-8"), classes, attributes)]
    if hits:
        pytest.fail("shared modules that ask what kind of learner they hold (ask the "
                    "learner through a declared attribute or its registration):\n"
                    + "\n".join(hits))
