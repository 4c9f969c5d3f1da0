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
import math
import os
import stat
import struct
from typing import Any

import numpy as np

from cseq.io._files import replacing
from cseq._version import __version__
from cseq.exceptions import InputTypeError, ModelFormatError
# The estimator classes by the name stored in a file's header: the learners'
# registry (``import cseq`` registers every built-in learner).
from cseq.registry import ESTIMATORS

__all__ = ["MAGIC", "FORMAT_VERSION", "MAX_COUNT", "dumps", "header_field", "loads", "save",
           "load", "write_atomic", "read_file_bytes"]

MAGIC = b"CSEQMDL\x00"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_DTYPES = {"<f8", "<f4", "<i8", "<i4", "<u8", "<u4", "|u1", "|i1"}
#: The header is parsed into Python objects, up to ~25 bytes of them per byte
#: of JSON; real headers are a few KiB (templates, labels, training history).
_MAX_HEADER = 64 << 20
#: Most elements an array-table entry may declare, counting only its non-zero
#: dimensions: a zero-size array (``nbytes`` 0) still needs a shape numpy can
#: hold, and no real array has 2**53 elements.
_MAX_ELEMENTS = 1 << 53
#: Largest count a header may give (iterations, examples, sequences, SGD
#: steps): exact in float64, and a count plus a batch stays far inside int64.
MAX_COUNT = 1 << 53


def dumps(estimator, state: tuple[dict, dict[str, np.ndarray]] | None = None) -> bytes:
    """Serialise an estimator (fitted or not) to the bytes of a model file.

    ``state`` is the estimator's ``_model_state()`` when the caller has
    taken it already (and checked it); None takes it here.
    """
    kind = type(estimator).__name__
    if ESTIMATORS.get(kind) is not type(estimator):
        raise TypeError(f"cannot serialise {kind}")
    header, arrays = estimator._model_state() if state is None else state
    return pack({**header, "estimator": kind}, arrays)


