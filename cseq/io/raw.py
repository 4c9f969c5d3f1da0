"""Raw text: paragraphs of a text file, and raw text made from a CoNLL-U treebank.

A raw text file holds running text, not yet split into sentences or tokens;
paragraphs are separated by blank (or whitespace-only) lines, and the line
breaks inside a paragraph are only whitespace.  :func:`iter_paragraphs`
streams the paragraphs, one in memory at a time, each with its character
offset in the file, so that a caller can map the offsets a segmenter gives
inside a paragraph back onto the file.

:func:`conllu_raw_text` makes such text from a CoNLL-U file as a user would
have it: the ``# text`` of the sentences of a paragraph on one
line, joined by a space unless the sentence's last token has
``SpaceAfter=No``; a paragraph per ``# newpar`` / ``# newdoc`` mark, or per
``sentences_per_paragraph`` sentences in a file without marks.  One sentence
per line would give the sentence boundaries away.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from cseq.exceptions import InputError, InputTypeError
from cseq.io.conll_read import conllu_blocks, is_word_id
from cseq.io.formats import sniff_format
from cseq.io.sources import Source, open_lines, source_name

__all__ = ["Paragraph", "iter_paragraphs", "paragraphs_of", "conllu_raw_text"]


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One paragraph of a raw text file.

    Attributes
    ----------
    text : str
        The paragraph's lines joined by ``"\\n"`` (their line ends), without
        the blank lines around it.
    offset : int
        Character offset of ``text`` in the file's text as Python's
        ``open(path, encoding=...).read()`` gives it (every line end one
        ``"\\n"``, a UTF-8 byte-order mark left out): ``file_text[offset:
        offset + len(text)] == text``.
    line : int
        Line number (1-based) of its first line, for messages.
    """

    text: str
    offset: int
    line: int


def iter_paragraphs(source: Source, *, encoding: str = "utf-8", check_format: bool = False
                    ) -> Iterator[Paragraph]:
    """Stream the paragraphs of a raw text file, with their offsets.

    Parameters
    ----------
    source : str, os.PathLike or file object
        Path (``.gz`` is decompressed), or a file open in text or binary mode.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.
    check_format : bool, default False
        Refuse a file whose first lines are certainly not raw text: CoNLL-U
        (already segmented), or JSON (what ``--format auto`` does when a
        segmenter is to read the file).

    Yields
    ------
    Paragraph
        One per run of lines that are not blank; a file of blank lines only
        yields none.

    Raises
    ------
    InputError
        If the file cannot be decoded (naming the line), holds a NUL
        character (a binary file, not text), or is a cseq model file; with
        ``check_format``, if it is CoNLL-U or JSON.
    """
    name = source_name(source)
    with open_lines(source, encoding) as numbered:
        if check_format:
            head = list(itertools.islice(numbered, _SNIFF_LINES))
            _check_raw([line for _, line in head], name)
            numbered = itertools.chain(head, numbered)
        yield from _paragraphs(numbered, name)


#: Lines read to tell raw text from CoNLL-U and JSON.
_SNIFF_LINES = 200


def _check_raw(head: list[str], name: str) -> None:
    """Refuse first lines that are CoNLL-U or JSON, with what to do instead."""
    for line in head:
        if "\0" in line:
            return          # _paragraphs names the binary file, at its line
    try:
        guess = sniff_format(head, strict=True)
    except InputError as exc:
        raise InputError(f"{name}: {exc} (raw text for a segmenter: say --format raw if it "
                         "is raw text)") from None
    if guess == "conllu":
        raise InputError(f"{name} is CoNLL-U, already split into sentences and tokens: tag it "
                         "without a segmenter (or say --format raw if it is raw text)")


def paragraphs_of(text: str) -> Iterator[Paragraph]:
    """The paragraphs of a string, as :func:`iter_paragraphs` reads those of a file.

    The offsets are into ``text`` itself: ``text[p.offset:p.offset +
    len(p.text)] == p.text`` (a CR of a CRLF line end stays in the
    paragraph, where it is whitespace).

    Raises
    ------
    InputTypeError
        If ``text`` is not a str.
    InputError
        If it holds a NUL character.
    """
    if not isinstance(text, str):
        raise InputTypeError(f"text must be a str, got {type(text).__name__}")
    return _paragraphs(enumerate(text.split("\n"), 1), "<string>")


