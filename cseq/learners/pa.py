"""The passive-aggressive learner (Crammer et al. 2006) for linear chains, as CRFsuite has it."""

from __future__ import annotations

from typing import Any

from cseq.learners import _pa
from cseq.chain import _chain
from cseq.learners.base import MAX_REGULARIZATION, ChainEstimator, Number, check_number
from cseq.exceptions import ConvergenceError, InputError
from cseq.learners.loops import epochs
from cseq.registry import EARLY_STOPPING, Command, register

__all__ = ["PassiveAggressive"]


def _check_pa_type(name: str, value: Any) -> None:
    """Constraint of ``pa_type``: 0, 1 or 2, the three update rules."""
    check_number(name, value, low=0, integer=True)
    if value not in (0, 1, 2):
        raise InputError(f"{name} must be 0 (PA), 1 (PA-I) or 2 (PA-II), got {value!r}")

@register(Command("pa", 10, {"C": "C", "seed": "random_state", **EARLY_STOPPING},
                  "passive-aggressive (PA-I; CRFsuite's pa), first order",
                  defaults={"random_state": 0}, quick={"max_iter": 3, "random_state": 0}))
class PassiveAggressive(ChainEstimator):
    """Online passive-aggressive training of a linear chain (PA, PA-I, PA-II).

    On each sequence the current weights ``w`` tag with Viterbi; when the
    path ``y*`` is wrong the weights move along ``delta = Phi(gold) -
    Phi(y*)`` (state weights and transitions) just far enough to fix the
    loss ``w.Phi(y*) - w.Phi(gold) + m``, where ``m`` is ``sqrt(d)`` for
    ``d`` wrong labels (``error_sensitive``) or 1::

        tau = loss / ||delta||^2                  pa_type=0 (PA)
        tau = min(C, loss / ||delta||^2)          pa_type=1 (PA-I)
        tau = loss / (||delta||^2 + 1 / (2 C))    pa_type=2 (PA-II)

    the step, the loss and the defaults being CRFsuite's (``train_passive_aggressive.c``).

    Parameters
    ----------
    pa_type : {0, 1, 2}, default 1
        PA without slack, PA-I or PA-II.
    C : float, default 1.0
        Aggressiveness of PA-I and PA-II (> 0, at most 1e100): the largest
        step (PA-I) or the inverse of the slack's weight (PA-II).  Unused by
        ``pa_type=0``.
    error_sensitive : bool, default True
        The loss's margin grows as the square root of the wrong labels.
    average : bool, default True
        Return the average of the weight vectors before the first example
        and after every example (CRFsuite's average; kept lazily, as the
        perceptron's is) instead of the last ones.
    max_iter : int, default 10
        Passes over the training data.
    tol : float, default 0.0
        Stop after a pass whose mean loss per sequence is below ``tol``
        (CRFsuite's ``epsilon``); with 0, all ``max_iter`` passes run.
    shuffle : bool, default True
        Visit sequences in a new random order each pass.
    random_state : int or None
        Seed of the shuffling (numpy's PCG64).
    early_stopping : bool, default False
        Score the dev set (``fit``'s ``X_dev``, ``y_dev``, required) after
        every pass, stop after ``patience`` passes without a better accuracy
        and keep the best pass's weights (``best_iteration_``).
    patience : int, default 3
    all_states : bool, default False
        Keep the state weights that stayed 0 (and their attributes).
    features : featurizer or None
        As for :class:`StructuredPerceptron`.
    verbose : bool
        Print one line per pass: errors, loss, seconds, dev accuracy.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_, stop_reason_, best_iteration_
        As for :class:`StructuredPerceptron`.
    history_ : list of dict
        One per pass: ``errors`` (wrong labels met), ``error_rate``,
        ``loss`` (the sum of the losses of the updates), ``seconds``,
        ``dev_accuracy``.

    The chain is first order, as CRFsuite's; every label must be known.

    Examples
    --------
    >>> import cseq
    >>> X = [[["w=the"], ["w=dog"], ["w=barks"]], [["w=a"], ["w=cat"], ["w=sleeps"]]]
    >>> y = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"]]
    >>> est = cseq.PassiveAggressive(random_state=0).fit(X, y)
    >>> est.predict([[["w=a"], ["w=dog"], ["w=sleeps"]]])
    [['DET', 'NOUN', 'VERB']]

    References
    ----------
    Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S., Singer, Y. (2006).
    Online passive-aggressive algorithms. JMLR 7.
    """

    _parameter_constraints = {"pa_type": _check_pa_type,
                              "C": Number(0.0, high=MAX_REGULARIZATION, positive=True)}

    def __init__(self, *, pa_type: int = 1, C: float = 1.0, error_sensitive: bool = True,
                 average: bool = True, max_iter: int = 10, tol: float = 0.0,
                 shuffle: bool = True, random_state: int | None = None,
                 early_stopping: bool = False, patience: int = 3, all_states: bool = False,
                 features: Any = None, verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def _finish(self, model):
        return model if self.all_states else self._pruned(model)

    def _train(self, corpus, model, dev, callback):
        params = _chain.AveragedParams(model.params.copy())
        trainer = _pa.PATrainer(model.index, corpus.view(), params, int(self.pa_type),
                                float(self.C), bool(self.error_sensitive))

        def weights():
            if not self.average:
                return params.w.copy()
            # params.averaged() is the mean of the n vectors after each example;
            # CRFsuite's mean also counts the zero vector before the first.
            n = params.n_examples
            return params.averaged() * (n / (n + 1))

        def run_pass(order):
            try:
                errors, loss = trainer.train_epoch(order)
            except FloatingPointError as e:
                raise ConvergenceError(f"passive-aggressive training diverged: {e}; "
                                       "try a smaller C or pa_type=1") from None
            stop = (f"mean loss below tol={self.tol}"
                    if loss / corpus.n_sequences < self.tol else None)
            return ({"errors": int(errors), "error_rate": errors / corpus.n_tokens,
                     "loss": float(loss)}, stop)
        epochs(self, run_pass, weights, corpus, model, dev, callback)
