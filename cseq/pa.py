"""The passive-aggressive learner (Crammer et al. 2006) for linear chains, as CRFsuite has it."""

from __future__ import annotations

from typing import Any

from cseq import _pa, _weights
from cseq.base import MAX_REGULARIZATION, ChainEstimator, check_number
from cseq.exceptions import ConvergenceError, InputError
from cseq.learners.loops import epochs
from cseq.serialize import register_estimator

__all__ = ["PassiveAggressive"]


@register_estimator
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

    _param_names = ("pa_type", "C", "error_sensitive", "average", "max_iter", "tol", "shuffle",
                    "random_state", "early_stopping", "patience", "all_states", "features",
                    "verbose")

    def __init__(self, *, pa_type: int = 1, C: float = 1.0, error_sensitive: bool = True,
                 average: bool = True, max_iter: int = 10, tol: float = 0.0,
                 shuffle: bool = True, random_state: int | None = None,
                 early_stopping: bool = False, patience: int = 3, all_states: bool = False,
                 features: Any = None, verbose: bool = False) -> None:
        self.pa_type = pa_type
        self.C = C
        self.error_sensitive = error_sensitive
        self.average = average
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state
        self.early_stopping = early_stopping
        self.patience = patience
        self.all_states = all_states
        self.features = features
        self.verbose = verbose

    def _validate_params(self) -> None:
        super()._validate_params()
        check_number("pa_type", self.pa_type, low=0, integer=True)
        if self.pa_type not in (0, 1, 2):
            raise InputError("pa_type must be 0 (PA), 1 (PA-I) or 2 (PA-II), "
                             f"got {self.pa_type!r}")
        check_number("C", self.C, low=0.0, high=MAX_REGULARIZATION)
        if not self.C > 0:
            raise InputError(f"C must be positive, got {self.C!r}")
        check_number("max_iter", self.max_iter, low=1, integer=True)
        check_number("tol", self.tol, low=0.0)
        if self.random_state is not None:
            check_number("random_state", self.random_state, low=0, integer=True)

    def _finish(self, model):
        return model if self.all_states else self._pruned(model)

    def _train(self, corpus, model, dev, callback):
        params = _weights.AveragedParams(model.params.copy())
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
