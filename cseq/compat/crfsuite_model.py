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

:func:`to_crfsuite` writes the same format back, as CRFsuite's writer lays it
out: the header, the FEAT chunk (the non-zero weights: each attribute's state
features, then the transitions), the label and attribute databases, then the
LFRF chunk (``L + 2`` references, one list of transition feature ids per
label and two unused) and the AFRF chunk (one list of state feature ids per
attribute), each reference chunk at a 4-byte boundary.  A CQDB database finds
a string by the ``hashlittle`` hash (Bob Jenkins' lookup3, seed 0) of its
bytes with the NUL: table ``h % 256``, a bucket array twice the table's
entries, first probe ``(h >> 8) % size``, then the next bucket.
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
from cseq.exceptions import InputError, ModelFormatError
from cseq.features import encode_strings
from cseq.features import FeatureVocabulary
from cseq.io.serialize import read_file_bytes, write_atomic

__all__ = ["from_crfsuite", "crfsuite_from_bytes", "read_crfsuite", "fitted_crf",
           "check_label_pairs", "weight_tables", "to_crfsuite", "crfsuite_bytes",
           "hashlittle"]

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


# -- writing ----------------------------------------------------------------------------------

_MASK = 0xFFFFFFFF


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _MASK


def hashlittle(key: bytes, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 ``hashlittle`` of ``key`` (what CQDB hashes its strings with)."""
    a = b = c = (0xDEADBEEF + len(key) + initval) & _MASK
    n = len(key)
    k = 0
    while n > 12:
        a = (a + int.from_bytes(key[k:k + 4], "little")) & _MASK
        b = (b + int.from_bytes(key[k + 4:k + 8], "little")) & _MASK
        c = (c + int.from_bytes(key[k + 8:k + 12], "little")) & _MASK
        a = (a - c) & _MASK; a ^= _rot(c, 4); c = (c + b) & _MASK    # noqa: E702 (lookup3's mix)
        b = (b - a) & _MASK; b ^= _rot(a, 6); a = (a + c) & _MASK    # noqa: E702
        c = (c - b) & _MASK; c ^= _rot(b, 8); b = (b + a) & _MASK    # noqa: E702
        a = (a - c) & _MASK; a ^= _rot(c, 16); c = (c + b) & _MASK   # noqa: E702
        b = (b - a) & _MASK; b ^= _rot(a, 19); a = (a + c) & _MASK   # noqa: E702
        c = (c - b) & _MASK; c ^= _rot(b, 4); b = (b + a) & _MASK    # noqa: E702
        n -= 12
        k += 12
    if n == 0:
        return c
    tail = key[k:] + bytes(12 - n)
    a = (a + int.from_bytes(tail[0:4], "little")) & _MASK
    b = (b + int.from_bytes(tail[4:8], "little")) & _MASK
    c = (c + int.from_bytes(tail[8:12], "little")) & _MASK
    c ^= b; c = (c - _rot(b, 14)) & _MASK     # noqa: E702 (lookup3's final)
    a ^= c; a = (a - _rot(c, 11)) & _MASK     # noqa: E702
    b ^= a; b = (b - _rot(a, 25)) & _MASK     # noqa: E702
    c ^= b; c = (c - _rot(b, 16)) & _MASK     # noqa: E702
    a ^= c; a = (a - _rot(c, 4)) & _MASK      # noqa: E702
    b ^= a; b = (b - _rot(a, 14)) & _MASK     # noqa: E702
    c ^= b; c = (c - _rot(b, 24)) & _MASK     # noqa: E702
    return c


def _cqdb(strings: list[bytes]) -> bytes:
    """A CQDB database of ``strings`` (without NULs), string ``i`` under id ``i``."""
    records = bytearray()
    tables: list[list[tuple[int, int]]] = [[] for _ in range(256)]
    backward = []
    for i, raw in enumerate(strings):
        key = raw + b"\0"
        offset = _CQDB_DATA + len(records)
        h = hashlittle(key)
        tables[h % 256].append((h, offset))
        backward.append(offset)
        records += struct.pack("<2I", i, len(key)) + key
    refs = bytearray()
    buckets = bytearray()
    cur = _CQDB_DATA + len(records)
    for table in tables:
        n = 2 * len(table)
        refs += struct.pack("<2I", cur + len(buckets) if table else 0, n)
        slots = [(0, 0)] * n
        for h, offset in table:
            k = (h >> 8) % n
            while slots[k][1] != 0:
                k = (k + 1) % n
            slots[k] = (h, offset)
        buckets += b"".join(struct.pack("<2I", *slot) for slot in slots)
    bwd_offset = cur + len(buckets) if strings else 0
    body = bytes(refs) + bytes(records) + bytes(buckets) + struct.pack(f"<{len(strings)}I",
                                                                       *backward)
    return _CQDB_HEADER.pack(b"CQDB", _CQDB_HEADER.size + len(body), 0, _CQDB_BYTEORDER,
                             len(strings), bwd_offset) + body


def _names(names: list[str], what: str) -> list[bytes]:
    out = []
    for name in names:
        raw = str(name).encode("utf-8")
        if b"\0" in raw:
            raise InputError(f"the {what} {name!r} holds a NUL character, which CRFsuite's "
                             "string databases cannot store")
        out.append(raw)
    return out


def _refs(chunk: bytes, lists: list[list[int]], n_refs: int, start: int) -> bytes:
    """A feature-reference chunk at file offset ``start`` (a multiple of 4)."""
    head = _CHUNK.size + 4 * n_refs
    offsets = [0] * n_refs
    body = bytearray()
    for i, fids in enumerate(lists):
        offsets[i] = start + head + len(body)
        body += struct.pack(f"<{len(fids) + 1}I", len(fids), *fids)
    return _CHUNK.pack(chunk, head + len(body), n_refs) + struct.pack(f"<{n_refs}I", *offsets) \
        + bytes(body)


def crfsuite_bytes(estimator: Any, *, boundaries: str = "refuse") -> bytes:
    """The CRFsuite model file of a fitted first-order estimator (see :func:`to_crfsuite`)."""
    if boundaries not in ("refuse", "drop"):
        raise InputError(f"boundaries must be 'refuse' or 'drop', got {boundaries!r}")
    fitted = estimator._check_fitted()
    model, featurizer = fitted.model, fitted.featurizer
    name = type(estimator).__name__
    if not model.linear_scores:
        raise InputError(f"a {name} does not score a label path by the sum of its weights, "
                         "which is all a CRFsuite model holds")
    if model.order != 1:
        raise InputError(f"this {name} is a second-order chain (order=2): CRFsuite's model "
                         "has label bigrams only")
    if not isinstance(featurizer, FeatureVocabulary):
        raise InputError(f"the model's features come from a {type(featurizer).__name__} "
                         "(templates, hashing or functions of the tokens), which CRFsuite "
                         "cannot compute: only a model trained on feature lists or dicts "
                         "(a vocabulary of attribute strings) can be written as a CRFsuite "
                         "model")
    edges = np.concatenate([model.start, model.end])
    if boundaries == "refuse" and np.any(edges != 0):
        raise InputError(
            f"the model has start and end weights (largest {np.abs(edges).max():.3g}), which a "
            "CRFsuite model cannot hold; boundaries='drop' (cseq export --drop-boundaries) "
            "writes it without them, and python-crfsuite's labels may then differ from "
            "cseq's at the first and last tokens")
    labels = _names(list(fitted.classes), "label")
    L = len(labels)
    names = featurizer.attribute_names()
    weights = model.state_weights
    attr_of = np.repeat(np.arange(model.n_attributes, dtype=np.int64), np.diff(model.attr_ptr))
    keep = np.flatnonzero(weights)
    kept_attrs, src = np.unique(attr_of[keep], return_inverse=True)  # CRFsuite drops the rest
    trans = model.transitions
    t_src, t_dst = np.nonzero(trans)
    n_state = len(keep)
    features = np.zeros(n_state + len(t_src), dtype=_FEATURE)
    features["type"][n_state:] = _TRANSITION
    features["src"] = np.concatenate([src, t_src])
    features["dst"] = np.concatenate([model.attr_labels[keep], t_dst])
    features["weight"] = np.concatenate([weights[keep], trans[t_src, t_dst]])
    attributes = _names([names[a] for a in kept_attrs.tolist()], "attribute")

    feat = _CHUNK.pack(b"FEAT", _CHUNK.size + features.nbytes, len(features)) \
        + features.tobytes()
    off_labels = _HEADER.size + len(feat)
    label_db = _cqdb(labels)
    off_attrs = off_labels + len(label_db)
    attr_db = _cqdb(attributes)
    end = off_attrs + len(attr_db)
    pad1 = -end % 4
    off_labelrefs = end + pad1
    by_label = [[] for _ in range(L)]
    for fid, s_ in zip(range(n_state, len(features)), t_src.tolist()):
        by_label[s_].append(fid)
    labelrefs = _refs(b"LFRF", by_label, L + 2, off_labelrefs)
    end = off_labelrefs + len(labelrefs)
    pad2 = -end % 4
    off_attrrefs = end + pad2
    by_attr = np.split(np.arange(n_state), np.flatnonzero(np.diff(src)) + 1) if n_state else []
    attrrefs = _refs(b"AFRF", [part.tolist() for part in by_attr], len(attributes),
                     off_attrrefs)
    size = off_attrrefs + len(attrrefs)
    header = _HEADER.pack(b"lCRF", size, b"FOMC", 100, 0, L, len(attributes), _HEADER.size,
                          off_labels, off_attrs, off_labelrefs, off_attrrefs)
    return b"".join([header, feat, label_db, attr_db, bytes(pad1), labelrefs, bytes(pad2),
                     attrrefs])


def to_crfsuite(estimator: Any, path: str | os.PathLike[str], *,
                boundaries: str = "refuse") -> None:
    """Write a fitted estimator as a CRFsuite model file, for python-crfsuite's own ``Tagger``.

    The way back from cseq: python-crfsuite (or ``crfsuite tag -m``) opens
    the file and tags every sequence as the estimator does.  The file holds
    the non-zero weights only (as CRFsuite's own files do; an attribute
    without one is left out), the labels in ``classes_`` order and the
    attributes as the featurizer names them.  The model must be one the
    format can hold:

    - a first-order chain that scores a path by the sum of its weights (a
      CRF, perceptron, structured SVM, PA or AROW model; not a MEMM, the
      greedy tagger or ``order=2``);
    - features from a vocabulary of attribute strings
      (:class:`~cseq.FeatureVocabulary`, or the
      :class:`~cseq.compat.crfsuite_items.CRFsuiteVocabulary` that
      :func:`cseq.from_crfsuite`, ``cseq.compat.pycrfsuite.Trainer`` and
      ``cseq.compat.sklearn_crfsuite`` use), not templates or hashing.  With
      the plain vocabulary, a dict token's string value was read as the
      attribute ``key=value`` (python-crfsuite reads ``key:value``): give
      python-crfsuite those names as lists of strings.
    - no start or end weights: CRFsuite has none.  ``boundaries="refuse"``
      (the default) raises for a model that has them (every model cseq
      trains, except one imported from CRFsuite); ``"drop"`` writes the
      model without them, and python-crfsuite's labels may then differ at
      the first and last tokens.

    Raises
    ------
    InputError
        For a model the format cannot hold, as above, or a label or
        attribute name with a NUL character.
    NotFittedError
        If the estimator is not fitted.

    Examples
    --------
    >>> crf = cseq.from_crfsuite("model.crfsuite")                  # doctest: +SKIP
    >>> cseq.to_crfsuite(crf, "again.crfsuite")                     # doctest: +SKIP
    """
    write_atomic(crfsuite_bytes(estimator, boundaries=boundaries), path)
