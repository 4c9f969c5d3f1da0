"""The ``cseq`` command line: train, tag, serve, eval, info and demo.

Built on the public Python API (estimators, templates, readers, metrics) and
the streaming readers and writers of :mod:`cseq._streams`.  Every command has
``--help``; bad arguments give a usage message and exit code 2, bad files and
models a one-line message naming the file (and line) and exit code 1.

The learners of ``cseq train --algorithm`` are the commands of
:mod:`cseq.registry`: a learner's registration, beside its class, gives its
name, default iterations and which command-line options set which of its
hyperparameters; no list of learners is kept here.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from cseq.exceptions import CSeqError, InputError, TrainingInterrupted
from cseq.registry import COMMANDS, LEARNERS, Command, command_of

__all__ = ["main"]


#: Hyperparameter options of ``cseq train`` (argparse dest -> option string).
_LEARNER_OPTIONS = {"c1": "--c1", "c2": "--c2", "C": "--C", "n_jobs": "--n-jobs",
                    "seed": "--seed", "order": "--order", "early_stopping": "--early-stopping",
                    "patience": "--patience"}

_PRESET_HELP = ("Presets: 'pos' reads column 0 (the word); 'chunk' reads columns 0 (word) "
                "and 1 (POS tag); 'ner' reads column 0 (the word)")


def _commands(have: Callable[[Command], bool]) -> str:
    """The ``--algorithm`` names of the commands that ``have``, e.g. ``crf, perceptron``."""
    return ", ".join(name for name, command in COMMANDS.items() if have(command))


def _resumable(command: Command) -> bool:
    return command.resumable


def _partial_labels(command: Command) -> bool:
    """Whether the command's learner trains on partially labelled sequences (``None`` labels)."""
    return command.estimator._partial_labels


# ----------------------------------------------------------------------------
# progress


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


# ----------------------------------------------------------------------------
# reading


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
    from cseq._streams import open_reader
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


def _model_columns(est: Any) -> tuple[int | None, int]:
    """Columns per token the model was trained on (None when its file does not
    say, or for feature lists) and the fewest its templates read."""
    featurizer = est.featurizer_
    templates = getattr(featurizer, "templates", None)
    return (getattr(featurizer, "n_columns_", None),
            templates.n_columns if templates is not None else 1)


def _check_columns(est: Any, width: int, where: str, fmt: str, labeled_flag: bool) -> None:
    """Refuse input whose number of columns is not what the model was trained on."""
    trained, need = _model_columns(est)
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


# ----------------------------------------------------------------------------
# commands


def _template_choice(args: argparse.Namespace, X: list[Any], y: list[Any], fmt: str
                     ) -> str:
    """The preset for data of this shape, with a message saying why."""
    from cseq.metrics import detect_scheme
    width = len(X[0][0])
    labels = {lab for seq in y[:2000] for lab in seq if lab is not None}
    if fmt == "conllu" or width == 1:
        name = "ner" if detect_scheme(labels) else "pos"
        why = f"one input column{' and BIO labels' if name == 'ner' else ''}"
    else:
        name = "chunk"
        why = f"{width} input columns (word, POS tag, ...)"
    print(f"cseq train: no --template given: using the '{name}' preset ({why}); "
          "pass --template to choose", file=sys.stderr)
    return name


def _templates(spec: str) -> Any:
    from cseq.templates import PRESETS, Templates
    if spec in PRESETS:
        return spec
    if not os.path.exists(spec) and re.fullmatch(r"[\w-]+", spec):
        raise InputError(f"unknown template preset {spec!r} and no such file; presets are "
                         f"{', '.join(PRESETS)}")
    return Templates.from_file(spec)


