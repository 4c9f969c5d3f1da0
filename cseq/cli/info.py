"""The model-file commands: ``cseq info`` describes one, ``cseq import`` converts
a CRFsuite or CRF++ model into one, ``cseq export`` writes one as a CRFsuite model."""

from __future__ import annotations

import argparse

from cseq.cli.common import _int_at_least
from cseq.registry import LEARNERS, command_of


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


def _cmd_export(args: argparse.Namespace) -> int:
    import cseq
    est = cseq.load(args.model)
    cseq.to_crfsuite(est, args.output, boundaries="drop" if args.drop_boundaries else "refuse")
    print(f"{args.output}: a CRFsuite model with {len(est.classes_)} labels from the cseq "
          f"model {args.model}")
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``info``, ``import`` and ``export`` commands and their options."""
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

    x = sub.add_parser(
        "export", help="write a cseq model as a CRFsuite model file",
        description="Write a first-order cseq model trained on feature lists or dicts as a "
                    "CRFsuite model file, which python-crfsuite's Tagger (and crfsuite tag) "
                    "opens and tags with as cseq does (docs/migrating.md). Models with "
                    "templates, hashing or order 2 are refused, and so are start and end "
                    "weights, which CRFsuite has none of, unless --drop-boundaries.")
    x.add_argument("format", choices=["crfsuite"], help="the format to write")
    x.add_argument("model", help="the cseq model file")
    x.add_argument("-o", "--output", required=True, help="the CRFsuite model file to write")
    x.add_argument("--drop-boundaries", action="store_true",
                   help="write the model without its start and end weights (python-crfsuite's "
                        "labels may then differ from cseq's at the first and last tokens)")
    x.set_defaults(func=_cmd_export)
