"""``cseq pipeline train``: a whole raw-text pipeline (segmenter, UPOS, XPOS, FEATS, LEMMA) from one treebank."""

from __future__ import annotations

import argparse
import sys
import time

from cseq.cli.common import _check_output_path
from cseq.exceptions import InputError


def _cmd_pipeline_train(args: argparse.Namespace) -> int:
    from cseq.pipeline import COLUMNS, Pipeline
    columns = [c.strip().lower() for c in args.columns.split(",") if c.strip()]
    unknown = [c for c in columns if c not in COLUMNS]
    if not columns or unknown:
        raise InputError(f"--columns takes a comma-separated list of {', '.join(COLUMNS)}"
                         + (f", not {unknown[0]!r}" if unknown else ""))
    _check_output_path(args.output, "the pipeline file", [args.train, args.dev])
    t0 = time.perf_counter()
    pipe = Pipeline.train(args.train, columns=columns, preset=args.preset,
                          clusters=None if args.clusters == "none" else args.clusters,
                          random_state=args.seed, verbose=not args.quiet)
    pipe.save(args.output)
    if not args.quiet:
        print(f"cseq pipeline train: segmenter and {', '.join(pipe.taggers) or 'no tagger'} "
              f"written to {args.output} in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    if args.dev is not None:
        import io

        from cseq.io.raw import conllu_raw_text, paragraphs_of
        from cseq.metrics import ud_scores
        from cseq.pipeline import format_tagged
        text = "\n\n".join(conllu_raw_text(args.dev)) + "\n"
        out = "".join(format_tagged(pipe.process(paragraphs_of(text))))
        scores = ud_scores(args.dev, io.StringIO(out))
        print("raw dev F1: " + ", ".join(f"{k} {100 * s.f1:.2f}" for k, s in scores.items()
                                         if k != "alltags"))
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``pipeline`` command and its ``train`` subcommand."""
    p = sub.add_parser("pipeline", help="train a raw-text pipeline for any language",
                       description="Pipelines: raw text to sentences, tokens, words and their "
                       "UPOS, XPOS, FEATS and LEMMA, in one file that cseq tag --pipeline FILE "
                       "and cseq.load_pipeline(FILE) read.")
    psub = p.add_subparsers(dest="pipeline_command", metavar="SUBCOMMAND")
    psub.required = True
    t = psub.add_parser(
        "train", help="train a pipeline from one CoNLL-U treebank",
        description="Train a segmenter (sentences, tokens, multiword tokens) and a tagger per "
        "column from one UD treebank's training file, with settings that are the same for "
        "every language, and write them as one pipeline file.")
    t.add_argument("train", help="the treebank's training file (CoNLL-U)")
    t.add_argument("--dev", default=None,
                   help="a CoNLL-U file to score the pipeline on afterwards, from its raw text "
                   "(paragraphs on one line), as the CoNLL 2018 shared task scores")
    t.add_argument("-o", "--output", required=True, help="the pipeline file to write (.cseqp)")
    t.add_argument("--columns", default="upos,xpos,feats,lemma",
                   help="the columns to tag (default upos,xpos,feats,lemma; a column that is _ "
                   "throughout the training file is left out)")
    t.add_argument("--preset", choices=("auto", "alphabetic", "nospace"), default="auto",
                   help="the segmenter's character features (default auto: nospace when fewer "
                   "than one token in five is followed by a space, as in Chinese or Thai)")
    t.add_argument("--clusters", default="none",
                   help="word classes for the taggers: none (default), en (the shipped English "
                   "classes) or a cluster file")
    t.add_argument("--seed", type=int, default=0, help="seed of every learner (default 0)")
    t.add_argument("-q", "--quiet", action="store_true", help="no progress on standard error")
    t.set_defaults(func=_cmd_pipeline_train)