def _make_estimator(args: argparse.Namespace, templates: Any) -> Any:
    """The estimator of ``--algorithm`` with the options its command maps."""
    from cseq.templates import TemplateFeaturizer
    learner = COMMANDS[args.algorithm]
    params: dict[str, Any] = dict(learner.defaults)
    if isinstance(templates, str):
        params.update(learner.preset_defaults.get(templates, {}))
    for dest, option in _LEARNER_OPTIONS.items():
        value = getattr(args, dest)
        if value is None:
            continue
        if dest not in learner.options:
            takes = _options_of(learner)
            raise InputError(f"{option} does not apply to --algorithm {args.algorithm} (it "
                             f"takes {takes or 'no learner option'})")
        params[learner.options[dest]] = value
    params.update(learner.fixed)
    if args.patience is not None and not args.early_stopping:
        raise InputError("--patience applies only with --early-stopping")
    if args.early_stopping and not args.dev:
        raise InputError("--early-stopping needs --dev FILE: the development set scored after "
                         "every iteration")
    if learner.max_iter is not None:
        params["max_iter"] = args.max_iter if args.max_iter is not None \
            else params.get("max_iter", learner.max_iter)
    elif args.max_iter is not None:
        raise InputError(f"--max-iter does not apply to --algorithm {args.algorithm}")
    if learner.templates:
        params["features"] = TemplateFeaturizer(templates, min_freq=args.min_freq)
    elif args.template is not None:
        raise InputError(f"--template does not apply to --algorithm {args.algorithm} "
                         "(it reads the word, the first column, alone)")
    return learner.estimator(**params)


def _options_of(learner: Command) -> str:
    """The learner's command-line options, e.g. ``--c2, --n-jobs``."""
    return ", ".join(opt for dest, opt in _LEARNER_OPTIONS.items() if dest in learner.options)


def _check_output_path(path: str, what: str, inputs: list[str | None]) -> None:
    """Fail before any work if ``path`` cannot be written or is one of ``inputs``.

    Outputs are written to a temporary file beside the target and renamed
    (:func:`cseq._files.replacing`), so the target's directory must be
    writable; an existing FIFO or device is written in place instead.
    """
    from cseq._files import refuse_inputs
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


def _cmd_train(args: argparse.Namespace) -> int:
    from cseq.templates import PRESETS
    # --resume MODEL -o MODEL is allowed: the model is read whole before the file is replaced.
    template_file = args.template if args.template not in PRESETS else None
    _check_output_path(args.output, "the model", [args.train, args.dev, template_file])
    templates = _templates(args.template) if args.template is not None else None
    X, y, fmt = _read_labeled(args.train, args)
    if args.unknown_label is not None:
        # Partially labelled training data: that label string means "not known".
        y = [[None if lab == args.unknown_label else lab for lab in seq] for seq in y]
    X_dev = y_dev = None
    if args.dev:
        X_dev, y_dev, _ = _read_labeled(args.dev, args)
    if args.resumable or args.resume is not None:
        return _train_in_passes(args, templates, X, y, fmt, X_dev, y_dev)
    if templates is None and COMMANDS[args.algorithm].templates:
        templates = _template_choice(args, X, y, fmt)
    est = _make_estimator(args, templates)
    _check_labels_vary(y, args)
    progress = _Progress(est._iterations(), quiet=args.quiet, verbose=args.verbose)
    t = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught, _cluster(args) as client:
            warnings.simplefilter("always")
            if client is None:
                est.fit(X, y, X_dev, y_dev, callback=progress)
            else:
                import cseq.distributed as cd
                cd.fit(est, X, y, client=client, X_dev=X_dev, y_dev=y_dev, callback=progress)
    except TrainingInterrupted as exc:
        progress.close()
        _show_warnings(caught)
        return _interrupted(exc, args)
    finally:
        progress.close()
    _show_warnings(caught)
    seconds = time.perf_counter() - t
    _check_attributes(est, args)
    est.save(args.output)
    best = est.best_iteration_
    kept = f", the best dev score's iteration {best} kept" if best is not None else ""
    msg = (f"trained {type(est).__name__} on {sum(map(len, X))} tokens in {seconds:.1f}s "
           f"({est.n_iter_} iterations{kept}, {est.featurizer_.n_attributes} attributes, "
           f"{len(est.classes_)} labels)")
    if X_dev is not None:
        msg += "; dev " + _summary(est, X_dev, y_dev, args.n_jobs or 1)
    print(msg)
    print(f"model written to {args.output}")
    return 0


