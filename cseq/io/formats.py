"""Telling CoNLL, CoNLL-U and plain text apart from a file's first lines.

``cseq tag`` and ``cseq eval`` read whatever they are given through
:func:`detect_format` (or :func:`sniff_format` on lines already read), and
say why when the lines do not settle the question.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from cseq.exceptions import InputError
from cseq.io.conll_read import DOCSTART, is_word_id
from cseq.io.sources import check_sep, open_lines

__all__ = ["FORMATS", "detect_format", "sniff_format"]

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
    check_sep(sep)
    data = [line for line in lines if line.strip()]
    if not data:
        return None, None
    first = next((line for line in data if not line.startswith("#")), None)
    if first is None:
        return "conllu", None  # comments only: only CoNLL-U has comment lines
    fields = first.split("\t")
    if len(fields) == 10 and is_word_id(fields[0]) is not None:
        return "conllu", None
    doubt = ("it looks like JSON; cseq reads CoNLL, CoNLL-U and plain text"
             if _looks_like_json(data) else None)
    counts = [len(line.split(sep)) for line in data if line.split()[0] != DOCSTART]
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
    with open_lines(source, encoding) as lines:
        for _, line in lines:
            head.append(line)
            if len(head) >= max_lines:
                break
    return sniff_format(head, sep=sep, n_columns=n_columns, strict=strict)
