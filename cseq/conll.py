"""Readers and writers for CoNLL column files and CoNLL-U treebanks.

CoNLL files hold one token per line, its columns separated by whitespace,
and a blank (or whitespace-only) line after each sentence.  CoNLL-U files
(Universal Dependencies) hold ten TAB-separated columns, ``#`` comment lines
and multiword-token and empty-node lines that a tagger skips.

The ``iter_*`` functions stream one :class:`Sentence` at a time, so a file of
any size needs memory for one sentence only; :func:`read_conll` and
:func:`read_conllu` return whole lists.  Every error names the file and the
line (``train.txt:123: expected 3 columns, found 2``).

Sources may be a path (``str`` or :class:`os.PathLike`; a name ending in
``.gz`` is decompressed), or an open file object in text or binary mode.
Paths and binary files are decoded here, line by line, so that a decoding
error names its line; a UTF-8 byte-order mark at the start of the file is
dropped, and CRLF line ends are accepted.  A cseq model file given as a
source is refused by its magic bytes, by name, not as undecodable text.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Union

from cseq.exceptions import InputError, InputTypeError
from cseq.serialize import MAGIC

__all__ = [
    "Sentence",
    "CONLLU_COLUMNS",
    "iter_conll",
    "read_conll",
    "iter_conllu",
    "read_conllu",
    "write_conll",
    "iter_text",
    "read_text",
    "FORMATS",
    "detect_format",
    "sniff_format",
    "conll_events",
    "conllu_blocks",
    "ConlluBlock",
    "text_lines",
]

Source = Union[str, "os.PathLike[str]", IO[str], IO[bytes]]

#: Names of the ten CoNLL-U columns, in file order.
CONLLU_COLUMNS: tuple[str, ...] = (
    "id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc",
)

_DOCSTART = "-DOCSTART-"


@dataclass(frozen=True)
class Sentence:
    """One sentence read from a column file.

    Attributes
    ----------
    rows : list of tuple of str
        One tuple of column values per token.
    line : int
        Line number (1-based) of the first token row in the file.
    source : str
        Name of the file, for messages.
    comments : tuple of str
        Comment lines before the sentence, without the leading ``#`` and
        surrounding whitespace (CoNLL-U only; empty for CoNLL).
    """

    rows: list[tuple[str, ...]]
    line: int
    source: str = "<input>"
    comments: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return iter(self.rows)

    def column(self, index: int) -> list[str]:
        """Values of one column, one per token.

        Parameters
        ----------
        index : int
            Column index; negative values count from the last column.

        Raises
        ------
        InputError
            If the rows have no such column.
        """
        ncol = len(self.rows[0]) if self.rows else 0
        if not -ncol <= index < ncol:
            raise InputError(
                f"{self.source}:{self.line}: no column {index} in rows of {ncol} columns"
            )
        return [row[index] for row in self.rows]

    def split(self, label_column: int = -1) -> tuple[list[tuple[str, ...]], list[str]]:
        """Separate the label column from the other columns.

        Parameters
        ----------
        label_column : int, default -1
            Index of the label column; negative values count from the end.

        Returns
        -------
        rows : list of tuple of str
            The rows without the label column.
        labels : list of str
            The label of each token.

        Raises
        ------
        InputError
            If the rows have no such column.
        """
        labels = self.column(label_column)
        if not self.rows:
            return [], labels
        k = label_column % len(self.rows[0])
        return [row[:k] + row[k + 1 :] for row in self.rows], labels


# ----------------------------------------------------------------------------
# line reading


def _source_name(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


@contextmanager
def _open_lines(source: Source, encoding: str) -> Iterator[Iterator[tuple[int, str]]]:
    """Yield an iterator of (line number, line without its line end)."""
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise InputError(f"unknown text encoding {encoding!r}") from None
    if isinstance(source, (str, os.PathLike)):
        opener = gzip.open if os.fspath(source).endswith(".gz") else open
        with opener(source, "rb") as f:
            yield _lines(f, os.fspath(source), encoding)
    elif hasattr(source, "read") and hasattr(source, "__iter__"):
        yield _lines(source, _source_name(source), encoding)
    else:
        raise InputTypeError(
            f"source must be a path or an open file, got {type(source).__name__}"
        )


#: Bytes read at a time by :func:`_block_lines`.
_BLOCK_BYTES = 1 << 16


def _lines(f: IO[Any], name: str, encoding: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of ``f``, the line ends (``\n``, ``\r\n``) removed."""
    if hasattr(f, "read1") and codecs.lookup(encoding).name == "utf-8":
        return _block_lines(f, name)
    return _each_line(f, name, encoding)


