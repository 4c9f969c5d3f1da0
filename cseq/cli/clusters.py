"""``cseq clusters``: Brown word clusters from raw text, written as a cluster file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cseq.cli.common import _check_output_path, _int_at_least
from cseq.cli.progress import _Progress
from cseq.exceptions import InputError


class _MergeProgress(_Progress):
    """:class:`_Progress` counting merges instead of training iterations."""

    def line(self, record: dict[str, Any], elapsed: float) -> str:
        done = record["iteration"]
        eta = elapsed / max(done, 1) * max(self.total - done, 0)
        return f"merge {done}/{self.total}  elapsed {elapsed:.1f}s  eta {eta:.0f}s"


def _read_lines(paths: list[str]) -> list[str]:
    """The lines of every input file (``-``: standard input), in order."""
    lines: list[str] = []
    for path in paths:
        try:
            if path == "-":
                lines.extend(sys.stdin.read().splitlines())
            else:
                with open(path, encoding="utf-8") as f:
                    lines.extend(f.read().splitlines())
        except UnicodeDecodeError as exc:
            raise InputError(f"{path} is not UTF-8 text ({exc})") from None
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    return lines


def _cmd_clusters(args: argparse.Namespace) -> int:
    from cseq.features.clusters import brown_clusters
    _check_output_path(args.output, "the cluster file", args.text)
    lines = _read_lines(args.text)
    progress: _MergeProgress | None = None

    def report(done: int, total: int) -> None:
        nonlocal progress
        if progress is None:
            progress = _MergeProgress(total, quiet=args.quiet)
        progress({"iteration": done})

    try:
        clusters = brown_clusters(lines, args.clusters, min_count=args.min_count, progress=report)
    finally:
        if progress is not None:
            progress.close()
    clusters.write(args.output)
    if not args.quiet:
        print(f"cseq clusters: {len(clusters)} words in {clusters.n_clusters} clusters "
              f"written to {args.output}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``clusters`` command and its options."""
    c = sub.add_parser(
        "clusters", help="Brown word clusters from raw text",
        description="Cluster the words of raw text (whitespace-separated tokens, one sentence "
        "per line) by Brown's algorithm as Liang's wcluster does, and write a cluster file: "
        "bit-string<TAB>word<TAB>count per line. Train with it: cseq train --clusters FILE.")
    c.add_argument("text", nargs="+", help="raw text files (- for standard input)")
    c.add_argument("-o", "--output", required=True, help="the cluster file to write")
    c.add_argument("--clusters", type=_int_at_least(1), default=1000,
                   help="clusters, the leaves of the tree (default 1000); time grows with its square")
    c.add_argument("--min-count", type=_int_at_least(1), default=1,
                   help="leave out words seen fewer times (default 1)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress on standard error")
    c.set_defaults(func=_cmd_clusters)
