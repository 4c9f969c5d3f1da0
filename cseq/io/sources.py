"""Sources of text: a path or an open file, read as numbered, decoded lines.

Every reader of :mod:`cseq.io` (and ``cseq tag``'s streaming input) reads
through :func:`open_lines`.  A path ending in ``.gz`` is decompressed; paths
and binary files are decoded here, a block of lines at a time, so that a
decoding error names its line; a UTF-8 byte-order mark at the start of the
file is dropped, and CRLF line ends are accepted.  A cseq model file given as
a source is refused by its magic bytes, by name, not as undecodable text.
"""

from __future__ import annotations

import codecs
import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, Union

from cseq.exceptions import InputError, InputTypeError
from cseq.io.serialize import MAGIC

__all__ = ["Source", "check_sep", "open_lines", "source_name"]

#: What the readers read: a path, or a file open in text or binary mode.
Source = Union[str, "os.PathLike[str]", IO[str], IO[bytes]]


def source_name(source: Any) -> str:
    """The name of a source for messages: its path, its file's name, or ``<stream>``."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


@contextmanager
def open_lines(source: Source, encoding: str) -> Iterator[Iterator[tuple[int, str]]]:
    """Yield an iterator of (line number, line without its line end)."""
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise InputError(f"unknown text encoding {encoding!r}") from None
    if isinstance(source, (str, os.PathLike)):
        opener = gzip.open if os.fspath(source).endswith(".gz") else open
        with opener(source, "rb") as f:
            yield _lines(f, os.fspath(source), encoding)
    elif hasattr(source, "read") and hasattr(source, "__iter__"):
        yield _lines(source, source_name(source), encoding)
    else:
        raise InputTypeError(
            f"source must be a path or an open file, got {type(source).__name__}"
        )


#: Bytes read at a time by :func:`_block_lines`.
_BLOCK_BYTES = 1 << 16


def _lines(f: IO[Any], name: str, encoding: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of ``f``, the line ends (``\n``, ``\r\n``) removed."""
    if hasattr(f, "read1") and codecs.lookup(encoding).name == "utf-8":
        return _block_lines(f, name)
    return _each_line(f, name, encoding)


def _block_lines(f: IO[Any], name: str) -> Iterator[tuple[int, str]]:
    # A binary stream in UTF-8, where a b"\n" byte is always a line end:
    # blocks of whole lines are decoded and split at once, which is what
    # _each_line does line by line, several times faster.  read1 returns
    # what the stream has, so a pipe is read as its lines arrive.  A block
    # that does not decode goes through _each_line, to name its line.
    lineno = 0
    tail = b""
    while True:
        try:
            chunk = f.read1(_BLOCK_BYTES)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"{name}:{lineno + 1}: cannot decompress the file: {exc}") from None
        if not isinstance(chunk, bytes):
            raise InputTypeError(f"{name}: a binary file must read bytes, got "
                                 f"{type(chunk).__name__}")
        if chunk:
            block = tail + chunk
            cut = block.rfind(b"\n")
            if cut < 0:
                tail = block
                continue
            tail = block[cut + 1:]
            block = block[:cut]
        elif tail:
            block, tail = tail, b""
        else:
            return
        if lineno == 0:
            _refuse_model_file(block, name)
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            yield from _each_line(block.split(b"\n"), name, "utf-8", lineno)
            raise AssertionError("unreachable: the block did not decode") from None
        lines = text.split("\n")
        if "\r" in text:
            lines = [line.rstrip("\r") for line in lines]
        if lineno == 0 and lines[0].startswith("\ufeff"):
            lines[0] = lines[0][1:]
        yield from zip(range(lineno + 1, lineno + 1 + len(lines)), lines)
        lineno += len(lines)
        if not chunk:
            return


def _each_line(f: Iterable[Any], name: str, encoding: str,
               lineno: int = 0) -> Iterator[tuple[int, str]]:
    # Bytes are decoded one line at a time so that an error names its line;
    # a text stream decodes itself, and its errors surface from next().
    # ``lineno``: the lines before the first of ``f``.
    it = iter(f)
    while True:
        try:
            raw = next(it)
        except StopIteration:
            return
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"{name}:{lineno + 1}: cannot decompress the file: {exc}") from None
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{name}:{lineno + 1}: cannot decode the file as {exc.encoding}: {exc.reason}"
            ) from None
        lineno += 1
        if lineno == 1 and isinstance(raw, (bytes, str)):
            _refuse_model_file(raw, name)
        if isinstance(raw, bytes):
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{name}:{lineno}: cannot decode byte {raw[exc.start:exc.start + 1]!r} "
                    f"at column {exc.start + 1} as {encoding}"
                ) from None
        elif isinstance(raw, str):
            line = raw
        else:
            raise InputTypeError(
                f"{name}: a file must yield str or bytes lines, got {type(raw).__name__}"
            )
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]
        yield lineno, line.rstrip("\r\n")


def _refuse_model_file(start: bytes | str, name: str) -> None:
    """Name a cseq model file given as data, rather than fail to decode its bytes."""
    if (start.startswith(MAGIC) if isinstance(start, bytes)
            else start.startswith(MAGIC.decode("ascii"))):
        raise InputError(f"{name} is a cseq model file, not data (CoNLL, CoNLL-U or text)")


def check_sep(sep: str | None) -> None:
    """Refuse a column separator that is not None or a non-empty string without line ends."""
    if sep is not None and (not isinstance(sep, str) or sep == "" or "\n" in sep or "\r" in sep):
        raise InputError(f"sep must be None or a non-empty string without line ends, got {sep!r}")