def _block_lines(f: IO[Any], name: str) -> Iterator[tuple[int, str]]:
    # A binary stream in UTF-8, where a b"\n" byte is always a line end:
    # blocks of whole lines are decoded and split at once, which is what
    # _each_line does line by line, several times faster.  read1 returns
    # what the stream has, so a pipe is read as its lines arrive.  A block
    # that does not decode goes through _each_line, to name its line.
    lineno = 0
    tail = b""
    while True:
        try:
            chunk = f.read1(_BLOCK_BYTES)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"{name}:{lineno + 1}: cannot decompress the file: {exc}") from None
        if not isinstance(chunk, bytes):
            raise InputTypeError(f"{name}: a binary file must read bytes, got "
                                 f"{type(chunk).__name__}")
        if chunk:
            block = tail + chunk
            cut = block.rfind(b"\n")
            if cut < 0:
                tail = block
                continue
            tail = block[cut + 1:]
            block = block[:cut]
        elif tail:
            block, tail = tail, b""
        else:
            return
        if lineno == 0:
            _refuse_model_file(block, name)
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            yield from _each_line(block.split(b"\n"), name, "utf-8", lineno)
            raise AssertionError("unreachable: the block did not decode") from None
        lines = text.split("\n")
        if "\r" in text:
            lines = [line.rstrip("\r") for line in lines]
        if lineno == 0 and lines[0].startswith("\ufeff"):
            lines[0] = lines[0][1:]
        yield from zip(range(lineno + 1, lineno + 1 + len(lines)), lines)
        lineno += len(lines)
        if not chunk:
            return


def _each_line(f: Iterable[Any], name: str, encoding: str,
               lineno: int = 0) -> Iterator[tuple[int, str]]:
    # Bytes are decoded one line at a time so that an error names its line;
    # a text stream decodes itself, and its errors surface from next().
    # ``lineno``: the lines before the first of ``f``.
    it = iter(f)
    while True:
        try:
            raw = next(it)
        except StopIteration:
            return
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"{name}:{lineno + 1}: cannot decompress the file: {exc}") from None
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{name}:{lineno + 1}: cannot decode the file as {exc.encoding}: {exc.reason}"
            ) from None
        lineno += 1
        if lineno == 1 and isinstance(raw, (bytes, str)):
            _refuse_model_file(raw, name)
        if isinstance(raw, bytes):
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{name}:{lineno}: cannot decode byte {raw[exc.start:exc.start + 1]!r} "
                    f"at column {exc.start + 1} as {encoding}"
                ) from None
        elif isinstance(raw, str):
            line = raw
        else:
            raise InputTypeError(
                f"{name}: a file must yield str or bytes lines, got {type(raw).__name__}"
            )
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]
        yield lineno, line.rstrip("\r\n")


def _refuse_model_file(start: bytes | str, name: str) -> None:
    """Name a cseq model file given as data, rather than fail to decode its bytes."""
    if (start.startswith(MAGIC) if isinstance(start, bytes)
            else start.startswith(MAGIC.decode("ascii"))):
        raise InputError(f"{name} is a cseq model file, not data (CoNLL, CoNLL-U or text)")


def _check_sep(sep: str | None) -> None:
    if sep is not None and (not isinstance(sep, str) or sep == "" or "\n" in sep or "\r" in sep):
        raise InputError(f"sep must be None or a non-empty string without line ends, got {sep!r}")


