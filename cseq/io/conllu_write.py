"""CoNLL-U, text and JSON lines for sentences that cseq segmented itself from raw text.

The input of a tagger that reads raw text has no CoNLL-U lines to keep, so
:func:`format_segmented` writes them from the segmenter's tokens:
``# newpar`` before a paragraph's first sentence, ``# sent_id`` (numbered
from 1 in the file) and ``# text``, a multiword-token line (``3-4``) before
the words of each token that has several, ``SpaceAfter=No`` in MISC where
no whitespace follows a token inside its paragraph, the predicted labels in
one column (UPOS by default) and ``_`` in every other column.  HEAD is
``_`` too: cseq predicts no tree (the CoNLL 2018 evaluation script wants one;
:func:`cseq.metrics.ud_scores` does not).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from cseq.io.conll_read import CONLLU_COLUMNS
from cseq.exceptions import InputError

__all__ = ["SEGMENTED_FORMATS", "format_segmented", "one_line"]

#: Output formats of :func:`format_segmented`.
SEGMENTED_FORMATS: tuple[str, ...] = ("conllu", "text", "jsonl")

# Characters a CoNLL-U field or a ``# text`` line cannot hold as they are.
_BREAKS = str.maketrans({c: " " for c in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def one_line(text: str) -> str:
    """``text`` with its line and column breaks (TAB, CR, LF, ...) made spaces.

    A sentence of raw text may run over several lines of its paragraph, and
    a CoNLL-U field may hold no TAB or line end; a space keeps the offsets
    and is what the CoNLL 2018 scorer ignores anyway.
    """
    # every break is unprintable: the common case is one C-speed test
    return text if text.isprintable() else text.translate(_BREAKS)


def format_segmented(sentence: Any, labels: Sequence[str] | Mapping[str, Sequence[str]] | None, *,
                     paragraph: str, fmt: str,
                     sent_id: int, paragraph_start: bool, paragraph_end: bool, offset: int = 0,
                     column: str = "upos", known_labels: set[Any] | None = None) -> str:
    """The output text of one segmented (and tagged) sentence, with its line ends.

    Parameters
    ----------
    sentence : cseq.segment.Sentence
        Its tokens (``form``, ``start``, ``end``, ``words``,
        ``space_after``), offsets into the paragraph.
    labels : sequence of str, dict of str to sequence of str, or None
        One label per word (None: segmented only, ``_`` in the column), or
        such labels per CoNLL-U column name (``{"upos": ..., "lemma":
        ...}``): each goes to its column, the first one to the text
        format and to ``labels`` in JSON lines (``columns`` holds them all).
        A lemma may hold spaces; no other label may.
    paragraph : str
        The text the offsets of the tokens point into (``# text`` is its
        slice, line breaks made spaces).
    fmt : {"conllu", "text", "jsonl"}
        CoNLL-U (see the module's documentation); one sentence per line,
        words separated by spaces as ``word/LABEL`` (or the words alone
        without labels); or one JSON object per sentence: ``sent_id``,
        ``text``, ``start`` and ``end`` (character offsets in the file),
        ``tokens`` (``form``, ``start``, ``end`` in the file, ``words``) and
        ``words`` and ``labels`` (one per word).
    sent_id : int
        The sentence's number in the output.
    paragraph_start, paragraph_end : bool
        Whether it opens (``# newpar``) or closes its paragraph (no
        ``SpaceAfter=No`` on a paragraph's last token: a line end follows).
    offset : int
        The paragraph's offset in the file, added to the offsets in JSON lines.
    column : str, default "upos"
        The CoNLL-U column of the labels (when they are not given by column).
    known_labels : set, optional
        Labels already checked, not checked again; the labels found good
        are added (a writer of many sentences passes one set to all).

    Raises
    ------
    InputError
        For an unknown ``fmt`` or ``column``, or labels that are not one per
        word or that a field cannot hold (empty, or with whitespace).
    """
    tokens = sentence.tokens
    n_words = sum(len(t.words) for t in tokens)
    by_column = _by_column(labels, column)
    if by_column:
        known = set() if known_labels is None else known_labels
        for name, labs in by_column.items():
            if len(labs) != n_words:
                raise InputError(f"{len(labs)} labels for the {n_words} words of sentence "
                                 f"{sent_id}")
            # a lemma may hold a space (CoNLL-U allows it there), no other label may: the
            # lemmas found good are kept apart from the other labels, as ("lemma", lemma)
            lemma = name == "lemma"
            for lab in labs:
                if lab not in known and not (lemma and ("lemma", lab) in known):
                    if not lab or any(ch.isspace() and not (lemma and ch == " ")
                                      for ch in lab):
                        raise InputError(f"label {lab!r} cannot be written as {fmt}: it is "
                                         "empty or holds whitespace")
                    known.add(("lemma", lab) if lemma else lab)
        labels = next(iter(by_column.values()))
    text = one_line(paragraph[tokens[0].start:tokens[-1].end])
    if fmt == "text":
        words = [one_line(w).replace(" ", "_") for t in tokens for w in t.words]
        if labels is None:
            return " ".join(words) + "\n"
        return " ".join(f"{w}/{lab}" for w, lab in zip(words, labels)) + "\n"
    if fmt == "jsonl":
        record = {
            "sent_id": sent_id, "text": text,
            "start": offset + tokens[0].start, "end": offset + tokens[-1].end,
            "tokens": [{"form": t.form, "start": offset + t.start, "end": offset + t.end,
                        "words": list(t.words)} for t in tokens],
            "words": [w for t in tokens for w in t.words],
        }
        if labels is not None:
            record["labels"] = list(labels)
        if len(by_column) > 1:
            record["columns"] = {name: list(labs) for name, labs in by_column.items()}
        return json.dumps(record, ensure_ascii=False) + "\n"
    if fmt != "conllu":
        raise InputError(f"unknown output format {fmt!r} for segmented text; expected one of "
                         f"{', '.join(SEGMENTED_FORMATS)}")
    slots = {k: labs for k, labs in ((_column_index(name), labs)
                                     for name, labs in by_column.items())}
    if not by_column:
        _column_index(column)
    lines = (["# newpar"] if paragraph_start else []) + [f"# sent_id = {sent_id}",
                                                          f"# text = {text}"]
    blank = "\t_" * 7

    if len(slots) == 1:  # one column (a tagger's labels): two constant runs of "_" around it
        ((k, labs),) = slots.items()
        before, after = "\t_" * (k - 2), "\t_" * (8 - k)

        def middle(i: int) -> str:
            return f"{before}\t{labs[i]}{after}"
    else:
        # the 7 columns between FORM and MISC of every word, "_" where no label, at once
        blanks = ["_"] * n_words
        middles = ["\t" + "\t".join(row) for row in
                   zip(*[slots.get(k, blanks) for k in range(2, 9)])]
        middle = middles.__getitem__

    append = lines.append
    last = tokens[-1]
    n = 1
    for tok in tokens:
        misc = ("_" if tok.space_after or (paragraph_end and tok is last)
                else "SpaceAfter=No")
        words = tok.words
        if len(words) > 1:
            append(f"{n}-{n + len(words) - 1}\t{_field(tok.form)}{blank}\t{misc}")
            for w in words:
                append(f"{n}\t{_field(w)}{middle(n - 1) if slots else blank}\t_")
                n += 1
            continue
        form = tok.form
        if not (form and form.isprintable()):
            form = _field(form)
        append(f"{n}\t{form}{middle(n - 1) if slots else blank}\t{misc}")
        n += 1
    return "\n".join(lines) + "\n\n"


def _by_column(labels: Any, column: str) -> dict[str, Sequence[str]]:
    """The labels by column name: ``{column: labels}`` for a plain sequence, {} for None."""
    if labels is None:
        return {}
    if isinstance(labels, Mapping):
        if not labels:
            raise InputError("labels by column: no column given")
        return {str(name).lower(): labs for name, labs in labels.items()}
    return {column.lower(): labels}


def _column_index(column: str) -> int:
    """The index in CoNLL-U's ten columns of a column labels may go in."""
    try:
        k = CONLLU_COLUMNS.index(column.lower())
    except (ValueError, AttributeError):
        raise InputError(f"unknown CoNLL-U column {column!r}") from None
    if k in (0, 1, 9):
        raise InputError(f"the labels cannot go in the CoNLL-U column {column!r}")
    return k


def _field(value: str) -> str:
    """A form as a CoNLL-U field: no TAB or line break, never empty."""
    return one_line(value) or "_"
