"""CoNLL-2000 reading and the CRF++ chunking attributes used by the benchmark.

Both systems in ``bench/run.py`` are handed the lists built here, so any
difference they show comes from the learners and taggers, not from features.
"""

from __future__ import annotations

from cseq.features.presets import CRFPP_CHUNK


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
#: (with CRF++'s label-bigram line), for the rows that featurize inside cseq:
#: equal work on both sides of a ratio. (The ``chunk`` preset starts with this
#: set and adds more since issue 31.)
CRFPP_TEMPLATES = CRFPP_CHUNK + "B\n"


def featurize(rows):
    """Attribute lists for sentences given as ``(word, POS)`` rows (cseq.conll.read_conll)."""
    return [sentence_features([r[0] for r in sent], [r[1] for r in sent]) for sent in rows]