def _train_in_passes(args: argparse.Namespace, templates: Any, X: list[Any], y: list[Any],
                     fmt: str, X_dev: list[Any] | None, y_dev: list[Any] | None) -> int:
    """``--resumable`` and ``--resume``: one ``partial_fit`` per pass, the state kept in the file."""
    if args.early_stopping:
        raise InputError("--early-stopping does not combine with --resumable or --resume")
    if args.resume is not None:
        given = [opt for dest, opt in _LEARNER_OPTIONS.items() if getattr(args, dest) is not None]
        if args.template is not None:
            given.append("--template")
        if given:
            raise InputError(f"--resume continues {args.resume} with its own settings: "
                             f"{', '.join(given)} cannot change them")
        est = _load(args.resume)
        if not est._can_partial_fit():
            command = command_of(est)
            trained = f" (--algorithm {command.name})" if command is not None else ""
            raise InputError(f"{args.resume} holds a {type(est).__name__}{trained}, which cannot "
                             f"continue training ({_commands(_resumable)} models can)")
    else:
        if not COMMANDS[args.algorithm].resumable:
            raise InputError(f"--resumable trains one pass at a time: --algorithm "
                             f"{_commands(_resumable)}, not {args.algorithm}")
        if templates is None and COMMANDS[args.algorithm].templates:
            templates = _template_choice(args, X, y, fmt)
        est = _make_estimator(args, templates)
        # Not for --resume: a batch of one label may continue a model that has more.
        _check_labels_vary(y, args)
    passes = args.max_iter if args.max_iter is not None else est._iterations()
    progress = _Progress(passes, quiet=args.quiet, verbose=args.verbose)
    t = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for k in range(passes):
                est.partial_fit(X, y)
                record: dict[str, Any] = {"iteration": k + 1}
                if X_dev is not None:
                    from cseq.metrics import accuracy
                    record["dev_accuracy"] = accuracy(y_dev, est.predict(X_dev))
                progress(record)
    except KeyboardInterrupt:
        progress.close()
        print("cseq train: interrupted: nothing saved (the model file of the last run, if "
              "any, is unchanged)", file=sys.stderr)
        return 130
    finally:
        progress.close()
    _show_warnings(caught)
    _check_attributes(est, args)
    est.save(args.output)
    print(f"trained {type(est).__name__} on {sum(map(len, X))} tokens in "
          f"{time.perf_counter() - t:.1f}s ({passes} passes by partial_fit, "
          f"{est.featurizer_.n_attributes} attributes, {len(est.classes_)} labels)"
          + (f"; dev {_summary(est, X_dev, y_dev, 1)}" if X_dev is not None else ""))
    print(f"model written to {args.output}; cseq train --resume {args.output} continues it")
    return 0


# Degenerate models: one label, or no attribute, label every token alike.  Data
# that gives one is nearly always the wrong file, --format or --label-column,
# so it is refused unless --allow-degenerate says it is meant (a placeholder
# model, a test of a pipeline).
_DEGENERATE = "pass --allow-degenerate to train such a model anyway"


def _check_labels_vary(y: list[Any], args: argparse.Namespace) -> None:
    """Refuse training labels of fewer than two values (unless --allow-degenerate)."""
    labels = sorted({lab for seq in y for lab in seq if lab is not None})
    if len(labels) < 2 and not args.allow_degenerate:
        which = f"one label, {labels[0]!r}" if labels else "no known label"
        raise InputError(f"{_name(args.train)}: the training data has {which}: a model of it "
                         "gives every token that label; check --label-column and --format, "
                         f"or {_DEGENERATE}")


