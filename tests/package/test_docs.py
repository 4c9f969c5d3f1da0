"""Every code example of the documentation runs.

* The fenced ``python`` blocks of each page of ``docs/`` run in order, in one
  fresh interpreter per page (a later block may use an earlier one's names),
  in a temporary directory; the ``bash`` blocks of each page run there too,
  with ``bash -euo pipefail``, after the page's Python blocks.  Every fence
  must say its language, and only ``python``, ``bash`` and ``text`` (not run:
  output, file contents, template text) are allowed, so no example escapes.
* The ``>>>`` examples in the docstrings that the API reference shows run as
  doctests.
* The README's blocks are run by ``tests/package/test_readme.py``.

Not run: the 4-space indented blocks of ``docs/`` (a diagram, the parameter
layout, and the commands that reproduce benchmark figures and sanitizer,
valgrind and fuzzing runs, which take minutes to hours and tools CI does not
install).

The site itself is built by ``mkdocs build --strict`` in ``.ci/run``.
"""

from __future__ import annotations

import doctest
import importlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support.paths import ROOT

DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.S | re.M)
LANGS = {"python", "bash", "text"}
PAGES = sorted(DOCS.glob("*.md")) if DOCS.is_dir() else []
needs_docs = pytest.mark.skipif(not PAGES, reason="no docs/ beside tests/ (a wheel's test run)")


def _blocks(page: Path) -> list[tuple[str, str]]:
    text = page.read_text(encoding="utf-8")
    return [(m.group("lang").strip(), _dedent(m.group("body"), len(m.group("indent"))))
            for m in FENCE.finditer(text)]


def _dedent(body: str, n: int) -> str:
    return "".join(line[n:] if line[:n].isspace() else line
                   for line in body.splitlines(keepends=True))


# The few file tools the examples use.  The distribution proof
# (scripts/check_dist.sh) runs the suite with a PATH that holds the venv only,
# so that no compiler can be found; these are linked into a directory of their
# own rather than putting /usr/bin (and its compilers) back on PATH.
SHELL_TOOLS = ("cat", "cp", "head", "mv", "rm", "seq", "tail", "wc")


@pytest.fixture(scope="session")
def shell_tools(tmp_path_factory) -> Path:
    bin_dir = tmp_path_factory.mktemp("shell-tools")
    system = os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin", "/bin"])
    for name in SHELL_TOOLS:
        found = shutil.which(name, path=system)
        if found:
            os.symlink(found, bin_dir / name)
    return bin_dir


def _env(shell_tools: Path) -> dict[str, str]:
    # this Python's scripts directory (where pip put `cseq`) and the Python itself first
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    return dict(os.environ, PYTHONIOENCODING="utf-8",
                PATH=os.pathsep.join([*dirs, os.environ.get("PATH", ""), str(shell_tools)]))


@needs_docs
def test_every_fence_names_a_known_language():
    bad = [(page.name, lang or "(none)") for page in PAGES
           for lang, _ in _blocks(page) if lang not in LANGS]
    assert not bad, f"fenced blocks must be one of {sorted(LANGS)}: {bad}"
    n_fences = sum(page.read_text(encoding="utf-8").count("```") for page in PAGES)
    assert n_fences == 2 * sum(len(_blocks(page)) for page in PAGES), "an unmatched ``` fence"


def _runnable_pages() -> list[Path]:
    return [p for p in PAGES if any(lang in ("python", "bash") for lang, _ in _blocks(p))]


@needs_docs
@pytest.mark.parametrize("page", _runnable_pages(), ids=lambda p: p.name)
def test_page_examples_run(page, tmp_path, shell_tools):
    blocks = _blocks(page)
    python = "\n\n".join(body for lang, body in blocks if lang == "python")
    if python:
        r = subprocess.run([sys.executable, "-c", python], cwd=tmp_path, capture_output=True,
                           text=True, timeout=600, env=_env(shell_tools))
        assert r.returncode == 0, f"{page.name}, python blocks:\n{r.stdout}\n{r.stderr}"
    for lang, body in blocks:
        if lang == "bash":
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=tmp_path,
                               capture_output=True, text=True, timeout=600, env=_env(shell_tools))
            assert r.returncode == 0, f"{page.name}, bash block:\n{body}\n{r.stdout}\n{r.stderr}"


