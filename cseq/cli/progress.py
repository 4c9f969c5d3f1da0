"""Training progress on standard error (``cseq train``)."""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class _Progress:
    """Training progress on stderr.

    On a terminal one status line rewrites itself; elsewhere (logs, CI,
    notebooks) a line is printed every ``every`` seconds, or after every
    iteration with ``verbose``; ``quiet`` prints nothing.
    """

    def __init__(self, total: int, stream: IO[str] | None = None, *, quiet: bool = False,
                 verbose: bool = False, every: float = 5.0) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) and not verbose
        self.verbose = verbose
        self.every = every
        self.start = self.last = time.perf_counter()
        self.shown = False

    def line(self, record: dict[str, Any], elapsed: float) -> str:
        it = record["iteration"]
        eta = elapsed / it * max(self.total - it, 0)
        parts = [f"iter {it}/{self.total}"]
        if "loss" in record:
            parts.append(f"loss {record['loss']:.5g}")
        if "errors" in record:
            parts.append(f"errors {record['errors']}")
        if "dev_f1" in record:
            parts.append(f"dev span F1 {100 * record['dev_f1']:.2f}%")
        if "dev_accuracy" in record:
            parts.append(f"dev acc {100 * record['dev_accuracy']:.2f}%")
        parts.append(f"elapsed {elapsed:.1f}s")
        parts.append(f"eta <= {eta:.0f}s")
        return "  ".join(parts)

    def __call__(self, record: dict[str, Any]) -> None:
        if self.quiet:
            return
        now = time.perf_counter()
        text = self.line(record, now - self.start)
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
            self.shown = True
        elif self.verbose or now - self.last >= self.every:
            self.stream.write(text + "\n")
            self.last = now
        else:
            return
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
