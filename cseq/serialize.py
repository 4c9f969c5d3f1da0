"""The cseq model file: a versioned binary container that never unpickles.

Layout (all integers little-endian)::

    offset  size  field
    0       8     magic b"CSEQMDL\\x00"
    8       4     format version (uint32)
    12      8     header length H (uint64)
    20      H     header: UTF-8 JSON object
    20+H    D     array data, each array at the offset the header gives
    end-32  32    SHA-256 of every byte before it

The header names the estimator class and its hyperparameters, the labels,
the featurizer's metadata, training information, and for every array its
name, dtype (one of a fixed set of little-endian dtypes), shape, offset and
size.  Loading checks the size, magic, version and checksum before it parses
anything, bounds every declared length by the bytes present, and validates
the model's invariants before a kernel can see it.

Format version policy: a reader accepts every version up to its own
(``FORMAT_VERSION``); a change that older readers cannot ignore bumps the
version; new optional header keys do not.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import tempfile

import numpy as np

from cseq.exceptions import InputTypeError, ModelFormatError

__all__ = ["MAGIC", "FORMAT_VERSION", "dumps", "loads", "save", "load"]

MAGIC = b"CSEQMDL\x00"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_DTYPES = {"<f8", "<f4", "<i8", "<i4", "<u8", "<u4", "|u1", "|i1"}
_MAX_HEADER = 1 << 30


def _estimator_classes():
    from cseq.estimators import CRF, StructuredPerceptron
    return {"CRF": CRF, "StructuredPerceptron": StructuredPerceptron}


def _featurizer_classes():
    from cseq.features import FeatureVocabulary
    from cseq.templates import TemplateFeaturizer
    return {"vocabulary": FeatureVocabulary, "templates": TemplateFeaturizer}


def dumps(estimator) -> bytes:
    """Serialise an estimator (fitted or not) to the bytes of a model file."""
    from cseq import __version__
    kind = type(estimator).__name__
    if kind not in _estimator_classes():
        raise TypeError(f"cannot serialise {kind}")
    params = estimator.get_params()
    features = params.pop("features", None)
    header: dict = {"library": "cseq", "library_version": __version__, "estimator": kind,
                    "params": params, "fitted": getattr(estimator, "model_", None) is not None}
    arrays: dict[str, np.ndarray] = {}
    if features is not None:
        header["features"] = features.get_config()
    if header["fitted"]:
        meta, farrays = estimator.featurizer_.get_state()
        header["featurizer"] = meta
        header["classes"] = list(estimator.classes_)
        # Wall-clock seconds are left out so that the same training gives
        # byte-identical files.
        history = [{k: v for k, v in rec.items() if k != "seconds"}
                   for rec in estimator.history_]
        header["training"] = {"n_iter": int(estimator.n_iter_), "history": history}
        if hasattr(estimator, "stop_reason_"):
            header["training"]["stop_reason"] = estimator.stop_reason_
            header["training"]["n_evaluations"] = int(estimator.n_evaluations_)
        arrays.update({f"featurizer/{k}": v for k, v in farrays.items()})
        arrays.update({f"model/{k}": v for k, v in estimator.model_.arrays().items()})
    entries, chunks, offset = [], [], 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        le = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        dtype = le.dtype.str
        if dtype not in _DTYPES:
            raise TypeError(f"array {name!r} has unsupported dtype {arr.dtype}")
        data = le.tobytes()
        entries.append({"name": name, "dtype": dtype, "shape": list(arr.shape),
                        "offset": offset, "nbytes": len(data)})
        pad = (-len(data)) % 8
        chunks.append(data + b"\x00" * pad)
        offset += len(data) + pad
    header["arrays"] = entries
    head = json.dumps(header, ensure_ascii=True, allow_nan=False, sort_keys=True).encode("ascii")
    body = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(head)) + head + b"".join(chunks)
    return body + hashlib.sha256(body).digest()


def _lookup(table: dict, key):
    """``table[key]`` for a string key from a header; None for anything else."""
    return table.get(key) if isinstance(key, str) else None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not allowed in a model header")


def _read_arrays(header: dict, data: memoryview) -> dict[str, np.ndarray]:
    entries = header.get("arrays")
    if not isinstance(entries, list):
        raise ModelFormatError("header has no array table")
    arrays = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise ModelFormatError("array table entry is not an object")
        name, dtype, shape = entry.get("name"), entry.get("dtype"), entry.get("shape")
        offset, nbytes = entry.get("offset"), entry.get("nbytes")
        if not isinstance(name, str) or name in arrays:
            raise ModelFormatError(f"bad or duplicate array name {name!r}")
        if not isinstance(dtype, str) or dtype not in _DTYPES:
            raise ModelFormatError(f"array {name!r} has unsupported dtype {dtype!r}")
        if (not isinstance(shape, list) or len(shape) > 4
                or not all(type(d) is int and d >= 0 for d in shape)):
            raise ModelFormatError(f"array {name!r} has a bad shape {shape!r}")
        if type(offset) is not int or type(nbytes) is not int or offset < 0 or nbytes < 0:
            raise ModelFormatError(f"array {name!r} has a bad offset or size")
        if offset + nbytes > len(data):
            raise ModelFormatError(f"array {name!r} extends past the end of the file")
        dt = np.dtype(dtype)
        count = 1
        for d in shape:
            count *= d
        if count * dt.itemsize != nbytes:
            raise ModelFormatError(f"array {name!r}: shape and size disagree")
        arr = np.frombuffer(data[offset:offset + nbytes], dtype=dt).reshape(shape)
        arrays[name] = arr.astype(dt.newbyteorder("="), copy=True)
    return arrays


def _sub(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}


def loads(data: bytes):
    """Rebuild an estimator from model-file bytes.

    Raises
    ------
    ModelFormatError
        If the bytes are truncated, corrupted, of a newer format version, or
        describe an invalid model.
    """
    from cseq.model import LinearChain
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ModelFormatError(f"model data must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _PREFIX.size + _DIGEST:
        raise ModelFormatError(f"not a cseq model: only {len(data)} bytes")
    magic, version, head_len = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise ModelFormatError("not a cseq model file (bad magic bytes)")
    if version < 1 or version > FORMAT_VERSION:
        raise ModelFormatError(
            f"model format version {version} is not supported (this cseq reads 1..{FORMAT_VERSION})")
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        raise ModelFormatError("model file is corrupted or truncated (checksum mismatch)")
    if head_len > min(_MAX_HEADER, len(body) - _PREFIX.size):
        raise ModelFormatError("model header length exceeds the file size")
    try:
        header = json.loads(body[_PREFIX.size:_PREFIX.size + head_len].decode("ascii"),
                            parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelFormatError(f"model header is not valid JSON: {exc}") from None
    if not isinstance(header, dict) or header.get("library") != "cseq":
        raise ModelFormatError("model header is not a cseq header")
    arrays = _read_arrays(header, memoryview(body)[_PREFIX.size + head_len:])
    classes = _estimator_classes()
    cls = _lookup(classes, header.get("estimator"))
    if cls is None:
        raise ModelFormatError(f"unknown estimator {header.get('estimator')!r}")
    params = header.get("params")
    if not isinstance(params, dict) or not set(params) <= set(cls._param_names) - {"features"}:
        raise ModelFormatError("model header has bad hyperparameters")
    try:
        est = cls(**params)
        est._validate_params()
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"model header has bad hyperparameters: {exc}") from None
    if "features" in header:
        config = header["features"]
        cls_f = _lookup(_featurizer_classes(), config.get("kind") if isinstance(config, dict) else None)
        if cls_f is None:
            raise ModelFormatError("model header has a bad features parameter")
        est.features = cls_f.from_config(config)
    if header.get("fitted") is not True:
        est.model_ = None
        return est
    labels = header.get("classes")
    if (not isinstance(labels, list) or not labels or not all(isinstance(c, str) for c in labels)
            or len(set(labels)) != len(labels)):
        raise ModelFormatError("model header has bad labels")
    training = header.get("training")
    if not isinstance(training, dict) or type(training.get("n_iter")) is not int:
        raise ModelFormatError("model header has bad training information")
    featurizer = _load_featurizer(header.get("featurizer"), _sub(arrays, "featurizer/"))
    m = _sub(arrays, "model/")
    if set(m) != {"attr_ptr", "attr_labels", "params"}:
        raise ModelFormatError("model arrays are missing")
    model = LinearChain(len(labels), m["attr_ptr"], m["attr_labels"], m["params"])
    if model.n_attributes != featurizer.n_attributes:
        raise ModelFormatError("model and featurizer disagree on the number of attributes")
    est.featurizer_, est.classes_, est.model_ = featurizer, labels, model
    est.n_iter_ = training["n_iter"]
    history = training.get("history", [])
    est.history_ = history if isinstance(history, list) else []
    if "stop_reason" in training:
        est.stop_reason_ = str(training["stop_reason"])
        n_eval = training.get("n_evaluations")
        if type(n_eval) is not int or n_eval < 0:
            raise ModelFormatError("model header has bad training information")
        est.n_evaluations_ = n_eval
    return est


def _load_featurizer(meta, arrays):
    if not isinstance(meta, dict):
        raise ModelFormatError("model header has no featurizer description")
    cls = _lookup(_featurizer_classes(), meta.get("kind"))
    if cls is None:
        raise ModelFormatError(f"unknown featurizer kind {meta.get('kind')!r}")
    return cls.from_state(meta, arrays)


def save(estimator, path) -> None:
    """Write ``estimator`` to ``path`` atomically (a temporary file, then a rename)."""
    data = dumps(estimator)
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".cseq-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load(path):
    """Load an estimator saved with :meth:`save` (never unpickles, never executes code).

    Raises
    ------
    ModelFormatError
        The file is not a valid cseq model.
    OSError
        The file cannot be read.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise InputTypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    with open(path, "rb") as f:
        # A device or pipe could stream forever (/dev/zero): only files load.
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ModelFormatError(f"{os.fsdecode(path)} is not a regular file")
        return loads(f.read())
