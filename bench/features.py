"""CoNLL-2000 reading and the CRF++ chunking attributes used by the benchmark.

Both systems in ``bench/run.py`` are handed the lists built here, so any
difference they show comes from the learners and taggers, not from features.
"""

from __future__ import annotations

from pathlib import Path

# CRF++ pads out-of-range positions with one distinct token per offset
# (``_B-1``, ``_B-2`` before the sentence, ``_B+1``, ``_B+2`` after it), so
# "one word before the start" and "two words before the start" stay separate
# attributes. We do the same.
_PAD_BEFORE = {-1: "_B-1", -2: "_B-2"}
_PAD_AFTER = {1: "_B+1", 2: "_B+2"}


def read_conll2000(path):
    """Read ``word POS chunk`` lines; a blank line ends a sentence.

    Returns a list of sentences, each a tuple ``(words, tags, chunks)`` of
    equal-length lists of strings.
    """
    sentences = []
    words, tags, chunks = [], [], []
    with Path(path).open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                if words:
                    sentences.append((words, tags, chunks))
                    words, tags, chunks = [], [], []
                continue
            parts = line.split(" ")
            if len(parts) != 3:
                raise ValueError(
                    f"{path}:{lineno}: expected 'word POS chunk', got {line!r}"
                )
            words.append(parts[0])
            tags.append(parts[1])
            chunks.append(parts[2])
    if words:
        sentences.append((words, tags, chunks))
    return sentences


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


def featurize(sentences):
    """``(X, y)`` for a list of ``(words, tags, chunks)`` sentences."""
    X = [sentence_features(words, tags) for words, tags, _ in sentences]
    y = [list(chunks) for _, _, chunks in sentences]
    return X, y
