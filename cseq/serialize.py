"""The cseq model file: a versioned binary container that never unpickles.

The module is :mod:`cseq.io.serialize`; this path keeps working: the
model container; cseq.serialize.loads is what earlier pickles call.
"""

from cseq.io.serialize import (
    MAGIC,
    FORMAT_VERSION,
    MAX_COUNT,
    dumps,
    header_field,
    loads,
    save,
    load,
    write_atomic,
    read_file_bytes,
)

__all__ = [
    "MAGIC",
    "FORMAT_VERSION",
    "MAX_COUNT",
    "dumps",
    "header_field",
    "loads",
    "save",
    "load",
    "write_atomic",
    "read_file_bytes",
]
