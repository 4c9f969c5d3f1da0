"""Training data for the segmenter: CoNLL-U as running text with character labels.

A CoNLL-U file carries the raw text (``# text``), its tokens, ``SpaceAfter=No``
and the multiword tokens (``3-4`` lines).  :func:`paragraphs` rebuilds the
text as a user would have it, the issue's way: the sentences of a paragraph
(``# newpar``, ``# newdoc``; ten sentences at a time in a file without such
marks) on one line, joined by a space unless the sentence's last token has
``SpaceAfter=No``.  So training sees sentence boundaries inside running text,
never one sentence per line.

Each character gets a label (:data:`LABELS`); whitespace between tokens is
``O``, so that offsets map back to the exact text.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from cseq.exceptions import InputError
from cseq.io.conll_read import ConlluBlock, conllu_blocks
from cseq.io.sources import open_lines, source_name

__all__ = ["LABELS", "Paragraph", "paragraphs", "multiword_table", "SENTENCES_PER_PARAGRAPH",
           "space_share"]

#: The character labels: O whitespace between tokens; B begins a token, S a
#: sentence; BW, SW the same for a multiword token; I continues a token; J
#: continues a multiword token and begins its next word (a split point).
LABELS = ("O", "B", "S", "BW", "SW", "I", "J")

#: Sentences per paragraph in a file without ``# newpar``/``# newdoc`` marks.
SENTENCES_PER_PARAGRAPH = 10


@dataclass(frozen=True)
class GoldToken:
    """One token of a CoNLL-U sentence: its surface and its syntactic words."""

    form: str
    words: tuple[str, ...]
    space_after: bool


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of running text with its gold segmentation.

    Attributes
    ----------
    text : str
    labels : list of str, one of :data:`LABELS` per character of ``text``
    sentences : list of list of (start, end, words)
        The gold tokens' offsets into ``text`` and their words.
    """

    text: str
    labels: list[str]
    sentences: list[list[tuple[int, int, tuple[str, ...]]]]


def _misc_space_after(misc: str) -> bool:
    return "SpaceAfter=No" not in misc.split("|")


def _tokens(block: ConlluBlock, name: str) -> list[GoldToken]:
    """The tokens of one CoNLL-U sentence (multiword ranges with their words)."""
    tokens: list[GoldToken] = []
    lines = [line for line in block.lines if not line.startswith("#")]
    i = 0
    while i < len(lines):
        fields = lines[i].split("\t")
        ident = fields[0]
        if "." in ident:  # an empty node: no surface
            i += 1
            continue
        if "-" in ident:
            first, last = (int(x) for x in ident.split("-"))
            words = []
            i += 1
            while i < len(lines) and len(words) < last - first + 1:
                word = lines[i].split("\t")
                if "." not in word[0]:
                    words.append(word[1])
                i += 1
            if len(words) != last - first + 1:
                raise InputError(f"{name}: multiword token {ident} lacks some of its words")
            tokens.append(GoldToken(fields[1], tuple(words), _misc_space_after(fields[9])))
            continue
        tokens.append(GoldToken(fields[1], (fields[1],), _misc_space_after(fields[9])))
        i += 1
    return tokens


def _sentence_text(block: ConlluBlock, tokens: list[GoldToken]) -> str:
    """The sentence's ``# text``, or its tokens joined as SpaceAfter says if it has none or
    its tokens cannot be found in it in order."""
    for comment in block.sentence.comments if block.sentence is not None else ():
        if comment.startswith("text ="):
            text = comment[len("text ="):].strip()
            if _align(text, tokens) is not None:
                return text
            break
    return "".join(t.form + (" " if t.space_after else "") for t in tokens).rstrip()


def _align(text: str, tokens: list[GoldToken]) -> list[int] | None:
    """Each token's start in ``text`` (only whitespace between them), or None if they do not fit."""
    starts, pos = [], 0
    for token in tokens:
        while pos < len(text) and text[pos].isspace() and not text.startswith(token.form, pos):
            pos += 1
        if not token.form or not text.startswith(token.form, pos):
            return None
        starts.append(pos)
        pos += len(token.form)
    return starts if not text[pos:].strip() else None


