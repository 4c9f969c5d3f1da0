"""The tag dictionary behind the ``tags`` token function: which labels a word was seen with.

A template cell ``%x[row,col:tags]`` reads the *ambiguity class* of the
string in column ``col``: the labels that string (lowercased) carried in the
training data, sorted and joined by ``|`` (``"ADP|ADV|SCONJ"`` for *about* in
UD English), keeping only labels with at least :data:`MIN_SHARE` of the
string's occurrences, or :data:`UNKNOWN` for a string never seen in training.
It tells the model, for the *next* word too, what that word can be, which a
left-to-right label history cannot.  On UD English EWT it is the largest
single gain of the ``pos`` preset (``python bench/ablations/ablation.py``).

On the training corpus itself the classes are **jackknifed**: sentence ``i``
belongs to fold ``i % FOLDS`` and its classes are counted on the other folds
only.  Without this, every word seen once would carry its own gold label as a
feature, the model would learn to trust the class blindly, and it would be
wrong on new text (the unjackknifed variant is *below* the preset without
tags on EWT).  When tagging, the classes come from the whole training corpus.

References
----------
.. [1] D. Cutting, J. Kupiec, J. Pedersen, P. Sibun, "A practical
   part-of-speech tagger", ANLP 1992 (ambiguity classes).
.. [2] J. Giménez, L. Màrquez, "SVMTool: a general POS tagger generator based
   on support vector machines", LREC 2004 (ambiguity-class features of the
   words around the target).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq.exceptions import ModelFormatError
from cseq.features import check_strings, decode_strings, encode_strings

__all__ = ["FOLDS", "MIN_SHARE", "UNKNOWN", "TagDictionary", "jackknife"]

#: Folds of the jackknife over the training sentences (sentence ``i`` is in fold ``i % FOLDS``).
FOLDS = 5
#: A label belongs to a word's class when it has at least this share of the word's occurrences.
#: 10% rather than 5%: a label that rare is mostly an annotation slip or a rare use, and the
#: class then says "ambiguous" where the word is not; on EWT dev the pos preset gains +0.06 to
#: +0.08 at order 1 on every seed (docs/templates.md).
MIN_SHARE = 0.10
#: The class of a string not seen in training (or, in a fold, not seen in the other folds).
UNKNOWN = "_UNK_"


#: Words per block of the count array (words x labels x folds) in :func:`jackknife`.
_BLOCK = 1 << 21


def jackknife(word: np.ndarray, n_words: int, label: np.ndarray, label_names: Sequence[str],
              fold: np.ndarray, n_folds: int = FOLDS, count: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Ambiguity classes counted over all tokens and, per fold, over the other folds.

    Parameters
    ----------
    word : int array (n_tokens,)
        Each token's word id, ``0 <= word < n_words`` (ids of the lowercased
        strings).
    label : int array (n_tokens,)
        Each token's label id into ``label_names``; -1 where the label is not
        known (the word is seen, its label not counted).
    label_names : the labels' strings.
    fold : int array (n_tokens,)
        Each token's fold, ``0 <= fold < n_folds``.
    count : int array (n_tokens,), optional
        How many tokens each entry stands for (1 each when omitted): counts
        summed elsewhere (:mod:`cseq.distributed`) give the same classes.

    Returns
    -------
    whole : int32 array (n_words,)
        The class of each word counted over every token.
    per_fold : int32 array (n_words, n_folds)
        The class of each word counted over the tokens of the other folds:
        a token's jackknifed class is ``per_fold[word, fold]``.
    names : list of str
        The classes' strings (class ids index it): ``UNKNOWN`` when no label
        was counted, else the labels with at least :data:`MIN_SHARE` of the
        count, sorted and joined by ``|``.
    """
    L = len(label_names)
    order = np.argsort(np.asarray(label_names, dtype=object), kind="stable") if L else \
        np.zeros(0, dtype=np.int64)
    rank = np.empty(L, dtype=np.int64)
    rank[order] = np.arange(L)  # label id -> position in sorted order (the class's bit)
    sorted_names = [label_names[i] for i in order]
    word = np.asarray(word, dtype=np.int64)
    fold = np.asarray(fold, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    known = label >= 0
    kw, kl, kf = word[known], rank[label[known]], fold[known]
    kc = None if count is None else np.asarray(count, dtype=np.int64)[known]
    whole = np.empty(n_words, dtype=np.int64)
    per_fold = np.empty((n_words, n_folds), dtype=np.int64)
    classes: dict[Any, int] = {}  # a class's label bits (int or bytes) -> its id
    names: list[str] = [UNKNOWN]
    step = max(1, _BLOCK // max(1, L * n_folds))
    if n_words > step:  # several blocks of words: the tokens sorted by word
        by_word = np.argsort(kw, kind="stable")
        kw, kl, kf = kw[by_word], kl[by_word], kf[by_word]
        kc = None if kc is None else kc[by_word]
        bounds = np.searchsorted(kw, np.arange(0, n_words + step, step))
    else:
        bounds = np.array([0, len(kw)])

    def ids_of(member: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Class ids of rows of ``member`` (bool, (m, L)); UNKNOWN where ``total`` is 0."""
        out = np.zeros(len(member), dtype=np.int64)
        if not L or not len(member):
            return out
        if L <= 64:  # a class as the bits of one integer
            keys = member.astype(np.uint64) @ (np.uint64(1) << np.arange(L, dtype=np.uint64))
        else:
            packed = np.ascontiguousarray(np.packbits(member, axis=1))
            keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
        uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        ids = np.empty(len(uniq), dtype=np.int64)
        for j, u in enumerate(uniq.tolist()):  # the distinct classes only
            c = classes.get(u)
            if c is None:
                c = classes[u] = len(names)
                names.append("|".join(n for n, m in zip(sorted_names, member[first[j]]) if m))
            ids[j] = c
        out[:] = ids[inv.reshape(-1)]
        out[total <= 0] = 0
        return out

    for b, w0 in enumerate(range(0, n_words, step)):
        w1 = min(w0 + step, n_words)
        lo, hi = bounds[b], bounds[b + 1]
        m = w1 - w0
        counts = np.bincount(((kw[lo:hi] - w0) * L + kl[lo:hi]) * n_folds + kf[lo:hi],
                             weights=None if kc is None else kc[lo:hi],
                             minlength=m * L * n_folds).astype(np.int64).reshape(m, L, n_folds)
        totals = counts.sum(axis=2)  # (m, L)
        t = totals.sum(axis=1)
        # Rows are words; a label is in the class with k >= MIN_SHARE * total.
        whole[w0:w1] = ids_of(totals >= MIN_SHARE * t[:, None], t)
        rest = totals[:, :, None] - counts  # (m, L, F): counted on the other folds
        rt = rest.sum(axis=1)  # (m, F)
        member = (rest >= MIN_SHARE * rt[:, None, :]).transpose(0, 2, 1).reshape(m * n_folds, L)
        per_fold[w0:w1] = ids_of(member, rt.reshape(-1)).reshape(m, n_folds)
    return whole.astype(np.int32), per_fold.astype(np.int32), names


class TagDictionary:
    """Ambiguity classes of the strings of some token columns, learned from labelled data.

    Parameters
    ----------
    tables : list of dict
        One ``{lowercased string: class}`` mapping per column, in the order
        of ``columns``.
    columns : sequence of int
        The token columns the dictionary describes.

    Notes
    -----
    :class:`cseq.templates.TemplateFeaturizer` builds one from the counts of
    :func:`jackknife` when its templates use ``:tags``.
    """

    def __init__(self, tables: list[dict[str, str]], columns: Sequence[int]) -> None:
        self.columns = tuple(int(c) for c in columns)
        self.tables = tables

    def classes(self, sent: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """The classes of one sentence's columns, per token (tagging: the whole dictionary)."""
        per_col = [[table.get(row[c].lower(), UNKNOWN) for row in sent]
                   for c, table in zip(self.columns, self.tables)]
        return list(zip(*per_col))

    def lookup(self, column: int, string: str) -> str:
        """The class of ``string`` in ``column``."""
        return self.tables[self.columns.index(column)].get(string.lower(), UNKNOWN)

    # -- state ------------------------------------------------------------------

    def get_arrays(self) -> dict[str, np.ndarray]:
        """Named arrays for a model file: the strings and classes of every column, concatenated."""
        words: list[str] = []
        classes: list[str] = []
        ptr = [0]
        for table in self.tables:
            for w in sorted(table):
                words.append(w)
                classes.append(table[w])
            ptr.append(len(words))
        w, c = encode_strings(words), encode_strings(classes)
        return {"tag_words": w["blob"], "tag_word_ptr": w["offsets"],
                "tag_classes": c["blob"], "tag_class_ptr": c["offsets"],
                "tag_column_ptr": np.asarray(ptr, dtype=np.int64)}

    ARRAYS = frozenset({"tag_words", "tag_word_ptr", "tag_classes", "tag_class_ptr",
                        "tag_column_ptr"})

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], columns: Sequence[int],
                    what: str) -> TagDictionary:
        """Rebuild from :meth:`get_arrays` output, checking everything (ModelFormatError)."""
        missing = cls.ARRAYS - set(arrays)
        if missing:
            raise ModelFormatError(f"{what}: the templates use ':tags' but the file lacks "
                                   f"{sorted(missing)}")
        a = {k: arrays[k] for k in cls.ARRAYS}
        for k in ("tag_words", "tag_classes"):
            if not isinstance(a[k], np.ndarray) or a[k].dtype != np.uint8 or a[k].ndim != 1:
                raise ModelFormatError(f"{what}: {k!r} must be a 1-d uint8 array")
        for k in ("tag_word_ptr", "tag_class_ptr", "tag_column_ptr"):
            v = a[k]
            if not isinstance(v, np.ndarray) or v.ndim != 1 or v.dtype.kind != "i" \
                    or v.dtype.itemsize != 8:
                raise ModelFormatError(f"{what}: {k!r} must be a 1-d int64 array")
            a[k] = np.ascontiguousarray(v, dtype=np.int64)
        check_strings(a["tag_words"], a["tag_word_ptr"], f"{what} tag words")
        check_strings(a["tag_classes"], a["tag_class_ptr"], f"{what} tag classes")
        words = decode_strings(a["tag_words"], a["tag_word_ptr"], f"{what} tag words")
        classes = decode_strings(a["tag_classes"], a["tag_class_ptr"], f"{what} tag classes")
        ptr = a["tag_column_ptr"]
        if len(words) != len(classes):
            raise ModelFormatError(f"{what}: {len(words)} tag words but {len(classes)} classes")
        if (len(ptr) != len(columns) + 1 or ptr[0] != 0 or ptr[-1] != len(words)
                or np.any(np.diff(ptr) < 0)):
            raise ModelFormatError(f"{what}: 'tag_column_ptr' does not split the tag words "
                                   f"into {len(columns)} column(s)")
        tables = []
        for k in range(len(columns)):
            lo, hi = int(ptr[k]), int(ptr[k + 1])
            table = dict(zip(words[lo:hi], classes[lo:hi]))
            if len(table) != hi - lo:
                raise ModelFormatError(f"{what}: a tag word is listed twice in column "
                                       f"{columns[k]}")
            tables.append(table)
        return cls(tables, columns)
