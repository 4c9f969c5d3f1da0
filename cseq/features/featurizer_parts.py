"""Fitting a template featurizer by parts of a corpus (:mod:`cseq.distributed`).

Each partition of a corpus learns its attributes on its worker
(:meth:`~FitByParts.fit_part`), and :meth:`~FitByParts.merge` combines the
parts into the featurizer a single ``fit_transform`` of the whole corpus
learns: same attribute ids, same names.  With ``:tags`` templates the parts
first send the label counts behind their tag classes (:meth:`~FitByParts.tag_counts`),
and :meth:`~FitByParts.tag_folds` makes the dictionary and the jackknifed
classes of the whole corpus from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from cseq.chain import _labels
from cseq.features import _templates
from cseq.exceptions import InputError
from cseq.features.corpus import check_corpus, dense_ids, token_columns
from cseq.chain.sequences import Sequences
from cseq.features.tagdict import FOLDS, TagDictionary, jackknife

__all__ = ["FitByParts"]

#: The featurizer class the mixin is part of (its parts and merges are of that class).
_F = TypeVar("_F", bound="FitByParts")


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lens)])``, vectorized."""
    before = np.cumsum(lens) - lens
    return np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - before, lens)


class FitByParts:
    """The distributed half of :class:`~cseq.features.featurizer.TemplateFeaturizer`.

    A mixin: its methods are the featurizer's own and use its interning and
    attribute table (``_intern``, ``_tags_interned``, ``_learn``, ``_table``
    and the name arrays), which :mod:`cseq.features.featurizer` defines.
    """

    def fit_part(self: _F, X: Sequence[Any], tags: tuple | None = None,
                 first_sequence: int = 0) -> _F:
        """A featurizer fitted on ``X`` alone, every attribute kept and counted: a part for :meth:`merge`.

        ``min_freq`` is not applied (it applies to the whole corpus, in
        :meth:`merge`).  ``self`` is left unchanged.  Used by
        :mod:`cseq.distributed`, where each partition of a corpus learns its
        attributes on its worker.  With ``:tags`` templates, ``tags`` is
        :meth:`tag_folds` of the whole corpus and ``X`` its sentences
        ``first_sequence, ...``.
        """
        part = type(self)(self.templates, min_freq=1, n_buckets=self.n_buckets)
        if self._tag_columns:
            if tags is None:
                raise InputError("templates with ':tags' (such as the pos preset) need the "
                                 "tag folds of the whole corpus (tag_counts, then tag_folds) "
                                 "to fit on a part")
            X = check_corpus(X)
            part.n_columns_ = token_columns(X)
            part._tags = tags[0]
            data = part._intern(X)
            part._tags_interned(data, folds=tags[1], first_sequence=first_sequence)
            part._learn(data)
        else:
            part.fit_transform(X)
        part.counts_ = part._table.counts if part._table is not None else None
        return part

    # -- tags over the parts of a corpus (cseq.distributed) ----------------------

    def tag_counts(self, X: Sequence[Any], y: Sequence[Sequence[str | None]],
                   first_sequence: int = 0) -> dict[str, Any]:
        """The label counts behind the ``tags`` classes of a part of a corpus.

        ``X`` and ``y`` are the sentences ``first_sequence, ...`` of the
        whole corpus (their folds are ``(first_sequence + i) % FOLDS``).
        Returns a dict of plain lists and arrays for :meth:`tag_folds`: the
        labels, and per tag column the lowercased strings and the
        ``(string, label, fold)`` entries with their counts.
        """
        X = check_corpus(X)
        data = self._intern(X)
        label_ids: dict[str, int] = {}
        labels = _labels.pack_labels(y, data.seq_ptr, label_ids, True, True)
        lengths = np.diff(data.seq_ptr)
        fold = np.repeat((first_sequence + np.arange(len(lengths), dtype=np.int64)) % FOLDS,
                         lengths)
        columns = []
        for s in self._tag_slots:
            lowered, inv = dense_ids(data.slot_ids[:, s], len(data.values))
            keys, counts = np.unique(np.stack([inv, labels.astype(np.int64), fold]), axis=1,
                                     return_counts=True)
            columns.append({"words": data.values.strings(lowered.tolist()),
                            "entries": keys, "counts": counts})
        return {"labels": sorted(label_ids, key=label_ids.__getitem__), "columns": columns}

    def tag_folds(self, parts: Sequence[dict[str, Any]]) -> tuple[TagDictionary, list]:
        """The tag dictionary and jackknifed classes of a corpus from its parts' :meth:`tag_counts`.

        Returns ``(dictionary, folds)``: the dictionary ``fit_transform`` of
        the whole corpus learns, and per tag column ``(string -> id,
        classes per id and fold, class names)``, which :meth:`fit_part` and
        :meth:`transform_part` give each part's tokens (the classes
        ``fit_transform`` gives them).
        """
        labels = sorted(set().union(*(p["labels"] for p in parts)))
        label_id = {name: i for i, name in enumerate(labels)}
        tables, folds = [], []
        for k in range(len(self._tag_slots)):
            word_id: dict[str, int] = {}
            ws, ls, fs, cs = [], [], [], []
            for p in parts:
                col = p["columns"][k]
                gw = np.asarray([word_id.setdefault(w, len(word_id)) for w in col["words"]],
                                dtype=np.int64)
                # Local label ids -> merged ones; -1 (unknown) stays -1.
                lmap = np.asarray([label_id[n] for n in p["labels"]] + [-1], dtype=np.int64)
                e = np.asarray(col["entries"], dtype=np.int64).reshape(3, -1)
                ws.append(gw[e[0]])
                ls.append(lmap[e[1]])
                fs.append(e[2])
                cs.append(np.asarray(col["counts"], dtype=np.int64))
            cat = (lambda a: np.concatenate(a) if a else np.zeros(0, dtype=np.int64))  # noqa: E731
            whole, per_fold, names = jackknife(cat(ws), len(word_id), cat(ls), labels, cat(fs),
                                               count=cat(cs))
            tables.append(dict(zip(word_id, [names[c] for c in whole.tolist()])))
            folds.append((word_id, per_fold, names))
        return TagDictionary(tables, self._tag_columns), folds

    def transform_part(self, X: Sequence[Any], folds: list, first_sequence: int = 0
                       ) -> Sequences:
        """Pack the sentences ``first_sequence, ...`` of a training corpus with
        their jackknifed ``tags`` classes (``folds`` from :meth:`tag_folds`),
        as :meth:`fit_transform` of the whole corpus packs them."""
        self._check_fitted()
        X = check_corpus(X)
        data = self._intern(X)
        self._tags_interned(data, folds=folds, first_sequence=first_sequence)
        if self.n_buckets is not None:
            return self._pack(self._bucket(data), data.seq_ptr)
        ids = self._table.lookup_tokens(*self._key_args(data), data.words, data.word_slots,
                                        self._fit_memo_col)
        return self._pack(ids, data.seq_ptr)

    def merge(self: _F, parts: Sequence[_F]) -> _F:
        """The featurizer :meth:`fit_transform` learns from the parts' corpora concatenated.

        ``parts`` are :meth:`fit_part` results in corpus order.  The counts
        of an attribute are summed over the parts before ``min_freq`` is
        applied, and the kept attributes are numbered in order of first
        appearance, so the attribute ids (and names) are those a single
        ``fit_transform`` of the whole corpus gives.  Returns a new fitted
        featurizer; ``self`` is left unchanged.
        """
        merged = self.fresh()
        merged.n_columns_ = next((p.n_columns_ for p in parts if p.n_columns_ is not None), None)
        merged._tags = next((p._tags for p in parts if p._tags is not None), None)
        if self.n_buckets is not None:
            return merged
        parts = [p for p in parts if p._table is not None and len(p._table)]
        if any(getattr(p, "counts_", None) is None for p in parts):
            raise InputError("TemplateFeaturizer.merge takes the results of fit_part")
        if not parts:
            merged._table = _templates.KeyTable()
            merged._name_template = np.zeros(0, dtype=np.int32)
            merged._name_cells = np.zeros(0, dtype=np.int32)
            merged._name_strings = []
            return merged
        keys = np.concatenate([p._table.keys for p in parts])
        counts = np.concatenate([p.counts_ for p in parts])
        owner = np.repeat(np.arange(len(parts)), [len(p._table) for p in parts])
        local = np.concatenate([np.arange(len(p._table)) for p in parts])
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        total = np.zeros(len(uniq), dtype=np.int64)
        np.add.at(total, inverse.reshape(-1), counts)
        # Unique keys in order of first appearance, then min_freq.
        order = np.argsort(first, kind="stable")
        order = order[total[order] >= self.min_freq]
        pos = first[order]
        merged._table = _templates.KeyTable.from_keys(np.ascontiguousarray(uniq[order]))
        # Names: each kept attribute's template and cells from the part where it first appears.
        where = owner[pos]
        name_template = np.empty(len(pos), dtype=np.int32)
        for k, part in enumerate(parts):
            sel = where == k
            name_template[sel] = part._name_template[local[pos[sel]]]
        n_cells = self._n_cells[name_template].astype(np.int64)
        out_ptr = np.zeros(len(pos) + 1, dtype=np.int64)
        np.cumsum(n_cells, out=out_ptr[1:])
        name_cells = np.empty(int(out_ptr[-1]), dtype=np.int32)
        strings: dict[str, int] = {}
        for k, part in enumerate(parts):
            sel = np.flatnonzero(where == k)
            if not len(sel):
                continue
            ids = local[pos[sel]]
            part_ptr = np.zeros(len(part._name_template) + 1, dtype=np.int64)
            np.cumsum(part._n_cells[part._name_template], out=part_ptr[1:])
            remap = np.array([strings.setdefault(w, len(strings)) for w in part._strings()],
                             dtype=np.int32)
            lens = n_cells[sel]
            src = _ranges(part_ptr[ids], lens)
            dst = _ranges(out_ptr[sel], lens)
            name_cells[dst] = remap[part._name_cells[src]]
        merged._name_template = name_template
        merged._name_cells = name_cells
        merged._name_strings = list(strings)
        merged._name_blob = None
        merged._names = None
        return merged
