"""Streaming input and output for the command line.

Reads CoNLL, CoNLL-U or plain text (a path or ``-`` for standard input),
detecting the format from the content, and yields :class:`Item` objects in
file order: sentences to tag, and lines that are written back unchanged
(``-DOCSTART-`` lines, blank lines of plain text).  Writers turn an item and
its predicted labels into output text in CoNLL, CoNLL-U, plain text or JSON
lines.  ``cseq tag`` reads, tags and writes batches of items, so a file of
any size needs memory for one batch.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from cseq.io._files import replacing
from cseq.io.conll_read import (
    CONLLU_COLUMNS,
    ConlluBlock,
    Sentence,
    conll_events,
    conllu_blocks,
    text_lines,
)
from cseq.io.formats import sniff_format
from cseq.io.sources import open_lines
from cseq.exceptions import InputError

__all__ = ["Item", "Reader", "open_reader", "write_items", "json_record", "nbest_record",
           "OUTPUT_FORMATS"]

#: Output formats of ``cseq tag``.
OUTPUT_FORMATS: tuple[str, ...] = ("conll", "conllu", "text", "jsonl")

_SNIFF_LINES = 200


@dataclass
class Item:
    """One unit of a file in order: a sentence to tag, or a line kept as it is.

    Attributes
    ----------
    x : list of tuple of str, or None
        The model's input columns per token; None for a kept line.
    gold : list of str, or None
        Labels read from the file (labeled input only).
    shown : list of tuple of str, or None
        Columns written before the label in CoNLL output.
    line : int
        Line number of the first line of the item.
    raw : str, ConlluBlock or None
        A kept line (``-DOCSTART-``, a blank text line) or a CoNLL-U block.
    """

    x: list[tuple[str, ...]] | None
    gold: list[str] | None
    shown: list[tuple[str, ...]] | None
    line: int
    raw: str | ConlluBlock | None = None


@contextmanager
def _lines(path: str, encoding: str) -> Iterator[tuple[str, Iterator[tuple[int, str]]]]:
    if path == "-":
        if sys.stdin is None:  # `cseq tag MODEL - <&-`
            raise InputError("standard input is closed: give an input file, or - with "
                             "something to read")
        with open_lines(sys.stdin.buffer, encoding) as lines:
            yield "<stdin>", lines
    else:
        with open_lines(path, encoding) as lines:
            yield path, lines


class Reader:
    """Items of one input file, its format detected from the first lines.

    Parameters
    ----------
    name : str
        File name for messages.
    lines : iterator of (int, str)
    fmt : str
        ``"auto"``, ``"conll"``, ``"conllu"`` or ``"text"``.
    sep : str or None
        CoNLL column separator.
    n_columns : int or None
        Columns the model reads (helps tell CoNLL from plain text).
    """

    def __init__(self, name: str, lines: Iterator[tuple[int, str]], fmt: str, *,
                 sep: str | None, n_columns: int | None, allow_text: bool) -> None:
        self.name = name
        head = list(itertools.islice(lines, _SNIFF_LINES))
        if fmt == "auto":
            try:
                guess = sniff_format([line for _, line in head], sep=sep,
                                     n_columns=n_columns if allow_text else None, strict=True)
            except InputError as exc:  # not sure: the user says which, no silent garbage
                choices = "conll, conllu or text" if allow_text else "conll or conllu"
                raise InputError(f"{name}: {exc}: say which with --format {choices}") from None
            fmt = "conll" if guess is None or (guess == "text" and not allow_text) else guess
        self.format = fmt
        self.sep = sep
        self._lines = itertools.chain(head, lines)

    def items(self, *, label: str | int | None, columns: Sequence[str | int] | None,
              drop_label: bool = False) -> Iterator[Item]:
        """Yield the items of the file.

        Parameters
        ----------
        label : str, int or None
            The label column: a CoNLL-U column name, or a CoNLL column index
            (negative counts from the end); None for unlabeled input.
        columns : sequence of str or int, or None
            Input columns of the model: CoNLL-U names (default ``form``) or
            CoNLL indices among the columns left after the label (default all).
        drop_label : bool
            Unlabeled use of labeled CoNLL input: remove the label column
            but do not return it.
        """
        if self.format == "conllu":
            yield from self._conllu(label, columns)
        elif self.format == "text":
            if label is not None:
                raise InputError(f"{self.name}: plain text has no labels; give a CoNLL or "
                                 "CoNLL-U file")
            for item in text_lines(self._lines, self.name):
                if isinstance(item, Sentence):
                    yield Item(item.rows, None, item.rows, item.line)
                else:
                    yield Item(None, None, None, item[0], item[1])
        else:
            yield from self._conll(label, columns, drop_label)

    def _conll(self, label, columns, drop_label) -> Iterator[Item]:
        if label is not None and not isinstance(label, int):
            raise InputError(f"{self.name}: a CoNLL label column is a number, got {label!r}")
        for ev in conll_events(self._lines, self.name, sep=self.sep):
            if not isinstance(ev, Sentence):
                yield Item(None, None, None, ev[0], ev[1])
                continue
            if label is not None:
                rows, gold = ev.split(label)
                if drop_label:
                    gold = None
            else:
                rows, gold = ev.rows, None
            x = rows
            if columns is not None:
                x = _select(rows, columns, ev)
            yield Item(x, gold, rows, ev.line)

    def _conllu(self, label, columns) -> Iterator[Item]:
        names = ["form"] if columns is None else [str(c).lower() for c in columns]
        for col in names + ([label] if label is not None else []):
            if not isinstance(col, str) or col.lower() not in CONLLU_COLUMNS:
                raise InputError(f"unknown CoNLL-U column {col!r}; expected one of "
                                 f"{', '.join(CONLLU_COLUMNS)}")
        idx = [CONLLU_COLUMNS.index(c) for c in names]
        li = CONLLU_COLUMNS.index(label.lower()) if label is not None else None
        for block in conllu_blocks(self._lines, self.name):
            sent = block.sentence
            if sent is None:
                yield Item(None, None, None, 0, block)
                continue
            x = [tuple(row[i] for i in idx) for row in sent.rows]
            gold = [row[li] for row in sent.rows] if li is not None else None
            yield Item(x, gold, x, sent.line, block)


def _select(rows: list[tuple[str, ...]], columns: Sequence[str | int], sent: Sentence
            ) -> list[tuple[str, ...]]:
    ncol = len(rows[0])
    idx = []
    for c in columns:
        if not isinstance(c, int) or not -ncol <= c < ncol:
            raise InputError(f"{sent.source}:{sent.line}: no input column {c!r} "
                             f"(the rows have {ncol} column(s) besides the label)")
        idx.append(c % ncol)
    return [tuple(row[i] for i in idx) for row in rows]


@contextmanager
def open_reader(path: str, fmt: str = "auto", *, sep: str | None = None,
                n_columns: int | None = None, allow_text: bool = False,
                encoding: str = "utf-8") -> Iterator[Reader]:
    """A :class:`Reader` of ``path`` (``-``: standard input), closed on exit."""
    if fmt == "auto" and path != "-" and str(path).endswith(".conllu"):
        fmt = "conllu"
    with _lines(path, encoding) as (name, lines):
        yield Reader(name, lines, fmt, sep=sep, n_columns=n_columns, allow_text=allow_text)


# ----------------------------------------------------------------------------
# writing


def _conf(value: float) -> str:
    return f"{value:.4f}"


def format_item(item: Item, labels: list[str] | None, conf: Any,
                fmt: str, label_column: str | int | None) -> str:
    """The output text of one item (with its line ends); '' when nothing is written.

    ``conf`` is None, the confidences of the labels, or a
    :class:`cseq.probability.Tagged` (JSON lines then also get the sentence's
    log-probability, entropy and spans).
    """
    tagged = conf if hasattr(conf, "confidence") else None
    if tagged is not None:
        conf = tagged.confidence
    if item.x is None:
        if fmt == "conllu" and isinstance(item.raw, ConlluBlock):
            return "\n".join(item.raw.lines) + "\n\n"
        if fmt == "text" and isinstance(item.raw, str) and not item.raw.strip():
            return "\n"
        if fmt == "conll" and isinstance(item.raw, str) and item.raw.strip():
            return item.raw + "\n\n"  # -DOCSTART-
        return ""
    assert labels is not None
    if fmt == "conll":
        lines = map("\t".join, item.shown or item.x)
        if conf is None:
            return "".join([f"{line}\t{lab}\n" for line, lab in zip(lines, labels)]) + "\n"
        return "".join([f"{line}\t{lab}\t{_conf(c)}\n"
                        for line, lab, c in zip(lines, labels, conf)]) + "\n"
    tokens = [cols[0] for cols in (item.shown or item.x)]
    if fmt == "text":
        return " ".join(f"{t}/{lab}" for t, lab in zip(tokens, labels)) + "\n"
    if fmt == "jsonl":
        return json.dumps(json_record(tokens, labels, conf, tagged), ensure_ascii=False) + "\n"
    # CoNLL-U: the prediction replaces the label column of each word line.
    block = item.raw
    assert isinstance(block, ConlluBlock) and isinstance(label_column, str)
    k = CONLLU_COLUMNS.index(label_column.lower())
    lines = list(block.lines)
    for pos, lab in zip(block.words, labels):
        fields = lines[pos].split("\t")
        fields[k] = lab
        lines[pos] = "\t".join(fields)
    return "\n".join(lines) + "\n\n"


def json_record(tokens: list[str], labels: list[str], conf: Any = None,
                tagged: Any = None) -> dict[str, Any]:
    """One tagged sentence as JSON lines and ``cseq serve`` give it.

    ``conf`` is None or the confidences of the labels; ``tagged`` None or a
    :class:`cseq.probability.Tagged`, whose log-probability, entropy and spans
    (their ``text`` from ``tokens``) are added.
    """
    record: dict[str, Any] = {"tokens": tokens, "labels": labels}
    if conf is not None:
        record["confidence"] = [round(float(c), 4) for c in conf]
    if tagged is not None:
        lp = float(tagged.log_prob)  # -inf (JSON has none) when it underflows
        record["log_prob"] = round(lp, 6) if math.isfinite(lp) else None
        record["entropy"] = round(float(tagged.entropy), 6)
        if tagged.spans is not None:
            record["spans"] = [{"type": typ, "start": i, "end": j,
                                "text": " ".join(tokens[i:j]),
                                "probability": round(float(p), 4)}
                               for typ, i, j, p in tagged.spans]
    return record


def nbest_record(tokens: list[str], found: Any) -> dict[str, Any]:
    """The n-best labelings of one sentence (a :class:`cseq.decoding.NBest`) as JSON
    lines and ``cseq serve`` give them: the best ``labels`` and the ``nbest`` list of
    ``{labels, score, log_prob}`` (``log_prob`` for probabilistic models)."""
    nbest = []
    for i, p in enumerate(found.labels):
        entry = {"labels": p, "score": round(float(found.scores[i]), 6)}
        if found.log_probs is not None:
            entry["log_prob"] = round(float(found.log_probs[i]), 6)
        nbest.append(entry)
    return {"tokens": tokens, "labels": found.labels[0], "nbest": nbest}


def check_labels(labels: list[str], fmt: str) -> None:
    """Refuse labels that the output format cannot hold (CoNLL-U fields, text tokens)."""
    for lab in labels:
        if not lab or any(ch.isspace() for ch in lab):
            raise InputError(f"label {lab!r} cannot be written as {fmt}: it is empty or "
                             "holds whitespace")


@contextmanager
def open_output(path: str | None) -> Iterator[IO[str]]:
    """Standard output for None or ``-``; else the file, created with LF line ends.

    A file is written through :func:`cseq.io._files.replacing`: the output
    appears, whole, when the block ends without an error; after an error or
    Ctrl-C an existing file is left as it was.
    """
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
    else:
        with replacing(path) as f:
            yield f


def write_items(out: IO[str], items: list[Item], labels: list[list[str]],
                confs: list[Any] | None, fmt: str, label_column: str | int | None) -> None:
    """Write a batch of items; ``labels`` (and ``confs``) hold one entry per sentence item."""
    parts = []
    k = 0
    for item in items:
        if item.x is None:
            parts.append(format_item(item, None, None, fmt, label_column))
            continue
        parts.append(format_item(item, labels[k], None if confs is None else confs[k], fmt,
                                 label_column))
        k += 1
    out.write("".join(parts))
