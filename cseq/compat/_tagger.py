"""What the NLTK and spaCy adapters share: a fitted estimator from an object or a path.

:mod:`cseq.compat.nltk` and :mod:`cseq.compat.spacy` tag with a cseq model
given either as a fitted estimator or as the path of a cseq model file.
"""

from __future__ import annotations

import os
from typing import Any

from cseq.learners.base import ChainEstimator
from cseq.exceptions import InputTypeError
from cseq.io.serialize import load

__all__ = ["fitted_estimator"]


def fitted_estimator(model: Any) -> ChainEstimator:
    """``model`` if it is a fitted cseq estimator, or the estimator saved at the path ``model``.

    Raises
    ------
    InputTypeError
        ``model`` is neither a cseq estimator nor a path.
    NotFittedError
        The estimator is not fitted.
    ModelFormatError, OSError
        The file is not a cseq model, or cannot be read (:func:`cseq.load`).
    """
    if isinstance(model, (str, bytes, os.PathLike)):
        model = load(model)
    if not isinstance(model, ChainEstimator):
        hint = (" (for a cseq.compat.sklearn_crfsuite.CRF, pass its estimator_)"
                if hasattr(model, "estimator_") else "")
        raise InputTypeError("expected a fitted cseq estimator or the path of a cseq model "
                             f"file, got {type(model).__name__}{hint}")
    model._check_fitted()
    return model