def test_fence_parser():
    page = "a\n```python\nx = 1\n```\n\n  ```bash\n  echo hi\n  ```\n```text\nout\n```\n"
    assert [(m.group("lang"), _dedent(m.group("body"), len(m.group("indent"))))
            for m in FENCE.finditer(page)] == [("python", "x = 1\n"), ("bash", "echo hi\n"),
                                               ("text", "out\n")]


DOCTEST_MODULES = ["cseq.evaluation.metrics", "cseq.chain.inference", "cseq.conll", "cseq.templates",
                   "cseq.features.template_language", "cseq.features.featurizer",
                   "cseq.io.conll_read", "cseq.io.formats",
                   "cseq.data", "cseq.learners.base", "cseq.learners.crf", "cseq.learners.perceptron", "cseq.learners.memm",
                   "cseq.learners.hmm", "cseq.learners.greedy", "cseq.learners.ssvm", "cseq.learners.pa", "cseq.learners.arow", "cseq.features.vocabulary",
                   "cseq.chain.sequences",
                   "cseq.io.serialize", "cseq.exceptions", "cseq.chain.probability", "cseq.chain.decoding", "cseq.report",
                   "cseq.pipeline", "cseq.evaluation.ud_metrics",
                   "cseq.compat.crfsuite_items", "cseq.compat.crfsuite_model",
                   "cseq.compat.pycrfsuite",
                   "cseq.compat.crfpp_model", "cseq.compat.sklearn_crfsuite.estimator",
                   "cseq.compat.sklearn_crfsuite.metrics", "cseq.compat.nltk",
                   "cseq.segment.segmenter", "cseq.segment.lemmas", "cseq.features.clusters",
                   "cseq.features.vectors", "cseq.serve.app"]
#: Modules that need an optional extra: their examples skip without it.
OPTIONAL = {"cseq.compat.nltk": "nltk", "cseq.serve.app": "prometheus_client"}


@pytest.mark.parametrize("name", DOCTEST_MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name])
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


def test_doctest_modules_cover_the_api():
    import cseq
    documented = {getattr(cseq, n).__module__ for n in cseq.__all__
                  if hasattr(getattr(cseq, n), "__module__") and n != "__version__"}
    documented |= {"cseq.conll", "cseq.evaluation.metrics", "cseq.templates", "cseq.data"}
    compiled = {m for m in documented if m.split(".")[-1].startswith("_")}
    assert documented - compiled <= set(DOCTEST_MODULES), documented - set(DOCTEST_MODULES)


def _builtin_commands() -> dict:
    """The registry's commands of cseq's own learners (not one a test registers)."""
    from cseq import registry
    return {name: c for name, c in registry.COMMANDS.items()
            if c.estimator.__module__.startswith("cseq.")}


@needs_docs
def test_the_learner_table_is_the_registry():
    # The docs' learner table is checked against cseq.registry, the one
    # place a learner registers: its --algorithm names in registration order, each
    # one's estimator class and options.
    from cseq.cli.train import _LEARNER_OPTIONS
    commands = _builtin_commands()
    text = (DOCS / "learners.md").read_text(encoding="utf-8")
    head = "| `--algorithm` | estimator | options (besides `--max-iter`, `--template`, `--min-freq`) |"
    rows = text[text.index(head):].splitlines()[2:]
    rows = [row.split(" | ") for row in rows[:next(i for i, r in enumerate(rows)
                                                   if not r.startswith("|"))]]
    assert [row[0].split("`")[1] for row in rows] == list(commands)
    for (name, estimator, options), command in zip(rows, commands.values()):
        assert estimator.startswith(f"`{command.estimator.__name__}"), name
        want = [opt for dest, opt in _LEARNER_OPTIONS.items() if dest in command.options]
        assert options.rstrip(" |") == (", ".join(f"`{o}`" for o in want) or "none"), name
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`cseq train --algorithm {'|'.join(commands)}`" in readme


@needs_docs
def test_the_api_reference_shows_every_learner():
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    shown = re.findall(r"^::: cseq\.(\w+)$", text, re.M)
    learners = {c.estimator.__name__ for c in _builtin_commands().values()}
    assert learners <= set(shown)
    # in the order they register (the order of cseq train --help)
    order = list(dict.fromkeys(c.estimator.__name__ for c in _builtin_commands().values()))
    assert [name for name in shown if name in learners] == order
