"""The ``cseq`` command line: train, tag, serve, eval, info, import, export, demo, clusters, pipeline.

Built on the public Python API (estimators, templates, readers, metrics) and
the streaming readers and writers of :mod:`cseq.io._streams`.  Every command has
``--help``; bad arguments give a usage message and exit code 2, bad files and
models a one-line message naming the file (and line) and exit code 1.

One module per command holds the command and its options (``add_parser``):
:mod:`~cseq.cli.train`, :mod:`~cseq.cli.tag`, :mod:`~cseq.cli.serve`,
:mod:`~cseq.cli.evaluate`, :mod:`~cseq.cli.info` (``info``, ``import``, ``export``),
:mod:`~cseq.cli.demo`, :mod:`~cseq.cli.clusters`, :mod:`~cseq.cli.pipeline`;
:mod:`~cseq.cli.common` holds what they share.
What ``cseq tag`` shares with the service (loading a fitted model, the
tagging options it honours) is :mod:`cseq._tagging`, which both import.
"""

from __future__ import annotations

import argparse
import os
import sys

from cseq.cli import clusters, demo, evaluate, info, pipeline, serve, tag, train
from cseq.exceptions import CSeqError, InputError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    """The parser of every command (the docs' CLI reference is generated from it)."""
    from cseq import __version__
    p = argparse.ArgumentParser(
        prog="cseq", description="Train and apply sequence labelers (CRF, averaged "
        "perceptron) on CoNLL, CoNLL-U and plain-text files.")
    p.add_argument("--version", action="version", version=f"cseq {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    train.add_parser(sub)
    tag.add_parser(sub)
    serve.add_parser(sub)
    evaluate.add_parser(sub)
    info.add_parsers(sub)
    demo.add_parser(sub)
    clusters.add_parser(sub)
    pipeline.add_parser(sub)
    return p


def _writes_stdout(args: argparse.Namespace) -> bool:
    """Whether the command prints its results: every one but ``cseq tag -o FILE``."""
    return not (args.command == "tag" and args.output not in (None, "-"))


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        if sys.stdout is None and _writes_stdout(args):
            # `cseq ... >&-`: what the command prints would be lost.
            raise InputError("standard output is closed" + (
                ": give an output file with -o" if args.command == "tag" else ""))
        return int(args.func(args))
    except BrokenPipeError:
        # The reader went away (`cseq eval ... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (CSeqError, OSError) as exc:
        print(f"cseq {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"cseq {args.command}: interrupted", file=sys.stderr)
        return 130
