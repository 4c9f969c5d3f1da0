"""The tag dictionary behind the ``tags`` token function: which labels a word was seen with.

A template cell ``%x[row,col:tags]`` reads the *ambiguity class* of the
string in column ``col``: the labels that string (lowercased) carried in the
training data, sorted and joined by ``|`` (``"ADP|ADV|SCONJ"`` for *about* in
UD English), keeping only labels with at least :data:`MIN_SHARE` of the
string's occurrences, or :data:`UNKNOWN` for a string never seen in training.
It tells the model, for the *next* word too, what that word can be, which a
left-to-right label history cannot.  On UD English EWT it is the largest
single gain of the ``pos`` preset (``python bench/ablation.py``).

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

from collections import Counter
from collections.abc import Sequence

import numpy as np

from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.features import check_strings, decode_strings, encode_strings

__all__ = ["FOLDS", "MIN_SHARE", "UNKNOWN", "TagDictionary"]

#: Folds of the jackknife over the training sentences (sentence ``i`` is in fold ``i % FOLDS``).
FOLDS = 5
#: A label belongs to a word's class when it has at least this share of the word's occurrences.
MIN_SHARE = 0.05
#: The class of a string not seen in training (or, in a fold, not seen in the other folds).
UNKNOWN = "_UNK_"


def _ambiguity_class(counts: Counter) -> str:
    total = sum(counts.values())
    if total <= 0:
        return UNKNOWN
    return "|".join(sorted(label for label, k in counts.items() if k >= MIN_SHARE * total))


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
    Build one with :meth:`fit`; :class:`cseq.templates.TemplateFeaturizer`
    does so when its templates use ``:tags``.
    """

    def __init__(self, tables: list[dict[str, str]], columns: Sequence[int]) -> None:
        self.columns = tuple(int(c) for c in columns)
        self.tables = tables

    @classmethod
    def fit(cls, rows: list[list[tuple[str, ...]]], y: Sequence[Sequence[str]],
            columns: Sequence[int]) -> tuple[TagDictionary, list[list[tuple[str, ...]]]]:
        """Learn the classes of ``columns`` from ``rows`` and their labels ``y``.

        Parameters
        ----------
        rows : list of list of tuple of str
            Each sentence's tokens as column tuples (already validated).
        y : list of label sequences, one label per token (None: unknown, not
            counted).
        columns : the columns to describe.

        Returns
        -------
        dictionary : TagDictionary
            Counted on all of ``rows``, for tagging new text.
        jackknifed : list of list of tuple of str
            For each training sentence and token, the classes of its columns
            counted on the other folds (see the module docstring).

        Raises
        ------
        InputError, InputTypeError
            If ``y`` does not have one str label per token.
        """
        if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
            raise InputTypeError(f"y must be a list of label sequences, not {type(y).__name__}")
        if len(y) != len(rows):
            raise InputError(f"X has {len(rows)} sequences but y has {len(y)}")
        columns = tuple(int(c) for c in columns)
        n_folds = FOLDS
        # fold_counts[f][k][word] = Counter of labels of word in column k, sentences of fold f.
        fold_counts: list[list[dict[str, Counter]]] = [
            [{} for _ in columns] for _ in range(n_folds)]
        lowered: list[list[list[str]]] = []
        for si, (sent, labels) in enumerate(zip(rows, y)):
            if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
                raise InputTypeError(f"y[{si}] must be a sequence of labels, not "
                                     f"{type(labels).__name__}")
            if len(labels) != len(sent):
                raise InputError(f"sequence {si}: {len(sent)} tokens but {len(labels)} labels")
            words = [[row[c].lower() for row in sent] for c in columns]
            lowered.append(words)
            fc = fold_counts[si % n_folds]
            for k in range(len(columns)):
                table = fc[k]
                for w, label in zip(words[k], labels):
                    c = table.get(w)
                    if c is None:
                        c = table[w] = Counter()
                    if label is None:  # a partially labelled sequence: not counted
                        continue
                    if not isinstance(label, str):
                        raise InputTypeError(f"y[{si}]: labels must be str, got "
                                             f"{type(label).__name__}")
                    c[label] += 1
        totals: list[dict[str, Counter]] = [{} for _ in columns]
        for fc in fold_counts:
            for k, table in enumerate(fc):
                tot = totals[k]
                for w, c in table.items():
                    t = tot.get(w)
                    if t is None:
                        tot[w] = Counter(c)
                    else:
                        t.update(c)
        tables = [{w: _ambiguity_class(c) for w, c in tot.items()} for tot in totals]
        # Jackknifed classes: each fold's own counts taken out of the totals.
        fold_tables: list[list[dict[str, str]]] = [[{} for _ in columns] for _ in range(n_folds)]
        jackknifed = []
        for si, words in enumerate(lowered):
            f = si % n_folds
            per_col = []
            for k, ws in enumerate(words):
                memo, own, tot = fold_tables[f][k], fold_counts[f][k], totals[k]
                out = []
                for w in ws:
                    cl = memo.get(w)
                    if cl is None:
                        rest = tot[w].copy()
                        rest.subtract(own[w])
                        cl = memo[w] = _ambiguity_class(+rest)
                    out.append(cl)
                per_col.append(out)
            jackknifed.append(list(zip(*per_col)) if per_col else [])
        return cls(tables, columns), jackknifed

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
