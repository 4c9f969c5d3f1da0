"""What ``cseq tag`` and ``cseq serve`` share: a fitted model from its file,
the columns it reads, and the tagging options it honours.

Kept apart from both so that the service (:mod:`cseq.serve`) and the command
line (:mod:`cseq.cli`) import it and neither imports the other's insides.
"""

from __future__ import annotations

from typing import Any

from cseq.exceptions import InputError
from cseq.io.serialize import load

__all__ = ["check_tag_options", "load_fitted", "model_columns"]


def load_fitted(path: str) -> Any:
    """A fitted model from ``path``; an unfitted one is an error naming the file."""
    est = load(path)
    if est.model_ is None:
        raise InputError(f"{path} holds an unfitted {type(est).__name__}: it cannot tag "
                         "(train a model with cseq train)")
    return est


def model_columns(est: Any) -> tuple[int | None, int]:
    """Columns per token the model was trained on (None when its file does not
    say, or for feature lists) and the fewest its templates read."""
    featurizer = est.featurizer_
    templates = getattr(featurizer, "templates", None)
    return (getattr(featurizer, "n_columns_", None),
            templates.n_columns if templates is not None else 1)


def check_tag_options(est: Any, marginals: bool, nbest: int | None, prefix: str) -> None:
    """Refuse tagging options the model cannot honour or that do not combine
    (``cseq tag`` and ``cseq serve``; ``prefix`` is how the options are spelled,
    ``--`` on the command line)."""
    if marginals and not est.model_.probabilistic:
        raise InputError(f"{type(est).__name__} models give no marginals; use a CRF, an HMM "
                         "or a MEMM")
    if nbest is not None and marginals:
        raise InputError(f"{prefix}nbest and {prefix}marginals do not combine: {prefix}nbest "
                         "gives each labeling's log-probability")
