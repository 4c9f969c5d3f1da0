"""What the commands share: reading labelled input, checking the model's
columns and the output path, the Dask cluster, and the argument types and
option groups of the parser."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cseq._tagging import model_columns
from cseq.exceptions import CSeqError, InputError


def _label_column(args: argparse.Namespace, fmt: str) -> str | int:
    value = args.label_column
    if fmt == "conllu":
        if value is None:
            return "upos"
        if re.fullmatch(r"-?\d+", value):
            raise InputError(f"a CoNLL-U label column is a name (upos or xpos), got {value}")
        return value.lower()
    if value is None:
        return -1
    try:
        return int(value)
    except ValueError:
        raise InputError(f"a CoNLL label column is a number (0 is the first, -1 the last), "
                         f"got {value!r}") from None


def _columns(args: argparse.Namespace, fmt: str) -> list[Any] | None:
    if args.columns is None:
        return None
    parts = [p.strip() for p in args.columns.split(",") if p.strip()]
    if fmt == "conllu":
        return parts
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise InputError(f"CoNLL --columns are numbers (e.g. 0,1), got {args.columns!r}") from None


def _read_labeled(path: str, args: argparse.Namespace) -> tuple[list[Any], list[Any], str]:
    """All sentences of a labeled file: X, y and the format read."""
    from cseq.io._streams import open_reader
    with open_reader(path, args.format, sep=args.sep) as reader:
        fmt = reader.format
        if fmt == "text":
            raise InputError(f"{reader.name}: plain text has no labels; give a CoNLL or "
                             "CoNLL-U file")
        X, y = [], []
        for item in reader.items(label=_label_column(args, fmt), columns=_columns(args, fmt)):
            if item.x is not None:
                X.append(item.x)
                y.append(item.gold)
    if not X:
        raise InputError(f"{reader.name}: no sentences (the file has no token lines)")
    return X, y, fmt


def _check_columns(est: Any, width: int, where: str, fmt: str, labeled_flag: bool) -> None:
    """Refuse input whose number of columns is not what the model was trained on."""
    trained, need = model_columns(est)
    fix = ("--columns" if fmt != "conllu" else
           "--columns (CoNLL-U column names, e.g. form,upos)")
    if trained is not None and width == trained + 1 and fmt == "conll" and not labeled_flag:
        raise InputError(
            f"{where}: the input has {width} columns but the model was trained on {trained}; "
            "the last column looks like gold labels: pass --labeled to drop it "
            f"(or {fix} to choose the columns, or --format text for plain text, one "
            "sentence per line)")
    if trained is not None and width != trained:
        raise InputError(
            f"{where}: the input gives the model {width} column(s) but it was trained on "
            f"{trained}; choose the columns with {fix}")
    if width < need:
        raise InputError(
            f"{where}: the input gives the model {width} column(s) but its templates read "
            f"column {need - 1}; choose the columns with {fix}")


def _check_output_path(path: str, what: str, inputs: list[str | None]) -> None:
    """Fail before any work if ``path`` cannot be written or is one of ``inputs``.

    Outputs are written to a temporary file beside the target and renamed
    (:func:`cseq.io._files.replacing`), so the target's directory must be
    writable; an existing FIFO or device is written in place instead.
    """
    from cseq.io._files import refuse_inputs
    if path == "-":
        return
    refuse_inputs(path, inputs, what)
    if os.path.isdir(path):
        raise InputError(f"cannot write {what} to {path}: it is a directory")
    if os.path.exists(path) and not os.path.isfile(path):
        return
    directory = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(directory):
        raise InputError(f"cannot write {what} to {path}: no directory {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {what} to {path}: {directory} is not writable")


@contextmanager
def _cluster(args: argparse.Namespace) -> Iterator[Any]:
    """A Dask client for ``--scheduler ADDRESS`` or ``--local-workers N``, else None."""
    if args.scheduler is None and args.local_workers is None:
        yield None
        return
    try:
        import cseq.distributed  # noqa: F401
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise CSeqError(str(exc)) from None
    if args.scheduler is not None:
        with Client(args.scheduler) as client:
            yield client
        return
    with LocalCluster(n_workers=args.local_workers, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        yield client


def _name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _int_at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    parse.__name__ = "int"
    return parse


def _n_jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"must be a positive number of threads or -1, "
                                         f"got {value}")
    return value


def _separator(text: str) -> str:
    if not text or "\n" in text or "\r" in text:
        raise argparse.ArgumentTypeError(f"a column separator is one or more characters, not "
                                         f"empty and without line ends, got {text!r}")
    return text


def _cluster_options(p: argparse.ArgumentParser, what: str) -> None:
    """--scheduler / --local-workers: run on a Dask cluster (cseq.distributed)."""
    where = p.add_mutually_exclusive_group()
    how = ("the CRF (lbfgs) and the perceptron train there" if what == "train"
           else "the model is sent to each worker once")
    where.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help=f"{what} on the Dask cluster at ADDRESS (tcp://host:8786): {how}; "
                       "needs the dask extra (docs/scaling.md)")
    where.add_argument("--local-workers", metavar="N", type=_int_at_least(1), default=None,
                       help=f"{what} on a local Dask cluster of N worker processes")


def _reading_options(q: argparse.ArgumentParser, *, text: bool = False,
                     labeled: bool = False, raw: bool = False) -> None:
    """The input options of a command reading CoNLL or CoNLL-U files (with ``text``,
    plain text too; with ``labeled``, ``--labeled``; with ``raw``, raw text)."""
    formats = ["auto", "conll", "conllu"] + (["text"] if text else []) + (["raw"] if raw else [])
    q.add_argument("--format", choices=formats, default="auto",
                   help="input format; auto (default) tells CoNLL-U (10 TAB-separated "
                   "columns, integer IDs) from CoNLL (one token per line, columns) "
                   + ("and plain text (one sentence per line) " if text else "")
                   + "by the content, and stops with an error when the content does not "
                   "settle it (JSON, or rows the model cannot read)")
    q.add_argument("--label-column", "--label", dest="label_column", metavar="COL",
                   help="the label column: CoNLL, its index (default -1, the last); "
                   "CoNLL-U, upos (default) or xpos")
    q.add_argument("--columns", metavar="COLS",
                   help="the model's input columns, comma-separated: CoNLL, indices "
                   "among the columns left after the label (default: all); CoNLL-U, "
                   "names (default: form)")
    q.add_argument("--sep", type=_separator, default=None,
                   help="CoNLL column separator (default: any whitespace)")
    if labeled:
        q.add_argument("--labeled", action="store_true",
                       help="the CoNLL input has a label column (--label-column); drop it")