# ----------------------------------------------------------------------------
# CoNLL


def iter_conll(
    source: Source,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    docstart: bool = True,
) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL column file.

    Parameters
    ----------
    source : str, os.PathLike or file object
        Path, or a file open in text or binary mode.
    sep : str, optional
        Column separator.  ``None`` (default) splits on any run of whitespace
        (spaces or TABs); pass ``"\\t"`` when a column may contain spaces.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.
    docstart : bool, default True
        Skip ``-DOCSTART-`` lines (CoNLL-2003 document separators); each one
        also ends the current sentence.

    Yields
    ------
    Sentence
        One per sentence, with at least one row.  A blank or whitespace-only
        line ends a sentence; runs of them never yield empty sentences.

    Raises
    ------
    InputError
        If a row has a different number of columns from the first row of the
        file, or a line cannot be decoded (with the file name and line).
    InputTypeError
        If ``source`` is neither a path nor a file object.
    OSError
        If the path cannot be opened.
    """
    _check_sep(sep)
    with _open_lines(source, encoding) as lines:
        for event in conll_events(lines, _source_name(source), sep=sep, docstart=docstart):
            if isinstance(event, Sentence):
                yield event


def conll_events(
    lines: Iterable[tuple[int, str]], name: str, *, sep: str | None = None, docstart: bool = True
) -> Iterator[Sentence | tuple[int, str]]:
    """The sentences of CoNLL lines, and the ``-DOCSTART-`` lines between them.

    The engine of :func:`iter_conll`, for writers that keep the document
    separators (``cseq tag``).

    Parameters
    ----------
    lines : iterable of (int, str)
        Line numbers and lines without their line ends.
    name : str
        File name for messages.
    sep : str, optional
        As for :func:`iter_conll`.
    docstart : bool, default True
        Treat ``-DOCSTART-`` lines as document separators: each ends the
        current sentence and is yielded as ``(line number, line)``.

    Yields
    ------
    Sentence or tuple of (int, str)
        Sentences, and ``-DOCSTART-`` lines in file order.
    """
    ncol = 0
    first_line = 0
    rows: list[tuple[str, ...]] = []
    start = 0
    for lineno, line in lines:
        if not line.strip():
            if rows:
                yield Sentence(rows, start, name)
                rows = []
            continue
        fields = tuple(line.split(sep))
        if docstart and fields[0] == _DOCSTART:
            if rows:
                yield Sentence(rows, start, name)
                rows = []
            yield lineno, line
            continue
        if ncol == 0:
            ncol, first_line = len(fields), lineno
        elif len(fields) != ncol:
            raise InputError(
                f"{name}:{lineno}: expected {ncol} columns, found {len(fields)} "
                f"(line {first_line} has {ncol})"
            )
        if not rows:
            start = lineno
        rows.append(fields)
    if rows:
        yield Sentence(rows, start, name)


def read_conll(
    source: Source,
    *,
    sep: str | None = None,
    label_column: int | None = -1,
    encoding: str = "utf-8",
    docstart: bool = True,
) -> tuple[list[list[tuple[str, ...]]], list[list[str]] | None]:
    """Read a whole CoNLL column file.

    Parameters
    ----------
    source : str, os.PathLike or file object
        Path, or a file open in text or binary mode.
    sep : str, optional
        Column separator; ``None`` (default) splits on any whitespace.
    label_column : int or None, default -1
        Index of the label column (negative counts from the end), which is
        removed from the rows.  ``None`` for unlabeled files: every column
        stays in the rows and ``y`` is ``None``.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.
    docstart : bool, default True
        Skip ``-DOCSTART-`` lines.

    Returns
    -------
    X : list of list of tuple of str
        For each sentence, one tuple of the non-label columns per token.
    y : list of list of str, or None
        For each sentence, the labels; ``None`` when ``label_column`` is None.

    Raises
    ------
    InputError
        As :func:`iter_conll`, and when ``label_column`` is out of range.

    See Also
    --------
    iter_conll : the streaming reader this is built on.

    Examples
    --------
    >>> import io
    >>> X, y = read_conll(io.StringIO("He PRP B-NP\\nran VBD B-VP\\n\\n"))
    >>> X, y
    ([[('He', 'PRP'), ('ran', 'VBD')]], [['B-NP', 'B-VP']])
    """
    if label_column is not None and (
        isinstance(label_column, bool) or not isinstance(label_column, int)
    ):
        raise InputTypeError(f"label_column must be an int or None, got {label_column!r}")
    X: list[list[tuple[str, ...]]] = []
    if label_column is None:
        for sent in iter_conll(source, sep=sep, encoding=encoding, docstart=docstart):
            X.append(sent.rows)
        return X, None
    y: list[list[str]] = []
    for sent in iter_conll(source, sep=sep, encoding=encoding, docstart=docstart):
        rows, labels = sent.split(label_column)
        X.append(rows)
        y.append(labels)
    return X, y


# ----------------------------------------------------------------------------
# CoNLL-U


def _is_word_id(value: str) -> bool | None:
    """True for a word ID, False for a range or empty node, None if invalid."""
    if _is_integer(value):
        return True
    for mark in ("-", "."):
        a, found, b = value.partition(mark)
        if found and _is_integer(a) and _is_integer(b):
            return False
    return None


def _is_integer(value: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts superscripts such as '²'."""
    return value.isascii() and value.isdigit()


