"""CRFsuite model files (python-crfsuite, sklearn-crfsuite, ``crfsuite``) as cseq estimators.

:func:`from_crfsuite` reads the binary ``lCRF`` file CRFsuite's first-order
CRF writes (``crf1d_model.c``; every integer little-endian ``uint32``)::

    0    header (48 bytes): magic "lCRF", file size, type "FOMC", version 100,
         num_features (written as 0), num_labels, num_attrs, and the offsets
         of the feature table, the label and attribute string databases and
         the label and attribute feature references
         FEAT chunk: "FEAT", chunk size, count, then per feature 20 bytes:
         type (0 state, 1 transition), src, dst, weight (float64)
         two CQDB string databases (labels, attributes): "CQDB", size, flag,
         byte-order mark 0x62445371, bwd_size, bwd_offset, 256 hash-table
         references, the records (id, length with the NUL, the string and a
         NUL) and, at bwd_offset, one record offset per id

A state feature (type 0) scores label ``dst`` with ``weight`` times the value
of attribute ``src``; a transition feature (type 1) scores label ``src``
followed by ``dst``.  CRFsuite has no start or end weights, so the cseq
model's are zero; its scores are then CRFsuite's, and so are the Viterbi
labels and the marginals.  The feature references (``LFRF``, ``AFRF``) are an
index CRFsuite builds from the feature table to find an attribute's features
quickly; the table alone defines the model, so they are not read.

Every offset and count is checked against the bytes present before it is
used, and every id against the counts: a malformed file raises
:class:`~cseq.ModelFormatError`, never an IndexError or a MemoryError.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from cseq.chain import _chain
from cseq._core.dtypes import INDEX, LABEL, WEIGHT
from cseq.compat.crfsuite_items import CRFsuiteVocabulary
from cseq.learners.crf import CRF
from cseq.exceptions import ModelFormatError
from cseq.features import encode_strings
from cseq.io.serialize import read_file_bytes

__all__ = ["from_crfsuite", "crfsuite_from_bytes", "read_crfsuite", "fitted_crf",
           "check_label_pairs", "weight_tables"]

_HEADER = struct.Struct("<4sI4s9I")
_CHUNK = struct.Struct("<4sII")
_CQDB_HEADER = struct.Struct("<4s5I")
_CQDB_BYTEORDER = 0x62445371
#: The CQDB header and its 256 hash-table references come before any record.
_CQDB_DATA = _CQDB_HEADER.size + 256 * 8
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])
_STATE, _TRANSITION = 0, 1


#: The label-pair table (L * L weights) an imported model may have beyond 64
#: weights per byte of its file: a file naming many labels in few bytes would
#: otherwise make the loader allocate without bound.
_FREE_LABEL_PAIRS = 1 << 24


def _bad(msg: str) -> ModelFormatError:
    return ModelFormatError(f"CRFsuite model: {msg}")


def check_label_pairs(n_labels: int, n_bytes: int, bad: Callable[[str], ModelFormatError]) -> None:
    """Refuse ``n_labels`` whose transition table is out of proportion to a file of ``n_bytes``.

    cseq's chain keeps a dense L x L transition table.  A real model of
    thousands of labels is megabytes of weights; ``bad`` makes the error for
    a file that names more labels than its size can explain.
    """
    if n_labels * n_labels > max(_FREE_LABEL_PAIRS, 64 * n_bytes):
        raise bad(f"{n_labels} labels in {n_bytes} bytes: the {n_labels}x{n_labels} label-pair "
                  "table would be out of proportion to the file")


def _cqdb_strings(data: bytes, start: int, count: int, what: str) -> list[str]:
    """The strings of ids ``0 .. count - 1`` of the CQDB at ``start``, checked.

    Each id's record is found through the backward array (as CRFsuite's
    ``cqdb_to_string`` does), must lie inside the database, carry its id and
    hold one NUL-terminated UTF-8 string.
    """
    if not 0 < start <= len(data) - _CQDB_DATA:
        raise _bad(f"the {what} database offset {start} is outside the file")
    magic, size, _flag, order, bwd_size, bwd_offset = _CQDB_HEADER.unpack_from(data, start)
    if magic != b"CQDB" or order != _CQDB_BYTEORDER:
        raise _bad(f"the {what} database has no CQDB header")
    if not _CQDB_DATA <= size <= len(data) - start:
        raise _bad(f"the {what} database size {size} does not fit the file")
    db = data[start:start + size]
    if count > bwd_size:
        raise _bad(f"the {what} database has {bwd_size} ids, the header says {count}")
    if count and not (_CQDB_HEADER.size <= bwd_offset and bwd_offset + 4 * bwd_size <= size):
        raise _bad(f"the {what} database's id table does not fit the database")
    offsets = struct.unpack_from(f"<{count}I", db, bwd_offset) if count else ()
    strings = []
    for i, off in enumerate(offsets):
        if not _CQDB_DATA <= off <= size - 9:
            raise _bad(f"{what} {i} has no record in the database")
        rid, length = struct.unpack_from("<2I", db, off)
        end = off + 8 + length
        if rid != i or length < 1 or end > size:
            raise _bad(f"{what} {i} has a malformed record")
        raw = db[off + 8:end - 1]
        if db[end - 1] != 0 or b"\x00" in raw:
            raise _bad(f"{what} {i} is not one NUL-terminated string")
        try:
            strings.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise _bad(f"{what} {i} is not UTF-8: {raw[:40]!r}") from None
    if len(set(strings)) != len(strings):
        raise _bad(f"two {what}s have the same name")
    return strings


def read_crfsuite(data: bytes) -> tuple[list[str], list[str], np.ndarray]:
    """The labels, the attributes and the feature table of CRFsuite model bytes.

    Returns
    -------
    labels, attributes : list of str
        In CRFsuite's id order.
    features : structured ndarray
        Fields ``type`` (0 state, 1 transition), ``src``, ``dst``
        (checked ids) and ``weight`` (finite float64).

    Raises
    ------
    ModelFormatError
        If anything is out of bounds, inconsistent or not a CRFsuite model.
    """
    if len(data) < _HEADER.size:
        raise _bad(f"{len(data)} bytes is shorter than the {_HEADER.size}-byte header")
    (magic, size, kind, version, _n_feat, n_labels, n_attrs, off_features, off_labels,
     off_attrs, _off_labelrefs, _off_attrrefs) = _HEADER.unpack_from(data)
    if magic != b"lCRF":
        raise _bad(f"the file does not start with 'lCRF' (it starts with {magic!r})")
    if kind != b"FOMC" or version != 100:
        raise _bad(f"model type {kind!r} version {version} is not CRFsuite's first-order "
                   "CRF (type 'FOMC', version 100)")
    if size != len(data):
        raise _bad(f"the header says {size} bytes, the file has {len(data)} (truncated?)")
    if not 1 <= n_labels <= _chain.MAX_LABELS:
        raise _bad(f"{n_labels} labels (cseq takes 1 to {_chain.MAX_LABELS})")
    check_label_pairs(n_labels, len(data), _bad)
    labels = _cqdb_strings(data, off_labels, n_labels, "label")
    attributes = _cqdb_strings(data, off_attrs, n_attrs, "attribute")
    if not _HEADER.size <= off_features <= len(data) - _CHUNK.size:
        raise _bad(f"the feature table offset {off_features} is outside the file")
    chunk, chunk_size, n_features = _CHUNK.unpack_from(data, off_features)
    if chunk != b"FEAT":
        raise _bad("the feature table has no FEAT header")
    if _CHUNK.size + n_features * _FEATURE.itemsize > min(chunk_size, len(data) - off_features):
        raise _bad(f"{n_features} features do not fit the feature table")
    features = np.frombuffer(data, dtype=_FEATURE, count=n_features,
                             offset=off_features + _CHUNK.size)
    kinds, src, dst = features["type"], features["src"], features["dst"]
    state = kinds == _STATE
    if not np.all(state | (kinds == _TRANSITION)):
        raise _bad("a feature has a type other than 0 (state) or 1 (transition)")
    if np.any(dst >= n_labels) or np.any(src >= np.where(state, n_attrs, n_labels)):
        raise _bad("a feature refers to a label or an attribute id beyond the model's")
    if not np.isfinite(features["weight"]).all():
        raise _bad("a feature weight is not finite")
    pairs = np.where(state, src.astype(np.int64) * n_labels, (n_attrs + src.astype(np.int64))
                     * n_labels) + dst
    if len(np.unique(pairs)) != len(pairs):
        raise _bad("the feature table lists the same feature twice")
    return labels, attributes, features


def fitted_crf(featurizer_state: tuple[dict, dict[str, np.ndarray]], features: Any,
               n_attributes: int, labels: list[str], state_attrs: np.ndarray,
               state_labels: np.ndarray,
               state_weights: np.ndarray, transitions: np.ndarray, source: str) -> CRF:
    """A fitted :class:`cseq.CRF` from a featurizer's state and a model's weights.

    The featurizer has ``n_attributes`` attributes.
    ``state_attrs``, ``state_labels`` and ``state_weights`` list the state
    weights (attribute id, label id, weight) in any order, label ids indexing
    ``labels``; ``transitions[i, j]`` scores label ``i`` followed by ``j``.
    ``classes_`` keeps the order of ``labels`` (the other library's label
    ids), so that an exact tie between two label paths is broken the same
    way there and here; the start and end weights are zero.  The estimator is
    built through the model file's own loader (``CRF._from_model_state``), so
    it is validated exactly as a loaded cseq model file is.  ``features`` is
    its ``features`` parameter (an unfitted featurizer, for a later ``fit``);
    ``source`` says where the model came from, in ``stop_reason_``.
    """
    meta, arrays = featurizer_state
    L = len(labels)
    attrs = np.asarray(state_attrs, dtype=np.int64)
    label_ids = np.asarray(state_labels, dtype=np.int64)
    order = np.lexsort((label_ids, attrs))
    attr_ptr = np.zeros(n_attributes + 1, dtype=INDEX)
    np.cumsum(np.bincount(attrs, minlength=n_attributes), out=attr_ptr[1:])
    params = np.concatenate([np.asarray(state_weights, dtype=WEIGHT)[order],
                             np.asarray(transitions, dtype=WEIGHT).reshape(L * L),
                             np.zeros(2 * L, dtype=WEIGHT)])
    header = {"params": {}, "features": features.get_config(), "fitted": True,
              "featurizer": meta, "classes": list(labels),
              "training": {"n_iter": 0, "history": [], "stop_reason": source,
                           "n_evaluations": 0}}
    model: dict[str, np.ndarray] = {"attr_ptr": attr_ptr,
                                    "attr_labels": label_ids[order].astype(LABEL),
                                    "params": params}
    return CRF._from_model_state(header, {**{f"featurizer/{k}": v for k, v in arrays.items()},
                                          **{f"model/{k}": v for k, v in model.items()}})


def from_crfsuite(path: str | os.PathLike[str]) -> CRF:
    """A fitted :class:`cseq.CRF` with the weights of a CRFsuite model file.

    ``path`` is a model written by python-crfsuite's ``Trainer.train``,
    sklearn-crfsuite's ``CRF(model_filename=...)`` or ``crfsuite learn -m``.
    The estimator reads ``X`` in python-crfsuite's item formats (dicts or
    lists of attribute strings: :class:`~cseq.compat.crfsuite_items.CRFsuiteVocabulary`)
    and ignores attributes the model does not know, as CRFsuite does; its
    ``predict`` and ``predict_marginals`` equal python-crfsuite's
    ``Tagger.tag`` and ``Tagger.marginal`` (to float rounding), and ``save``
    writes it as a cseq model file.  ``classes_`` is ``Tagger.labels()``, in
    CRFsuite's order, so that exact ties between label paths break the same
    way.

    Raises
    ------
    ModelFormatError
        If the file is not a valid CRFsuite CRF model (any malformed or
        truncated file: every offset and id is checked before it is used).
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> crf = cseq.from_crfsuite("model.crfsuite")        # doctest: +SKIP
    >>> crf.predict([[{"w": "the"}, {"w": "dog"}]])        # doctest: +SKIP
    [['DET', 'NOUN']]
    """
    return crfsuite_from_bytes(read_file_bytes(path),
                               f"imported from the CRFsuite model {os.fsdecode(path)}")


def crfsuite_from_bytes(data: bytes, source: str = "imported from a CRFsuite model") -> CRF:
    """:func:`from_crfsuite` of a model file's bytes; ``source`` becomes ``stop_reason_``."""
    labels, attributes, features = read_crfsuite(data)
    L = len(labels)
    state = features[features["type"] == _STATE]
    transitions = np.zeros((L, L), dtype=WEIGHT)
    trans = features[features["type"] == _TRANSITION]
    transitions[trans["src"], trans["dst"]] = trans["weight"]
    vocabulary = CRFsuiteVocabulary()
    return fitted_crf(({"kind": vocabulary.kind}, encode_strings(attributes)), vocabulary,
                      len(attributes), labels, state["src"], state["dst"], state["weight"],
                      transitions, source)


def weight_tables(estimator: Any) -> dict[str, Any]:
    """The state and transition weights of a fitted chain estimator by name, zeros left out.

    ``state_features`` ``{(attribute, label): weight}``, ``transition_features``
    ``{(label_from, label_to): weight}`` and ``attributes`` (those with a
    weight, in id order), as python-crfsuite's ``Tagger.info()`` and
    sklearn-crfsuite's fitted attributes show a model.
    """
    model = estimator.model_
    names = estimator.featurizer_.attribute_names()
    classes = estimator.classes_
    weights = model.state_weights
    attr_of = np.repeat(np.arange(model.n_attributes), np.diff(model.attr_ptr))
    nonzero = np.flatnonzero(weights)
    state = {(names[a], classes[lab]): w for a, lab, w in zip(
        attr_of[nonzero].tolist(), model.attr_labels[nonzero].tolist(),
        weights[nonzero].tolist())}
    attributes = [names[a] for a in np.unique(attr_of[nonzero]).tolist()]
    trans = model.transitions
    transitions = {(classes[i], classes[j]): float(trans[i, j])
                   for i, j in zip(*np.nonzero(trans))}
    return {"state_features": state, "transition_features": transitions,
            "attributes": attributes}
