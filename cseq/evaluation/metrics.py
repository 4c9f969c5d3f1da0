"""Evaluation metrics for sequence labeling.

Token metrics (:func:`accuracy`, :func:`sequence_accuracy`,
:func:`confusion_matrix`) work on any hashable labels.  Chunk metrics
(:func:`chunks`, :func:`chunk_scores`, :func:`chunk_f1`) follow the
``conlleval`` script of the CoNLL-2000 shared task for IOB1 and IOB2,
including its handling of ill-formed tag sequences, and seqeval's default
(lenient) mode for BIOES; the section below says exactly where each scheme
comes from and where it departs from ``conlleval``.

Every function takes ``y_true`` and ``y_pred`` as an iterable of sentences,
each sentence a sequence of labels (``[["B-NP", "I-NP", "O"], ...]``), and
checks that both hold the same number of sentences of the same lengths.
Everything runs on integer label ids with numpy.

Scores are **fractions** in ``[0, 1]``; only :func:`classification_report`
prints percentages, as ``conlleval`` does.  When there is nothing to score
(no tokens, no chunks) a score is ``0.0``, following ``conlleval``'s
"default values are 0.0".

Chunk schemes
-------------
A chunk label is ``"O"`` or ``PREFIX-TYPE``, split at the first hyphen, so
``B-creative-work`` has type ``creative-work``; a bare ``B`` has the empty
type.  This is what ``conlleval`` 2004-01-26 (the version cited below) does:
it reads a label with ``/^([^-]*)-(.*)$/``, everything after the first
hyphen being the type (its comment: "code which allows hyphens in the
types").  Only the 2000 script kept the text between the first and the
second hyphen (``split(/-/, ...)``: type ``creative``).  Run against the
2004 ``conlleval.pl``, the reports of
:func:`classification_report` are byte-identical on CoNLL-2000 and WNUT-17,
whose types have hyphens (``creative-work``).  Two departures remain, both
at the edges of its input format:

* ``-DOCSTART-`` lines (CoNLL-2003 document separators) are not tokens:
  :func:`cseq.conll.read_conll` skips them, where ``conlleval`` counts each
  as an ``O`` token (its only boundary word is ``-X-``), so its token count
  and accuracy include them.  Chunk counts are the same.
* A type spelled ``0`` (``B-0``) is the type ``"0"``.  ``conlleval`` passes
  each type through Perl's truth test (``$type ? $type : ""``), where the
  string ``"0"`` is false, so it reads ``B-0`` as a chunk of the empty type.

The scheme says which prefixes are allowed:

``"iob2"`` (default) and ``"iob1"``
    ``B``, ``I``.  These are ``conlleval``'s start and end rules, which are
    the same for both representations, so the two give the same chunks; the
    scheme only checks the prefixes.  A chunk starts at ``B``, at ``I`` after
    ``O`` and at a type change; it ends before ``B``, ``O`` or a type change.
    The test suite checks the counts against a token-by-token
    reimplementation of ``conlleval``'s main loop and, for IOB2, against
    seqeval (default mode on any input, strict mode on well-formed input).
``"bioes"`` (alias ``"iobes"``)
    ``B``, ``I``, ``E``, ``S``.  **Not** ``conlleval``: it has no ``S`` rule
    and no chunk start at ``B`` after ``E``, so for it ``B-X E-X B-X E-X`` is
    one chunk.  cseq uses the rules of seqeval's default mode (which extends
    ``conlleval``'s with ``S`` and ``E``): a chunk also starts at ``S``, and
    at ``I`` or ``E`` after ``E`` or ``S``; it also ends after ``E`` and
    ``S``.  On well-formed input these are also seqeval's strict ``IOBES``
    chunks.  The test suite checks both against seqeval.

A predicted chunk is correct when a gold chunk has the same start, end and
type.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from cseq.exceptions import InputError, InputTypeError
from cseq.evaluation.ud_metrics import UDScore, ud_scores

__all__ = [
    "SCHEMES",
    "UDScore",
    "ud_scores",
    "accuracy",
    "sequence_accuracy",
    "chunks",
    "chunk_scores",
    "chunk_f1",
    "classification_report",
    "confusion_matrix",
    "detect_scheme",
]

#: Accepted values of ``scheme`` and the chunk prefixes each allows.
SCHEMES: dict[str, frozenset[str]] = {
    "iob2": frozenset("BI"),
    "iob1": frozenset("BI"),
    "bioes": frozenset("BIES"),
    "iobes": frozenset("BIES"),
}

_OUTSIDE = "O"


# ----------------------------------------------------------------------------
# validation


def _check_corpus(y_true: Any, y_pred: Any) -> tuple[list[Sequence], list[Sequence]]:
    """Check that ``y_true`` and ``y_pred`` are aligned lists of label sequences."""
    seqs = []
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if isinstance(y, (str, bytes)) or not hasattr(y, "__iter__"):
            raise InputTypeError(
                f"{name} must be an iterable of label sequences (one per sentence), "
                f"got {type(y).__name__}"
            )
        y = list(y)
        for i, s in enumerate(y):
            if isinstance(s, (str, bytes)) or not hasattr(s, "__len__"):
                raise InputTypeError(
                    f"{name}[{i}] must be a sequence of labels, got {type(s).__name__}; "
                    "pass one list of labels per sentence, e.g. [['B-NP', 'I-NP', 'O']]"
                )
        seqs.append(y)
    true, pred = seqs
    if len(true) != len(pred):
        raise InputError(
            f"y_true has {len(true)} sequences but y_pred has {len(pred)}"
        )
    for i, (t, p) in enumerate(zip(true, pred)):
        if len(t) != len(p):
            raise InputError(
                f"sequence {i}: y_true has {len(t)} labels but y_pred has {len(p)}"
            )
    return true, pred


def _check_scheme(scheme: Any) -> str:
    if not isinstance(scheme, str) or scheme.lower() not in SCHEMES:
        raise InputError(
            f"unknown chunk scheme {scheme!r}; expected one of {sorted(SCHEMES)}"
        )
    return scheme.lower()


def _encode(true: list[Sequence], pred: list[Sequence]):
    """Map labels to ids shared by ``true`` and ``pred``.

    Returns the flat id arrays of both, the label list, and the start offset
    of every sequence (``n_sequences + 1`` entries).
    """
    index: dict[Hashable, int] = {}
    setdefault = index.setdefault
    lengths = np.fromiter((len(s) for s in true), dtype=np.int64, count=len(true))
    offsets = np.zeros(len(true) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    arrays = []
    for y in (true, pred):
        try:
            ids = np.fromiter(
                (setdefault(lab, len(index)) for s in y for lab in s),
                dtype=np.int64,
                count=n,
            )
        except TypeError as exc:
            raise InputTypeError(f"labels must be hashable: {exc}") from None
        arrays.append(ids)
    return arrays[0], arrays[1], list(index), offsets


def detect_scheme(labels: Iterable[Hashable]) -> str | None:
    """The chunk scheme of a label set: ``"iob2"``, ``"bioes"``, or None.

    ``"bioes"`` when every label is ``O`` or ``PREFIX-TYPE`` with prefixes
    among ``B I E S`` and some ``E`` or ``S``; ``"iob2"`` when the prefixes
    are ``B`` and ``I`` only; None when a label is anything else or all are
    ``O`` (then token scores are the measure).

    Examples
    --------
    >>> detect_scheme(["O", "B-PER", "I-PER"]), detect_scheme(["NOUN", "VERB"])
    ('iob2', None)
    """
    prefixes = set()
    for lab in labels:
        if lab == _OUTSIDE:
            continue
        if not isinstance(lab, str):
            return None
        head, dash, _ = lab.partition("-")
        if not dash or head not in ("B", "I", "E", "S"):
            return None
        prefixes.add(head)
    if not prefixes:
        return None
    return "bioes" if prefixes & {"E", "S"} else "iob2"


# ----------------------------------------------------------------------------
# token metrics


def accuracy(y_true: Sequence[Sequence[Hashable]], y_pred: Sequence[Sequence[Hashable]]) -> float:
    """Fraction of tokens whose predicted label equals the gold label.

    Parameters
    ----------
    y_true, y_pred : sequence of sequences of hashable
        Gold and predicted labels, one sequence per sentence, aligned.

    Returns
    -------
    float
        Token accuracy in ``[0, 1]``; ``0.0`` when there are no tokens.

    Raises
    ------
    InputError
        If the numbers of sequences or the lengths of a sequence differ.
    InputTypeError
        If an argument is not a sequence of label sequences.

    Examples
    --------
    >>> accuracy([["A", "B"], ["C"]], [["A", "X"], ["C"]])
    0.6666666666666666
    """
    true, pred = _check_corpus(y_true, y_pred)
    t, p, _, _ = _encode(true, pred)
    if len(t) == 0:
        return 0.0
    return float(np.count_nonzero(t == p)) / len(t)


def sequence_accuracy(
    y_true: Sequence[Sequence[Hashable]], y_pred: Sequence[Sequence[Hashable]]
) -> float:
    """Fraction of sequences predicted entirely correctly.

    Parameters
    ----------
    y_true, y_pred : sequence of sequences of hashable
        Gold and predicted labels, one sequence per sentence, aligned.

    Returns
    -------
    float
        In ``[0, 1]``; ``0.0`` when there are no sequences.  An empty
        sequence counts as correct.

    Raises
    ------
    InputError
        If the numbers of sequences or the lengths of a sequence differ.
    """
    true, pred = _check_corpus(y_true, y_pred)
    if not true:
        return 0.0
    good = sum(1 for t, p in zip(true, pred) if all(a == b for a, b in zip(t, p)))
    return good / len(true)


def confusion_matrix(
    y_true: Sequence[Sequence[Hashable]],
    y_pred: Sequence[Sequence[Hashable]],
    labels: Sequence[Hashable] | None = None,
) -> tuple[list[Hashable], np.ndarray]:
    """Count (gold label, predicted label) pairs over all tokens.

    Parameters
    ----------
    y_true, y_pred : sequence of sequences of hashable
        Gold and predicted labels, one sequence per sentence, aligned.
    labels : sequence of hashable, optional
        Rows and columns of the matrix, in this order.  Tokens whose gold or
        predicted label is not listed are not counted.  By default, every
        label seen in either argument, sorted (in order of first appearance
        when the labels cannot be sorted).

    Returns
    -------
    labels : list
        The row and column labels.
    matrix : ndarray of int64, shape (n_labels, n_labels)
        ``matrix[i, j]`` is the number of tokens with gold label
        ``labels[i]`` predicted as ``labels[j]``.

    Raises
    ------
    InputError
        If the corpora are not aligned, or ``labels`` has duplicates.
    """
    true, pred = _check_corpus(y_true, y_pred)
    t, p, seen, _ = _encode(true, pred)
    if labels is None:
        try:
            out = sorted(seen)
        except TypeError:
            out = list(seen)
    else:
        if isinstance(labels, (str, bytes)):
            raise InputTypeError("labels must be a sequence of labels, not a string")
        out = list(labels)
        if len(set(out)) != len(out):
            raise InputError("labels contains duplicates")
    pos = {lab: i for i, lab in enumerate(out)}
    # Column of every seen label id in the output matrix, -1 when not listed.
    remap = np.array([pos.get(lab, -1) for lab in seen] + [-1], dtype=np.int64)
    rt, rp = remap[t], remap[p]
    keep = (rt >= 0) & (rp >= 0)
    k = len(out)
    flat = np.bincount(rt[keep] * k + rp[keep], minlength=k * k)
    return out, flat.reshape(k, k).astype(np.int64, copy=False)


# ----------------------------------------------------------------------------
# chunks


def _split_label(label: Any, allowed: frozenset[str], scheme: str) -> tuple[str, str]:
    """Split a chunk label into (prefix, type) or raise InputError."""
    if not isinstance(label, str):
        raise InputTypeError(
            f"chunk labels must be str, got {type(label).__name__} ({label!r})"
        )
    if label == _OUTSIDE:
        return _OUTSIDE, ""
    prefix, _, ctype = label.partition("-")
    if prefix not in allowed:
        raise InputError(
            f"label {label!r} is not valid in scheme {scheme!r}: expected 'O' or "
            f"one of the prefixes {'/'.join(sorted(allowed))} followed by '-TYPE'"
        )
    return prefix, ctype


def _starts(prev: str, prev_type: str, tag: str, tag_type: str) -> bool:
    """conlleval's startOfChunk for B, I, O; seqeval's default mode for E and S."""
    if tag == _OUTSIDE:
        return False
    if tag in ("B", "S"):
        return True
    # tag is I or E: it continues a chunk unless the previous token closed one
    return prev in (_OUTSIDE, "E", "S") or prev_type != tag_type


def _ends(prev: str, prev_type: str, tag: str, tag_type: str) -> bool:
    """conlleval's endOfChunk for B, I, O; seqeval's default mode for E and S."""
    if prev == _OUTSIDE:
        return False
    if prev in ("E", "S"):
        return True
    # prev is B or I
    return tag in (_OUTSIDE, "B", "S") or prev_type != tag_type


def _tables(labels: list[Any], scheme: str):
    """Start/end lookup tables over label ids, with one extra id for 'O'.

    ``start[a, b]`` says whether a chunk starts at a token labeled ``b``
    after one labeled ``a``; ``end[a, b]`` whether a chunk ends between them.
    The extra last id stands for the sentence boundary, which ``conlleval``
    treats as an ``O`` token.
    """
    allowed = SCHEMES[scheme]
    parts = [_split_label(lab, allowed, scheme) for lab in labels]
    parts.append((_OUTSIDE, ""))
    types = sorted({ctype for prefix, ctype in parts if prefix != _OUTSIDE})
    type_id = {ct: i for i, ct in enumerate(types)}
    m = len(parts)
    start = np.zeros((m, m), dtype=bool)
    end = np.zeros((m, m), dtype=bool)
    for a, (pa, ta) in enumerate(parts):
        for b, (pb, tb) in enumerate(parts):
            start[a, b] = _starts(pa, ta, pb, tb)
            end[a, b] = _ends(pa, ta, pb, tb)
    ltype = np.array(
        [type_id[ct] if prefix != _OUTSIDE else -1 for prefix, ct in parts], dtype=np.int64
    )
    return start, end, ltype, types


def _chunk_arrays(ids: np.ndarray, offsets: np.ndarray, start, end, ltype):
    """Chunks of a flat corpus as arrays (first token, last token, type id).

    Token positions are flat indices into the whole corpus.
    """
    n = len(ids)
    boundary = start.shape[0] - 1
    prev = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    if n:
        prev[1:] = ids[:-1]
        nxt[:-1] = ids[1:]
        firsts = offsets[:-1][offsets[:-1] < offsets[1:]]
        lasts = offsets[1:][offsets[:-1] < offsets[1:]] - 1
        prev[firsts] = boundary
        nxt[lasts] = boundary
    first = np.flatnonzero(start[prev, ids])
    last = np.flatnonzero(end[ids, nxt])
    # With validated prefixes a chunk boundary between two tokens is always
    # both an end and a start, so the k-th start pairs with the k-th end.
    if len(first) != len(last) or np.any(first > last):  # pragma: no cover
        raise AssertionError("internal error: chunk starts and ends do not pair up")
    return first, last, ltype[ids[first]]


def chunks(labels: Sequence[str], scheme: str = "iob2") -> list[tuple[str, int, int]]:
    """Chunks of one label sequence (``conlleval``'s rules for IOB, seqeval's for BIOES).

    Parameters
    ----------
    labels : sequence of str
        Chunk labels of one sentence, e.g. ``["B-NP", "I-NP", "O"]``.
    scheme : {"iob2", "iob1", "bioes", "iobes"}, default "iob2"
        Tagging scheme (see the module docstring).

    Returns
    -------
    list of (type, start, end)
        One tuple per chunk, in order; ``end`` is exclusive, so the chunk
        covers ``labels[start:end]``.

    Raises
    ------
    InputError
        If ``scheme`` is unknown or a label is not valid in it.

    Examples
    --------
    >>> chunks(["B-NP", "I-NP", "O", "I-VP", "B-VP"])
    [('NP', 0, 2), ('VP', 3, 4), ('VP', 4, 5)]
    """
    scheme = _check_scheme(scheme)
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        raise InputTypeError(f"labels must be a sequence of str, got {type(labels).__name__}")
    t, _, seen, offsets = _encode([labels], [labels])
    start, end, ltype, types = _tables(seen, scheme)
    first, last, tid = _chunk_arrays(t, offsets, start, end, ltype)
    return [(types[k], int(a), int(b) + 1) for k, a, b in zip(tid.tolist(), first, last)]


def _prf(correct: int, predicted: int, support: int) -> tuple[float, float, float]:
    precision = correct / predicted if predicted else 0.0
    recall = correct / support if support else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def chunk_scores(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    scheme: str = "iob2",
) -> dict[str, Any]:
    """Chunk precision, recall and F1, overall and per chunk type.

    Parameters
    ----------
    y_true, y_pred : sequence of sequences of str
        Gold and predicted chunk labels, one sequence per sentence, aligned.
    scheme : {"iob2", "iob1", "bioes", "iobes"}, default "iob2"
        Tagging scheme (see the module docstring).

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1`` (fractions in ``[0, 1]``),
        ``support`` (gold chunks), ``predicted`` (predicted chunks),
        ``correct`` (chunks in both), ``accuracy`` (token accuracy),
        ``n_tokens``, and ``per_type``: a dict, sorted by type, mapping each
        chunk type seen in either argument to a dict with ``precision``,
        ``recall``, ``f1``, ``support``, ``predicted`` and ``correct``.
        A precision with no predicted chunk, a recall with no gold chunk and
        an F1 with both zero are ``0.0``, as in ``conlleval``.

    Raises
    ------
    InputError
        If the corpora are not aligned, ``scheme`` is unknown, or a label is
        not valid in the scheme.
    InputTypeError
        If a label is not a str or an argument is not a list of sequences.

    References
    ----------
    E. F. Tjong Kim Sang and S. Buchholz (2000). Introduction to the
    CoNLL-2000 shared task: chunking.  The ``conlleval`` script, version
    2004-01-26 (IOB1, IOB2).

    H. Nakayama (2018). seqeval: a Python framework for sequence labeling
    evaluation, default mode (BIOES).

    Examples
    --------
    >>> s = chunk_scores([["B-NP", "I-NP", "O"]], [["B-NP", "B-NP", "O"]])
    >>> s["precision"], s["recall"], s["f1"]
    (0.0, 0.0, 0.0)
    """
    scheme = _check_scheme(scheme)
    true, pred = _check_corpus(y_true, y_pred)
    t, p, seen, offsets = _encode(true, pred)
    start, end, ltype, types = _tables(seen, scheme)
    gf, gl, gt = _chunk_arrays(t, offsets, start, end, ltype)
    pf, pl, pt = _chunk_arrays(p, offsets, start, end, ltype)

    # At most one chunk starts at a token, so a chunk is identified by its
    # first token: a predicted chunk is correct when the gold chunk starting
    # there has the same last token and type.
    n = len(t)
    g_last = np.full(n, -1, dtype=np.int64)
    g_type = np.full(n, -1, dtype=np.int64)
    g_last[gf] = gl
    g_type[gf] = gt
    ok = (g_last[pf] == pl) & (g_type[pf] == pt)
    k = len(types)
    support = np.bincount(gt, minlength=k)
    predicted = np.bincount(pt, minlength=k)
    correct = np.bincount(pt[ok], minlength=k)

    per_type = {}
    for i, ctype in enumerate(types):
        s, pr, c = int(support[i]), int(predicted[i]), int(correct[i])
        if s == 0 and pr == 0:
            continue
        precision, recall, f1 = _prf(c, pr, s)
        per_type[ctype] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": s,
            "predicted": pr,
            "correct": c,
        }
    n_correct, n_pred, n_gold = int(ok.sum()), len(pf), len(gf)
    precision, recall, f1 = _prf(n_correct, n_pred, n_gold)
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "support": n_gold,
        "predicted": n_pred,
        "correct": n_correct,
        "accuracy": float(np.count_nonzero(t == p)) / n if n else 0.0,
        "n_tokens": n,
        "per_type": per_type,
    }


def chunk_f1(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    scheme: str = "iob2",
) -> float:
    """Overall chunk F1 as a fraction in ``[0, 1]``.

    See :func:`chunk_scores` for the parameters and errors.

    Examples
    --------
    >>> chunk_f1([["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "I-NP", "O", "O"]])
    0.6666666666666666
    """
    return chunk_scores(y_true, y_pred, scheme)["f1"]


def _token_scores(true, pred) -> dict[str, Any]:
    t, p, seen, _ = _encode(true, pred)
    k = len(seen)
    support = np.bincount(t, minlength=k)
    predicted = np.bincount(p, minlength=k)
    correct = np.bincount(t[t == p], minlength=k)
    try:
        order = sorted(range(k), key=lambda i: seen[i])
    except TypeError:
        order = list(range(k))
    per_label = {}
    for i in order:
        precision, recall, f1 = _prf(int(correct[i]), int(predicted[i]), int(support[i]))
        per_label[seen[i]] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": int(support[i]),
            "predicted": int(predicted[i]),
            "correct": int(correct[i]),
        }
    n = len(t)
    return {
        "n_tokens": n,
        "n_correct": int(np.count_nonzero(t == p)),
        "per_label": per_label,
    }


def classification_report(
    y_true: Sequence[Sequence[Hashable]],
    y_pred: Sequence[Sequence[Hashable]],
    scheme: str | None = None,
) -> str:
    """A text report laid out like ``conlleval``'s, in percentages.

    Parameters
    ----------
    y_true, y_pred : sequence of sequences
        Gold and predicted labels, one sequence per sentence, aligned.
    scheme : {None, "iob2", "iob1", "bioes", "iobes"}, default None
        ``None`` reports per-label token precision, recall and F1 (for POS
        tagging); a scheme reports per-chunk-type scores laid out as
        ``conlleval`` prints them (counted as :func:`chunk_scores` does).

    Returns
    -------
    str
        The report, ending with a newline.  The first lines give the counts
        and the overall accuracy (and chunk scores); then one line per label
        or chunk type, whose last number is, as in ``conlleval``, the number
        of *predicted* items of that label or type.

    Raises
    ------
    InputError
        As :func:`chunk_scores` (or :func:`accuracy` when ``scheme`` is None).

    Examples
    --------
    >>> print(classification_report([["B-NP", "O"]], [["B-NP", "O"]], scheme="iob2"), end="")
    processed 2 tokens with 1 phrases; found: 1 phrases; correct: 1.
    accuracy: 100.00%; precision: 100.00%; recall: 100.00%; FB1: 100.00
                   NP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1
    """
    lines = []
    if scheme is None:
        true, pred = _check_corpus(y_true, y_pred)
        s = _token_scores(true, pred)
        n = s["n_tokens"]
        lines.append(f"processed {n} tokens; correct: {s['n_correct']}.")
        if n > 0:
            lines.append(f"accuracy: {100 * s['n_correct'] / n:6.2f}%")
        items = s["per_label"].items()
    else:
        s = chunk_scores(y_true, y_pred, scheme)
        n = s["n_tokens"]
        lines.append(
            f"processed {n} tokens with {s['support']} phrases; "
            f"found: {s['predicted']} phrases; correct: {s['correct']}."
        )
        if n > 0:
            lines.append(
                f"accuracy: {100 * s['accuracy']:6.2f}%; "
                f"precision: {100 * s['precision']:6.2f}%; "
                f"recall: {100 * s['recall']:6.2f}%; "
                f"FB1: {100 * s['f1']:6.2f}"
            )
        items = s["per_type"].items()
    for name, d in items:
        lines.append(
            f"{str(name):>17s}: precision: {100 * d['precision']:6.2f}%; "
            f"recall: {100 * d['recall']:6.2f}%; FB1: {100 * d['f1']:6.2f}  {d['predicted']}"
        )
    return "\n".join(lines) + "\n"