def pack(header: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """The bytes of a model file holding a JSON-able ``header`` and named arrays."""
    header = {**header, "library": "cseq", "library_version": __version__}
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


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent; ``1e400`` overflows to inf and is refused
    like the literal ``Infinity`` (a header holds only finite numbers, as ``dumps`` writes)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of float64's range")
    return value


_REQUIRED = object()


def header_field(section: Any, key: str, where: str, kind: type, low: float = 0,
                 high: float = MAX_COUNT, default: Any = _REQUIRED) -> Any:
    """``section[key]`` of a model header, checked: the one test of every header number.

    Parameters
    ----------
    section : the JSON object (dict) holding the field.
    key : the field's name; ``where`` names ``section`` in messages
        (``"training.partial"``), so an error names the field in full.
    kind : int or float
        ``int``: a JSON integer; ``float``: a JSON integer or finite number,
        returned as a float.  Booleans are neither.
    low, high : the inclusive range (``high`` defaults to :data:`MAX_COUNT`).
    default : what a missing key gives; without it a missing key is an error.

    Raises
    ------
    ModelFormatError
        Naming the field, if it is missing (without a default), of another
        type, not finite or out of range.
    """
    name = f"{where}.{key}"
    if not isinstance(section, dict):
        raise ModelFormatError(f"model header field {where} is not an object")
    if key not in section:
        if default is _REQUIRED:
            raise ModelFormatError(f"model header lacks {name}")
        return default
    value = given = section[key]
    if kind is float and type(value) is int:
        try:
            value = float(value)
        except OverflowError:  # an int beyond float64's range
            value = math.inf
    if type(value) is not kind or not low <= value <= high \
            or (kind is float and not math.isfinite(value)):
        what = "an int" if kind is int else "a finite number"
        raise ModelFormatError(f"model header field {name} must be {what} in [{low!r}, "
                               f"{high!r}], got {given!r:.40}")
    return value


def _read_arrays(header: dict, data: memoryview, known) -> dict[str, np.ndarray]:
    """The arrays of the table in ``header``, copied out of ``data``.

    Every entry is checked before anything is copied: its name must be in
    ``known`` (a set, or None for any name) and appear once, its dtype, shape
    and size must agree, it must lie inside ``data``, and no two entries may
    overlap.  So the copies add up to at most the bytes of the file.
    """
    entries = header.get("arrays")
    if not isinstance(entries, list):
        raise ModelFormatError("header has no array table")
    checked, names = [], set()
    for entry in entries:
        if not isinstance(entry, dict):
            raise ModelFormatError("array table entry is not an object")
        name, dtype, shape = entry.get("name"), entry.get("dtype"), entry.get("shape")
        offset, nbytes = entry.get("offset"), entry.get("nbytes")
        if not isinstance(name, str) or name in names:
            raise ModelFormatError(f"bad or duplicate array name {name!r}")
        if known is not None and name not in known:
            raise ModelFormatError(f"unknown array {name[:80]!r} in the model file")
        names.add(name)
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
        elements = math.prod(d for d in shape if d)
        if elements > _MAX_ELEMENTS:
            raise ModelFormatError(f"array {name!r} has a shape of more than 2**53 elements "
                                   f"{shape!r:.80}")
        count = elements if all(shape) else 0
        if count * dt.itemsize != nbytes:
            raise ModelFormatError(f"array {name!r}: shape and size disagree")
        checked.append((offset, nbytes, name, dt, shape))
    checked.sort(key=lambda c: (c[0], c[1]))
    for (a_off, a_n, a_name, _, _), (b_off, _, b_name, _, _) in zip(checked, checked[1:]):
        if a_off + a_n > b_off:
            raise ModelFormatError(f"arrays {a_name!r} and {b_name!r} overlap in the file")
    arrays = {}
    for offset, nbytes, name, dt, shape in checked:
        arr = np.frombuffer(data[offset:offset + nbytes], dtype=dt).reshape(shape)
        arrays[name] = arr.astype(dt.newbyteorder("="), copy=True)
    return arrays


def unpack(data: bytes, known_arrays=None) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and the arrays of model-file bytes, checked as a container.

    Parameters
    ----------
    data : bytes
    known_arrays : callable, optional
        ``known_arrays(header)`` gives the set of array names the file may
        hold; any other name is refused before an array is copied.  Without
        it every name is accepted (the container knows no estimator).

    Raises
    ------
    ModelFormatError
        If the bytes are truncated, corrupted, of a newer format version, or
        not a well-formed cseq container.
    """
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
        raise ModelFormatError(
            f"model header length {head_len} exceeds the file size or {_MAX_HEADER >> 20} MiB")
    try:
        header = json.loads(body[_PREFIX.size:_PREFIX.size + head_len].decode("ascii"),
                            parse_constant=_reject_constant, parse_float=_finite_float)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelFormatError(f"model header is not valid JSON: {exc}") from None
    if not isinstance(header, dict) or header.get("library") != "cseq":
        raise ModelFormatError("model header is not a cseq header")
    known = None if known_arrays is None else known_arrays(header)
    arrays = _read_arrays(header, memoryview(body)[_PREFIX.size + head_len:], known)
    return header, arrays


def loads(data: bytes):
    """Rebuild an estimator from model-file bytes.

    Raises
    ------
    ModelFormatError
        If the bytes are truncated, corrupted, of a newer format version, or
        describe an invalid model.
    """
    found = []

    def known_arrays(header):
        if "pipeline" in header and "estimator" not in header:
            raise ModelFormatError("a pipeline file (a segmenter and taggers), not one model: "
                                   "read it with cseq.load_pipeline or cseq tag --pipeline FILE")
        cls = _lookup(ESTIMATORS, header.get("estimator"))
        if cls is None:
            raise ModelFormatError(f"unknown estimator {header.get('estimator')!r}")
        found.append(cls)
        return cls._model_array_names(header)

    header, arrays = unpack(data, known_arrays)
    return found[0]._from_model_state(header, arrays)


def save(estimator: Any, path: str | os.PathLike[str]) -> None:
    """Write ``estimator`` to ``path`` atomically (:func:`write_atomic`)."""
    write_atomic(dumps(estimator), path)


def write_atomic(data: bytes, path: str | os.PathLike[str]) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename).

    The file gets the permissions of the file it replaces, or of any new file
    (``0o666`` less the umask), not the private mode of the temporary file.
    """
    with replacing(path, binary=True) as f:
        f.write(data)


def load(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> Any:
    """Load an estimator saved with :meth:`save` (never unpickles, never executes code).

    Raises
    ------
    ModelFormatError
        The file is not a valid cseq model.
    OSError
        The file cannot be read.
    """
    return loads(read_file_bytes(path))


def read_file_bytes(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> bytes:
    """The bytes of the model file at ``path``, which must be a regular file.

    Shared by :func:`load` and the readers of other libraries' model files
    (:mod:`cseq.compat`).

    Raises
    ------
    InputTypeError
        ``path`` is not a str, bytes or os.PathLike.
    ModelFormatError
        ``path`` is not a regular file (a device could stream forever,
        ``/dev/zero``; a FIFO would block).
    OSError
        The file cannot be read.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise InputTypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    # Only regular files load: a device could stream forever (/dev/zero), and a
    # FIFO blocks a plain open() until a writer comes, so the file is opened
    # non-blocking and checked by its descriptor before anything is read.
    with open(path, "rb", opener=_open_nonblocking) as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ModelFormatError(f"{os.fsdecode(path)} is not a regular file (a FIFO or a "
                                   "device cannot hold a model)")
        return f.read()


def _open_nonblocking(path: str, flags: int) -> int:
    """``os.open`` that returns at once for a FIFO (O_NONBLOCK does not change how a
    regular file reads)."""
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
