"""sklearn-crfsuite's ``metrics``: scikit-learn's classification metrics over flattened sequences.

Each ``flat_*`` function joins the label sequences of ``y_true`` and
``y_pred`` into one list of labels each and calls the scikit-learn function
of the same name with the other arguments unchanged (``labels``,
``average``, ``digits``, ...), as sklearn-crfsuite's do.  scikit-learn is
imported when one is called, so it is needed only then; it is not a
dependency of cseq.  :func:`sequence_accuracy_score` needs nothing.

For chunk (entity) scores, which count whole spans rather than tokens, see
:func:`cseq.metrics.chunk_f1`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any, Callable

__all__ = ["flat_accuracy_score", "flat_precision_score", "flat_recall_score", "flat_f1_score",
           "flat_fbeta_score", "flat_classification_report", "sequence_accuracy_score"]


def _sklearn_metrics():
    """``sklearn.metrics``, or an ImportError that says what to install."""
    try:
        from sklearn import metrics
    except ImportError as exc:
        raise ImportError("cseq.compat.sklearn_crfsuite.metrics' flat_* functions call "
                          "scikit-learn, which is not installed: pip install scikit-learn") from exc
    return metrics


def _flat(name: str) -> Callable[..., Any]:
    """The flattened-sequence version of ``sklearn.metrics.<name>``."""
    def metric(y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]],
               **kwargs: Any) -> Any:
        return getattr(_sklearn_metrics(), name)(list(chain.from_iterable(y_true)),
                                                 list(chain.from_iterable(y_pred)), **kwargs)
    metric.__name__ = metric.__qualname__ = f"flat_{name}"
    metric.__doc__ = (f"``sklearn.metrics.{name}`` of the flattened label sequences; keyword "
                      "arguments are passed on.")
    return metric


flat_accuracy_score = _flat("accuracy_score")
flat_precision_score = _flat("precision_score")
flat_recall_score = _flat("recall_score")
flat_f1_score = _flat("f1_score")


def flat_fbeta_score(y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]],
                     beta: float, **kwargs: Any) -> Any:
    """``sklearn.metrics.fbeta_score`` of the flattened label sequences.

    ``beta`` may be given by position, as in sklearn-crfsuite (scikit-learn
    takes it only by keyword).
    """
    return _sklearn_metrics().fbeta_score(list(chain.from_iterable(y_true)),
                                          list(chain.from_iterable(y_pred)), beta=beta, **kwargs)


def flat_classification_report(y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]],
                               labels: Sequence[str] | None = None, **kwargs: Any) -> Any:
    """``sklearn.metrics.classification_report`` of the flattened label sequences.

    ``labels`` may be given by position, as in sklearn-crfsuite.
    """
    return _sklearn_metrics().classification_report(list(chain.from_iterable(y_true)),
                                                    list(chain.from_iterable(y_pred)),
                                                    labels=labels, **kwargs)


def sequence_accuracy_score(y_true: Sequence[Sequence[str]],
                            y_pred: Sequence[Sequence[str]]) -> float:
    """The fraction of sequences whose labels are all right (0 for no sequences).

    >>> sequence_accuracy_score([["B", "I"], ["O"]], [["B", "I"], ["B"]])
    0.5
    """
    total = len(y_true)
    if not total:
        return 0.0
    return sum(list(t) == list(p) for t, p in zip(y_true, y_pred)) / total
