"""The compiled template featurizer: raw tokens to packed attribute ids.

:class:`TemplateFeaturizer` turns a corpus into a :class:`cseq.chain.sequences.Sequences`
through the compiled path: :mod:`cseq.features._tokens` interns cell strings in a C
table and runs the token functions in C once per distinct cell, then (in
:mod:`cseq.features._templates`) each attribute becomes a 64-bit key combined in C and
mapped to an id through a C hash table, so no Python string is built per
feature.  :func:`cseq.features.template_language.expand` is the plain-Python
reference that builds the same attributes as strings.

The featurizer checks the user's sentences before any compiled code reads
them, learns its attributes in one fit or by parts of a corpus (for
:mod:`cseq.distributed`: :meth:`TemplateFeaturizer.fit_part` and
:meth:`TemplateFeaturizer.merge`), and keeps its model-file state through
the functions of :mod:`cseq.features.featurizer_state`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq.chain import _labels
from cseq.features import _keytable, _templates, _columns, _tokens
from cseq._core.dtypes import ATTR, INDEX, VALUE
from cseq.exceptions import InputError, InputTypeError, ModelFormatError, NotFittedError
from cseq.features import featurizer_state
from cseq.features.template_language import Templates, as_templates, expand, sentence_rows
from cseq.features.token_functions import TAGS
from cseq.features.cluster_functions import cluster_bits, cluster_value
from cseq.features.clusters import ARRAYS as CLUSTER_ARRAYS
from cseq.features.clusters import (Clusters, cluster_table, clusters_from_reference,
                                    with_cluster_templates)
from cseq.features.protocol import GrowingFeaturizer, PartsFeaturizer, register_featurizer
from cseq.features.vocabulary import decode_strings
from cseq._core.threads import resolve_n_jobs
from cseq.chain.sequences import Sequences
from cseq.features.tagdict import UNKNOWN as UNKNOWN_CLASS
from cseq.features.tagdict import FOLDS, TagDictionary, jackknife

__all__ = ["MAX_BUCKETS", "TemplateFeaturizer", "TransformChunks"]

#: Most hashing buckets (``n_buckets``).  Every bucket is an attribute of the
#: model whether any key falls in it or not: a row pointer in the file (8
#: bytes) and about 40 bytes at the peak of training, so 2**24 buckets make
#: a 134 MB file and 0.7 GB of training memory before the first token.
MAX_BUCKETS = 1 << 24

# This thread's token function values (and tag classes) of the cell strings
# it saw last (_function_cache).
_thread = threading.local()


def _function_cache() -> _tokens.FunctionCache:
    """This thread's :class:`cseq.features._tokens.FunctionCache`, made on first use.

    One per thread because it is not locked; one for every featurizer and
    model because a token function's value depends on the string alone.
    The ``tags`` classes it keeps are those of the one tag dictionary it was
    given last (a fitted dictionary never changes; another empties them);
    cluster prefixes are not in it.
    """
    try:
        return _thread.function_cache
    except AttributeError:
        cache = _thread.function_cache = _tokens.FunctionCache()
        return cache


# ---------------------------------------------------------------------------
# the corpus: checking the user's sentences, and their interned form


class Interned:
    """One corpus as interned cells: what the compiled kernels and names need."""

    __slots__ = ("values", "hashes", "slot_ids", "seq_ptr", "pad_before", "pad_after", "words",
                 "word_slots")




def check_corpus(X) -> list:
    if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__"):
        raise InputTypeError(
            f"X must be a list of sentences (lists of tokens), not {type(X).__name__}"
        )
    X = X if isinstance(X, list) else list(X)
    if not X:
        raise InputError("X is empty: need at least one sentence")
    return X


def token_columns(X: list) -> int | None:
    """Columns per token of the first token of ``X`` (None if it cannot be seen cheaply)."""
    for sent in X:
        if isinstance(sent, (list, tuple)) and sent:
            tok = sent[0]
            return 1 if isinstance(tok, str) else len(tok) if isinstance(tok, (tuple, list)) else None
    return None



def dense_ids(ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(ids, return_inverse=True)`` for ids in ``[0, n)``, in O(len(ids) + n)."""
    seen = np.zeros(n, dtype=bool)
    seen[ids] = True
    used = np.flatnonzero(seen)
    rank = np.cumsum(seen, dtype=np.int64) - 1
    return used, rank[ids]