def _check_attributes(est: Any, args: argparse.Namespace) -> None:
    """Refuse to save a trained model without attributes (unless --allow-degenerate)."""
    if est.featurizer_.n_attributes == 0 and not args.allow_degenerate:
        raise InputError(f"training on {_name(args.train)} gave no attribute (--min-freq "
                         f"{args.min_freq} may drop every one): the model would label every "
                         f"token alike; nothing saved; {_DEGENERATE}")


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Warnings from training (e.g. ConvergenceWarning) as one line each, command named."""
    for w in caught:
        print(f"cseq train: warning: {w.message} ({w.category.__name__})", file=sys.stderr)


def _interrupted(exc: TrainingInterrupted, args: argparse.Namespace) -> int:
    partial = exc.estimator
    if partial is None:
        print("cseq train: interrupted before an iteration completed: nothing saved",
              file=sys.stderr)
    elif args.save_on_interrupt:
        partial.save(args.output)
        print(f"cseq train: interrupted: the model after iteration {partial.n_iter_} "
              f"written to {args.output}", file=sys.stderr)
    else:
        print(f"cseq train: interrupted after iteration {partial.n_iter_}: nothing saved "
              "(--save-on-interrupt saves the last completed iteration)", file=sys.stderr)
    return 130


def _summary(est: Any, X: list[Any], y: list[Any], n_jobs: int) -> str:
    from cseq.metrics import accuracy, chunk_f1, detect_scheme
    pred = est.predict(X, n_jobs=n_jobs)
    acc = f"accuracy {100 * accuracy(y, pred):.2f}%"
    scheme = detect_scheme({lab for seq in y for lab in seq})
    if scheme is None:
        return acc
    return f"span F1 {100 * chunk_f1(y, pred, scheme):.2f}% ({scheme}), token {acc}"


def _load(path: str) -> Any:
    """A fitted model from ``path``; an unfitted one is an error naming the file."""
    import cseq
    est = cseq.load(path)
    if est.model_ is None:
        raise InputError(f"{path} holds an unfitted {type(est).__name__}: it cannot tag "
                         "(train a model with cseq train)")
    return est


def _check_tag_options(est: Any, marginals: bool, nbest: int | None, prefix: str) -> None:
    """Refuse tagging options the model cannot honour or that do not combine
    (``cseq tag`` and ``cseq serve``; ``prefix`` is how the options are spelled,
    ``--`` on the command line)."""
    if marginals and not est.model_.probabilistic:
        raise InputError(f"{type(est).__name__} models give no marginals; use a CRF, an HMM "
                         "or a MEMM")
    if nbest is not None and marginals:
        raise InputError(f"{prefix}nbest and {prefix}marginals do not combine: {prefix}nbest "
                         "gives each labeling's log-probability")


def _cmd_tag(args: argparse.Namespace) -> int:
    from cseq._streams import check_labels, open_output, open_reader
    if args.output is not None:
        _check_output_path(args.output, "the output", [args.input, args.model])
    est = _load(args.model)
    templates = getattr(est.featurizer_, "templates", None)
    n_cols = getattr(est.featurizer_, "n_columns_", None) or (
        templates.n_columns if templates is not None else None)
    _check_tag_options(est, args.marginals, args.nbest, "--")
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


def _tag_stream(est: Any, items: Any, out: IO[str], args: argparse.Namespace, fmt_in: str,
                fmt_out: str, label: Any, predict: Callable[[list[Any]], Any] | None = None
                ) -> None:
    """Read, tag and write batches of about ``--batch-tokens`` tokens."""
    from cseq._streams import write_items
    from cseq.probability import annotate
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

    from cseq._streams import format_item, nbest_record
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


def _name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _cmd_serve(args: argparse.Namespace) -> int:
    from cseq.serve import serve
    if args.port > 65535:
        raise InputError(f"--port must be at most 65535, got {args.port}")
    if not 0 < args.timeout < 1e6:  # also NaN and inf, which no timer takes
        raise InputError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    return serve(args.model, args.host, args.port, max_bytes=args.max_bytes,
                 max_queue=args.max_queue, max_connections=args.max_connections,
                 workers=args.workers, max_batch_tokens=args.max_batch_tokens,
                 timeout=args.timeout)


def _cmd_eval(args: argparse.Namespace) -> int:
    from cseq.metrics import chunk_scores, classification_report, detect_scheme
    if args.report:
        _check_output_path(args.report, "the report", [args.model, args.test])
    est = _load(args.model)
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


def _cmd_info(args: argparse.Namespace) -> int:
    import numpy as np
    import cseq
    est = cseq.load(args.model)
    command = command_of(est)
    print(f"learner: {command.name if command is not None else '?'} ({type(est).__name__})")
    params = est.get_params(deep=False)
    features = params.pop("features", None)
    print("parameters: " + ", ".join(f"{k}={v!r}" for k, v in params.items()))
    if features is not None:
        print(f"features: {features!r}")
    if est.model_ is None:
        print("not fitted")
        return 0
    model, classes = est.model_, est.classes_
    n_cols = getattr(est.featurizer_, "n_columns_", None)
    if n_cols is not None:
        print(f"input columns: {n_cols}")
    print(f"labels ({len(classes)}): {' '.join(classes)}")
    L = len(classes)
    print(f"order: {model.order} (label bigrams"
          + (f" and trigrams: {L ** 3} trigram weights)" if model.order == 2 else ")"))
    n_zero = int(np.sum(model.state_weights == 0.0))
    # What the learner counts besides (registry.Learner.info: the CRF, the weights it pruned).
    counted = "".join(f"; {getattr(est, name)} {what}"
                      for name, what in LEARNERS[type(est).__name__].info.items())
    print(f"attributes: {model.n_attributes}  state weights: {model.n_state} ({n_zero} zero"
          f"{counted})  iterations: {est.n_iter_}")
    for label, feats in est.top_features(k=args.top).items():
        shown = ", ".join(f"{name} {w:+.3f}" for name, w in feats)
        print(f"top features for {label}: {shown}")
    width = max(len(c) for c in classes)
    print("transitions (row: previous label, column: next label):")
    print(" " * (width + 1) + " ".join(f"{c[:7]:>7}" for c in classes))
    for c, row in est.transitions_.items():
        print(f"{c:>{width}} " + " ".join(f"{v:7.2f}" for v in row.values()))
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    import cseq
    if args.format == "crfsuite":
        est = cseq.from_crfsuite(args.model)
    else:
        est = cseq.from_crfpp(args.model, cost_factor=args.cost_factor, encoding=args.encoding)
    est.save(args.output)
    print(f"{args.output}: a cseq CRF with {len(est.classes_)} labels and "
          f"{est.featurizer_.n_attributes} attributes from the {args.format} model {args.model}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    import cseq
    from cseq.conll import read_conll
    from cseq.data import train_path
    if args.output:
        _check_output_path(args.output, "the model", [str(train_path())])
    from cseq.templates import TemplateFeaturizer
    X, y = read_conll(train_path(), sep="\t")
    n_train = len(X) * 4 // 5
    print(f"cseq {cseq.__version__}: POS tagging demo on the {len(X)} training sentences of "
          f"UD English EWT (CC BY-SA 4.0) shipped with cseq")
    print(f"training an averaged perceptron ('pos' templates, {args.max_iter} passes) on the "
          f"first {n_train} sentences ({sum(map(len, X[:n_train]))} tokens)...")
    t = time.perf_counter()
    est = cseq.StructuredPerceptron(max_iter=args.max_iter, random_state=0,
                                    features=TemplateFeaturizer("pos"))
    est.fit(X[:n_train], y[:n_train])
    print(f"trained in {time.perf_counter() - t:.2f}s")
    acc = est.score(X[n_train:], y[n_train:])
    print(f"held-out accuracy on the other {len(X) - n_train} sentences "
          f"({sum(map(len, X[n_train:]))} tokens): {100 * acc:.2f}%")
    sentence = args.sentence.split()
    tags = est.predict([[(w,) for w in sentence]])[0]
    print("tagged: " + " ".join(f"{w}/{t}" for w, t in zip(sentence, tags)))
    if args.output:
        est.save(args.output)
        print(f"model written to {args.output} (tag your text: cseq tag {args.output} FILE)")
    return 0


# ----------------------------------------------------------------------------
# arguments


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


def _parser() -> argparse.ArgumentParser:
    from cseq import __version__
    p = argparse.ArgumentParser(
        prog="cseq", description="Train and apply sequence labelers (CRF, averaged "
        "perceptron) on CoNLL, CoNLL-U and plain-text files.")
    p.add_argument("--version", action="version", version=f"cseq {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def reading(q: argparse.ArgumentParser, *, text: bool = False, labeled: bool = False
                ) -> None:
        formats = ["auto", "conll", "conllu"] + (["text"] if text else [])
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

    learners = "; ".join(
        f"{k}: {v.description}" + (f" (options {_options_of(v)})" if v.options else "")
        for k, v in COMMANDS.items())
    t = sub.add_parser(
        "train", help="train a model on a CoNLL or CoNLL-U file",
        description="Train a model. The label is the last CoNLL column (or the CoNLL-U UPOS "
        "column); the other columns are the model's input (CoNLL-U: the FORM). "
        + _PRESET_HELP + ".")
    t.add_argument("train", help="training file (- for standard input)")
    t.add_argument("--template", default=None,
                   help="feature templates: pos, chunk, ner or a CRF++ template file; "
                   "default: chosen from the data's shape (and said so). " + _PRESET_HELP)
    t.add_argument("--algorithm", choices=list(COMMANDS), default="crf", help=learners)
    t.add_argument("--dev", help="development file, scored after every iteration")
    t.add_argument("-o", "--output", default="model.cseq", help="model file (model.cseq)")
    t.add_argument("--max-iter", type=_int_at_least(1), default=None,
                   help="iterations (default: " + ", ".join(
                       f"{v.max_iter} for {k}" for k, v in COMMANDS.items()
                       if v.max_iter is not None) + ")")
    t.add_argument("--c1", type=float, default=None,
                   help="CRF L1 strength (default 0; > 0 trains by OWL-QN, a sparse model; "
                   "with --c2, elastic net)")
    t.add_argument("--c2", type=float, default=None,
                   help="CRF and MEMM L2 strength (default 1.0; crf and crf-sgd use 0.1 with "
                   "the pos preset, and crf 200 iterations)")
    t.add_argument("--C", dest="C", type=float, default=None,
                   help="structured SVM: weight of the hinge losses against 1/2 ||w||^2 "
                   "(default 0.1); pa: the aggressiveness, the largest step (default 1.0)")
    t.add_argument("--early-stopping", action="store_true", default=None,
                   help="score --dev after every iteration, stop after --patience iterations "
                   "without a better accuracy and keep the best iteration")
    t.add_argument("--patience", type=_int_at_least(1), default=None,
                   help="with --early-stopping: iterations without improvement before "
                   "stopping (default: " + ", ".join(
                       f"{v.estimator().patience} for {k}"
                       for k, v in COMMANDS.items() if "patience" in v.options) + ")")
    t.add_argument("--min-freq", type=_int_at_least(1), default=1,
                   help="drop attributes seen fewer times (default 1)")
    t.add_argument("--n-jobs", type=_n_jobs, default=None, help="threads (-1: all cores)")
    t.add_argument("--seed", type=_int_at_least(0), default=None,
                   help="seed of the order in which training sentences are visited "
                   "(default 0)")
    t.add_argument("--order", type=int, choices=(1, 2), default=None,
                   help="Markov order of the chain: 2 adds label-trigram transitions "
                        f"({_commands(lambda c: 'order' in c.options)}; default 1)")
    t.add_argument("--unknown-label", metavar="STR", default=None,
                   help="a training label equal to STR (e.g. _) is not known: train on the "
                        f"partially labelled sentences ({_commands(_partial_labels)})")
    t.add_argument("--resumable", action="store_true",
                   help=f"train one pass at a time by partial_fit ({_commands(_resumable)}), "
                   "so that the model file keeps the training state and --resume continues it")
    t.add_argument("--resume", metavar="MODEL", default=None,
                   help="continue training MODEL (written with --resumable or by partial_fit) "
                   "for --max-iter more passes over FILE, with MODEL's own settings; FILE may "
                   "bring new labels and attributes")
    t.add_argument("--save-on-interrupt", action="store_true",
                   help="on Ctrl-C, save the model of the last completed iteration")
    t.add_argument("--allow-degenerate", action="store_true",
                   help="train and save a model even if the data has one label or gives no "
                   "attribute (such a model labels every token alike); without it such data "
                   "is refused, as it nearly always means the wrong file, --format or "
                   "--label-column")
    _cluster_options(t, "train")
    shown = t.add_mutually_exclusive_group()
    shown.add_argument("--quiet", action="store_true", help="no progress")
    shown.add_argument("--verbose", action="store_true", help="a progress line per iteration")
    reading(t)
    t.set_defaults(func=_cmd_train)

    g = sub.add_parser(
        "tag", help="label a CoNLL, CoNLL-U or plain-text file",
        description="Label a file, streaming (constant memory). Output: CoNLL in, CoNLL "
        "out (input columns, then the label); CoNLL-U in, CoNLL-U out (the label in UPOS, "
        "or XPOS with --label-column xpos; everything else kept); plain text (one sentence "
        "per line) in, one sentence per line out as word/TAG. --output-format conll writes "
        "word<TAB>TAG lines, jsonl one JSON object per sentence.")
    g.add_argument("model")
    g.add_argument("input", help="input file (- for standard input)")
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
    reading(g, text=True, labeled=True)
    g.set_defaults(func=_cmd_tag)

    v = sub.add_parser(
        "serve", help="a tagging service over HTTP (JSON in and out)",
        description="Serve a model over HTTP/1.1: POST /tag with {\"tokens\": [...]} or "
        "{\"sentences\": [[...], ...]} and the options of cseq tag (\"marginals\", "
        "\"nbest\", \"constraints\"); GET /health; POST /reload (or SIGHUP) loads MODEL "
        "again and swaps it in whole. SIGTERM or Ctrl-C answers the requests in flight, "
        "then exits 0. The first line on standard output gives the address (--port 0: a "
        "free port). See docs/production.md.")
    v.add_argument("model")
    v.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    v.add_argument("--port", type=_int_at_least(0), default=8080,
                   help="port (default 8080; 0: a free port, printed)")
    v.add_argument("--max-bytes", type=_int_at_least(1), default=1 << 20,
                   help="largest request body (default 1048576): larger gets 413")
    v.add_argument("--max-queue", type=_int_at_least(1), default=256,
                   help="requests queued or being tagged (default 256): more get 503 at once")
    v.add_argument("--max-connections", type=_int_at_least(1), default=512,
                   help="open connections (default 512): more get 503 and are closed")
    v.add_argument("--workers", type=_int_at_least(1), default=1,
                   help="tagging threads (default 1: with the GIL, more rarely helps)")
    v.add_argument("--max-batch-tokens", type=_int_at_least(1), default=1000,
                   help="tokens of queued requests tagged in one call (default 1000)")
    v.add_argument("--timeout", type=float, default=30.0,
                   help="seconds a client has to send a request, and that an idle "
                   "kept-alive connection stays open (default 30)")
    v.set_defaults(func=_cmd_serve)

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
    reading(e)
    e.set_defaults(func=_cmd_eval)

    i = sub.add_parser("info", help="describe a model file")
    i.add_argument("model")
    i.add_argument("--top", type=_int_at_least(0), default=5, help="features shown per label")
    i.set_defaults(func=_cmd_info)

    m = sub.add_parser(
        "import", help="convert a CRFsuite or CRF++ model into a cseq model file",
        description="Read a CRFsuite model file (python-crfsuite, sklearn-crfsuite) or a CRF++ "
                    "text model (crf_learn -t writes model.txt) and save it as a cseq model "
                    "file that tags as CRFsuite or crf_test does (docs/migrating.md). A CRF++ "
                    "model keeps its templates: cseq tag reads the columns crf_test reads.")
    m.add_argument("format", choices=["crfsuite", "crfpp"], help="the model's library")
    m.add_argument("model", help="the model file (for CRF++, the text model model.txt)")
    m.add_argument("-o", "--output", required=True, help="the cseq model file to write")
    m.add_argument("--cost-factor", type=float, default=1.0,
                   help="CRF++: crf_test's -c, the factor of every score (1.0)")
    m.add_argument("--encoding", default="utf-8",
                   help="CRF++: the encoding of the model's strings (utf-8)")
    m.set_defaults(func=_cmd_import)

    d = sub.add_parser("demo", help="train and evaluate a POS tagger on the bundled EWT data")
    d.add_argument("--max-iter", type=_int_at_least(1), default=5,
                   help="perceptron iterations (5)")
    d.add_argument("--sentence", default="The quick brown fox jumps over the lazy dog .",
                   help="sentence to tag at the end")
    d.add_argument("-o", "--output", help="also save the demo's tagger to this model file")
    d.set_defaults(func=_cmd_demo)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
