"""Readers for CoNLL column files, CoNLL-U treebanks and plain text.

CoNLL files hold one token per line, its columns separated by whitespace,
and a blank (or whitespace-only) line after each sentence.  CoNLL-U files
(Universal Dependencies) hold ten TAB-separated columns, ``#`` comment lines
and multiword-token and empty-node lines that a tagger skips.  Plain text
holds one sentence per line.

The ``iter_*`` functions stream one :class:`Sentence` at a time, so a file of
any size needs memory for one sentence only; :func:`read_conll`,
:func:`read_conllu` and :func:`read_text` return whole lists.  Every error
names the file and the line (``train.txt:123: expected 3 columns, found 2``).
Sources are opened and decoded by :mod:`cseq.io.sources`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from cseq.exceptions import InputError, InputTypeError
from cseq.io.sources import Source, check_sep, open_lines, source_name

__all__ = [
    "Sentence",
    "CONLLU_COLUMNS",
    "DOCSTART",
    "iter_conll",
    "read_conll",
    "conll_events",
    "iter_conllu",
    "read_conllu",
    "conllu_blocks",
    "ConlluBlock",
    "is_word_id",
    "iter_text",
    "read_text",
    "text_lines",
]

#: Names of the ten CoNLL-U columns, in file order.
CONLLU_COLUMNS: tuple[str, ...] = (
    "id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc",
)

#: The first column of a CoNLL-2003 document separator line.
DOCSTART = "-DOCSTART-"


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
    check_sep(sep)
    with open_lines(source, encoding) as lines:
        for event in conll_events(lines, source_name(source), sep=sep, docstart=docstart):
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
        if docstart and fields[0] == DOCSTART:
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


def is_word_id(value: str) -> bool | None:
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
    with open_lines(source, encoding) as lines:
        for block in conllu_blocks(lines, source_name(source)):
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
        kind = is_word_id(fields[0])
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
    with open_lines(source, encoding) as lines:
        for item in text_lines(lines, source_name(source)):
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
