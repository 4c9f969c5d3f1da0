"""``cseq clusters``: word clusters from raw text (Brown) or from word vectors, written as a cluster file."""

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
    if (args.vectors is None) == (not args.text):
        raise InputError("give raw text files or --vectors FILE, not both" if args.text else
                         "give raw text files to cluster, or --vectors FILE")
    if args.vectors is not None:
        return _cmd_vectors(args)
    for name in ("format", "max_words", "max_dims"):
        if getattr(args, name) is not None:
            raise InputError(f"--{name.replace('_', '-')} applies to --vectors only")
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


def _cmd_vectors(args: argparse.Namespace) -> int:
    from cseq.features.vectors import read_vectors, vector_classes
    _check_output_path(args.output, "the cluster file", [args.vectors])
    if args.min_count != 1:
        raise InputError("--min-count applies to raw text only (vector files have no counts)")
    words, vectors = read_vectors(args.vectors, format=args.format or "auto",
                                  max_words=args.max_words or 400_000, max_dims=args.max_dims or 64)
    if not args.quiet:
        print(f"cseq clusters: {len(words):,} vectors of {vectors.shape[1]} dimensions read; "
              f"clustering into {args.clusters} classes", file=sys.stderr)
    classes = vector_classes(words, vectors, args.clusters)
    classes.write(args.output)
    if not args.quiet:
        print(f"cseq clusters: {len(classes):,} words in {classes.n_clusters} classes "
              f"written to {args.output}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``clusters`` command and its options."""
    c = sub.add_parser(
        "clusters", help="word clusters from raw text or from word vectors",
        description="Cluster the words of raw text (whitespace-separated tokens, one sentence "
        "per line) by Brown's algorithm as Liang's wcluster does, or the words of a vector file "
        "(--vectors: k-means over the vectors, then Ward's tree over the classes), and write a "
        "cluster file: bit-string<TAB>word<TAB>count per line. Train with it: cseq train "
        "--clusters FILE.")
    c.add_argument("text", nargs="*", help="raw text files (- for standard input)")
    c.add_argument("--vectors", metavar="FILE", default=None,
                   help="a word-vector file instead of raw text: word2vec text or binary, GloVe "
                   "text, fastText .vec; read streamed, its first --max-words rows")
    c.add_argument("--format", choices=("auto", "text", "binary"), default=None,
                   help="the vector file's format (default auto: binary when a word2vec header "
                   "is followed by bytes that are not text)")
    c.add_argument("--max-words", type=_int_at_least(1), default=None,
                   help="vectors read, the most frequent first (default 400,000)")
    c.add_argument("--max-dims", type=_int_at_least(1), default=None,
                   help="vectors of more dimensions are projected to this many by a fixed random "
                   "projection (default 64); memory is max-words x max-dims x 4 bytes")
    c.add_argument("-o", "--output", required=True, help="the cluster file to write")
    c.add_argument("--clusters", type=_int_at_least(1), default=1000,
                   help="clusters, the leaves of the tree (default 1000); Brown's time grows with "
                   "its square, k-means' with it")
    c.add_argument("--min-count", type=_int_at_least(1), default=1,
                   help="leave out words seen fewer times (default 1)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress on standard error")
    c.set_defaults(func=_cmd_clusters)