def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lens)])``, vectorized."""
    before = np.cumsum(lens) - lens
    return np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - before, lens)


class TransformChunks:
    """A corpus interned by :meth:`TemplateFeaturizer.transform_chunks`.

    ``len(chunks)`` chunks of consecutive sentences; ``chunks.block(k)`` is
    the slice of the corpus that chunk ``k`` covers and
    ``chunks.sequences(k)`` packs it.  Read-only once made: threads may
    pack different chunks at the same time.
    """

    def __init__(self, featurizer: "TemplateFeaturizer", data: Interned | None, memo: Any,
                 max_tokens: int | None, min_chunks: int = 1, *,
                 whole: Sequences | None = None) -> None:
        self._f, self._data, self._memo, self._whole = featurizer, data, memo, whole
        if data is None:
            self._bounds = [0, whole.n_sequences if whole is not None else 0]
            return
        ptr = data.seq_ptr
        n_seq, n_tok = len(ptr) - 1, int(ptr[-1])
        size = n_tok if max_tokens is None else max_tokens
        size = max(1, min(size, -(-n_tok // max(min_chunks, 1))))
        if n_seq <= 1 or n_tok <= size:
            self._bounds = [0, n_seq]
        else:
            # A chunk ends with the first sentence that reaches each multiple of size.
            ends = np.searchsorted(ptr[1:], np.arange(size, n_tok, size))
            self._bounds = sorted({0, n_seq, *(int(e) + 1 for e in ends if e + 1 < n_seq)})

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def block(self, k: int) -> slice:
        """The sentences of chunk ``k``."""
        return slice(self._bounds[k], self._bounds[k + 1])

    def sequences(self, k: int, *, n_jobs: int = 1, without_memo: bool = False) -> Sequences:
        """Chunk ``k`` packed, as :meth:`TemplateFeaturizer.transform` packs it.

        With ``without_memo``, less the attributes :meth:`memo_attributes`
        gives per word for the tokens that read them: the caller adds those
        (``LinearChain.decode``'s ``word_rows``, with :meth:`words`).
        """
        f, data = self._f, self._data
        if data is None:
            if without_memo:
                raise ValueError("a hashed featurizer has no memo attributes")
            return self._whole
        s0, s1 = self._bounds[k], self._bounds[k + 1]
        if len(self._bounds) == 2:  # one chunk, all of X (one sentence): no slices to make
            seq_ptr, cells, words = data.seq_ptr, data.slot_ids, data.words
        else:
            t0, t1 = int(data.seq_ptr[s0]), int(data.seq_ptr[s1])
            seq_ptr = data.seq_ptr[s0:s1 + 1] - t0 if t0 else data.seq_ptr[s0:s1 + 1]
            cells, words = data.slot_ids[t0:t1], data.words[t0:t1]
        attr, tok_ptr = f._table.plan_lookup_packed(
            f._plan, cells, data.hashes, seq_ptr, data.pad_before, data.pad_after, words,
            self._memo, n_jobs if n_jobs == 1 else resolve_n_jobs(n_jobs), without_memo)
        values = np.empty(len(attr), dtype=VALUE)
        values.fill(1)  # not np.ones, a Python function dearer than one sentence's fill
        return Sequences.packed(seq_ptr, tok_ptr, attr, values)  # seq_ptr: a contiguous slice

    def words(self, k: int) -> np.ndarray:
        """int32 (n_tokens, n_columns): the word id of each token of chunk ``k`` in each column."""
        if self._data is None:
            raise ValueError("a hashed featurizer has no word ids")
        data, s0, s1 = self._data, self._bounds[k], self._bounds[k + 1]
        return data.words[int(data.seq_ptr[s0]):int(data.seq_ptr[s1])]

    def memo_attributes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The attributes of the templates that read one cell, per distinct word (None: none).

        Returns ``(ids, group, groups)``: ``ids`` int32 (n_words, n_memo),
        the attribute id of memo template ``j`` read on word ``w`` (-1 when
        the table lacks it; -2 when it is looked up per token, which
        :meth:`sequences` then keeps); ``group`` (n_memo,) the group of each
        memo template; ``groups`` int32 (n_groups, 2), the column and row
        offset every template of a group reads.  A token whose row
        ``t + offset`` is in its sentence has, from group ``g``, the
        attributes ``ids[words[t + offset, col], group == g]``.
        """
        f = self._f
        if self._data is None or self._memo.n_memo == 0:
            return None
        return self._memo.memo_ids, f._memo_group, f._memo_groups


@register_featurizer
class TemplateFeaturizer(GrowingFeaturizer, PartsFeaturizer):
    """Turn token columns into packed attribute ids through feature templates.

    Parameters
    ----------
    templates : str or Templates, default "pos"
        A preset name (``"pos"``, ``"chunk"``, ``"ner"``), template file text,
        or a :class:`Templates`.
    min_freq : int, default 1
        Attributes seen fewer than ``min_freq`` times by :meth:`fit_transform`
        are dropped; the kept ones get dense ids ``0 .. n_attributes - 1`` in
        order of first appearance.
    n_buckets : int or None, default None
        Hashing mode: the attribute id is ``key % n_buckets`` and no table is
        stored (bounded memory; distinct attributes may share a bucket).
        ``min_freq`` must then be 1.  At most :data:`MAX_BUCKETS` (2**24):
        every bucket costs the model memory, used or not.
    clusters : Clusters, str or path, optional
        The word clusters the ``cluster`` template functions read
        (:mod:`cseq.features.cluster_functions`): a table, ``"en"`` for the
        English classes shipped with cseq (:data:`cseq.features.clusters.BUNDLED`),
        or the path of a cluster file (:func:`cseq.features.clusters.read_clusters`).
        Needed when the templates use them; templates that use none get the
        cluster templates (:data:`cseq.features.clusters.CLUSTER_TEMPLATES`:
        the word's class at four grains, its neighbours' at two).  A model
        file keeps a table whole, and a shipped one by name and digest.

    Attributes
    ----------
    n_columns_ : int or None
        Columns per token of the training data (``fit_transform``), kept in
        model files: ``cseq tag`` uses it to notice a label column left in its
        input.  None before fitting, or for models saved without it.

    Notes
    -----
    Attribute identity is a 64-bit hash of the template's literal text and the
    UTF-8 bytes of the values it reads (see ``docs/templates.md``: two distinct
    attribute strings share a key with probability about ``n**2 / 2**65`` for
    ``n`` distinct attributes).  A fitted featurizer keeps, per attribute, its
    template and the strings it read, so :meth:`attribute_names` works after
    :meth:`from_state` too.

    Examples
    --------
    >>> f = TemplateFeaturizer("U00:%x[0,0:lower]\\nU01:%x[-1,0]")
    >>> seqs = f.fit_transform([["The", "cat"], ["the", "dog"]])
    >>> f.n_attributes, seqs.n_tokens
    (6, 4)
    >>> f.attribute_names()[:3]
    ['U00:the', 'U01:_B-1', 'U00:cat']
    """

    kind = "templates"
    #: Names of the arrays :meth:`get_state` may return (none in hashing mode).
    STATE_ARRAYS = frozenset({"keys", "name_template", "name_cells", "strings", "string_ptr",
                              *TagDictionary.ARRAYS, *CLUSTER_ARRAYS})

    def __init__(self, templates: str | Templates = "pos", *, min_freq: int = 1,
                 n_buckets: int | None = None, clusters: Any = None) -> None:
        self.templates = as_templates(templates)
        if not self.templates.templates:
            raise InputError("the templates define no unigram (U) template")
        if isinstance(min_freq, bool) or not isinstance(min_freq, (int, np.integer)):
            raise InputTypeError(f"min_freq must be an int, not {type(min_freq).__name__}")
        if min_freq < 1:
            raise InputError(f"min_freq must be >= 1, got {min_freq}")
        if n_buckets is not None:
            if isinstance(n_buckets, bool) or not isinstance(n_buckets, (int, np.integer)):
                raise InputTypeError(
                    f"n_buckets must be an int or None, not {type(n_buckets).__name__}"
                )
            if not 1 <= n_buckets <= MAX_BUCKETS:
                raise InputError(f"n_buckets must be in [1, 2**24] (every bucket is an "
                                 f"attribute of the model, used or not), got {n_buckets}")
            if min_freq != 1:
                raise InputError("min_freq needs an attribute table; use min_freq=1 with n_buckets")
            n_buckets = int(n_buckets)
        self.min_freq = int(min_freq)
        self.n_buckets = n_buckets
        self.clusters = _as_clusters(clusters)
        if self.clusters is not None:
            self.templates = with_cluster_templates(self.templates)
        self._compile_spec()
        if self._cluster_slots and self.clusters is None:
            raise InputError("the templates use a 'cluster' token function: give the word "
                             "clusters (clusters=, or cseq train --clusters FILE)")
        self._table = None  # KeyTable once fitted (table mode)
        self._name_template = None  # int32 (n_attributes,)
        self._name_cells = None  # int32, the cells of each attribute, concatenated
        self._name_strings = None  # list of str the cells index (see _strings)
        self._name_blob = None  # or those strings as stored in a file: (UTF-8 blob, offsets)
        self._names = None  # cached names: {Template method: list} (_render_names)
        self._tags: TagDictionary | None = None  # the classes of ``tags`` cells, once fitted
        self.n_columns_: int | None = None  # columns per token in training, once fitted

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters (scikit-learn convention; ``deep`` is ignored)."""
        return {"templates": self.templates, "min_freq": self.min_freq,
                "n_buckets": self.n_buckets, "clusters": self.clusters}

    def set_params(self, **params: Any) -> TemplateFeaturizer:
        """Set constructor parameters, checked as the constructor checks them.

        The featurizer becomes unfitted.  Returns self.
        """
        unknown = set(params) - {"templates", "min_freq", "n_buckets", "clusters"}
        if unknown:
            raise InputError(f"TemplateFeaturizer has no parameter {sorted(unknown)[0]!r}")
        merged = {**self.get_params(), **params}
        self.__init__(merged.pop("templates"), **merged)  # type: ignore[misc]
        return self

    def get_config(self) -> dict:
        """JSON-able configuration (no fitted state); :meth:`from_config` rebuilds it."""
        config = {"kind": "templates", "templates": self.templates.text,
                  "min_freq": self.min_freq, "n_buckets": self.n_buckets}
        c = self.clusters
        if c is not None:
            config["clusters"] = (c.reference() if c.bundled is not None else
                                  {"words": c.words, "paths": c.paths, "counts": c.counts})
        return config

    @classmethod
    def from_config(cls, config: dict) -> "TemplateFeaturizer":
        """An unfitted featurizer from :meth:`get_config` output; ModelFormatError if invalid."""
        try:
            table = config.get("clusters")
            if table is None:
                clusters = None
            elif "bundled" in table:
                clusters = clusters_from_reference(table, "template featurizer configuration")
            else:
                clusters = Clusters(table["words"], table["paths"], table["counts"])
            return cls(config["templates"], min_freq=config["min_freq"],
                       n_buckets=config["n_buckets"], clusters=clusters)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"bad template featurizer configuration: {exc}") from None

    def fresh(self) -> "TemplateFeaturizer":
        """An unfitted featurizer with the same templates and options (used by ``fit``)."""
        return TemplateFeaturizer(self.templates, min_freq=self.min_freq, n_buckets=self.n_buckets,
                                  clusters=self.clusters)

    def copy(self) -> "TemplateFeaturizer":
        """A copy that :meth:`partial_fit_transform` may grow, leaving this one as it is.

        ``partial_fit`` grows a copy while readers keep looking attributes
        up in this featurizer (copy-on-write, :mod:`cseq.fitted`).  The
        attribute table is copied (:meth:`KeyTable.copy`, memory speed); the
        rest is shared, as nothing replaces it in place: growing assigns
        new name arrays and lists, and the tag dictionary is the first
        batch's for good.
        """
        out = copy.copy(self)
        if self._table is not None:
            out._table = self._table.copy()
        return out

    # -- template spec as arrays ----------------------------------------------

    def _compile_spec(self) -> None:
        tpl = self.templates.templates
        self._tag_columns = self.templates.tag_columns
        cells = [list(t.cells) for t in tpl]
        slots: dict[tuple[int, str | None], int] = {}
        rows, cell_slots, ptr = [], [], [0]
        for t_cells in cells:
            for c in t_cells:
                key = (c.col, c.func)
                if key not in slots:
                    slots[key] = len(slots)
                rows.append(c.row)
                cell_slots.append(slots[key])
            ptr.append(len(rows))
        self._slots = list(slots)  # (column, function) of each slot
        self._columns = sorted({col for col, _ in self._slots})
        # Positions by dict, not list.index: a template set may read thousands
        # of columns, and a model file's header chooses it.
        col_pos = {col: k for k, col in enumerate(self._columns)}
        self._col_index = np.asarray(self._columns, dtype=np.int32)
        self._slot_col = np.asarray([col_pos[c] for c, _ in self._slots], np.int32)
        # A ``tags`` slot is computed as ``lower`` (the key of the tag
        # dictionary), then its values are replaced by the classes
        # (_tags_interned, _tags_hashed): a slot of its own, apart from ``lower``.
        # A ``cluster`` slot likewise: computed as ``lower`` (for values
        # of its own), then given each word's bit-string prefix (_clusters_interned).
        self._cluster_slots = [(k, col_pos[c], cluster_bits(f))
                               for k, (c, f) in enumerate(self._slots)
                               if cluster_bits(f) is not None]
        self._slot_func = np.asarray(
            [-1 if f is None else _tokens.FUNCTIONS.index(
                "lower" if f == TAGS or cluster_bits(f) is not None else f)
             for _, f in self._slots], np.int32
        )
        self._tag_slots = [slots[(c, TAGS)] for c in self._tag_columns]
        # Templates that read one column of one row are looked up once per
        # distinct string of that column (KeyTable.word_memo): when tagging,
        # whatever the row; when fitting, those of the current row.
        one = [bool(tc) and all(c.row == tc[0].row and c.col == tc[0].col for c in tc)
               for tc in cells]
        self._memo_col = np.asarray(
            [col_pos[tc[0].col] if ok else -1 for tc, ok in zip(cells, one)],
            dtype=np.int32)
        self._memo_row = np.asarray([tc[0].row if ok else 0 for tc, ok in zip(cells, one)],
                                    dtype=np.int32)
        # Read-only: the featurizer's own, read by every thread that tags with it.
        self._memo_col.flags.writeable = self._memo_row.flags.writeable = False
        # The memo templates grouped by the (column, row) they read, for
        # TransformChunks.memo_attributes: fixed by the templates, so built here
        # once rather than per transform.
        memo = self._memo_col >= 0
        pairs = np.stack([self._memo_col[memo], self._memo_row[memo]], axis=1).reshape(-1, 2)
        groups, group = np.unique(pairs, axis=0, return_inverse=True)
        self._memo_group = group.reshape(-1).astype(np.int32)
        self._memo_groups = np.ascontiguousarray(groups, dtype=np.int32)
        # When fitting, a word's jackknifed class depends on its sentence's
        # fold, not on the word alone: templates with ``tags`` are not memoized.
        tagged = np.asarray([any(c.func == TAGS for c in tc) for tc in cells], dtype=bool)
        self._fit_memo_col = np.where((self._memo_row == 0) & ~tagged, self._memo_col,
                                      -1).astype(np.int32)
        self._cell_row = np.asarray(rows, dtype=np.int32)
        self._cell_slot = np.asarray(cell_slots, dtype=np.int32)
        self._tmpl_ptr = np.asarray(ptr, dtype=np.int32)
        self._n_cells = np.diff(self._tmpl_ptr).astype(np.int32)
        self._seeds = _templates.hash_strings([t.skeleton for t in tpl])
        # The template arrays as the word memo and the lookup read them,
        # checked once here rather than at every call (a sentence's lookup
        # costs less than checking them).
        self._plan = _keytable.TemplatePlan(self._tmpl_ptr, self._cell_row, self._cell_slot,
                                             self._seeds, self._memo_col, self._memo_row)
        self._max_offset = self.templates.max_offset
        self._need = self.templates.n_columns

    # -- the tags function ---------------------------------------------------------

    @property
    def needs_labels(self) -> bool:
        """Whether :meth:`fit_transform` needs ``y``: the templates use ``:tags``."""
        return bool(self._tag_columns)

    def _tags_interned(self, data: Interned, y: Sequence[Sequence[str]] | None = None,
                       folds: list | None = None, first_sequence: int = 0) -> None:
        """Put the classes of the ``tags`` slots in ``data`` (from :meth:`_intern`).

        The slots hold each token's lowercased cell (the ``lower`` value);
        they get its class instead, interned like every value: with ``y``,
        a new dictionary is learned and the tokens get their jackknifed
        classes (:func:`cseq.features.tagdict.jackknife`, sentence ``i`` in fold
        ``i % FOLDS``); with ``folds`` (:meth:`tag_folds`), the jackknifed
        classes of a part of a corpus that starts at sentence
        ``first_sequence``; without either, the fitted dictionary's classes.
        """
        if not self._tag_columns:
            return
        lengths = np.diff(data.seq_ptr)
        fold = np.repeat((first_sequence + np.arange(len(lengths), dtype=np.int64)) % FOLDS,
                         lengths)
        if y is not None:
            label_ids: dict[str, int] = {}
            labels = _labels.pack_labels(y, data.seq_ptr, label_ids, True, True)
            names = [""] * len(label_ids)
            for name, i in label_ids.items():
                names[i] = name
        tables = []
        for k, s in enumerate(self._tag_slots):
            lowered, inv = dense_ids(data.slot_ids[:, s], len(data.values))
            words = data.values.strings(lowered.tolist())
            if y is not None:
                whole, per_fold, classes = jackknife(inv, len(words), labels, names, fold)
                per_token = per_fold[inv, fold]
                tables.append(dict(zip(words, [classes[c] for c in whole.tolist()])))
            elif folds is not None:
                word_id, per_fold, classes = folds[k]
                try:
                    ids = np.asarray([word_id[w] for w in words], dtype=np.int64)
                except KeyError as exc:
                    raise InputError(f"the tag folds do not know the string {exc.args[0]!r}: "
                                     "they come from other data") from None
                per_token = per_fold[ids[inv], fold] if len(words) else inv
            else:
                table = self._tags.tables[k]  # type: ignore[union-attr]
                classes = [table.get(w, UNKNOWN_CLASS) for w in words]
                per_token = inv
            data.slot_ids[:, s] = _columns.intern_strings(data.values, classes)[per_token]
        if y is not None:
            self._tags = TagDictionary(tables, self._tag_columns)
        data.hashes = data.values.hashes()

    def _tags_hashed(self, data: Interned, n_jobs: int = 1) -> None:
        """:meth:`_tags_interned` for :meth:`_intern_lookup`'s hashed values: the
        hash of each cell string's class, by the fitted dictionary (through
        this thread's cache of them when ``n_jobs`` is 1)."""
        cache = _function_cache() if n_jobs == 1 and self._tag_slots else None
        for k, s in enumerate(self._tag_slots):
            data.values.hash_classes(data.word_slots, s,
                                     self._tags.tables[k],  # type: ignore[union-attr]
                                     UNKNOWN_CLASS, data.hashes, cache)

    # -- interning ---------------------------------------------------------------

    def _intern(self, X) -> Interned:
        X = check_corpus(X)
        out = Interned()
        (out.values, out.slot_ids, lengths, out.pad_before, out.pad_after, out.words,
         out.word_slots) = _columns.intern_columns(
            X, self._need, self._col_index, self._slot_col, self._slot_func,
            self._max_offset, sentence_rows,
        )
        out.seq_ptr = np.zeros(len(X) + 1, dtype=INDEX)
        np.cumsum(lengths, out=out.seq_ptr[1:])
        self._clusters_interned(out)
        out.hashes = out.values.hashes()
        return out

    def _clusters_interned(self, data: Interned) -> None:
        """Give the ``cluster`` slots of interned ``data`` each token's bit-string prefix.

        Read from the token's own cell string (``data.words``), not the slot's
        lowercased value, so that fitting and :meth:`_clusters_hashed` agree.
        """
        for s, col, bits in self._cluster_slots:
            word, inv = np.unique(data.words[:, col], return_inverse=True)
            values = [cluster_value(self.clusters.path, w, bits)
                      for w in data.values.strings(word.tolist())]
            data.slot_ids[:, s] = _columns.intern_strings(data.values, values)[inv.reshape(-1)]

    def _clusters_hashed(self, data: Interned) -> None:
        """:meth:`_clusters_interned` for :meth:`_intern_lookup`'s hashed values."""
        for s, _, bits in self._cluster_slots:
            ids = data.word_slots[:, s]
            present = np.flatnonzero(ids >= 0)
            values = [cluster_value(self.clusters.path, w, bits)
                      for w in data.values.strings(present.tolist())]
            data.hashes[ids[present]] = _templates.hash_strings(values)

    def _intern_lookup(self, X, n_jobs: int = 1) -> Interned:
        """:meth:`_intern` for looking attributes up: token function values
        hashed, not interned (``_columns.intern_for_lookup``)."""
        X = check_corpus(X)
        out = Interned()
        (out.values, out.slot_ids, out.seq_ptr, out.pad_before, out.pad_after, out.words,
         out.word_slots, out.hashes) = _columns.intern_for_lookup(
            X, self._need, self._col_index, self._slot_col, self._slot_func,
            self._max_offset, sentence_rows, n_jobs, _function_cache() if n_jobs == 1 else None,
        )
        self._clusters_hashed(out)
        return out

    def _key_args(self, data: Interned) -> tuple:
        """The arguments of :func:`cseq.features._templates.extract_keys` for ``data``."""
        return (data.slot_ids, data.hashes, data.seq_ptr, self._tmpl_ptr, self._cell_row,
                self._cell_slot, self._seeds, data.pad_before, data.pad_after)

    @staticmethod
    def _pack(ids: np.ndarray, seq_ptr: np.ndarray) -> Sequences:
        """Drop ids < 0 and pack the rest, row by row, into a Sequences."""
        n_tok = ids.shape[0]
        tok_ptr = np.zeros(n_tok + 1, dtype=INDEX)
        if ids.size and ids.min() < 0:
            keep = ids >= 0
            np.cumsum(keep.sum(axis=1), out=tok_ptr[1:])
            attr = np.ascontiguousarray(ids[keep], dtype=ATTR)
        else:
            np.cumsum(np.full(n_tok, ids.shape[1], dtype=INDEX), out=tok_ptr[1:])
            attr = np.ascontiguousarray(ids.reshape(-1), dtype=ATTR)
        return Sequences(
            seq_ptr=seq_ptr,
            tok_ptr=tok_ptr,
            attr_ids=attr,
            values=np.ones(len(attr), dtype=VALUE),
            labels=None,
        )

    # -- the interface -----------------------------------------------------------

    def fit_transform(self, X: Sequence[Any], y: Sequence[Sequence[str]] | None = None
                      ) -> Sequences:
        """Learn the attribute table from ``X`` and return ``X`` packed.

        Parameters
        ----------
        X : list of sentences
            Each sentence is a list of tokens; a token is a str or a
            tuple/list of column strings.
        y : list of label sequences, optional
            Needed when the templates use ``:tags`` (:attr:`needs_labels`):
            the tag dictionary is learned from them, and ``X``'s own classes
            are jackknifed (:mod:`cseq.features.tagdict`).  Otherwise ignored.

        Returns
        -------
        Sequences
            ``labels`` is None.
        """
        X = check_corpus(X)
        self.n_columns_ = token_columns(X)
        if self._tag_columns and y is None:
            raise InputError("the templates use the 'tags' token function, which is "
                             "learned from labels: fit with y (an estimator's fit does)")
        data = self._intern(X)
        self._tags_interned(data, y)
        return self._learn(data)

    def _learn(self, data: Interned) -> Sequences:
        """Learn the attribute table from interned ``data`` and return it packed."""
        if self.n_buckets is not None:
            self._names = None
            return self._pack(self._bucket(data), data.seq_ptr)
        table = _keytable.KeyTable()
        ids = table.add_tokens(*self._key_args(data), data.words, data.word_slots,
                               self._fit_memo_col)
        first_tok, first_tmpl = table.first_token, table.first_template
        keep = table.counts >= self.min_freq
        if not keep.all():
            kept = np.flatnonzero(keep)
            remap = np.full(len(table), -1, dtype=np.int32)
            remap[kept] = np.arange(len(kept), dtype=np.int32)
            ids = remap[ids]
            table = _keytable.KeyTable.from_keys(table.keys[kept])
            first_tok, first_tmpl = first_tok[kept], first_tmpl[kept]
        self._store_names(data, first_tok, first_tmpl)
        self._table = table
        self._names = None
        return self._pack(ids, data.seq_ptr)

    def partial_fit_transform(self, X: Sequence[Any], y: Sequence[Sequence[str]] | None = None
                              ) -> Sequences:
        """Add the attributes of ``X`` not yet in the table, then pack ``X``.

        Known attributes keep their ids and new ones are appended in order of
        first appearance, so fitting ``A`` and then ``B`` numbers every
        attribute as fitting ``A + B`` at once does (what ``partial_fit``
        needs).  An unfitted featurizer is fitted by :meth:`fit_transform`
        (with ``y`` when the templates use ``:tags``); in hashing mode nothing
        is learnt.  The ``tags`` dictionary is the first batch's: later
        batches read their classes from it, as new text does.

        Raises
        ------
        InputError
            With ``min_freq > 1``: a frequency cut needs the whole corpus.
        """
        if self.min_freq != 1:
            raise InputError(f"min_freq={self.min_freq} counts attributes over the whole corpus: "
                             "training in batches needs min_freq=1 (or n_buckets)")
        if (self.n_buckets is None and self._table is None) or (
                self._tag_columns and self._tags is None):
            return self.fit_transform(X, y)
        X = check_corpus(X)
        if self.n_columns_ is None:
            self.n_columns_ = token_columns(X)
        data = self._intern(X)
        self._tags_interned(data)
        if self.n_buckets is not None:
            return self._pack(self._bucket(data), data.seq_ptr)
        table = self._table
        old = len(table)
        strings = self._strings()
        ids = table.add_tokens(*self._key_args(data), data.words, data.word_slots,
                               self._fit_memo_col)
        if len(table) > old:
            tmpl, cells, new_strings = self._names_of(data, table.first_token[old:],
                                                      table.first_template[old:])
            self._name_template = np.concatenate([self._name_template, tmpl]).astype(np.int32)
            self._name_cells = np.concatenate(
                [self._name_cells, cells + np.int32(len(strings))]).astype(np.int32)
            self._name_strings = list(strings) + new_strings
            self._name_blob = None
            self._names = None
        return self._pack(ids, data.seq_ptr)

    def _store_names(self, data: Interned, tok: np.ndarray, tmpl: np.ndarray) -> None:
        """Record, per attribute, its template and the strings it read.

        ``tok`` and ``tmpl`` give, per attribute id, the token and template of
        its first occurrence in ``data``.
        """
        self._name_template, self._name_cells, self._name_strings = self._names_of(data, tok, tmpl)
        self._name_blob = None

    def _names_of(self, data: Interned, tok: np.ndarray,
                  tmpl: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Template, cells and strings of attributes first seen at tokens ``tok``, templates ``tmpl``."""
        used, cells = _templates.name_cells(
            data.slot_ids,
            data.seq_ptr,
            self._tmpl_ptr,
            self._cell_row,
            self._cell_slot,
            data.pad_before,
            data.pad_after,
            np.ascontiguousarray(tok, dtype=np.int64),
            np.ascontiguousarray(tmpl, dtype=np.int32),
            len(data.values),
        )
        return tmpl, cells, data.values.strings(used.tolist())

    def _strings(self) -> list[str]:
        """The strings the attributes' cells index, decoded from the file on first use."""
        if self._name_strings is None and self._name_blob is not None:
            self._name_strings = decode_strings(*self._name_blob,
                                                "template featurizer string table")
        return self._name_strings

    def _bucket(self, data: Interned) -> np.ndarray:
        keys = _templates.extract_keys(*self._key_args(data))
        return (keys % np.uint64(self.n_buckets)).astype(np.int32)

    def transform(self, X: Sequence[Any], *, n_jobs: int = 1) -> Sequences:
        """Pack ``X`` with the fitted attribute table.

        Attributes not in the table are dropped.  In hashing mode nothing is
        dropped and no fit is needed.  ``n_jobs`` threads look the keys up.
        """
        if self.n_buckets is not None:
            self._check_fitted()
            data = self._intern(check_corpus(X))
            self._tags_interned(data)
            return self._pack(self._bucket(data), data.seq_ptr)
        self._check_fitted()
        n_jobs = resolve_n_jobs(n_jobs)
        chunks = self.transform_chunks(X, n_jobs=n_jobs, max_tokens=None)
        return chunks.sequences(0, n_jobs=n_jobs)

    def transform_chunks(self, X: Sequence[Any], *, n_jobs: int = 1, max_tokens: int | None = 8192,
                         min_chunks: int = 1) -> "TransformChunks":
        """``X`` interned once, to be packed a range of sentences at a time.

        The word-level work (cells interned, token functions, the attributes
        that read one word) is done here, for all of ``X``, in ``n_jobs``
        threads where it can; each chunk of at most about ``max_tokens``
        tokens (whole sentences; None: no limit), and at least
        ``min_chunks`` chunks when there are sentences enough, is then
        looked up when asked for, in any thread: :meth:`transform` of
        ``X[chunks.block(k)]`` is ``chunks.sequences(k)``, without arrays as
        large as all of ``X``'s features.  In hashing mode there is one chunk.
        """
        if self.n_buckets is not None:
            return TransformChunks(self, None, None, None, 1, whole=self.transform(X))
        self._check_fitted()
        n_jobs = resolve_n_jobs(n_jobs)
        data = self._intern_lookup(X, n_jobs)  # which checks X
        self._tags_hashed(data, n_jobs)
        memo = self._table.plan_word_memo(self._plan, data.hashes, data.word_slots, n_jobs)
        return TransformChunks(self, data, memo, max_tokens, min_chunks)

    def _check_fitted(self) -> None:
        if (self.n_buckets is None and self._table is None) or (
                self._tag_columns and self._tags is None):
            raise NotFittedError("TemplateFeaturizer is not fitted: call fit_transform first")

    @property
    def n_attributes(self) -> int:
        """Number of attribute ids (``n_buckets`` in hashing mode)."""
        if self.n_buckets is not None:
            return self.n_buckets
        self._check_fitted()
        return len(self._table)

    @property
    def bigram(self) -> bool:
        """Whether the templates had a ``B`` line (recorded only)."""
        return self.templates.bigram

    def attribute_names(self) -> list[str]:
        """The attribute string of each attribute id, as CRF++ builds it: ``"U05:of/the"``.

        The identity of an attribute (what ``GreedyTagger(tag_dict="U05:")``
        matches, what CRF++ model files list); :meth:`feature_names` says what
        it tests.  In hashing mode a bucket cannot be named by the features
        that fall in it; the names are ``"hash[<id>]"``.
        """
        return self._render_names("render")

    def feature_names(self) -> list[str]:
        """What each attribute id tests, e.g. ``"%x[-1,0:lower]/%x[0,0:lower]=of/the"``.

        The names :func:`cseq.explain.feature_names` gives ``explain``,
        ``top_features``, ``cseq info`` and the report (see
        :meth:`Template.describe`); ``"hash[<id>]"`` in hashing mode.
        """
        return self._render_names("describe")

    def _render_names(self, how: str) -> list[str]:
        """Each attribute's name by the Template method ``how`` (``render``, ``describe``)
        from the strings it read; cached until the attributes change."""
        if self.n_buckets is not None:
            return [f"hash[{i}]" for i in range(self.n_buckets)]
        self._check_fitted()
        cached = self._names or {}
        if how not in cached:
            tpl = self.templates.templates
            strings = self._strings()
            cells = self._name_cells.tolist()
            names = []
            k = 0
            for t in self._name_template.tolist():
                tt = tpl[t]
                m = len(tt.cells)
                names.append(getattr(tt, how)([strings[c] for c in cells[k : k + m]]))
                k += m
            # A new dict, never one a copy of this featurizer may share.
            self._names = cached = {**cached, how: names}
        return list(cached[how])

    def keep_attributes(self, kept: np.ndarray) -> bool:
        """Keep only the attribute ids ``kept`` (ascending), renumbered ``0 .. len(kept) - 1``.

        Used to drop attributes a model gives no weight (e.g. after L1
        training), so that model files shrink.  Returns False, changing
        nothing, in hashing mode (bucket ids cannot be renumbered).
        """
        if self.n_buckets is not None:
            return False
        self._check_fitted()
        kept = np.asarray(kept, dtype=np.int64)
        counts = self._n_cells[self._name_template]
        ptr = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        lens = counts[kept].astype(np.int64)
        before = np.cumsum(lens) - lens
        cell_pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(ptr[kept] - before, lens)
        cells = self._name_cells[cell_pos]
        used, cells = np.unique(cells, return_inverse=True)
        strings = self._strings()
        self._table = _keytable.KeyTable.from_keys(self._table.keys[kept])
        self._name_template = np.ascontiguousarray(self._name_template[kept])
        self._name_cells = np.ascontiguousarray(cells.reshape(-1), dtype=np.int32)
        self._name_strings = [strings[i] for i in used.tolist()]
        self._name_blob = None
        self._names = None
        return True

    def features_python(self, X: Sequence[Any]) -> list[list[list[str]]]:
        """The attributes of ``X`` as strings, by the plain-Python reference path.

        Slow; for tests and for checking a template file by eye.
        """
        X = check_corpus(X)
        tags = None
        if self._tag_columns:
            self._check_fitted()
            tags = self._tags.lookup  # type: ignore[union-attr]
        return [expand(self.templates, sent, tags=tags, clusters=self.clusters, _si=si)
                for si, sent in enumerate(X)]

    def __repr__(self) -> str:
        mode = f"n_buckets={self.n_buckets}" if self.n_buckets is not None else f"min_freq={self.min_freq}"
        return f"TemplateFeaturizer({self.templates!r}, {mode})"

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and named arrays describing this fitted featurizer
        (:func:`cseq.features.featurizer_state.state_of`)."""
        return featurizer_state.state_of(self)

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> TemplateFeaturizer:
        """Rebuild a featurizer from :meth:`get_state` output, checking everything
        (:func:`cseq.features.featurizer_state.from_state`; ModelFormatError)."""
        return featurizer_state.from_state(cls, meta, arrays)

    # -- fitting by parts of a corpus (cseq.distributed) ---------------------
    # Each partition learns its attributes on its worker (fit_part), and merge
    # combines the parts into the featurizer a single fit_transform of the
    # whole corpus learns: same attribute ids, same names.  With ':tags'
    # templates the parts first send the label counts behind their tag classes
    # (tag_counts), and tag_folds makes the dictionary and the jackknifed
    # classes of the whole corpus from them.

    def fit_part(self, X: Sequence[Any], tags: tuple | None = None,
                 first_sequence: int = 0) -> TemplateFeaturizer:
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

    def merge(self, parts: Sequence[TemplateFeaturizer]) -> TemplateFeaturizer:
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
            merged._table = _keytable.KeyTable()
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
        merged._table = _keytable.KeyTable.from_keys(np.ascontiguousarray(uniq[order]))
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



def _as_clusters(clusters: Any) -> Clusters | None:
    """The ``clusters`` parameter as a table (:func:`~cseq.features.clusters.cluster_table`)
    or None."""
    return None if clusters is None else cluster_table(clusters)
