"""CoNLL-2000 reading and the CRF++ chunking attributes used by the benchmark.

Both systems in ``bench/run.py`` are handed the lists built here, so any
difference they show comes from the learners and taggers, not from features.
"""

from __future__ import annotations


# CRF++ pads out-of-range positions with one distinct token per offset
# (``_B-1``, ``_B-2`` before the sentence, ``_B+1``, ``_B+2`` after it), so
# "one word before the start" and "two words before the start" stay separate
# attributes. We do the same.
_PAD_BEFORE = {-1: "_B-1", -2: "_B-2"}
_PAD_AFTER = {1: "_B+1", 2: "_B+2"}


def _padded(column):
    n = len(column)

    def at(i):
        if i < 0:
            return _PAD_BEFORE[i]
        if i >= n:
            return _PAD_AFTER[i - n + 1]
        return column[i]

    return at


def sentence_features(words, tags):
    """Per-token attribute strings for one sentence (no bias attribute).

    The set is the CRF++ chunking template: word unigrams in a +-2 window,
    two word bigrams around the token, POS unigrams in a +-2 window, four POS
    bigrams and three POS trigrams.
    """
    w = _padded(words)
    p = _padded(tags)
    out = []
    for i in range(len(words)):
        out.append([
            "w[-2]=" + w(i - 2),
            "w[-1]=" + w(i - 1),
            "w[0]=" + w(i),
            "w[1]=" + w(i + 1),
            "w[2]=" + w(i + 2),
            "w[-1]|w[0]=" + w(i - 1) + "|" + w(i),
            "w[0]|w[1]=" + w(i) + "|" + w(i + 1),
            "pos[-2]=" + p(i - 2),
            "pos[-1]=" + p(i - 1),
            "pos[0]=" + p(i),
            "pos[1]=" + p(i + 1),
            "pos[2]=" + p(i + 2),
            "pos[-2]|pos[-1]=" + p(i - 2) + "|" + p(i - 1),
            "pos[-1]|pos[0]=" + p(i - 1) + "|" + p(i),
            "pos[0]|pos[1]=" + p(i) + "|" + p(i + 1),
            "pos[1]|pos[2]=" + p(i + 1) + "|" + p(i + 2),
            "pos[-2]|pos[-1]|pos[0]=" + p(i - 2) + "|" + p(i - 1) + "|" + p(i),
            "pos[-1]|pos[0]|pos[1]=" + p(i - 1) + "|" + p(i) + "|" + p(i + 1),
            "pos[0]|pos[1]|pos[2]=" + p(i) + "|" + p(i + 1) + "|" + p(i + 2),
        ])
    return out


#: The same attribute set as :func:`sentence_features`, as CRF++ templates
#: (with its bias/bigram line), for the rows that featurize inside cseq: the
#: CRF++ chunking template, which was the ``chunk`` preset until issue 31
#: extended the preset.  Equal work on both sides of a ratio.
CRFPP_TEMPLATES = """\
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0]/%x[0,0]
U06:%x[0,0]/%x[1,0]
U10:%x[-2,1]
U11:%x[-1,1]
U12:%x[0,1]
U13:%x[1,1]
U14:%x[2,1]
U15:%x[-2,1]/%x[-1,1]
U16:%x[-1,1]/%x[0,1]
U17:%x[0,1]/%x[1,1]
U18:%x[1,1]/%x[2,1]
U20:%x[-2,1]/%x[-1,1]/%x[0,1]
U21:%x[-1,1]/%x[0,1]/%x[1,1]
U22:%x[0,1]/%x[1,1]/%x[2,1]
B
"""


def featurize(rows):
    """Attribute lists for sentences given as ``(word, POS)`` rows (cseq.conll.read_conll)."""
    return [sentence_features([r[0] for r in sent], [r[1] for r in sent]) for sent in rows]
