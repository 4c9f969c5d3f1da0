"""The ``cseq`` command line: train, tag, eval, info and demo over CoNLL files.

Built on the public Python API only (estimators, templates, readers,
metrics).  Every command has ``--help``; bad arguments and bad files give a
one-line message on stderr and a non-zero exit code (2 for usage, 1 for
data and model errors).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from cseq.exceptions import CSeqError

__all__ = ["main"]


class _Progress:
    """One status line per iteration: on a terminal it rewrites itself, else silent."""

    def __init__(self, total: int, stream=sys.stderr) -> None:
        self.total = total
        self.stream = stream
        self.enabled = stream.isatty()
        self.start = time.perf_counter()

    def __call__(self, record: dict) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        it = record["iteration"]
        eta = elapsed / it * max(self.total - it, 0)
        parts = [f"iter {it}/{self.total}"]
        if "loss" in record:
            parts.append(f"loss {record['loss']:.5g}")
        if "errors" in record:
            parts.append(f"errors {record['errors']}")
        if "dev_accuracy" in record:
            parts.append(f"dev acc {100 * record['dev_accuracy']:.2f}%")
        parts.append(f"elapsed {elapsed:.1f}s")
        parts.append(f"eta <= {eta:.0f}s")
        self.stream.write("\r" + "  ".join(parts) + "\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")


def _read_labeled(path: str, args) -> tuple[list, list]:
    from cseq.conll import read_conll, read_conllu
    if _is_conllu(path, args):
        return read_conllu(path, label=args.label)
    return read_conll(path, sep=args.sep)


def _read_unlabeled(path: str, args) -> list:
    from cseq.conll import read_conll, read_conllu
    if _is_conllu(path, args):
        return read_conllu(path, label=None)[0]
    return read_conll(path, sep=args.sep, label_column=-1 if args.labeled else None)[0]


def _is_conllu(path: str, args) -> bool:
    fmt = getattr(args, "format", "auto")
    return fmt == "conllu" or (fmt == "auto" and str(path).endswith(".conllu"))


def _make_estimator(args):
    import cseq
    from cseq.templates import TemplateFeaturizer, Templates
    spec = args.template
    if spec in ("pos", "chunk", "ner"):
        templates = spec
    else:
        templates = Templates.from_file(spec)
    features = TemplateFeaturizer(templates, min_freq=args.min_freq)
    if args.algorithm == "crf":
        return cseq.CRF(c2=args.c2, max_iter=args.max_iter or 100, n_jobs=args.n_jobs,
                        features=features)
    return cseq.StructuredPerceptron(max_iter=args.max_iter or 10, random_state=args.seed,
                                     features=features)


def _cmd_train(args) -> int:
    X, y = _read_labeled(args.train, args)
    X_dev = y_dev = None
    if args.dev:
        X_dev, y_dev = _read_labeled(args.dev, args)
    est = _make_estimator(args)
    progress = _Progress(est.max_iter)
    t = time.perf_counter()
    try:
        est.fit(X, y, X_dev, y_dev, callback=progress)
    finally:
        progress.close()
    seconds = time.perf_counter() - t
    est.save(args.output)
    msg = (f"trained {type(est).__name__} on {sum(map(len, X))} tokens in {seconds:.1f}s "
           f"({est.n_iter_} iterations, {est.featurizer_.n_attributes} attributes, "
           f"{len(est.classes_)} labels)")
    if X_dev is not None:
        msg += f"; dev accuracy {100 * est.score(X_dev, y_dev):.2f}%"
    print(msg)
    print(f"model written to {args.output}")
    return 0


def _load(path: str):
    import cseq
    return cseq.load(path)


def _cmd_tag(args) -> int:
    from cseq.conll import write_conll
    est = _load(args.model)
    X = _read_unlabeled(args.input, args)
    labels = est.predict(X, n_jobs=args.n_jobs)
    marginals = None
    if args.marginals:
        if not hasattr(est, "predict_marginals"):
            raise CSeqError(f"{type(est).__name__} models give no marginals; use a CRF")
        index = {c: i for i, c in enumerate(est.classes_)}
        marginals = [m[np.arange(len(lab)), [index[c] for c in lab]]
                     for m, lab in zip(est.predict_marginals(X, n_jobs=args.n_jobs), labels)]
    out = args.output if args.output else sys.stdout
    write_conll(out, X, labels, marginals=marginals)
    return 0


def _cmd_eval(args) -> int:
    from cseq.metrics import classification_report
    est = _load(args.model)
    X, y = _read_labeled(args.test, args)
    pred = est.predict(X, n_jobs=args.n_jobs)
    scheme = None if args.scheme == "none" else args.scheme
    print(classification_report(y, pred, scheme=scheme))
    return 0


def _cmd_info(args) -> int:
    est = _load(args.model)
    print(f"estimator: {type(est).__name__}")
    print(f"parameters: {est.get_params()}")
    if getattr(est, "model_", None) is None:
        print("not fitted")
        return 0
    model, classes = est.model_, est.classes_
    print(f"labels ({len(classes)}): {' '.join(classes)}")
    print(f"attributes: {model.n_attributes}  state weights: {model.n_state}  "
          f"iterations: {est.n_iter_}")
    try:
        names = est.featurizer_.attribute_names()
    except CSeqError:
        names = None
    w, lab = model.state_weights, model.attr_labels
    attr_of = np.repeat(np.arange(model.n_attributes), np.diff(model.attr_ptr))
    for y, label in enumerate(classes):
        idx = np.flatnonzero(lab == y)
        top = idx[np.argsort(-w[idx], kind="stable")[:args.top]]
        shown = ", ".join(
            f"{names[attr_of[k]] if names else attr_of[k]} {w[k]:+.3f}" for k in top)
        print(f"top features for {label}: {shown}")
    width = max(len(c) for c in classes)
    print("transitions (row: previous label, column: next label):")
    print(" " * (width + 1) + " ".join(f"{c[:7]:>7}" for c in classes))
    for i, c in enumerate(classes):
        print(f"{c:>{width}} " + " ".join(f"{v:7.2f}" for v in model.transitions[i]))
    return 0


def _cmd_demo(args) -> int:
    import cseq
    from cseq.conll import read_conll
    from cseq.data import sample_path
    from cseq.templates import TemplateFeaturizer
    X, y = read_conll(sample_path(), sep="\t")
    n_train = len(X) * 4 // 5
    print(f"cseq {cseq.__version__}: POS tagging demo on {len(X)} sentences of UD English EWT "
          f"(CC BY-SA 4.0) shipped with cseq")
    print(f"training an averaged perceptron ('pos' templates) on {n_train} sentences "
          f"({sum(map(len, X[:n_train]))} tokens)...")
    t = time.perf_counter()
    est = cseq.StructuredPerceptron(max_iter=args.max_iter, random_state=0,
                                    features=TemplateFeaturizer("pos"))
    est.fit(X[:n_train], y[:n_train])
    print(f"trained in {time.perf_counter() - t:.2f}s")
    acc = est.score(X[n_train:], y[n_train:])
    print(f"held-out accuracy on {len(X) - n_train} sentences "
          f"({sum(map(len, X[n_train:]))} tokens): {100 * acc:.2f}%")
    sentence = args.sentence.split()
    tags = est.predict([[(w,) for w in sentence]])[0]
    print("tagged: " + " ".join(f"{w}/{t}" for w, t in zip(sentence, tags)))
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cseq", description="Train and apply sequence labelers "
                                "(CRF, averaged perceptron) on CoNLL files.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def reading(q, labeled_flag=False):
        q.add_argument("--format", choices=["auto", "conll", "conllu"], default="auto",
                       help="input format (auto: .conllu files are CoNLL-U)")
        q.add_argument("--label", choices=["upos", "xpos"], default="upos",
                       help="CoNLL-U column used as the label (default upos)")
        q.add_argument("--sep", default=None,
                       help="CoNLL column separator (default: any whitespace)")
        if labeled_flag:
            q.add_argument("--labeled", action="store_true",
                           help="the CoNLL input has a label column last; drop it")

    t = sub.add_parser("train", help="train a model on a CoNLL or CoNLL-U file")
    t.add_argument("train", help="training file")
    t.add_argument("--template", default="pos",
                   help="feature templates: pos, chunk, ner or a CRF++ template file")
    t.add_argument("--algorithm", choices=["crf", "perceptron"], default="crf")
    t.add_argument("--dev", help="development file, scored after every iteration")
    t.add_argument("-o", "--output", default="model.cseq", help="model file (model.cseq)")
    t.add_argument("--max-iter", type=int, default=None,
                   help="iterations (default 100 for crf, 10 for perceptron)")
    t.add_argument("--c2", type=float, default=1.0, help="CRF L2 strength (default 1.0)")
    t.add_argument("--min-freq", type=int, default=1, help="drop rarer attributes")
    t.add_argument("--n-jobs", type=int, default=1, help="threads (-1: all cores)")
    t.add_argument("--seed", type=int, default=0, help="perceptron shuffling seed")
    reading(t)
    t.set_defaults(func=_cmd_train)

    g = sub.add_parser("tag", help="label a CoNLL or CoNLL-U file, CoNLL out")
    g.add_argument("model")
    g.add_argument("input")
    g.add_argument("-o", "--output", help="output file (default stdout)")
    g.add_argument("--marginals", action="store_true",
                   help="add the probability of each label (CRF models)")
    g.add_argument("--n-jobs", type=int, default=1, help="threads (-1: all cores)")
    reading(g, labeled_flag=True)
    g.set_defaults(func=_cmd_tag)

    e = sub.add_parser("eval", help="score a model on a labeled file")
    e.add_argument("model")
    e.add_argument("test")
    e.add_argument("--scheme", choices=["none", "iob2", "iob1", "bioes", "iobes"],
                   default="none", help="chunk scheme for span F1 (default: per-label)")
    e.add_argument("--n-jobs", type=int, default=1, help="threads (-1: all cores)")
    reading(e)
    e.set_defaults(func=_cmd_eval)

    i = sub.add_parser("info", help="describe a model file")
    i.add_argument("model")
    i.add_argument("--top", type=int, default=5, help="features shown per label")
    i.set_defaults(func=_cmd_info)

    d = sub.add_parser("demo", help="train and evaluate a POS tagger on the bundled sample")
    d.add_argument("--max-iter", type=int, default=5, help="perceptron iterations (5)")
    d.add_argument("--sentence", default="The quick brown fox jumps over the lazy dog .",
                   help="sentence to tag at the end")
    d.set_defaults(func=_cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
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
