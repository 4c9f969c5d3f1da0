"""Small hand-made corpora that more than one test file trains on."""

from __future__ import annotations

import numpy as np

__all__ = ["SEPARABLE_X", "SEPARABLE_Y", "word_corpus"]

SEPARABLE_X = [
    [["w=a"], ["w=x"]],
    [["w=b"], ["w=x"]],
    [["w=a"], ["w=x"], ["w=b"], ["w=x"]],
    [["w=x"]],
    [["w=b"], ["w=x"], ["w=x"]],
    [],
]
# "x" is tagged by the previous tag, so the transitions must be learned.
SEPARABLE_Y = [
    ["A", "P"],
    ["B", "Q"],
    ["A", "P", "B", "Q"],
    ["S"],
    ["B", "Q", "R"],
    [],
]


def word_corpus(rng: np.random.Generator, n_seqs: int, words: int = 12,
                tags: tuple[str, ...] = ("A", "B", "C")) -> tuple[list, list]:
    """Words whose tag is mostly their own (10% another), with the previous word as a feature."""
    own = {f"w{i}": tags[i % len(tags)] for i in range(words)}
    X, y = [], []
    for _ in range(n_seqs):
        n = int(rng.integers(1, 9))
        ws = [f"w{rng.integers(words)}" for _ in range(n)]
        X.append([[f"w={w}", f"prev={ws[i - 1] if i else '<s>'}"] for i, w in enumerate(ws)])
        y.append([own[w] if rng.random() > 0.1 else tags[int(rng.integers(len(tags)))]
                  for w in ws])
    return X, y
