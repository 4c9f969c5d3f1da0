"""A fitted template featurizer as JSON metadata and named arrays (its part of a model file).

:func:`state_of` writes, :func:`from_state` reads back and checks
everything: types, shapes, ranges, and that the stored attribute keys are
what the stored names hash to.  ``TemplateFeaturizer.get_state`` and
``TemplateFeaturizer.from_state`` are these functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cseq.features import _keytable, _templates
from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.features.vocabulary import check_strings, encode_strings
from cseq.features.tagdict import TagDictionary
from cseq.features.clusters import ARRAYS as CLUSTER_ARRAYS
from cseq.features.clusters import Clusters, clusters_from_reference

__all__ = ["HASH_SCHEME", "STATE_FORMAT", "state_of", "from_state"]

#: Identifies the hash functions of :mod:`cseq.features._templates`; stored with every
#: fitted featurizer so that a file written by a different scheme is refused.
HASH_SCHEME = "cseq-fmix64-v1"
#: Version of the state layout written by :meth:`TemplateFeaturizer.get_state`.
STATE_FORMAT = 1


def _le(dtype) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


def state_of(featurizer: Any) -> tuple[dict, dict[str, np.ndarray]]:
    """JSON-able metadata and named little-endian arrays describing a fitted template featurizer.

    Arrays (table mode): ``keys`` (uint64, key of each attribute id),
    ``name_template`` (int32, template of each id), ``name_cells`` (int32,
    indices into the string table, the template's cell count per id,
    concatenated), ``strings`` (uint8, UTF-8 bytes) and ``string_ptr``
    (int64 offsets).  Hashing mode stores none of these.  With ``:tags``
    templates, in both modes, the tag dictionary's arrays too
    (:meth:`cseq.features.tagdict.TagDictionary.get_arrays`).  With word
    clusters, their whole table (:meth:`cseq.features.clusters.Clusters.get_arrays`):
    the model needs no cluster file to tag; a table shipped with cseq is stored
    as its name and digest instead (``meta["clusters"]``).
    """
    meta = {
        "kind": "templates",
        "format": STATE_FORMAT,
        "hash": HASH_SCHEME,
        "templates": featurizer.templates.text,
        "min_freq": featurizer.min_freq,
        "n_buckets": featurizer.n_buckets,
        "bigram": featurizer.templates.bigram,
        "n_columns": featurizer.n_columns_,
    }
    featurizer._check_fitted()
    tag_arrays = featurizer._tags.get_arrays() if featurizer._tags is not None else {}
    if featurizer.clusters is not None and featurizer.clusters.bundled is not None:
        meta["clusters"] = featurizer.clusters.reference()
    elif featurizer.clusters is not None:
        tag_arrays.update(featurizer.clusters.get_arrays())
    if featurizer.n_buckets is not None:
        meta["n_attributes"] = featurizer.n_buckets
        return meta, tag_arrays
    meta["n_attributes"] = len(featurizer._table)
    if featurizer._name_blob is not None:  # as loaded: the stored strings again
        table = {"blob": featurizer._name_blob[0], "offsets": featurizer._name_blob[1]}
    else:
        table = encode_strings(featurizer._name_strings)
    arrays = {
        "keys": featurizer._table.keys.astype(_le(np.uint64)),
        "name_template": featurizer._name_template.astype(_le(np.int32)),
        "name_cells": featurizer._name_cells.astype(_le(np.int32)),
        "strings": table["blob"],
        "string_ptr": table["offsets"],
        **tag_arrays,
    }
    return meta, arrays

def from_state(cls: type, meta: dict, arrays: dict) -> Any:
    """Rebuild a featurizer of class ``cls`` from :func:`state_of` output, checking everything.

    Raises
    ------
    ModelFormatError
        If anything is missing, of the wrong type or shape, out of range,
        or if the stored keys do not match the stored attribute names.
    """

    def bad(msg: str) -> ModelFormatError:
        return ModelFormatError(f"template featurizer state: {msg}")

    if not isinstance(meta, dict) or not isinstance(arrays, dict):
        raise bad("meta and arrays must be dicts")
    if meta.get("kind") != "templates":
        raise bad(f"kind is {meta.get('kind')!r}, expected 'templates'")
    if meta.get("format") != STATE_FORMAT:
        raise bad(f"unsupported format {meta.get('format')!r} (this cseq reads {STATE_FORMAT})")
    if meta.get("hash") != HASH_SCHEME:
        raise bad(f"hash scheme {meta.get('hash')!r} is not {HASH_SCHEME!r}")
    text = meta.get("templates")
    if not isinstance(text, str):
        raise bad("'templates' must be the template text")
    for key in ("min_freq", "n_attributes"):
        v = meta.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise bad(f"{key!r} must be a non-negative int")
    n_buckets = meta.get("n_buckets")
    if n_buckets is not None and (isinstance(n_buckets, bool) or not isinstance(n_buckets, int)):
        raise bad("'n_buckets' must be an int or null")
    n_columns = meta.get("n_columns")  # optional: files before 0.1 lack it
    if n_columns is not None and (isinstance(n_columns, bool) or not isinstance(n_columns, int)
                                  or n_columns < 1):
        raise bad("'n_columns' must be a positive int or null")
    clusters = None
    if "clusters" in meta:
        clusters = clusters_from_reference(meta["clusters"], "template featurizer state")
    elif CLUSTER_ARRAYS & set(arrays):
        clusters = Clusters.from_arrays(arrays, "template featurizer state")
        arrays = {k: v for k, v in arrays.items() if k not in CLUSTER_ARRAYS}
    try:
        obj = cls(text, min_freq=meta["min_freq"], n_buckets=n_buckets, clusters=clusters)
    except (InputError, InputTypeError) as exc:
        raise bad(str(exc)) from exc
    obj.n_columns_ = n_columns
    n_attr = meta["n_attributes"]
    if obj._tag_columns:
        obj._tags = TagDictionary.from_arrays(arrays, obj._tag_columns,
                                              "template featurizer state")
    arrays = {k: v for k, v in arrays.items() if k not in TagDictionary.ARRAYS}
    if n_buckets is not None:
        if arrays:
            raise bad(f"hashing mode stores no arrays, got {sorted(arrays)}")
        if n_attr != n_buckets:
            raise bad("n_attributes differs from n_buckets")
        return obj

    expected = {
        "keys": np.uint64,
        "name_template": np.int32,
        "name_cells": np.int32,
        "strings": np.uint8,
        "string_ptr": np.int64,
    }
    if set(arrays) != set(expected):
        raise bad(f"arrays must be {sorted(expected)}, got {sorted(arrays)}")
    arr = {}
    for name, dtype in expected.items():
        a, want = arrays[name], np.dtype(dtype)
        if not isinstance(a, np.ndarray) or a.ndim != 1:
            raise bad(f"{name!r} must be a 1-d array")
        # Either byte order is fine; kind and width must match.
        if a.dtype.kind != want.kind or a.dtype.itemsize != want.itemsize:
            raise bad(f"{name!r} has dtype {a.dtype}, expected {want}")
        arr[name] = np.ascontiguousarray(a, dtype=want)
    keys, tmpl, cells = arr["keys"], arr["name_template"], arr["name_cells"]
    blob, sptr = arr["strings"], arr["string_ptr"]
    if len(keys) != n_attr or len(tmpl) != n_attr:
        raise bad("'keys' and 'name_template' must hold n_attributes entries")
    n_tmpl = len(obj.templates.templates)
    if n_attr and (tmpl.min() < 0 or tmpl.max() >= n_tmpl):
        raise bad("'name_template' out of range")
    counts = obj._n_cells[tmpl] if n_attr else np.zeros(0, np.int32)
    if len(cells) != int(counts.sum()):
        raise bad("'name_cells' length does not match the templates' cell counts")
    check_strings(blob, sptr, "template featurizer string table")
    if len(cells) and (cells.min() < 0 or cells.max() >= len(sptr) - 1):
        raise bad("'name_cells' out of range")
    # The keys must be exactly what the names hash to: catches corruption
    # and a template text that does not belong to these keys.  The
    # strings' UTF-8 bytes are hashed as stored, in C; they are made str
    # only when names are asked for.
    hashes = _templates.hash_pieces(blob, sptr)
    recomputed = _templates.attribute_keys(obj._seeds, obj._n_cells, tmpl, cells, hashes)
    if not np.array_equal(recomputed, keys):
        raise bad("attribute keys do not match their names (corrupted or wrong templates)")
    try:
        obj._table = _keytable.KeyTable.from_keys(keys)
    except ValueError as exc:
        raise bad(str(exc)) from exc
    obj._name_template = tmpl
    obj._name_cells = cells
    obj._name_blob = (blob, sptr)
    return obj