def _paragraphs(numbered: Iterable[tuple[int, str]], name: str) -> Iterator[Paragraph]:
    """Runs of non-blank lines of ``(line number, line)``; each line end counts one character."""
    lines: list[str] = []
    start = first = 0
    offset = 0
    for lineno, line in numbered:
        if "\0" in line:
            raise InputError(f"{name}:{lineno}: a NUL character: this is a binary file, "
                             "not raw text")
        if line.strip():
            if not lines:
                start, first = offset, lineno
            lines.append(line)
        elif lines:
            yield Paragraph("\n".join(lines), start, first)
            lines = []
        offset += len(line) + 1
    if lines:
        yield Paragraph("\n".join(lines), start, first)


#: Comments that open a paragraph in CoNLL-U (``# newdoc id = ...`` too).
_MARKS = ("newpar", "newdoc")


def _is_mark(comment: str) -> bool:
    return any(comment == m or comment.startswith((m + " ", m + "=")) for m in _MARKS)


def conllu_raw_text(source: Source, *, sentences_per_paragraph: int = 10,
                    encoding: str = "utf-8") -> Iterator[str]:
    """The paragraphs of raw text that a CoNLL-U file was made from.

    Each paragraph is one line: the ``# text`` of its sentences (or, for a
    sentence without one, its tokens joined as their ``SpaceAfter=No``
    marks say), joined by a space unless the sentence's last token has
    ``SpaceAfter=No``.  Join them with ``"\\n\\n"`` to write the file.

    Parameters
    ----------
    source : str, os.PathLike or file object
        A CoNLL-U file.
    sentences_per_paragraph : int, default 10
        Sentences of a paragraph in a file whose first sentence has no
        ``# newpar`` or ``# newdoc`` mark.
    encoding : str, default "utf-8"
        Encoding of paths and binary files.

    Yields
    ------
    str
        One paragraph, without line end.

    Raises
    ------
    InputError
        As :func:`cseq.io.conll_read.iter_conllu`; if
        ``sentences_per_paragraph`` is not a positive integer.
    """
    if (not isinstance(sentences_per_paragraph, int) or isinstance(sentences_per_paragraph, bool)
            or sentences_per_paragraph < 1):
        raise InputError(f"sentences_per_paragraph must be a positive integer, got "
                         f"{sentences_per_paragraph!r}")
    parts: list[str] = []
    n_sentences = 0
    marked: bool | None = None       # decided by the first sentence
    with open_lines(source, encoding) as lines:
        for block in conllu_blocks(lines, source_name(source)):
            if block.sentence is None:
                continue
            comments = block.sentence.comments
            if marked is None:
                marked = any(_is_mark(c) for c in comments)
            starts = (any(_is_mark(c) for c in comments) if marked
                      else n_sentences % sentences_per_paragraph == 0)
            if starts and parts:
                yield "".join(parts).rstrip()
                parts = []
            text, space_after = _sentence_text(block.lines, comments)
            parts.append(text + (" " if space_after else ""))
            n_sentences += 1
    if parts:
        yield "".join(parts).rstrip()


def _sentence_text(lines: list[str], comments: tuple[str, ...]) -> tuple[str, bool]:
    """A sentence's text and whether its last token has a space after it."""
    tokens: list[tuple[str, bool]] = []
    range_end = 0
    for line in lines:
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        kind = is_word_id(fields[0])
        if kind is False and "-" in fields[0]:
            range_end = int(fields[0].partition("-")[2])
        elif not kind or int(fields[0]) <= range_end:
            continue            # an empty node, or a word of a multiword token
        tokens.append((fields[1], "SpaceAfter=No" not in fields[9].split("|")))
    for c in comments:
        key, eq, value = c.partition("=")
        if eq and key.strip() == "text":
            return value.strip(), tokens[-1][1]
    return "".join(f + (" " if sp else "") for f, sp in tokens).rstrip(), tokens[-1][1]
