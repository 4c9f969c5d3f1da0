"""Tests of the demo corpus shipped in cseq/data."""

from __future__ import annotations

from cseq.conll import iter_conll, read_conll
from cseq.data import SAMPLE_SENTENCES, SAMPLE_TOKENS, sample_path

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
