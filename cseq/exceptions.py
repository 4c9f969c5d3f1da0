"""Exceptions raised by cseq.

Every error cseq raises on purpose derives from :class:`CSeqError`, and also
from the built-in type a caller would expect (``ValueError`` or ``TypeError``),
so ``except ValueError`` keeps working.
"""

__all__ = [
    "CSeqError",
    "InputError",
    "InputTypeError",
    "NotFittedError",
    "ModelFormatError",
    "ConvergenceError",
    "ConvergenceWarning",
    "TrainingInterrupted",
]


class CSeqError(Exception):
    """Base class of every error raised by cseq."""


class InputError(CSeqError, ValueError):
    """Input data has the right types but invalid content (shapes, lengths, values)."""


class InputTypeError(CSeqError, TypeError):
    """Input data has the wrong type (container, element or dtype)."""


class NotFittedError(CSeqError, ValueError):
    """A method that needs a trained model was called before ``fit``."""


class ModelFormatError(CSeqError, ValueError):
    """A model file or byte string is truncated, corrupted or of an unknown version."""


class ConvergenceError(CSeqError, ValueError):
    """Training could not make progress (for example, non-finite objective)."""


class ClusterError(CSeqError, RuntimeError):
    """A Dask cluster cannot run cseq's work (:mod:`cseq.distributed`): a worker
    without cseq, or with another version of it, no worker at all, or workers
    that keep dying while they run a task."""


class ConvergenceWarning(UserWarning):
    """Training stopped at ``max_iter`` before its convergence test was met.

    The model is usable (it holds the last iterate); more iterations, or a
    larger ``tol``, would let the optimizer finish.
    """


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C (KeyboardInterrupt) during ``fit``, with what was trained so far.

    A ``KeyboardInterrupt``, so code that stops on Ctrl-C still does.  The
    estimator that was being fitted stays unfitted (it cannot be saved).

    Attributes
    ----------
    estimator : estimator or None
        A fitted copy with the weights of the last completed iteration
        (``n_iter_`` of them), or None if no iteration completed or the
        learner keeps no snapshot.
    """

    def __init__(self, estimator: object | None) -> None:
        super().__init__("training interrupted")
        self.estimator = estimator
