"""``cseq train``: a model from a labelled file, in one run or one pass at a time
(``--resumable``, ``--resume``).

The learners of ``--algorithm`` are the commands of :mod:`cseq.registry`: a
learner's registration, beside its class, gives its name, default iterations
and which command-line options set which of its hyperparameters; no list of
learners is kept here.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from cseq._tagging import load_fitted
from cseq.cli.common import (_check_output_path, _cluster, _cluster_options, _int_at_least,
                             _n_jobs, _name, _read_labeled, _reading_options)
from cseq.cli.progress import _Progress
from cseq.exceptions import InputError, TrainingInterrupted
from cseq.registry import COMMANDS, Command, command_of, default_command
from cseq.features.presets import PRESET_CLUSTERS


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


def _template_choice(args: argparse.Namespace, X: list[Any], y: list[Any], fmt: str
                     ) -> str:
    """The preset for data of this shape, with a message saying why."""
    from cseq.evaluation.metrics import detect_scheme
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


def _learner_and_templates(args: argparse.Namespace, templates: Any, X: list[Any],
                           y: list[Any], fmt: str) -> Any:
    """Set ``args.algorithm`` (:func:`_algorithm`) and return the templates: the preset
    chosen from the data's shape when none was given and the learner reads templates."""
    if templates is None and (args.algorithm is None or COMMANDS[args.algorithm].templates):
        templates = _template_choice(args, X, y, fmt)
    args.algorithm = _algorithm(args, templates)
    return templates


def _algorithm(args: argparse.Namespace, templates: Any) -> str:
    """``--algorithm``, or when not given the preset's default learner
    (:func:`cseq.registry.default_command`; a template file's is the CRF)."""
    return args.algorithm or default_command(templates if isinstance(templates, str) else None)


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
    args.algorithm = _algorithm(args, templates)
    learner = COMMANDS[args.algorithm]
    params = _learner_params(args, templates)
    if learner.templates:
        # The featurizer reads the table and adds the cluster templates.
        params["features"] = TemplateFeaturizer(templates, min_freq=args.min_freq,
                                                clusters=_clusters_option(args, templates))
    elif args.clusters not in (None, "none"):
        raise InputError(f"--clusters does not apply to --algorithm {args.algorithm} "
                         "(it takes no templates)")
    elif args.template is not None:
        raise InputError(f"--template does not apply to --algorithm {args.algorithm} "
                         "(it reads the word, the first column, alone)")
    return learner.estimator(**params)


def _clusters_option(args: argparse.Namespace, templates: Any) -> str | None:
    """The word classes to train with: ``--clusters``, else the preset's
    (:data:`cseq.features.presets.PRESET_CLUSTERS`); None for ``--clusters none``."""
    if args.clusters is None:
        return PRESET_CLUSTERS.get(templates) if isinstance(templates, str) else None
    return None if args.clusters == "none" else args.clusters


def _learner_params(args: argparse.Namespace, templates: Any) -> dict[str, Any]:
    """The hyperparameters of ``--algorithm`` that its defaults and the given options set."""
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
    return params


def _options_of(learner: Command) -> str:
    """The learner's command-line options, e.g. ``--c2, --n-jobs``."""
    return ", ".join(opt for dest, opt in _LEARNER_OPTIONS.items() if dest in learner.options)


def _cmd_train(args: argparse.Namespace) -> int:
    from cseq.templates import PRESETS
    if args.segmenter is not None:
        return _train_segmenter(args)
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
    templates = _learner_and_templates(args, templates, X, y, fmt)
    est = _make_estimator(args, templates)
    _check_labels_vary(y, args)

    def fit(progress: _Progress) -> None:
        with _cluster(args) as client:
            if client is None:
                est.fit(X, y, X_dev, y_dev, callback=progress)
            else:
                import cseq.distributed as cd
                cd.fit(est, X, y, client=client, X_dev=X_dev, y_dev=y_dev, callback=progress)

    seconds, interrupted = _fit_shown(args, est._iterations(), fit)
    if interrupted is not None:
        return interrupted
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


def _fit_shown(args: argparse.Namespace, iterations: Any,
               fit: Callable[[_Progress], None]) -> tuple[float, int | None]:
    """Run ``fit(progress)`` under the progress bar, then show the warnings it raised.

    Returns the seconds it took and None, or, when Ctrl-C stopped it, the exit code of
    :func:`_interrupted` (which saved what was trained) in place of None.
    """
    progress = _Progress(iterations, quiet=args.quiet, verbose=args.verbose)
    t = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit(progress)
    except TrainingInterrupted as exc:
        progress.close()
        _show_warnings(caught)
        return time.perf_counter() - t, _interrupted(exc, args)
    finally:
        progress.close()
    _show_warnings(caught)
    return time.perf_counter() - t, None


#: Options of ``cseq train`` that a segmenter does not read (dest -> option string).
_NOT_FOR_SEGMENTER = {"template": "--template", "resumable": "--resumable", "resume": "--resume",
                      "unknown_label": "--unknown-label", "label_column": "--label-column",
                      "columns": "--columns", "sep": "--sep", "scheduler": "--scheduler",
                      "local_workers": "--local-workers", "clusters": "--clusters"}


