"""Tests of the demo corpus shipped in cseq/data."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cseq.conll import iter_conll, read_conll
from cseq.data import (SAMPLE_SENTENCES, SAMPLE_TOKENS, TRAIN_SENTENCES, TRAIN_TOKENS,
                       sample_path, train_path)
from support.paths import SHARED

UPOS = {
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM",
    "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
}


def test_sample_reads_with_documented_counts():
    path = sample_path()
    assert path.is_file() and path.name == "ewt_sample.tsv"
    X, y = read_conll(path, sep="\t")
    assert len(X) == SAMPLE_SENTENCES == 2500
    assert sum(len(s) for s in y) == SAMPLE_TOKENS == 45506
    assert all(len(row) == 1 and row[0] for s in X for row in s)
    # the whitespace reader agrees: no form contains a space
    assert read_conll(path) == (X, y)


def test_sample_uses_exactly_the_17_upos_tags():
    _, y = read_conll(sample_path(), sep="\t")
    assert {tag for s in y for tag in s} == UPOS


def test_sample_file_format():
    data = sample_path().read_bytes()
    assert len(data) < 500_000
    assert b"\r" not in data and not data.startswith(b"\xef\xbb\xbf")
    assert data.endswith(b"\n\n")
    data.decode("utf-8")
    first = next(iter_conll(sample_path(), sep="\t"))
    assert first.rows[:3] == [("Al", "PROPN"), ("-", "PUNCT"), ("Zaman", "PROPN")]


def test_license_and_attribution_are_shipped():
    folder = sample_path().parent
    license_text = (folder / "LICENSE.txt").read_text(encoding="utf-8")
    assert "Attribution-ShareAlike 4.0 International" in license_text
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "UD_English-EWT" in readme and "CC BY-SA 4.0" in readme
    assert "15d613d8447b3478787d4c278730a1e48a945efb" in readme


# ---------------------------------------------------------------------------
# the whole EWT training file behind `cseq demo`

EWT_TRAIN = Path(os.environ.get("CSEQ_SHARED_DATA",
                                SHARED / "data")
                 ) / "ud_en_ewt" / "en_ewt-ud-train.conllu"


def test_train_file_reads_with_documented_counts_and_digest():
    path = train_path()
    assert path.name == "ewt_train.tsv.gz" and path.stat().st_size == 488_374
    text = gzip.decompress(path.read_bytes())
    assert len(text) == 2_041_590
    assert hashlib.sha256(text).hexdigest() == (
        "f66337dc7c394a1f497ddce9714c77f2bb296eb3721e01ed313d5a40eb5db6c9")
    assert text.startswith(sample_path().read_bytes())
    X, y = read_conll(path, sep="\t")
    assert len(X) == TRAIN_SENTENCES == 12544
    assert sum(map(len, y)) == TRAIN_TOKENS == 204577
    assert {t for s in y for t in s} == UPOS


@pytest.mark.skipif(not EWT_TRAIN.exists(), reason=f"{EWT_TRAIN} is not present")
def test_train_file_is_rebuilt_by_the_documented_snippet(tmp_path):
    readme = (sample_path().parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("## The whole training file")
    code = readme[readme.index("```python\n", start) + 10:readme.index("```", readme.index(
        "```python\n", start) + 10)]
    code = code.replace('"en_ewt-ud-train.conllu"', repr(str(EWT_TRAIN)))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ewt_train.tsv.gz").read_bytes() == train_path().read_bytes()
