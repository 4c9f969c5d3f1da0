"""Files cseq writes and reads by path: atomic replacement, never over an input.

:func:`replacing` is how every output file is written (model files by
:func:`cseq.save`, the command line's tagged files and reports, the files of
:func:`cseq.distributed.tag_files`): into a temporary file beside the target,
renamed onto it only when everything was written, so an error or Ctrl-C
leaves the old file (or none), never an empty or truncated one.
:func:`refuse_inputs` stops a command before it opens anything for writing
when an output would be one of its inputs.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from cseq.exceptions import InputError

__all__ = ["replacing", "refuse_inputs", "new_file_mode"]


def new_file_mode(path: str) -> int:
    """Permissions for ``path``: those of the file it replaces, else 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    try:  # Linux: the umask without changing it (os.umask would, for every thread)
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def replacing(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO[Any]]:
    """A file object whose content replaces ``path`` when the block ends without an error.

    The data goes to a temporary file (``.cseq-*.tmp``) in the target's
    directory, is flushed to disk, and is renamed onto the target, so a reader
    sees the old file or the whole new one.  On any exception (Ctrl-C
    included) the temporary file is removed and the target is untouched.  A
    symbolic link is followed (the file it names is replaced, the link kept),
    as writing through it would.  An existing target that is not a regular
    file (a FIFO, ``/dev/null``, a terminal) cannot be replaced and is written
    in place, as a stream.  A new file gets the permissions of the file it
    replaces, or ``0o666`` less the umask, not the temporary file's private
    mode.

    Parameters
    ----------
    path : str or os.PathLike
    binary : bool
        Bytes (True) or UTF-8 text with LF line ends (False).
    """
    path = os.fspath(path)
    how, encoding, newline = ("wb", None, None) if binary else ("w", "utf-8", "\n")
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        regular = True
    if not regular:  # by its own name: /dev/stdout resolves to no path when it is a pipe
        with open(path, how, encoding=encoding, newline=newline) as f:
            yield f
        return
    target = os.path.realpath(path)
    mode = new_file_mode(target)
    fd, tmp = tempfile.mkstemp(prefix=".cseq-", suffix=".tmp", dir=os.path.dirname(target))
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with os.fdopen(fd, how, encoding=encoding, newline=newline) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def refuse_inputs(output: str | os.PathLike[str], inputs: Iterable[Any], what: str) -> None:
    """Raise :class:`InputError` if ``output`` is one of ``inputs`` (the same file).

    The same file through another name, a symbolic link or a hard link
    counts (:func:`os.path.samefile`); ``-`` (standard input or output) and
    None are skipped.  Called before anything is opened for writing.
    """
    if output is None or os.fspath(output) == "-":
        return
    out = os.fspath(output)
    for source in inputs:
        if source is None or os.fspath(source) == "-":
            continue
        src = os.fspath(source)
        try:
            same = os.path.samefile(src, out)
        except OSError:  # either does not exist (yet): they cannot be one file
            same = False
        if same:
            raise InputError(f"{what} {out} is the input {src}: writing it would destroy "
                             "the input; choose another output file")

