"""Tests of cseq.metrics against hand-worked results, a conlleval reimplementation and seqeval."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from seqeval.metrics import sequence_labeling as seqeval_labeling
from seqeval.scheme import IOB2 as SEQEVAL_IOB2
from seqeval.scheme import IOBES as SEQEVAL_IOBES
from seqeval.scheme import Entities as SeqevalEntities

from cseq.exceptions import InputError, InputTypeError
from cseq.metrics import (
    accuracy,
    chunk_f1,
    chunk_scores,
    chunks,
    classification_report,
    confusion_matrix,
    sequence_accuracy,
)

from support.budget import examples

# ---------------------------------------------------------------------------
# Independent references.
#
# 1. conlleval (IOB1, IOB2).  A token-by-token reimplementation of the main
#    loop of the ``conlleval`` script, version 2004-01-26 (the one cseq.metrics
#    cites), deliberately unlike the vectorised implementation: a label is
#    read with its ``/^([^-]*)-(.*)$/`` (the prefix, then everything after the
#    first hyphen as the type; the 2000 script's ``split(/-/)`` kept only the
#    text up to a second hyphen) and the type then goes through Perl's truth
#    test (``"0"`` becomes the empty type), a sentence boundary is an "O"
#    token, and chunks are counted with the script's ``inCorrect`` flag.  Its
#    start and end rules know B, I, E and O; they have no S.
# 2. seqeval (IOB2, IOBES), a test-only dependency: its default mode (lenient,
#    conlleval-like, extended with S and E) on any sequence, and its strict
#    mode on well-formed sequences, where the two modes must agree.

def _conlleval_split(label):
    prefix, _, ctype = label.partition("-")
    return prefix, "" if ctype == "0" else ctype  # $type ? $type : ""


def _conlleval_end(prev, tag, prev_type, tag_type):
    # conlleval's endOfChunk: a chunk ended between the previous and this token
    pairs = {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"),
             ("E", "E"), ("E", "I"), ("E", "O")}
    if (prev, tag) in pairs:
        return True
    return prev != "O" and prev != "." and prev_type != tag_type


def _conlleval_start(prev, tag, prev_type, tag_type):
    # conlleval's startOfChunk: a chunk started at this token
    pairs = {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"),
             ("E", "E"), ("E", "I"), ("O", "E")}
    if (prev, tag) in pairs:
        return True
    return tag != "O" and tag != "." and prev_type != tag_type


def _conlleval_counts(y_true, y_pred):
    """Per-type (found in gold, found in prediction, correct), as conlleval counts."""
    stream = []
    for t, p in zip(y_true, y_pred):
        stream.extend(zip(t, p))
        stream.append(("O", "O"))  # sentence boundary
    found_gold, found_pred, correct = {}, {}, {}
    in_correct = False
    lc, lct, lg, lgt = "O", "", "O", ""
    for gold, guess in stream:
        c, ct = _conlleval_split(gold)
        g, gt = _conlleval_split(guess)
        end_c = _conlleval_end(lc, c, lct, ct)
        end_g = _conlleval_end(lg, g, lgt, gt)
        start_c = _conlleval_start(lc, c, lct, ct)
        start_g = _conlleval_start(lg, g, lgt, gt)
        if in_correct:
            if end_c and end_g and lgt == lct:
                in_correct = False
                correct[lct] = correct.get(lct, 0) + 1
            elif end_c != end_g or gt != ct:
                in_correct = False
        if start_c and start_g and gt == ct:
            in_correct = True
        if start_c:
            found_gold[ct] = found_gold.get(ct, 0) + 1
        if start_g:
            found_pred[gt] = found_pred.get(gt, 0) + 1
        lc, lct, lg, lgt = c, ct, g, gt
    if in_correct:  # the stream ends with a boundary, which closed every chunk
        raise AssertionError("unreachable: the last token is a boundary")
    return found_gold, found_pred, correct


def _assert_counts(s, gold, pred, corr):
    assert s["support"] == sum(gold.values())
    assert s["predicted"] == sum(pred.values())
    assert s["correct"] == sum(corr.values())
    assert set(s["per_type"]) == set(gold) | set(pred)
    for ctype, d in s["per_type"].items():
        assert d["support"] == gold.get(ctype, 0)
        assert d["predicted"] == pred.get(ctype, 0)
        assert d["correct"] == corr.get(ctype, 0)


def _assert_matches_conlleval(y_true, y_pred, scheme):
    _assert_counts(chunk_scores(y_true, y_pred, scheme), *_conlleval_counts(y_true, y_pred))


def _seqeval_sets(y, strict_scheme=None):
    """Chunks of a corpus as {(sentence, type, start, end)} found by seqeval."""
    if strict_scheme is None:
        out = set()
        for i, s in enumerate(y):
            for ctype, a, b in seqeval_labeling.get_entities(list(s)):
                out.add((i, ctype, a, b + 1))
        return out
    ents = SeqevalEntities([list(s) for s in y], strict_scheme)
    return {(e.sent_id, e.tag, e.start, e.end) for sent in ents.entities for e in sent}


def _counts_from_sets(gold, pred):
    count = {}
    for name, chunks_ in (("gold", gold), ("pred", pred), ("corr", gold & pred)):
        d = count.setdefault(name, {})
        for _, ctype, _, _ in chunks_:
            d[ctype] = d.get(ctype, 0) + 1
    return count["gold"], count["pred"], count["corr"]


def _assert_matches_seqeval(y_true, y_pred, scheme, strict_scheme=None):
    gold = _seqeval_sets(y_true, strict_scheme)
    pred = _seqeval_sets(y_pred, strict_scheme)
    mine = {(i, *c) for i, s in enumerate(y_true) for c in chunks(s, scheme)}
    assert mine == gold
    _assert_counts(chunk_scores(y_true, y_pred, scheme), *_counts_from_sets(gold, pred))

# ---------------------------------------------------------------------------
# chunks(): hand-worked conlleval segmentations


@pytest.mark.parametrize(
    "labels, expected",
    [
        (["B-NP", "I-NP", "O", "B-VP"], [("NP", 0, 2), ("VP", 3, 4)]),
        # I- after O starts a chunk (ill-formed IOB2, accepted by conlleval)
        (["O", "I-NP", "I-NP"], [("NP", 1, 3)]),
        # I- at the start of a sentence starts a chunk
        (["I-NP", "O"], [("NP", 0, 1)]),
        # a type change inside a chunk ends it and starts a new one
        (["B-NP", "I-VP", "I-VP"], [("NP", 0, 1), ("VP", 1, 3)]),
        (["B-NP", "I-NP", "I-VP", "B-VP"], [("NP", 0, 2), ("VP", 2, 3), ("VP", 3, 4)]),
        # B- after I- of the same type starts a new chunk
        (["B-NP", "I-NP", "B-NP", "I-NP"], [("NP", 0, 2), ("NP", 2, 4)]),
        (["B-NP", "B-NP"], [("NP", 0, 1), ("NP", 1, 2)]),
        # types may contain hyphens: split at the first one
        (["B-creative-work", "I-creative-work"], [("creative-work", 0, 2)]),
        ([], []),
        (["O", "O"], []),
    ],
)
def test_chunks_iob2(labels, expected):
    assert chunks(labels) == expected
    assert chunks(labels, scheme="iob2") == expected


def test_chunks_iob1():
    # IOB1: I- starts chunks; B- only separates two adjacent chunks of one type.
    labels = ["I-NP", "I-NP", "B-NP", "I-NP", "O", "I-VP", "I-PP", "I-NP"]
    assert chunks(labels, scheme="iob1") == [
        ("NP", 0, 2),
        ("NP", 2, 4),
        ("VP", 5, 6),
        ("PP", 6, 7),
        ("NP", 7, 8),
    ]
    # conlleval has one rule set for both IOB variants
    assert chunks(labels, scheme="iob1") == chunks(labels, scheme="iob2")


@pytest.mark.parametrize(
    "labels, expected",
    [
        (["S-PER", "B-PER", "E-PER", "O"], [("PER", 0, 1), ("PER", 1, 3)]),
        (["B-LOC", "I-LOC", "I-LOC", "E-LOC"], [("LOC", 0, 4)]),
        # E- without B-: after O it starts a one-token chunk
        (["O", "E-LOC"], [("LOC", 1, 2)]),
        (["O", "I-LOC", "E-LOC"], [("LOC", 1, 3)]),
        # E- after E- starts a new chunk; so does I- after E- or S-
        (["B-X", "E-X", "E-X"], [("X", 0, 2), ("X", 2, 3)]),
        (["E-X", "I-X", "E-X"], [("X", 0, 1), ("X", 1, 3)]),
        (["S-X", "I-X"], [("X", 0, 1), ("X", 1, 2)]),
        (["S-X", "E-X"], [("X", 0, 1), ("X", 1, 2)]),
        (["S-X", "S-X"], [("X", 0, 1), ("X", 1, 2)]),
        # B- not closed by E-: ends before O, B- or S-
        (["B-X", "O"], [("X", 0, 1)]),
        (["B-X", "B-X"], [("X", 0, 1), ("X", 1, 2)]),
        (["B-X", "I-X", "S-X"], [("X", 0, 2), ("X", 2, 3)]),
        (["B-X", "I-X"], [("X", 0, 2)]),
        # type change
        (["B-X", "I-Y", "E-Y"], [("X", 0, 1), ("Y", 1, 3)]),
        (["B-X", "E-Y"], [("X", 0, 1), ("Y", 1, 2)]),
    ],
)
def test_chunks_bioes(labels, expected):
    assert chunks(labels, scheme="bioes") == expected
    assert chunks(labels, scheme="IOBES") == expected


def test_sentence_boundary_ends_chunks():
    # An I- at the start of the next sentence must not continue a chunk.
    y = [["B-NP"], ["I-NP"]]
    s = chunk_scores(y, y)
    assert (s["support"], s["predicted"], s["correct"]) == (2, 2, 2)
    s = chunk_scores(y, [["B-NP"], ["O"]])
    assert (s["support"], s["predicted"], s["correct"]) == (2, 1, 1)
    # BIOES: B- at the end of a sentence is closed by the boundary
    s = chunk_scores([["B-X"], ["E-X"]], [["B-X"], ["E-X"]], scheme="bioes")
    assert (s["support"], s["correct"]) == (2, 2)


# ---------------------------------------------------------------------------
# chunk_scores(): a corpus worked out by hand


def test_chunk_scores_hand_worked_iob2():
    y_true = [["B-NP", "I-NP", "O", "B-VP", "I-VP", "B-PP"], ["O", "B-NP"]]
    y_pred = [["B-NP", "I-NP", "I-NP", "B-VP", "B-VP", "B-PP"], ["I-NP", "I-NP"]]
    # gold:  NP[0,2) VP[3,5) PP[5,6) | NP[1,2)          -> 4 chunks
    # pred:  NP[0,3) VP[3,4) VP[4,5) PP[5,6) | NP[0,2)  -> 5 chunks
    # correct: PP[5,6) only.  Tokens correct: 4 of 8.
    s = chunk_scores(y_true, y_pred)
    assert (s["support"], s["predicted"], s["correct"]) == (4, 5, 1)
    assert s["precision"] == pytest.approx(0.2)
    assert s["recall"] == pytest.approx(0.25)
    assert s["f1"] == pytest.approx(2 * 0.2 * 0.25 / 0.45)
    assert s["accuracy"] == pytest.approx(0.5)
    assert s["n_tokens"] == 8
    assert list(s["per_type"]) == ["NP", "PP", "VP"]
    assert s["per_type"]["NP"] == {
        "precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 2, "predicted": 2, "correct": 0
    }
    assert s["per_type"]["PP"]["f1"] == 1.0
    assert s["per_type"]["VP"]["predicted"] == 2
    assert chunk_f1(y_true, y_pred) == pytest.approx(s["f1"])
    _assert_matches_conlleval(y_true, y_pred, "iob2")
    _assert_matches_seqeval(y_true, y_pred, "iob2")


def test_chunk_scores_wrong_type_same_span():
    s = chunk_scores([["B-NP", "I-NP"]], [["B-VP", "I-VP"]])
    assert (s["support"], s["predicted"], s["correct"]) == (1, 1, 0)
    assert set(s["per_type"]) == {"NP", "VP"}
    assert s["per_type"]["NP"]["precision"] == 0.0  # nothing predicted as NP
    assert s["per_type"]["VP"]["recall"] == 0.0  # no gold VP


def test_chunk_scores_hand_worked_bioes():
    y_true = [["B-PER", "E-PER", "O", "S-LOC", "B-ORG", "I-ORG", "E-ORG"]]
    y_pred = [["B-PER", "E-PER", "O", "B-LOC", "E-ORG", "I-ORG", "E-ORG"]]
    # gold: PER[0,2) LOC[3,4) ORG[4,7)
    # pred: PER[0,2) LOC[3,4) (B-LOC closed by the type change) ORG[4,5) ORG[5,7)
    s = chunk_scores(y_true, y_pred, scheme="bioes")
    assert (s["support"], s["predicted"], s["correct"]) == (3, 4, 2)
    assert s["per_type"]["LOC"]["correct"] == 1
    assert s["per_type"]["ORG"] == {
        "precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "predicted": 2, "correct": 0
    }
    assert s["f1"] == pytest.approx(2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3))
    _assert_matches_seqeval(y_true, y_pred, "bioes")


def test_no_chunks_scores_zero():
    s = chunk_scores([["O", "O"]], [["O", "O"]])
    assert (s["precision"], s["recall"], s["f1"]) == (0.0, 0.0, 0.0)
    assert s["accuracy"] == 1.0
    assert s["per_type"] == {}


# ---------------------------------------------------------------------------
# token metrics


def test_accuracy_and_sequence_accuracy():
    y_true = [["A", "B", "C"], ["A"], []]
    y_pred = [["A", "X", "C"], ["A"], []]
    assert accuracy(y_true, y_pred) == pytest.approx(3 / 4)
    assert sequence_accuracy(y_true, y_pred) == pytest.approx(2 / 3)
    # any iterable of sentences
    assert accuracy(iter(y_true), (s for s in y_pred)) == pytest.approx(3 / 4)
    # non-string hashable labels and numpy arrays as sequences
    assert accuracy([np.array([1, 2, 3])], [np.array([1, 2, 0])]) == pytest.approx(2 / 3)


def test_empty_corpus():
    assert accuracy([], []) == 0.0
    assert accuracy([[]], [[]]) == 0.0
    assert sequence_accuracy([], []) == 0.0
    assert chunk_f1([], []) == 0.0
    s = chunk_scores([[]], [[]])
    assert s["n_tokens"] == 0 and s["accuracy"] == 0.0 and s["per_type"] == {}
    assert classification_report([], []) == "processed 0 tokens; correct: 0.\n"
    assert classification_report([], [], scheme="iob2") == (
        "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
    )
    labels, m = confusion_matrix([], [])
    assert labels == [] and m.shape == (0, 0)


def test_confusion_matrix():
    y_true = [["A", "B", "B"], ["C"]]
    y_pred = [["A", "A", "B"], ["B"]]
    labels, m = confusion_matrix(y_true, y_pred)
    assert labels == ["A", "B", "C"]
    assert m.dtype == np.int64
    np.testing.assert_array_equal(m, [[1, 0, 0], [1, 1, 0], [0, 1, 0]])
    labels, m = confusion_matrix(y_true, y_pred, labels=["B", "A", "Z"])
    assert labels == ["B", "A", "Z"]
    # tokens with an unlisted label (C) are not counted
    np.testing.assert_array_equal(m, [[1, 1, 0], [0, 1, 0], [0, 0, 0]])
    with pytest.raises(InputError, match="duplicates"):
        confusion_matrix(y_true, y_pred, labels=["A", "A"])
    with pytest.raises(InputTypeError):
        confusion_matrix(y_true, y_pred, labels="AB")


# ---------------------------------------------------------------------------
# reports


def test_report_chunk_layout_matches_conlleval():
    y_true = [["B-NP", "I-NP", "O", "B-VP", "I-VP", "B-PP"], ["O", "B-NP"]]
    y_pred = [["B-NP", "I-NP", "I-NP", "B-VP", "B-VP", "B-PP"], ["I-NP", "I-NP"]]
    report = classification_report(y_true, y_pred, scheme="iob2")
    assert report == (
        "processed 8 tokens with 4 phrases; found: 5 phrases; correct: 1.\n"
        "accuracy:  50.00%; precision:  20.00%; recall:  25.00%; FB1:  22.22\n"
        "               NP: precision:   0.00%; recall:   0.00%; FB1:   0.00  2\n"
        "               PP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
        "               VP: precision:   0.00%; recall:   0.00%; FB1:   0.00  2\n"
    )


def test_report_tokens():
    report = classification_report([["DT", "NN"], ["NN"]], [["DT", "VB"], ["NN"]])
    assert report == (
        "processed 3 tokens; correct: 2.\n"
        "accuracy:  66.67%\n"
        "               DT: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
        "               NN: precision: 100.00%; recall:  50.00%; FB1:  66.67  1\n"
        "               VB: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"
    )


# ---------------------------------------------------------------------------
# validation


def test_mismatched_number_of_sequences():
    with pytest.raises(InputError, match="y_true has 2 sequences but y_pred has 1"):
        accuracy([["A"], ["B"]], [["A"]])


@pytest.mark.parametrize("fn", [accuracy, sequence_accuracy, chunk_scores, chunk_f1])
def test_mismatched_lengths_name_the_sequence(fn):
    with pytest.raises(InputError, match=r"sequence 1: y_true has 2 labels but y_pred has 3"):
        fn([["O"], ["O", "O"]], [["O"], ["O", "O", "O"]])


def test_flat_list_is_a_type_error():
    with pytest.raises(InputTypeError, match=r"y_true\[0\]"):
        accuracy(["B-NP", "O"], ["B-NP", "O"])
    with pytest.raises(InputTypeError):
        accuracy("abc", "abc")
    with pytest.raises(InputTypeError, match="y_pred must be"):
        accuracy([["A"]], 3)
    with pytest.raises(InputTypeError, match=r"y_true\[0\]"):
        accuracy([iter("A")], [["A"]])
    with pytest.raises(InputTypeError):
        chunks("B-NP")


@pytest.mark.parametrize("scheme", ["bio", "IOE1", "", None, 3])
def test_unknown_scheme(scheme):
    with pytest.raises(InputError, match="unknown chunk scheme"):
        chunk_scores([["O"]], [["O"]], scheme=scheme)
    with pytest.raises(InputError, match="unknown chunk scheme"):
        chunks(["O"], scheme=scheme)


def test_labels_must_fit_the_scheme():
    with pytest.raises(InputError, match="'S-NP' is not valid in scheme 'iob2'"):
        chunk_scores([["S-NP"]], [["O"]])
    with pytest.raises(InputError, match="'NP' is not valid"):
        chunk_scores([["O"]], [["NP"]])  # the prediction is checked too
    with pytest.raises(InputError):
        chunks(["X-NP"], scheme="bioes")
    with pytest.raises(InputTypeError, match="must be str"):
        chunk_scores([[1]], [[1]])


# ---------------------------------------------------------------------------
# properties

IOB_LABELS = ["O", "B-A", "I-A", "B-B", "I-B", "B-long-type", "I-long-type"]
BIOES_LABELS = ["O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B", "E-B", "S-B"]


def _corpus(labels):
    sentence = st.lists(st.sampled_from(labels), max_size=12)
    return st.lists(sentence, max_size=6)


@st.composite
def _aligned_pair(draw, labels):
    y_true = draw(_corpus(labels))
    y_pred = [draw(st.lists(st.sampled_from(labels), min_size=len(s), max_size=len(s)))
              for s in y_true]
    return y_true, y_pred


@examples(300)
@given(_aligned_pair(IOB_LABELS))
def test_iob_matches_conlleval(pair):
    y_true, y_pred = pair
    _assert_matches_conlleval(y_true, y_pred, "iob2")
    _assert_matches_conlleval(y_true, y_pred, "iob1")


@examples(300)
@given(_aligned_pair(IOB_LABELS))
def test_iob2_matches_seqeval_default_mode(pair):
    y_true, y_pred = pair
    _assert_matches_seqeval(y_true, y_pred, "iob2")


@examples(300)
@given(_aligned_pair(BIOES_LABELS))
def test_bioes_matches_seqeval_default_mode(pair):
    y_true, y_pred = pair
    _assert_matches_seqeval(y_true, y_pred, "bioes")


@st.composite
def _well_formed_pair(draw, scheme):
    """Aligned gold and predicted corpora, every sentence a well-formed chunking."""

    def sentence():
        labels = []
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(["O", "A", "B", "long-type"]))
            if kind == "O":
                labels.append("O")
                continue
            n = draw(st.integers(1, 3))
            if scheme == "iob2":
                labels += [f"B-{kind}"] + [f"I-{kind}"] * (n - 1)
            elif n == 1:
                labels.append(f"S-{kind}")
            else:
                labels += [f"B-{kind}"] + [f"I-{kind}"] * (n - 2) + [f"E-{kind}"]
        return labels

    y_true, y_pred = [], []
    for _ in range(draw(st.integers(0, 4))):
        t = sentence()
        p = sentence()
        # align lengths by padding the shorter one with O
        n = max(len(t), len(p))
        y_true.append(t + ["O"] * (n - len(t)))
        y_pred.append(p + ["O"] * (n - len(p)))
    return y_true, y_pred


@examples(200)
@given(_well_formed_pair("iob2"))
def test_iob2_matches_seqeval_strict_mode_on_well_formed_input(pair):
    y_true, y_pred = pair
    _assert_matches_seqeval(y_true, y_pred, "iob2", SEQEVAL_IOB2)


@examples(200)
@given(_well_formed_pair("bioes"))
def test_bioes_matches_seqeval_strict_mode_on_well_formed_input(pair):
    y_true, y_pred = pair
    _assert_matches_seqeval(y_true, y_pred, "bioes", SEQEVAL_IOBES)


def test_where_cseq_departs_from_conlleval():
    # conlleval has no S- and does not start a chunk at B- after E-: for it
    # "B-X E-X B-X E-X" is one chunk.  cseq (and seqeval) find two.
    y = [["B-X", "E-X", "B-X", "E-X"]]
    gold, pred, corr = _conlleval_counts(y, y)
    assert gold == {"X": 1}
    assert chunks(y[0], "bioes") == [("X", 0, 2), ("X", 2, 4)]
    assert chunk_scores(y, y, "bioes")["support"] == 2
    # A type spelled "0" is false in Perl, so conlleval reads B-0 as the empty
    # type; cseq keeps "0".  (A type with hyphens is no departure: both take
    # everything after the first hyphen, "creative-work".)
    y = [["B-0", "I-0", "O", "B-creative-work"]]
    assert _conlleval_counts(y, y)[0] == {"": 1, "creative-work": 1}
    assert chunks(y[0]) == [("0", 0, 2), ("creative-work", 3, 4)]
    assert set(chunk_scores(y, y)["per_type"]) == {"0", "creative-work"}


def test_docstart_lines_are_not_tokens():
    # The other departure: conlleval's only boundary word is -X-, so it counts
    # a -DOCSTART- line as an O token; cseq's reader skips it (and it ends the
    # sentence), so the token count and accuracy leave it out.
    import io

    from cseq.conll import read_conll
    text = "-DOCSTART- -X- O\n\nEU NNP B-ORG\nrejects VBZ O\n-DOCSTART- -X- O\nGerman JJ B-MISC\n"
    X, y = read_conll(io.StringIO(text))
    assert y == [["B-ORG", "O"], ["B-MISC"]]
    assert chunk_scores(y, y)["n_tokens"] == 3


@examples(200)
@given(_aligned_pair(BIOES_LABELS))
def test_properties(pair):
    y_true, y_pred = pair
    a = chunk_scores(y_true, y_pred, "bioes")
    b = chunk_scores(y_pred, y_true, "bioes")
    assert a["precision"] == b["recall"]
    assert a["recall"] == b["precision"]
    assert a["f1"] == pytest.approx(b["f1"])
    assert 0.0 <= a["f1"] <= 1.0
    perfect = chunk_scores(y_true, y_true, "bioes")
    if perfect["support"]:
        assert perfect["f1"] == 1.0
        assert chunk_f1(y_true, y_true, "bioes") == 1.0
    else:
        assert perfect["f1"] == 0.0
    # the chunks of the corpus are the chunks of its sentences
    n = sum(len(chunks(s, "bioes")) for s in y_true)
    assert a["support"] == n


@examples(100)
@given(_aligned_pair(IOB_LABELS))
def test_confusion_matrix_is_consistent(pair):
    y_true, y_pred = pair
    labels, m = confusion_matrix(y_true, y_pred)
    n = sum(len(s) for s in y_true)
    assert m.sum() == n
    if n:
        assert np.trace(m) / n == pytest.approx(accuracy(y_true, y_pred))
