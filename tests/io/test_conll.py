"""Tests of the CoNLL and CoNLL-U readers and the CoNLL writer."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cseq import conll
from cseq.io import sources
from cseq.conll import (
    CONLLU_COLUMNS,
    Sentence,
    iter_conll,
    iter_conllu,
    read_conll,
    read_conllu,
    write_conll,
)
from cseq.exceptions import InputError, InputTypeError

from support.budget import examples
from support.shared_data import DATA, needs


def _write(tmp_path: Path, content: str | bytes, name: str = "f.txt") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


# ---------------------------------------------------------------------------
# read_conll / iter_conll


def test_basic_three_columns(tmp_path):
    path = _write(tmp_path, "He PRP B-NP\nran VBD B-VP\n\nOK UH O\n")
    X, y = read_conll(path)
    assert X == [[("He", "PRP"), ("ran", "VBD")], [("OK", "UH")]]
    assert y == [["B-NP", "B-VP"], ["O"]]
    # the same from str and from open text and binary files
    assert read_conll(str(path)) == (X, y)
    with open(path, encoding="utf-8") as f:
        assert read_conll(f) == (X, y)
    with open(path, "rb") as f:
        assert read_conll(f) == (X, y)
    assert read_conll(io.StringIO(path.read_text())) == (X, y)
    assert read_conll(io.BytesIO(path.read_bytes())) == (X, y)


def test_sentence_objects(tmp_path):
    path = _write(tmp_path, "\n\na x L1\nb y L2\n\n\n\nc z L3\n")
    sents = list(iter_conll(path))
    assert [s.line for s in sents] == [3, 8]
    assert all(s.source == str(path) for s in sents)
    s = sents[0]
    assert isinstance(s, Sentence)
    assert len(s) == 2 and list(s) == s.rows == [("a", "x", "L1"), ("b", "y", "L2")]
    assert s.column(0) == ["a", "b"]
    assert s.column(-1) == ["L1", "L2"]
    assert s.split() == ([("a", "x"), ("b", "y")], ["L1", "L2"])
    assert s.split(0) == ([("x", "L1"), ("y", "L2")], ["a", "b"])
    assert s.split(1) == ([("a", "L1"), ("b", "L2")], ["x", "y"])
    with pytest.raises(InputError, match=r"f\.txt:3: no column 3"):
        s.column(3)


def test_iter_conll_is_lazy(tmp_path):
    # The second sentence is broken; the first is still yielded before the error.
    path = _write(tmp_path, "a B\n\nb C D\n")
    it = iter_conll(path)
    assert next(it).rows == [("a", "B")]
    with pytest.raises(InputError):
        next(it)


def test_label_column_options(tmp_path):
    path = _write(tmp_path, "a x L1\nb y L2\n")
    assert read_conll(path, label_column=None) == ([[("a", "x", "L1"), ("b", "y", "L2")]], None)
    assert read_conll(path, label_column=1) == ([[("a", "L1"), ("b", "L2")]], [["x", "y"]])
    with pytest.raises(InputError, match="no column 5"):
        read_conll(path, label_column=5)
    with pytest.raises(InputTypeError):
        read_conll(path, label_column="1")


def test_whitespace_and_separators(tmp_path):
    # any run of spaces or tabs separates columns by default
    path = _write(tmp_path, "a \t x   L1\nb\ty\tL2\n")
    assert read_conll(path) == ([[("a", "x"), ("b", "y")]], [["L1", "L2"]])
    # a TAB separator keeps spaces inside a column
    path = _write(tmp_path, "New York\tNNP\tB-LOC\nis\tVBZ\tO\n")
    assert read_conll(path, sep="\t") == (
        [[("New York", "NNP"), ("is", "VBZ")]],
        [["B-LOC", "O"]],
    )
    path = _write(tmp_path, "a x\nb y\n")
    assert read_conll(path, sep=" ") == ([[("a",), ("b",)]], [["x", "y"]])
    for bad in ("", "\n", 3):
        with pytest.raises(InputError, match="sep"):
            read_conll(path, sep=bad)


def test_whitespace_only_lines_end_sentences(tmp_path):
    path = _write(tmp_path, "a\tO\n\t\nb\tO\n   \nc\tO\n \t \n")
    X, y = read_conll(path, sep="\t")
    assert y == [["O"], ["O"], ["O"]]
    assert read_conll(path) == (X, y)


def test_crlf_missing_final_newline_and_bom(tmp_path):
    content = "\ufeffa x B-NP\r\nb y I-NP\r\n\r\nc z O"
    path = _write(tmp_path, content)
    expected = ([[("a", "x"), ("b", "y")], [("c", "z")]], [["B-NP", "I-NP"], ["O"]])
    assert read_conll(path) == expected
    assert read_conll(path, sep=" ") == expected
    with open(path, encoding="utf-8", newline="") as f:
        assert read_conll(f) == expected
    # a BOM decoded by a text stream is dropped too
    with open(path, encoding="utf-8") as f:
        assert read_conll(f) == expected


def test_docstart_is_skipped(tmp_path):
    content = (
        "-DOCSTART- -X- O O\n\nEU NNP B-NP B-ORG\n\n"
        "-DOCSTART- -X- O O\nPeter NNP B-NP B-PER\n"
    )
    path = _write(tmp_path, content)
    X, y = read_conll(path)
    assert y == [["B-ORG"], ["B-PER"]]
    assert X == [[("EU", "NNP", "B-NP")], [("Peter", "NNP", "B-NP")]]
    # a -DOCSTART- line inside a sentence ends it
    path = _write(tmp_path, "a O\n-DOCSTART- O\nb O\n")
    assert read_conll(path)[1] == [["O"], ["O"]]
    # docstart=False keeps it as a row
    assert read_conll(path, docstart=False)[1] == [["O", "O", "O"]]


def test_column_count_mismatch_names_file_and_line(tmp_path):
    path = _write(tmp_path, "a x L\nb y L\n\nc L\n", name="bad.txt")
    with pytest.raises(InputError, match=r"bad\.txt:4: expected 3 columns, found 2"):
        read_conll(path)
    path = _write(tmp_path, "a x L\nb L\n", name="bad2.txt")
    with pytest.raises(InputError, match=r"bad2\.txt:2: expected 3 columns, found 2"):
        read_conll(path)
    # a stream without a name
    with pytest.raises(InputError, match=r"<stream>:2: expected 2 columns, found 1"):
        read_conll(io.BytesIO(b"a L\nb\n"))


def test_decoding_error_names_file_and_line(tmp_path):
    path = _write(tmp_path, b"a O\nb O\n\ncaf\xe9 O\n", name="latin.txt")
    with pytest.raises(InputError, match=r"latin\.txt:4: cannot decode byte b'\\xe9'"):
        read_conll(path)
    assert read_conll(path, encoding="latin-1")[0][1] == [("caf\xe9",)]
    with open(path, encoding="utf-8") as f:
        with pytest.raises(InputError, match=r"latin\.txt:\d+: cannot decode"):
            read_conll(f)


def test_empty_and_blank_files(tmp_path):
    assert read_conll(_write(tmp_path, "")) == ([], [])
    assert read_conll(_write(tmp_path, "\n \n\t\n")) == ([], [])
    assert read_conll(_write(tmp_path, ""), label_column=None) == ([], None)


def test_bad_sources(tmp_path):
    with pytest.raises(InputTypeError, match="path or an open file"):
        read_conll(42)
    with pytest.raises(InputTypeError):
        read_conll(["a O"])
    with pytest.raises(FileNotFoundError):
        read_conll(tmp_path / "missing.txt")


# ---------------------------------------------------------------------------
# CoNLL-U

CONLLU = (
    "# sent_id = s1\n"
    "# text = I don't know.\n"
    "1\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t4:nsubj\t_\n"
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t4:aux\t_\n"
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_\n"
    "4\tknow\tknow\tVERB\tVB\t_\t0\troot\t0:root\t_\n"
    "4.1\tknow\tknow\tVERB\tVB\t_\t_\t_\t2:conj\t_\n"
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_\n"
    "\n"
    "# sent_id = s2\n"
    "1\tNew York\tNew York\tPROPN\tNNP\t_\t0\troot\t0:root\t_\n"
)


def test_conllu_skips_ranges_empty_nodes_and_comments(tmp_path):
    path = _write(tmp_path, CONLLU, name="x.conllu")
    X, y = read_conllu(path)
    assert X == [[("I",), ("do",), ("n't",), ("know",), (".",)], [("New York",)]]
    assert y == [["PRON", "AUX", "PART", "VERB", "PUNCT"], ["PROPN"]]
    X, y = read_conllu(path, label="xpos", columns=("form", "lemma"))
    assert X[0][1] == ("do", "do") and y[0] == ["PRP", "VBP", "RB", "VB", "."]
    X, y = read_conllu(path, label=None, columns=("id", "FORM"))
    assert y is None and X[1] == [("1", "New York")]
    sents = list(iter_conllu(path))
    assert [s.line for s in sents] == [3, 12]
    assert sents[0].comments == ("sent_id = s1", "text = I don't know.")
    assert sents[1].comments == ("sent_id = s2",)
    assert all(len(r) == len(CONLLU_COLUMNS) == 10 for s in sents for r in s.rows)


def test_conllu_crlf_bom_and_streams(tmp_path):
    path = _write(tmp_path, "\ufeff" + CONLLU.replace("\n", "\r\n"))
    assert read_conllu(path) == read_conllu(io.StringIO(CONLLU))
    assert read_conllu(io.BytesIO(CONLLU.encode())) == read_conllu(io.StringIO(CONLLU))


def test_conllu_errors(tmp_path):
    bad = CONLLU.replace("4\tknow\tknow\tVERB\tVB\t_\t0\troot\t0:root\t_", "4\tknow\tVERB")
    path = _write(tmp_path, bad, name="bad.conllu")
    msg = r"bad\.conllu:7: expected 10 TAB-separated columns, found 3"
    with pytest.raises(InputError, match=msg):
        read_conllu(path)
    bad = CONLLU.replace("5\t.", "x\t.")
    path = _write(tmp_path, bad, name="bad.conllu")
    with pytest.raises(InputError, match=r"bad\.conllu:9: invalid ID 'x'"):
        read_conllu(path)
    with pytest.raises(InputError, match="unknown CoNLL-U column 'pos'"):
        read_conllu(io.StringIO(CONLLU), label="pos")
    with pytest.raises(InputError, match="unknown CoNLL-U column"):
        read_conllu(io.StringIO(CONLLU), columns=("word",))
    with pytest.raises(InputTypeError):
        read_conllu(io.StringIO(CONLLU), columns="form")
    path = _write(tmp_path, b"1\tcaf\xe9" + b"\t_" * 8 + b"\n", name="enc.conllu")
    with pytest.raises(InputError, match=r"enc\.conllu:1: cannot decode"):
        read_conllu(path)


# ---------------------------------------------------------------------------
# write_conll


def test_write_round_trip(tmp_path):
    X = [[("He", "PRP"), ("ran", "VBD")], [("OK", "UH")]]
    y = [["B-NP", "B-VP"], ["O"]]
    path = tmp_path / "out.txt"
    assert write_conll(path, X, y) == 2
    assert path.read_bytes() == b"He\tPRP\tB-NP\nran\tVBD\tB-VP\n\nOK\tUH\tO\n\n"
    assert read_conll(path, sep="\t") == (X, y)
    # plain tokens and a space separator, to a text stream
    out = io.StringIO()
    write_conll(out, [["a", "b"]], [["X", "Y"]], sep=" ")
    assert out.getvalue() == "a X\nb Y\n\n"


def test_write_marginals(tmp_path):
    out = io.StringIO()
    write_conll(out, [["a", "b"], ["c"]], [["X", "Y"], ["Z"]],
                marginals=[np.array([0.97312, 1.0]), [0.5]])
    assert out.getvalue() == "a\tX\t0.9731\nb\tY\t1.0000\n\nc\tZ\t0.5000\n\n"
    path = tmp_path / "m.txt"
    write_conll(path, [["a"]], [["X"]], marginals=[[0.25]])
    assert read_conll(path, label_column=1) == ([[("a", "0.2500")]], [["X"]])


def test_write_errors():
    out = io.StringIO()
    with pytest.raises(InputError, match="sentence 1: 1 tokens, 2 labels"):
        write_conll(out, [["a"], ["b"]], [["X"], ["X", "Y"]])
    with pytest.raises(InputError, match="sentence 0: 1 tokens, 1 labels, 2 marginals"):
        write_conll(out, [["a"]], [["X"]], marginals=[[0.1, 0.2]])
    with pytest.raises(InputError, match="different numbers of sentences"):
        write_conll(out, [["a"], ["b"]], [["X"]])
    with pytest.raises(InputError, match="different numbers of sentences"):
        write_conll(out, [["a"]], [["X"]], marginals=[])
    with pytest.raises(InputError, match=r"sentence 0, token 1: 'b c' cannot be written"):
        write_conll(out, [["a", "b c"]], [["X", "Y"]], sep=" ")
    with pytest.raises(InputError, match=r"token 0 \(label\)"):
        write_conll(out, [["a"]], [["X\tY"]])
    with pytest.raises(InputError, match="cannot be written"):
        write_conll(out, [[""]], [["X"]])
    with pytest.raises(InputError, match="cannot be written"):
        write_conll(out, [["a\nb"]], [["X"]])
    with pytest.raises(InputTypeError, match="a token must be a str or a sequence of str"):
        write_conll(out, [[1]], [["X"]])
    with pytest.raises(InputTypeError, match="sentence 0, token 0: expected str, got int"):
        write_conll(out, [[("a", 1)]], [["X"]])
    with pytest.raises(InputTypeError, match=r"token 0 \(label\): expected str"):
        write_conll(out, [["a"]], [[None]])
    with pytest.raises(InputTypeError, match="not a number"):
        write_conll(out, [["a"]], [["X"]], marginals=[["high"]])
    with pytest.raises(InputTypeError):
        write_conll(out, "ab", [["X"]])
    with pytest.raises(InputTypeError, match="must be an iterable"):
        write_conll(out, 3, [["X"]])
    with pytest.raises(InputTypeError, match=r"labels\[0\] must be a sequence"):
        write_conll(out, [["a"]], ["X"])
    with pytest.raises(InputTypeError, match=r"rows_or_tokens\[0\] must be a sequence"):
        write_conll(out, [iter(["a"])], [["X"]])
    with pytest.raises(InputTypeError):
        write_conll(object(), [["a"]], [["X"]])
    with pytest.raises(InputError, match="sep"):
        write_conll(out, [["a"]], [["X"]], sep="")


# ---------------------------------------------------------------------------
# the real corpora in ../shared/data

needs_data = needs(DATA / "conll2000" / "train.txt", DATA / "wnut17" / "wnut17train.conll",
                   DATA / "ud_en_ewt" / "en_ewt-ud-dev.conllu")


@needs_data
def test_real_conll2000():
    X, y = read_conll(DATA / "conll2000" / "train.txt")
    assert len(X) == 8936
    assert sum(len(s) for s in X) == 211727
    assert all(len(row) == 2 for s in X for row in s)
    assert len({lab for s in y for lab in s}) == 22


@needs_data
def test_real_wnut17():
    path = DATA / "wnut17" / "wnut17train.conll"
    for sep in (None, "\t"):
        X, y = read_conll(path, sep=sep)
        assert len(X) == 3394
        assert sum(len(s) for s in X) == 62730
        assert len({lab for s in y for lab in s}) == 13


@needs_data
def test_real_ud_ewt_dev():
    path = DATA / "ud_en_ewt" / "en_ewt-ud-dev.conllu"
    X, y = read_conllu(path)
    assert len(X) == 2001
    assert sum(len(s) for s in X) == 25147
    assert len({lab for s in y for lab in s}) == 17
    _, xpos = read_conllu(path, label="xpos")
    assert sum(len(s) for s in xpos) == 25147


def test_gzip_paths_are_decompressed(tmp_path):
    import gzip
    plain = "He PRP B-NP\nran VBD B-VP\n\n"
    path = tmp_path / "a.txt.gz"
    path.write_bytes(gzip.compress(plain.encode()))
    assert read_conll(path) == read_conll(io.StringIO(plain))
    broken = tmp_path / "b.txt.gz"
    many = "".join(f"w{i} T{i % 7}\n\n" for i in range(5000)).encode()
    data = gzip.compress(many)
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"b\.txt\.gz:\d+: cannot decompress"):
        read_conll(broken)
    junk = tmp_path / "c.txt.gz"
    junk.write_bytes(b"not gzip at all\n")
    with pytest.raises(InputError, match=r"c\.txt\.gz:1: cannot decompress"):
        read_conll(junk)


# -- the block line reader ----------------------------------------------------------------

_pieces = st.sampled_from(["a", "bc", " ", "\t", "\n", "\r\n", "\r", "\n\n", "é", "日本",
                           "\ufeff", "-DOCSTART-", "x y"])


def _reference_lines(data: bytes) -> list[tuple[int, str]]:
    """Line by line, as a binary file iterates: split after each b"\\n", line ends stripped,
    a BOM dropped from the first line."""
    out = []
    for k, raw in enumerate(io.BytesIO(data), 1):
        line = raw.decode("utf-8").rstrip("\r\n")
        out.append((k, line[1:] if k == 1 and line.startswith("\ufeff") else line))
    return out


@examples(150)
@given(text=st.lists(_pieces, max_size=30).map("".join), block=st.integers(1, 9))
def test_block_reader_gives_the_lines_of_a_binary_file(text, block):
    data = text.encode("utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sources, "_BLOCK_BYTES", block)  # blocks end inside lines and characters
        assert list(sources._lines(io.BytesIO(data), "f", "utf-8")) == _reference_lines(data)


@pytest.mark.parametrize("block", [1, 4, 1 << 16])
def test_block_reader_names_the_line_of_a_bad_byte(monkeypatch, block):
    monkeypatch.setattr(sources, "_BLOCK_BYTES", block)
    data = "a\nb\r\nc\n".encode() * 5 + b"ok\nbad \xe9 byte\nnext\n"
    got = []
    with pytest.raises(InputError, match=r"^f:17: cannot decode byte b'\\xe9' at column 5 "
                                         r"as utf-8$"):
        for lineno, line in sources._lines(io.BytesIO(data), "f", "utf-8"):
            got.append((lineno, line))
    assert got == _reference_lines(data[:data.index(b"bad")])  # every line before it


def test_block_reader_reads_a_pipe_as_its_lines_arrive():
    # read1 returns what the stream has: the first lines come out before the rest is written.
    class Pipe(io.RawIOBase):
        def __init__(self, parts):
            self.parts = list(parts)

        def readable(self):
            return True

        def readinto(self, b):
            if not self.parts:
                return 0
            part = self.parts.pop(0)
            b[:len(part)] = part
            return len(part)
    pipe = Pipe([b"one\ntw", b"o\n", b"three"])
    lines = sources._lines(io.BufferedReader(pipe), "p", "utf-8")
    assert next(lines) == (1, "one")
    assert pipe.parts == [b"o\n", b"three"]
    assert list(lines) == [(2, "two"), (3, "three")]


def test_text_streams_and_other_encodings_are_read_line_by_line():
    assert list(sources._lines(io.StringIO("a\r\nb\n"), "f", "utf-8")) == [(1, "a"), (2, "b")]
    data = "é\r\nb".encode("latin-1")
    assert list(sources._lines(io.BytesIO(data), "f", "latin-1")) == [(1, "é"), (2, "b")]


# ---------------------------------------------------------------------------
# The format guess says when it is not sure; a model file is not data


def test_format_guess_names_its_doubts_when_strict(tmp_path):
    rows = ["Rockwell NNP B-NP", "Corp. NNP I-NP", "said VBD B-VP", "", "It PRP B-NP"]
    # non-strict: the guess of old (text); strict: an error naming why
    assert conll.sniff_format(rows, n_columns=1) == "text"
    with pytest.raises(InputError, match="cannot tell the format: its first 4 lines all hold 3"):
        conll.sniff_format(rows, n_columns=1, strict=True)
    path = _write(tmp_path, "\n".join(rows) + "\n")
    with pytest.raises(InputError, match="3-column CoNLL file, but the model reads 1 column"):
        conll.detect_format(path, n_columns=1, strict=True)
    # what the lines settle is not doubted
    assert conll.sniff_format(rows, n_columns=2, strict=True) == "conll"  # + a label
    assert conll.sniff_format(rows, strict=True) == "conll"
    assert conll.sniff_format(["The dog barked .", "It ran"], n_columns=1, strict=True) == "text"
    assert conll.sniff_format(["a b c", "d e f"], n_columns=1, strict=True) == "text"
    for data in (['{"tokens": ["a"]}'], ["[", '  {"a": 1}', "]"], ['[["a", "B"]]']):
        with pytest.raises(InputError, match="looks like JSON"):
            conll.sniff_format(data, strict=True)
    # a token that starts like JSON is not JSON
    assert conll.sniff_format(["{ -LRB-", "x NN", "} -RRB-"], strict=True) == "conll"


def test_empty_separator_is_refused_by_the_guess():
    with pytest.raises(InputError, match="sep must be"):
        conll.sniff_format(["a b"], sep="")


def test_a_model_file_given_as_data_is_named(tmp_path):
    import cseq
    est = cseq.StructuredPerceptron(max_iter=1).fit([[["w=a"], ["w=b"]]], [["X", "Y"]])
    path = tmp_path / "m.cseq"
    est.save(path)
    for read in (read_conll, read_conllu, conll.read_text):
        with pytest.raises(InputError, match=r"m\.cseq is a cseq model file, not data"):
            read(path)
        with pytest.raises(InputError, match="is a cseq model file"):  # unbuffered lines too
            read(io.BytesIO(path.read_bytes()), encoding="latin-1")