def iter_conllu(source: Source, *, encoding: str = "utf-8") -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U file, syntactic words only.

    Multiword-token range lines (ID like ``3-4``) and empty nodes (ID like
    ``8.1``) are skipped, so the rows are the syntactic words (integer IDs)
    that carry UPOS and XPOS.  Comment lines (``#``) are collected into
    :attr:`Sentence.comments`.

    Parameters
    ----------
    source : str, os.PathLike or file object
        Path, or a file open in text or binary mode.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.

    Yields
    ------
    Sentence
        Rows of 10 str each, in the order of :data:`CONLLU_COLUMNS`.

    Raises
    ------
    InputError
        If a line does not have 10 TAB-separated columns or its ID is not an
        integer, range or decimal, or a line cannot be decoded (with the
        file name and line).
    OSError
        If the path cannot be opened.
    """
    with _open_lines(source, encoding) as lines:
        for block in conllu_blocks(lines, _source_name(source)):
            if block.sentence is not None:
                yield block.sentence


@dataclass(frozen=True)
class ConlluBlock:
    """Every line of one CoNLL-U sentence, for writers that keep them all.

    Attributes
    ----------
    lines : list of str
        The lines as read (comments, multiword-token ranges, empty nodes and
        words), without line ends.
    words : list of int
        Index in ``lines`` of each syntactic word, in order.
    sentence : Sentence or None
        The syntactic words, as :func:`iter_conllu` yields them; None for a
        block of comments only.
    """

    lines: list[str]
    words: list[int]
    sentence: Sentence | None


def conllu_blocks(lines: Iterable[tuple[int, str]], name: str) -> Iterator[ConlluBlock]:
    """The sentences of CoNLL-U lines with all their lines (the engine of :func:`iter_conllu`).

    Parameters
    ----------
    lines : iterable of (int, str)
        Line numbers and lines without their line ends.
    name : str
        File name for messages.

    Yields
    ------
    ConlluBlock
        One per blank-line-separated block.

    Raises
    ------
    InputError
        As :func:`iter_conllu`.
    """
    raw: list[str] = []
    words: list[int] = []
    rows: list[tuple[str, ...]] = []
    comments: list[str] = []
    start = 0

    def block() -> ConlluBlock:
        sent = Sentence(rows, start, name, tuple(comments)) if rows else None
        return ConlluBlock(raw, words, sent)

    for lineno, line in lines:
        if not line.strip():
            if raw:
                yield block()
            raw, words, rows, comments = [], [], [], []
            continue
        if line.startswith("#"):
            comments.append(line[1:].strip())
            raw.append(line)
            continue
        fields = tuple(line.split("\t"))
        if len(fields) != 10:
            raise InputError(
                f"{name}:{lineno}: expected 10 TAB-separated columns, found {len(fields)}"
            )
        kind = _is_word_id(fields[0])
        if kind is None:
            raise InputError(f"{name}:{lineno}: invalid ID {fields[0]!r}")
        raw.append(line)
        if not kind:
            continue
        if not rows:
            start = lineno
        words.append(len(raw) - 1)
        rows.append(fields)
    if raw:
        yield block()


def read_conllu(
    source: Source,
    *,
    label: str | None = "upos",
    columns: Sequence[str] = ("form",),
    encoding: str = "utf-8",
) -> tuple[list[list[tuple[str, ...]]], list[list[str]] | None]:
    """Read a whole CoNLL-U file for tagging.

    Parameters
    ----------
    source : str, os.PathLike or file object
        Path, or a file open in text or binary mode.
    label : str or None, default "upos"
        Column to return as labels: ``"upos"``, ``"xpos"`` or any name in
        :data:`CONLLU_COLUMNS`; ``None`` returns no labels.
    columns : sequence of str, default ("form",)
        Columns to keep in the rows, by name, in this order.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.

    Returns
    -------
    X : list of list of tuple of str
        For each sentence, one tuple of the chosen columns per syntactic word.
    y : list of list of str, or None
        For each sentence, the labels; ``None`` when ``label`` is None.

    Raises
    ------
    InputError
        As :func:`iter_conllu`, and for an unknown column name.

    Examples
    --------
    >>> import io
    >>> text = "# text = Hi\\n1\\tHi\\thi\\tINTJ\\tUH\\t_\\t0\\troot\\t0:root\\t_\\n\\n"
    >>> read_conllu(io.StringIO(text))
    ([[('Hi',)]], [['INTJ']])
    """
    if isinstance(columns, str):
        raise InputTypeError("columns must be a sequence of column names, not a string")
    names = list(columns) + ([label] if label is not None else [])
    for col in names:
        if not isinstance(col, str) or col.lower() not in CONLLU_COLUMNS:
            raise InputError(f"unknown CoNLL-U column {col!r}; expected one of {CONLLU_COLUMNS}")
    idx = [CONLLU_COLUMNS.index(c.lower()) for c in columns]
    X: list[list[tuple[str, ...]]] = []
    y: list[list[str]] | None = None if label is None else []
    li = CONLLU_COLUMNS.index(label.lower()) if label is not None else 0
    for sent in iter_conllu(source, encoding=encoding):
        X.append([tuple(row[i] for i in idx) for row in sent.rows])
        if y is not None:
            y.append([row[li] for row in sent.rows])
    return X, y


# ----------------------------------------------------------------------------
# plain text


def text_lines(
    lines: Iterable[tuple[int, str]], name: str
) -> Iterator[Sentence | tuple[int, str]]:
    """Sentences of plain-text lines, and the blank lines between them.

    The engine of :func:`iter_text`, for writers that keep the blank lines
    (``cseq tag`` writes one output line per input line).

    Yields
    ------
    Sentence or tuple of (int, str)
        A Sentence (rows of one column, the tokens) per non-blank line;
        ``(line number, line)`` for a blank or whitespace-only line.
    """
    for lineno, line in lines:
        tokens = line.split()
        if tokens:
            yield Sentence([(t,) for t in tokens], lineno, name)
        else:
            yield lineno, line


def iter_text(source: Source, *, encoding: str = "utf-8") -> Iterator[Sentence]:
    """Stream plain text: one sentence per line, tokens separated by whitespace.

    Blank lines are skipped.  Text is not tokenized here: ``"dog."`` stays
    one token, as in the file.

    Parameters
    ----------
    source : str, os.PathLike or file object
        Path, or a file open in text or binary mode.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.

    Yields
    ------
    Sentence
        Rows of one column (the token), ``line`` the line number.

    Examples
    --------
    >>> import io
    >>> [s.rows for s in iter_text(io.StringIO("The dog barked .\\n\\nIt ran\\n"))]
    [[('The',), ('dog',), ('barked',), ('.',)], [('It',), ('ran',)]]
    """
    with _open_lines(source, encoding) as lines:
        for item in text_lines(lines, _source_name(source)):
            if isinstance(item, Sentence):
                yield item


def read_text(source: Source, *, encoding: str = "utf-8") -> list[list[str]]:
    """Read plain text (one sentence per line) as lists of tokens, blank lines skipped.

    Examples
    --------
    >>> import io
    >>> read_text(io.StringIO("The dog barked .\\nIt ran\\n"))
    [['The', 'dog', 'barked', '.'], ['It', 'ran']]
    """
    return [sent.column(0) for sent in iter_text(source, encoding=encoding)]


# ----------------------------------------------------------------------------
# format detection

#: Formats :func:`detect_format` tells apart.
FORMATS: tuple[str, ...] = ("conll", "conllu", "text")


def sniff_format(
    lines: Sequence[str], *, sep: str | None = None, n_columns: int | None = None,
    strict: bool = False,
) -> str | None:
    """Guess the format of a file from its first lines (see :func:`detect_format`).

    Parameters
    ----------
    lines : sequence of str
        The first lines of the file (a few hundred suffice), without line ends.
    sep : str, optional
        CoNLL column separator (None: any whitespace).
    n_columns : int, optional
        Number of columns a CoNLL reader of this file expects (e.g. what a
        model was trained on).  Without it, only CoNLL-U and CoNLL are told
        apart, except a file of one line of several tokens, which is text.
    strict : bool, default False
        Raise :class:`InputError` instead of guessing when the lines do not
        settle the question (see :func:`detect_format`).

    Returns
    -------
    str or None
        ``"conllu"``, ``"conll"`` or ``"text"``; None if there is no data line.
    """
    guess, doubt = _guess_format(lines, sep, n_columns)
    if strict and doubt is not None:
        raise InputError(f"cannot tell the format: {doubt}")
    return guess


def _guess_format(lines: Sequence[str], sep: str | None, n_columns: int | None
                  ) -> tuple[str | None, str | None]:
    """The format of :func:`sniff_format`, and why it is only a guess (None if it is not)."""
    _check_sep(sep)
    data = [line for line in lines if line.strip()]
    if not data:
        return None, None
    first = next((line for line in data if not line.startswith("#")), None)
    if first is None:
        return "conllu", None  # comments only: only CoNLL-U has comment lines
    fields = first.split("\t")
    if len(fields) == 10 and _is_word_id(fields[0]) is not None:
        return "conllu", None
    doubt = ("it looks like JSON; cseq reads CoNLL, CoNLL-U and plain text"
             if _looks_like_json(data) else None)
    counts = [len(line.split(sep)) for line in data if line.split()[0] != _DOCSTART]
    if not counts:
        return "conll", doubt
    mode = max(set(counts), key=counts.count)
    # A column file has (almost) the same number of columns on every line; a
    # bad row is left for the CoNLL reader to report with its line number.
    if counts.count(mode) < 0.9 * len(counts):
        return "text", doubt
    multi_line = any(a.strip() and b.strip() for a, b in zip(lines, lines[1:]))
    if n_columns is None:
        return ("conll" if multi_line or mode == 1 else "text"), doubt
    # One more column than the model reads may be a label column.
    if mode in (n_columns, n_columns + 1):
        return "conll", doubt
    if doubt is None and len(counts) >= _COLUMN_LINES:
        # Sentences of text are hardly ever all of one length: as many lines
        # of the same count are rows of columns, which the model cannot read.
        doubt = (f"its first {len(counts)} lines all hold {mode} tokens, like the rows of a "
                 f"{mode}-column CoNLL file, but the model reads {n_columns} "
                 f"column{'s' if n_columns > 1 else ''} ({n_columns + 1} with a label)")
    return "text", doubt


#: Lines of one token count from which :func:`sniff_format` no longer reads a
#: file whose count the model does not read as text (without a doubt).
_COLUMN_LINES = 3


def _looks_like_json(data: Sequence[str]) -> bool:
    """Whether the first data lines are JSON: a JSON object or array on the first
    line (JSON lines, compact JSON), or ``{`` / ``[`` alone then a member or element."""
    head = data[0].strip()
    if head in ("{", "["):
        return len(data) > 1 and data[1].strip()[:1] in ('"', "{", "[", "]", "}")
    if head[:1] not in ("{", "["):
        return False
    try:
        json.loads(head)
    except ValueError:
        return False
    return True


def detect_format(
    source: str | os.PathLike[str],
    *,
    sep: str | None = None,
    n_columns: int | None = None,
    encoding: str = "utf-8",
    max_lines: int = 200,
    strict: bool = False,
) -> str | None:
    """Guess whether a file is CoNLL-U, CoNLL or plain text, from its content.

    CoNLL-U: the first line that is not a ``#`` comment has ten TAB-separated
    columns and an integer, range or decimal ID (whatever the file name).
    Plain text: lines hold different numbers of tokens (one sentence per
    line), or, when ``n_columns`` is given, a number of columns that is
    neither ``n_columns`` nor one more.  CoNLL otherwise.

    The guess is not certain (``strict`` then raises) when the lines look
    like JSON, or when ``n_columns`` is given and three lines or more all
    hold one count of tokens that is neither ``n_columns`` nor one more:
    rows of a CoNLL file whose columns the model cannot read as they are, or
    sentences of text that happen to be of one length.  A cseq model file
    is refused when the file is read (its magic bytes), whatever the format.

    Parameters
    ----------
    source : str or os.PathLike
        Path of the file.
    sep : str, optional
        CoNLL column separator (None: any whitespace).
    n_columns : int, optional
        Columns a model reads (see :func:`sniff_format`).
    encoding : str, default "utf-8"
    max_lines : int, default 200
        Lines read.
    strict : bool, default False
        Raise :class:`InputError` naming the doubt instead of guessing.

    Returns
    -------
    str or None
        ``"conllu"``, ``"conll"`` or ``"text"``; None for a file without data.

    Examples
    --------
    >>> import io
    >>> sniff_format(["The dog barked .", "It ran"])
    'text'
    >>> sniff_format(["The DT", "dog NN", "", "It PRP"])
    'conll'
    """
    head: list[str] = []
    with _open_lines(source, encoding) as lines:
        for _, line in lines:
            head.append(line)
            if len(head) >= max_lines:
                break
    return sniff_format(head, sep=sep, n_columns=n_columns, strict=strict)


# ----------------------------------------------------------------------------
# writing


@contextmanager
def _open_out(file: Any, encoding: str) -> Iterator[IO[str]]:
    if isinstance(file, (str, os.PathLike)):
        with open(file, "w", encoding=encoding, newline="\n") as f:
            yield f
    elif hasattr(file, "write"):
        yield file
    else:
        raise InputTypeError(
            f"file must be a path or a text file object, got {type(file).__name__}"
        )


def _check_field(value: Any, sep: str, where: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"{where}: expected str, got {type(value).__name__} ({value!r})")
    if not value or value.isspace() or sep in value or "\n" in value or "\r" in value:
        raise InputError(
            f"{where}: {value!r} cannot be written as a column: it is empty, blank, "
            f"or holds the separator {sep!r} or a line end"
        )
    return value


def write_conll(
    file: str | os.PathLike[str] | IO[str],
    rows_or_tokens: Iterable[Sequence[str | Sequence[str]]],
    labels: Iterable[Sequence[str]],
    *,
    marginals: Iterable[Sequence[float]] | None = None,
    sep: str = "\t",
    encoding: str = "utf-8",
) -> int:
    """Write sentences as a CoNLL file: input columns, then the label.

    Parameters
    ----------
    file : str, os.PathLike or text file object
        Where to write.  A path is created or overwritten, with LF line ends.
    rows_or_tokens : iterable of sequences
        One sequence per sentence; each token is a str (one column) or a
        sequence of str (several columns, as read by :func:`read_conll`).
    labels : iterable of sequences of str
        The label of every token, written as the next column.
    marginals : iterable of sequences of float, optional
        The probability of every written label (e.g. from
        ``predict_marginals``), written as a last column formatted with four
        decimals (``0.9731``).
    sep : str, default "\\t"
        Column separator.
    encoding : str, default "utf-8"
        Encoding of a path.

    Returns
    -------
    int
        Number of sentences written.  Each sentence is followed by a blank
        line.  Sentences are written as they are checked, so after an error
        the file holds the sentences before the faulty one.

    Raises
    ------
    InputError
        If the arguments hold different numbers of sentences or tokens (with
        the sentence index), or a value is empty, blank, or contains ``sep`` or
        a line end (it could not be read back).
    InputTypeError
        If a value is not a str (a marginal not a real number).
    """
    if not isinstance(sep, str) or not sep or "\n" in sep or "\r" in sep:
        raise InputError(f"sep must be a non-empty string without line ends, got {sep!r}")
    arguments = (("rows_or_tokens", rows_or_tokens), ("labels", labels), ("marginals", marginals))
    for name, arg in arguments:
        if isinstance(arg, (str, bytes)) or (arg is not None and not hasattr(arg, "__iter__")):
            raise InputTypeError(
                f"{name} must be an iterable of sequences, one per sentence, "
                f"got {type(arg).__name__}"
            )
    missing = object()
    sentences = iter(rows_or_tokens)
    label_seqs = iter(labels)
    marg_seqs = iter(marginals) if marginals is not None else None
    n = 0
    with _open_out(file, encoding) as out:
        while True:
            toks = next(sentences, missing)
            labs = next(label_seqs, missing)
            margs = next(marg_seqs, missing) if marg_seqs is not None else None
            if toks is missing and labs is missing and (margs is missing or margs is None):
                return n
            if toks is missing or labs is missing or margs is missing:
                raise InputError(
                    f"rows_or_tokens, labels{' and marginals' if marg_seqs else ''} "
                    f"hold different numbers of sentences (one ends at sentence {n})"
                )
            for name, seq in (("rows_or_tokens", toks), ("labels", labs), ("marginals", margs)):
                if seq is not None and (isinstance(seq, str) or not hasattr(seq, "__len__")):
                    raise InputTypeError(
                        f"{name}[{n}] must be a sequence (list, tuple or array), "
                        f"got {type(seq).__name__}"
                    )
            if len(toks) != len(labs) or (margs is not None and len(margs) != len(toks)):
                counts = f"{len(toks)} tokens, {len(labs)} labels"
                if margs is not None:
                    counts += f", {len(margs)} marginals"
                raise InputError(f"sentence {n}: {counts}")
            lines = []
            for i, (tok, lab) in enumerate(zip(toks, labs)):
                where = f"sentence {n}, token {i}"
                if isinstance(tok, str):
                    cols = [tok]
                elif isinstance(tok, Sequence):
                    cols = list(tok)
                else:
                    raise InputTypeError(
                        f"{where}: a token must be a str or a sequence of str, "
                        f"got {type(tok).__name__}"
                    )
                cols = [_check_field(c, sep, where) for c in cols]
                cols.append(_check_field(lab, sep, where + " (label)"))
                if margs is not None:
                    try:
                        cols.append(f"{float(margs[i]):.4f}")
                    except (TypeError, ValueError):
                        raise InputTypeError(
                            f"{where}: marginal {margs[i]!r} is not a number"
                        ) from None
                lines.append(sep.join(cols))
            lines.append("")
            out.write("\n".join(lines) + "\n")
            n += 1
