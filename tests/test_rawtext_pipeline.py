"""Raw text through cseq (issue 29): the paragraph reader, raw text made from CoNLL-U."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from cseq.exceptions import CSeqError, InputError
from cseq.io.raw import Paragraph, conllu_raw_text, iter_paragraphs

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "ud_en_ewt"


def _row(i: str, form: str, misc: str = "_") -> str:
    return "\t".join([i, form, "_", "X", "_", "_", "0", "root", "_", misc])


def _sentence(text: str | None, rows: list[str], marks: tuple[str, ...] = ()) -> str:
    head = [f"# {m}" for m in marks] + ([f"# text = {text}"] if text is not None else [])
    return "\n".join(head + rows) + "\n\n"


# ---------------------------------------------------------------- reader


def test_paragraphs_and_their_offsets_in_the_file(tmp_path):
    text = "\n  \nFirst line\nsecond line.\n\n\n\tThird  para.\r\nstill third\n\nlast"
    path = tmp_path / "raw.txt"
    path.write_bytes(text.encode("utf-8"))
    paras = list(iter_paragraphs(path))
    as_read = path.read_text(encoding="utf-8")
    assert [p.text for p in paras] == ["First line\nsecond line.", "\tThird  para.\nstill third",
                                       "last"]
    assert [p.line for p in paras] == [3, 7, 10]
    assert all(as_read[p.offset:p.offset + len(p.text)] == p.text for p in paras)


def test_paragraphs_stream_from_a_gzip_and_a_text_stream(tmp_path):
    path = tmp_path / "raw.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("a b\n\nc\n")
    assert list(iter_paragraphs(path)) == [Paragraph("a b", 0, 1), Paragraph("c", 5, 3)]
    assert [p.text for p in iter_paragraphs(io.StringIO("x\n\n\ny"))] == ["x", "y"]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n\t\n"])
def test_empty_and_whitespace_only_files_have_no_paragraph(tmp_path, content):
    path = tmp_path / "raw.txt"
    path.write_bytes(content)
    assert list(iter_paragraphs(path)) == []


def test_binary_file_is_refused(tmp_path):
    path = tmp_path / "raw.bin"
    path.write_bytes(b"abc\x00\x01\x02\n")
    with pytest.raises(InputError, match=r"raw.bin:1: a NUL character: this is a binary file"):
        list(iter_paragraphs(path))
    path.write_bytes(b"abc\n\xff\xfe\n")
    with pytest.raises(InputError, match=r"raw.bin:2: cannot decode"):
        list(iter_paragraphs(path))


# ---------------------------------------------------------------- raw text from CoNLL-U


def test_raw_text_joins_sentences_of_a_paragraph_by_their_space_after():
    conllu = (
        _sentence("Hi there.", [_row("1", "Hi"), _row("2", "there", "SpaceAfter=No"),
                                _row("3", ".", "SpaceAfter=No")], ("newdoc id = d1",))
        + _sentence("Bye", [_row("1", "Bye")])
        + _sentence("New one", [_row("1", "New"), _row("2", "one")], ("newpar",))
        + _sentence(None, [_row("1-2", "don't", "SpaceAfter=No"), _row("1", "do"), _row("2", "n't"),
                           _row("3", "!", "SpaceAfter=No")])
    )
    assert list(conllu_raw_text(io.StringIO(conllu))) == ["Hi there.Bye", "New one don't!"]


def test_raw_text_without_marks_has_a_paragraph_per_n_sentences():
    conllu = "".join(_sentence(f"S{i}.", [_row("1", f"S{i}.")]) for i in range(5))
    assert list(conllu_raw_text(io.StringIO(conllu), sentences_per_paragraph=2)) == [
        "S0. S1.", "S2. S3.", "S4."]
    with pytest.raises(CSeqError, match="sentences_per_paragraph must be a positive integer"):
        list(conllu_raw_text(io.StringIO(conllu), sentences_per_paragraph=0))


@pytest.mark.skipif(not (DATA / "en_ewt-ud-dev.conllu").exists(), reason="EWT not available")
def test_raw_ewt_dev_spells_the_treebank():
    from cseq.ud_metrics import _Treebank
    paras = list(conllu_raw_text(DATA / "en_ewt-ud-dev.conllu"))
    assert len(paras) == 750            # the # newpar and # newdoc marks of EWT dev
    assert all(p and "\n" not in p and p == p.strip() for p in paras)
    chars = _Treebank(DATA / "en_ewt-ud-dev.conllu", "utf-8").chars
    assert "".join("".join(paras).split()) == "".join("".join(chars).split())
