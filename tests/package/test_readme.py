"""The README's examples run as written: the quick start, the API example and
"Tag your own text"."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from support.paths import ROOT

README = ROOT / "README.md"


def _block(heading: str, lang: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(heading)
    m = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert m is not None, f"no {lang} block after {heading!r}"
    return m.group(1)


def _env() -> dict[str, str]:
    # the `cseq` script next to this Python (a venv's bin) comes first on PATH
    bindir = os.path.dirname(sys.executable)
    return dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                PYTHONIOENCODING="utf-8")


def _cseq_on_path() -> bool:
    return any(os.access(os.path.join(d, "cseq"), os.X_OK)
               for d in _env()["PATH"].split(os.pathsep) if d)


def test_quick_start_commands():
    block = _block("# cseq", "bash")
    first, second = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert first == 'pip install -e . && cseq demo'  # works from a fresh clone, before a release
    # The test dependencies are a dependency group: installing them builds nothing.
    assert second == 'pip install -U pip && pip install --group test && python -m pytest'
    r = subprocess.run([sys.executable, "-m", "cseq", "demo"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert "held-out accuracy" in r.stdout and "tagged: " in r.stdout


def test_api_example(tmp_path):
    code = _block("## Ten lines of API", "python")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "chunker.cseq").exists()


@pytest.mark.skipif(not _cseq_on_path(), reason="the cseq script is not installed")
def test_tag_your_own_text(tmp_path):
    script = _block("## Tag your own text", "bash")
    r = subprocess.run(["bash", "-euc", script], capture_output=True, text=True, cwd=tmp_path,
                       env=_env(), timeout=600)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    tagged = [line for line in out if "/" in line and not line.startswith("{")
              and not line.startswith(("tagged:", "model", "cseq", "held", "train"))]
    assert [[w.rsplit("/", 1)[0] for w in line.split()] for line in tagged] == [
        ["The", "dog", "barked", "."], ["It", "ran", "home", "."]]
    assert tagged[0].startswith("The/DET dog/NOUN barked/VERB ./PUNCT")
    records = [json.loads(line) for line in out if line.startswith("{")]
    assert [rec["tokens"] for rec in records] == [["The", "dog", "barked", "."],
                                                  ["It", "ran", "home", "."]]
    assert (tmp_path / "pos.cseq").exists()