def _lines(source) -> Iterator[tuple[int, str]]:
    """Numbered lines of a path, an open file or an iterable of lines."""
    if isinstance(source, (str, os.PathLike)) or hasattr(source, "read"):
        with open_lines(source, "utf-8") as lines:
            yield from lines
        return
    if isinstance(source, (bytes, str)) or not isinstance(source, Iterable):
        raise InputError("segmenter data must be a CoNLL-U path, an open file or an "
                         f"iterable of its lines, got {type(source).__name__}")
    for lineno, line in enumerate(source, 1):
        if not isinstance(line, str):
            raise InputError(f"line {lineno} of the segmenter data is a {type(line).__name__}, "
                             "not a str")
        yield lineno, line.rstrip("\r\n")


def sentences(source) -> Iterator[tuple[bool, str, list[GoldToken]]]:
    """``(starts_paragraph, text, tokens)`` for each sentence of CoNLL-U ``source``."""
    name = source_name(source) if isinstance(source, (str, os.PathLike)) else "<lines>"
    for block in conllu_blocks(_lines(source), name):
        if block.sentence is None:
            continue
        marks = any(c.startswith(("newpar", "newdoc")) for c in block.sentence.comments)
        tokens = _tokens(block, name)
        yield marks, _sentence_text(block, tokens), tokens


def paragraphs(source) -> Iterator[Paragraph]:
    """The paragraphs of CoNLL-U ``source`` as running text with character labels.

    ``source``: a path, an open file, or an iterable of lines.  Paragraphs
    begin at ``# newpar`` and ``# newdoc``; until such a mark has been seen,
    every :data:`SENTENCES_PER_PARAGRAPH` sentences make one.  Sentences are
    joined by a space unless the previous one ends with ``SpaceAfter=No``.
    """
    parts: list[str] = []
    labels: list[str] = []
    gold: list[list[tuple[int, int, tuple[str, ...]]]] = []
    marked = False
    length = 0
    space_after = True  # whether the previous sentence's last token has whitespace after it

    def paragraph() -> Paragraph:
        return Paragraph("".join(parts), labels, gold)

    for has_mark, text, tokens in sentences(source):
        marked = marked or has_mark
        if gold and (has_mark or (not marked and len(gold) == SENTENCES_PER_PARAGRAPH)):
            yield paragraph()
            parts, labels, gold, length = [], [], [], 0
        if gold and space_after:
            parts.append(" ")
            labels.append("O")
            length += 1
        starts = _align(text, tokens)
        assert starts is not None  # _sentence_text returns a text its tokens fit
        sentence_labels = ["O"] * len(text)
        spans = []
        for k, (token, start) in enumerate(zip(tokens, starts)):
            multi = len(token.words) > 1
            sentence_labels[start] = ("S" if k == 0 else "B") + ("W" if multi else "")
            for j in range(start + 1, start + len(token.form)):
                sentence_labels[j] = "I"
            if multi and "".join(token.words) == token.form:
                pos = start
                for word in token.words[:-1]:
                    pos += len(word)
                    sentence_labels[pos] = "J"
            spans.append((length + start, length + start + len(token.form), token.words))
        parts.append(text)
        labels.extend(sentence_labels)
        gold.append(spans)
        length += len(text)
        space_after = not tokens or tokens[-1].space_after
    if gold:
        yield paragraph()


def multiword_table(source) -> dict[str, tuple[str, ...]]:
    """The multiword tokens of CoNLL-U ``source`` that are not a plain split of their surface.

    Surface to its most frequent words (ties: the first seen); a surface
    also enters lower-cased (its lower-cased words), unless the lower-cased
    surface is a table entry of its own.
    """
    counts: dict[str, Counter] = {}
    for _, _, tokens in sentences(source):
        for token in tokens:
            if len(token.words) > 1 and "".join(token.words) != token.form:
                counts.setdefault(token.form, Counter())[token.words] += 1
    table = {surface: c.most_common(1)[0][0] for surface, c in counts.items()}
    lowered: dict[str, Counter] = {}
    for surface, c in counts.items():
        if surface.lower() not in table:
            for words, n in c.items():
                lowered.setdefault(surface.lower(), Counter())[
                    tuple(w.lower() for w in words)] += n
    table.update({surface: c.most_common(1)[0][0] for surface, c in lowered.items()})
    return table


def space_share(source) -> float:
    """The share of the tokens of CoNLL-U ``source`` that whitespace follows (1.0 without tokens).

    Near 0 for a language written without spaces (Chinese, Japanese), some
    0.1 for Thai (spaces between phrases), 0.8 and more for alphabetic
    scripts: what ``cseq pipeline train`` chooses the segmenter's preset by.
    """
    n = spaced = 0
    for _, _, tokens in sentences(source):
        n += len(tokens)
        spaced += sum(t.space_after for t in tokens)
    return spaced / n if n else 1.0
