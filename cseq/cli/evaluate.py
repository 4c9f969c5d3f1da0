"""``cseq eval``: score a model on a labelled file (and ``--report``, an HTML report)."""

from __future__ import annotations

import argparse
import sys

from cseq._tagging import load_fitted
from cseq.cli.common import (_check_columns, _check_output_path, _label_column, _n_jobs, _name,
                             _read_labeled, _reading_options)
from cseq.exceptions import CSeqError


def _cmd_eval(args: argparse.Namespace) -> int:
    from cseq.evaluation.metrics import chunk_scores, classification_report, detect_scheme
    if args.report:
        _check_output_path(args.report, "the report", [args.model, args.test])
    est = load_fitted(args.model)
    X, y, fmt = _read_labeled(args.test, args)
    _check_columns(est, len(X[0][0]), f"{_name(args.test)}", fmt, True)
    known = set(est.classes_)
    gold = {lab for seq in y for lab in seq}
    if not gold & known:
        col = _label_column(args, fmt)
        print(f"cseq eval: warning: none of the labels in {_name(args.test)} (column {col}: "
              f"{', '.join(sorted(gold)[:5])}{', ...' if len(gold) > 5 else ''}) is a label "
              f"of the model ({', '.join(est.classes_[:5])}"
              f"{', ...' if len(est.classes_) > 5 else ''}); check --label-column",
              file=sys.stderr)
    pred = est.predict(X, n_jobs=args.n_jobs)
    scheme = detect_scheme(gold) if args.scheme == "auto" else (
        None if args.scheme == "none" else args.scheme)
    if scheme is not None:
        s = chunk_scores(y, pred, scheme)
        print(f"span F1: {100 * s['f1']:.2f}% (precision {100 * s['precision']:.2f}%, "
              f"recall {100 * s['recall']:.2f}%, {scheme}); token accuracy "
              f"{100 * s['accuracy']:.2f}%")
    print(classification_report(y, pred, scheme=scheme), end="")
    if args.report:
        from cseq.report import write_report
        try:
            write_report(est, X, y, args.report, words=[[tok[0] for tok in x] for x in X],
                         scheme=scheme, title=f"cseq eval {args.model} {args.test}",
                         n_jobs=args.n_jobs)
        except ImportError as exc:
            raise CSeqError(str(exc)) from None
        print(f"cseq eval: report written to {args.report}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``eval`` command and its options."""
    e = sub.add_parser("eval", help="score a model on a labeled file",
                       description="Score a model. BIO-labeled files report span F1 first.")
    e.add_argument("model")
    e.add_argument("test")
    e.add_argument("--scheme", choices=["auto", "none", "iob2", "iob1", "bioes", "iobes"],
                   default="auto", help="chunk scheme for span F1 (default auto: iob2 or "
                   "bioes when every label is O or B-/I-/E-/S-TYPE, else per-label)")
    e.add_argument("--n-jobs", type=_n_jobs, default=1, help="threads (-1: all cores)")
    e.add_argument("--report", metavar="HTML",
                   help="also write an HTML evaluation report to this file (scores, "
                   "confusion and transition heatmaps, learning curve, calibration, top "
                   "features, worst sentences; needs matplotlib: pip install "
                   "'cseq-labeling[report]')")
    _reading_options(e)
    e.set_defaults(func=_cmd_eval)