def _train_segmenter(args: argparse.Namespace) -> int:
    """``--segmenter``: a segmenter (:class:`cseq.Segmenter`) from a CoNLL-U file, with the
    learner of ``--algorithm``, its progress, dev scores and model file."""
    from cseq.segment import Segmenter
    given = [opt for dest, opt in _NOT_FOR_SEGMENTER.items() if getattr(args, dest)]
    if args.format not in ("auto", "conllu") or args.min_freq != 1:
        given.append("--format" if args.format not in ("auto", "conllu") else "--min-freq")
    if given:
        raise InputError(f"{', '.join(given)} does not apply to --segmenter (it reads the "
                         "CoNLL-U text, tokens and multiword tokens)")
    _check_output_path(args.output, "the model", [args.train, args.dev])
    args.algorithm = _algorithm(args, None)
    params = _learner_params(args, None)
    segmenter = Segmenter(args.algorithm, args.segmenter, max_iter=params.pop("max_iter", None),
                          random_state=params.pop("random_state", 0), **params)
    source = sys.stdin if args.train == "-" else args.train
    seconds, interrupted = _fit_shown(
        args, segmenter.iterations(),
        lambda progress: segmenter.fit(source, args.dev, callback=progress))
    if interrupted is not None:
        return interrupted
    est = segmenter.estimator_
    _check_attributes(est, args)
    segmenter.save(args.output)
    msg = (f"trained a segmenter ({type(est).__name__}, {args.segmenter} features) in "
           f"{seconds:.1f}s ({est.n_iter_} iterations, {est.featurizer_.n_attributes} "
           f"features, {len(est.featurizer_.multiword)} multiword table entries)")
    if args.dev:
        scores = segmenter.score(args.dev)
        msg += "; dev F1 " + ", ".join(f"{k} {v:.2f}%" for k, v in scores.items())
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
        est = load_fitted(args.resume)
        if not est._can_partial_fit():
            command = command_of(est)
            trained = f" (--algorithm {command.name})" if command is not None else ""
            raise InputError(f"{args.resume} holds a {type(est).__name__}{trained}, which cannot "
                             f"continue training ({_commands(_resumable)} models can)")
    else:
        templates = _learner_and_templates(args, templates, X, y, fmt)
        if not COMMANDS[args.algorithm].resumable:
            raise InputError(f"--resumable trains one pass at a time: --algorithm "
                             f"{_commands(_resumable)}, not {args.algorithm}")
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
                    from cseq.evaluation.metrics import accuracy
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
    from cseq.evaluation.metrics import accuracy, chunk_f1, detect_scheme
    pred = est.predict(X, n_jobs=n_jobs)
    acc = f"accuracy {100 * accuracy(y, pred):.2f}%"
    scheme = detect_scheme({lab for seq in y for lab in seq})
    if scheme is None:
        return acc
    return f"span F1 {100 * chunk_f1(y, pred, scheme):.2f}% ({scheme}), token {acc}"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``train`` command and its options."""
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
    t.add_argument("--clusters", metavar="en|none|FILE", default=None,
                   help="word classes: 'en' for the English classes shipped with cseq (400,000 "
                   "words in 1,000 classes of the GloVe 6B vectors), a cluster file (cseq "
                   "clusters, Liang's wcluster), or 'none'; adds the cluster templates to "
                   "templates that use none. A file's table is kept in the model, 'en' by name "
                   "and digest. Default: " + ", ".join(f"'{c}' with the {p} preset" for p, c in
                                                       PRESET_CLUSTERS.items()) + ", else none")
    defaults = "; ".join(f"{name} with the preset{'s' if len(c.default_for) > 1 else ''} "
                         + " and ".join(", ".join(c.default_for).rsplit(", ", 1))
                         for name, c in COMMANDS.items() if c.default_for)
    t.add_argument("--algorithm", choices=list(COMMANDS), default=None,
                   help=f"the learner (default: {defaults + ', ' if defaults else ''}"
                   f"{default_command(None)} with a template file). {learners}")
    t.add_argument("--segmenter", nargs="?", const="alphabetic", default=None,
                   choices=("alphabetic", "nospace"),
                   help="train a segmenter (raw text to sentences, tokens and words) from "
                   "the CoNLL-U file's text, tokens and multiword tokens: character "
                   "features for alphabetic languages (default) or for languages written "
                   "without spaces (--segmenter nospace)")
    t.add_argument("--dev", help="development file, scored after every iteration")
    t.add_argument("-o", "--output", default="model.cseq", help="model file (model.cseq)")
    t.add_argument("--max-iter", type=_int_at_least(1), default=None,
                   help="iterations (default: " + ", ".join(
                       f"{v.max_iter} for {k}" for k, v in COMMANDS.items()
                       if v.max_iter is not None) + ")")
    t.add_argument("--c1", type=float, default=None,
                   help="CRF L1 strength (default 0, 0.1 with the chunk preset; > 0 trains by "
                   "OWL-QN, a sparse model; with --c2, elastic net)")
    t.add_argument("--c2", type=float, default=None,
                   help="CRF and MEMM L2 strength (default 1.0; crf uses 0.1 and 200 "
                   "iterations with the pos and chunk presets, crf-sgd 0.1 with pos)")
    t.add_argument("--C", dest="C", type=float, default=None,
                   help="structured SVM: weight of the hinge losses against 1/2 ||w||^2 "
                   "(default 1.0); pa: the aggressiveness, the largest step (default 1.0)")
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
    _reading_options(t)
    t.set_defaults(func=_cmd_train)
