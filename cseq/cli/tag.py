"""``cseq tag``: label a file, streaming, in batches of about ``--batch-tokens``
tokens (labels, marginals or n-best lists; in this process or on a Dask cluster)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import IO, Any

from cseq._tagging import check_tag_options, load_fitted
from cseq.cli.common import (_check_columns, _check_output_path, _cluster, _cluster_options,
                             _columns, _int_at_least, _label_column, _n_jobs, _name,
                             _reading_options)
from cseq.exceptions import InputError
from cseq.pipeline import refuse_segmenter


def _cmd_tag(args: argparse.Namespace) -> int:
    from cseq.io._streams import check_labels, open_output, open_reader
    if args.segmenter is not None or args.pipeline is not None or args.format == "raw":
        return _cmd_tag_raw(args)
    if args.input is None:
        raise InputError("give the model and the input file (or --pipeline NAME|FILE and the input)")
    if args.output is not None:
        _check_output_path(args.output, "the output", [args.input, args.model])
    est = load_fitted(args.model)
    refuse_segmenter(est, args.model)
    templates = getattr(est.featurizer_, "templates", None)
    n_cols = getattr(est.featurizer_, "n_columns_", None) or (
        templates.n_columns if templates is not None else None)
    check_tag_options(est, args.marginals, args.nbest, "--")
    with open_reader(args.input, args.format, sep=args.sep, n_columns=n_cols,
                     allow_text=not args.labeled) as reader:
        fmt_in = reader.format
        fmt_out = args.output_format or fmt_in
        if fmt_out == "conllu" and fmt_in != "conllu":
            raise InputError("--output-format conllu needs CoNLL-U input (it keeps the other "
                             f"columns); {reader.name} is {fmt_in}")
        if fmt_out == "conllu" and args.nbest is not None:
            raise InputError("CoNLL-U output has no room for n-best lists; use "
                             "--output-format conll, text or jsonl")
        if fmt_out == "conllu" and args.marginals:
            raise InputError("CoNLL-U output has no column for marginals; use "
                             "--output-format conll or jsonl")
        label = _label_column(args, fmt_in) if (fmt_in == "conllu" or args.labeled) else None
        check_labels(est.classes_, fmt_out)
        items = reader.items(label=label if fmt_in != "conllu" else None,
                             columns=_columns(args, fmt_in), drop_label=True)
        with open_output(args.output) as out, _cluster(args) as client:
            if client is not None and (args.marginals or args.nbest is not None
                                       or args.constraints is not None):
                raise InputError("--marginals, --nbest and --constraints run in this process: "
                                 "drop --scheduler and --local-workers")
            predict = None
            if client is not None:
                import cseq.distributed as cd
                predict = cd._predictor(est, client)
            _tag_stream(est, items, out, args, fmt_in, fmt_out, label, predict)
    return 0


def _cmd_tag_raw(args: argparse.Namespace) -> int:
    """Raw text: segment with ``--segmenter`` (or ``--pipeline``), tag, write."""
    import sys

    from cseq.io._streams import open_output
    from cseq.io.conllu_write import SEGMENTED_FORMATS
    from cseq.io.raw import iter_paragraphs
    from cseq.pipeline import Pipeline, format_tagged, load_pipeline
    if args.segmenter is None and args.pipeline is None:
        raise InputError("--format raw needs a segmenter: --segmenter SEG (with a tagger "
                         "model) or --pipeline NAME|FILE")
    if args.segmenter is not None and args.pipeline is not None:
        raise InputError("--pipeline holds its own segmenter: drop --segmenter")
    if args.pipeline is not None:
        if args.input is not None:
            raise InputError("--pipeline holds its own tagger: give the input file only")
        model, path = None, args.model
    else:
        if args.input is None:
            raise InputError("give the tagger model and the input file (with --segmenter)")
        model, path = args.model, args.input
    if args.format not in ("auto", "raw"):
        raise InputError(f"--segmenter reads raw text; --format {args.format} input is already "
                         "segmented: drop --segmenter (or say --format raw)")
    fmt_out = args.output_format or "conllu"
    if fmt_out not in SEGMENTED_FORMATS:
        raise InputError(f"raw text is written as {', '.join(SEGMENTED_FORMATS)}, not "
                         f"{fmt_out}: choose one with --output-format")
    refused = [flag for flag, given in (
        ("--marginals", args.marginals), ("--nbest", args.nbest is not None),
        ("--constraints", args.constraints is not None), ("--columns", args.columns),
        ("--labeled", args.labeled), ("--sep", args.sep is not None),
        ("--scheduler/--local-workers", args.scheduler or args.local_workers)) if given]
    if refused:
        raise InputError(f"{', '.join(refused)}: not with raw text (the tagger reads the words "
                         "the segmenter finds, in this process)")
    column = _label_column(args, "conllu")
    if args.output is not None:
        _check_output_path(args.output, "the output",
                           [path, model, args.segmenter])
    if args.pipeline is not None:
        pipe = load_pipeline(args.pipeline, batch_chars=args.batch_chars)
    else:
        pipe = Pipeline.load(args.segmenter, model, batch_chars=args.batch_chars)
    source = sys.stdin.buffer if path == "-" else path
    paragraphs = iter_paragraphs(source, check_format=args.format == "auto")
    with open_output(args.output) as out:
        for part in format_tagged(pipe.process(paragraphs, n_jobs=args.n_jobs), fmt=fmt_out,
                                  column=column):
            out.write(part)
    return 0


def _tag_stream(est: Any, items: Any, out: IO[str], args: argparse.Namespace, fmt_in: str,
                fmt_out: str, label: Any, predict: Callable[[list[Any]], Any] | None = None
                ) -> None:
    """Read, tag and write batches of about ``--batch-tokens`` tokens."""
    from cseq.io._streams import write_items
    from cseq.chain.probability import annotate
    batch: list[Any] = []
    n_tok = 0
    checked = False

    def flush() -> None:
        X = [item.x for item in batch if item.x is not None]
        if args.marginals and X:
            # One pass: the labels, their marginals and (JSON lines) the spans;
            # with --constraints, of the distribution restricted to the allowed labelings.
            tagged = annotate(est, X, spans=fmt_out == "jsonl", constraints=args.constraints,
                              n_jobs=args.n_jobs)
            write_items(out, batch, [t.labels for t in tagged], tagged, fmt_out, label)
            return
        if args.nbest is not None:
            found = est.predict_nbest(X, k=args.nbest, constraints=args.constraints,
                                      n_jobs=args.n_jobs) if X else []
            _write_nbest(out, batch, found, fmt_out, args.nbest, label)
            return
        if predict is not None:  # on a Dask cluster
            labels = predict(X) if X else []
        else:
            labels = est.predict(X, n_jobs=args.n_jobs, constraints=args.constraints) if X else []
        write_items(out, batch, labels, None, fmt_out, label)

    for item in items:
        if item.x is not None:
            if not checked:
                _check_columns(est, len(item.x[0]), f"{_name(args.input)}:{item.line}",
                               fmt_in, args.labeled)
                checked = True
            n_tok += len(item.x)
        batch.append(item)
        if n_tok >= args.batch_tokens:
            flush()
            batch, n_tok = [], 0
    if batch:
        flush()


def _write_nbest(out: IO[str], items: list[Any], found: list[Any], fmt: str, k: int,
                 label: Any) -> None:
    """Write a batch's n-best lists (the formats are in ``cseq tag --help``)."""
    import json

    from cseq.io._streams import format_item, nbest_record
    parts = []
    results = iter(found)
    for item in items:
        if item.x is None:
            parts.append(format_item(item, None, None, fmt, label))
            continue
        r = next(results)
        shown = item.shown or item.x
        if fmt == "conll":
            cols = list(r.labels) + [["_"] * len(shown)] * (k - len(r.labels))
            parts.append("".join("\t".join(list(row) + [c[t] for c in cols]) + "\n"
                                 for t, row in enumerate(shown)) + "\n")
        elif fmt == "text":
            tokens = [row[0] for row in shown]
            parts.append("".join(" ".join(f"{w}/{lab}" for w, lab in zip(tokens, p)) + "\n"
                                 for p in r.labels) + "\n")
        else:
            record = nbest_record([row[0] for row in shown], r)
            parts.append(json.dumps(record, ensure_ascii=False) + "\n")
    out.write("".join(parts))


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``tag`` command and its options."""
    g = sub.add_parser(
        "tag", help="label a CoNLL, CoNLL-U or plain-text file",
        description="Label a file, streaming (constant memory). Output: CoNLL in, CoNLL "
        "out (input columns, then the label); CoNLL-U in, CoNLL-U out (the label in UPOS, "
        "or XPOS with --label-column xpos; everything else kept); plain text (one sentence "
        "per line) in, one sentence per line out as word/TAG. --output-format conll writes "
        "word<TAB>TAG lines, jsonl one JSON object per sentence.")
    g.add_argument("model", help="the tagger's model file (with --pipeline: the input file)")
    g.add_argument("input", nargs="?", default=None,
                   help="input file (- for standard input)")
    g.add_argument("-o", "--output", help="output file (default: standard output)")
    g.add_argument("--output-format", choices=["conll", "conllu", "text", "jsonl"],
                   default=None, help="default: the input's format")
    g.add_argument("--marginals", "--confidence", action="store_true",
                   help="add the probability of each predicted label (CRF, HMM and MEMM "
                   "models): a last CoNLL column; in JSON lines 'confidence', 'log_prob' "
                   "and 'entropy' of the sentence, and for BIO/BIOES labels 'spans' with "
                   "the probability of each")
    g.add_argument("--nbest", type=_int_at_least(1), metavar="K", default=None,
                   help="the K best labelings of each sentence, exactly, best first: "
                   "CoNLL output gets K label columns after the input columns (column i: the "
                   "i-th best; '_' where a sentence has fewer than K labelings); text output "
                   "one line per labeling and a blank line after each sentence; JSON lines "
                   "'labels' (the best) and 'nbest', a list of {labels, score, log_prob} "
                   "(log_prob for CRF, HMM and MEMM models); not with CoNLL-U output")
    g.add_argument("--constraints", choices=["bio", "iob2", "iob1", "bioes"], default=None,
                   help="only label sequences valid in this chunk scheme (bio: IOB2, or "
                   "BIOES when the labels have E-/S- prefixes): e.g. no I-X after O or "
                   "after B-Y, no sentence starting with I-X; with --nbest too")
    g.add_argument("--n-jobs", type=_n_jobs, default=1, help="threads (-1: all cores)")
    g.add_argument("--batch-tokens", type=_int_at_least(1), default=50_000,
                   help="tokens read, tagged and written at a time (default 50000)")
    _cluster_options(g, "tag")
    g.add_argument("--segmenter", metavar="SEG", default=None,
                   help="raw text in (paragraphs separated by blank lines): split it into "
                   "sentences, tokens and multiword tokens with this segmenter (cseq train "
                   "--segmenter), then tag the words; output CoNLL-U (default: # sent_id, "
                   "# text, multiword-token lines, SpaceAfter=No, the labels in UPOS or "
                   "--label-column, _ elsewhere), text or jsonl (with character offsets)")
    g.add_argument("--pipeline", metavar="NAME|FILE", default=None,
                   help="raw text in, with a pipeline shipped with cseq (en: UD English EWT, "
                   "UPOS) or a pipeline file of cseq pipeline train (its columns: UPOS, XPOS, "
                   "FEATS, LEMMA); the only file argument is then the input")
    g.add_argument("--batch-chars", type=_int_at_least(1), default=100_000,
                   help="raw text: characters segmented before the tagger runs on their "
                   "words (default 100000)")
    _reading_options(g, text=True, labeled=True, raw=True)
    g.set_defaults(func=_cmd_tag)
