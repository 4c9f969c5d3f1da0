"""AROW, adaptive regularization of weights (Crammer et al. 2009), for linear chains."""

from __future__ import annotations

from typing import Any

import numpy as np

from cseq.learners import _arow
from cseq.learners.base import MAX_REGULARIZATION, ChainEstimator, Number
from cseq.exceptions import ConvergenceError
from cseq.learners.loops import epochs
from cseq.registry import EARLY_STOPPING, Command, register

__all__ = ["AROW"]


@register(Command("arow", 10, {"seed": "random_state", **EARLY_STOPPING},
                  "adaptive regularization of weights (CRFsuite's arow), first order",
                  defaults={"random_state": 0}, quick={"max_iter": 3, "random_state": 0}))
class AROW(ChainEstimator):
    """Online AROW training of a linear chain, as CRFsuite has it.

    Next to the weights ``mu`` AROW keeps one variance per weight (all
    ``variance`` at the start).  On each sequence ``mu`` tags with Viterbi;
    when the path ``y*`` is wrong in ``d`` labels, with ``delta =
    Phi(gold) - Phi(y*)`` and the loss ``mu.Phi(y*) - mu.Phi(gold) + d``::

        alpha = loss / (gamma + sum_k var_k delta_k^2)
        mu_k += alpha var_k delta_k
        var_k = 1 / (1 / var_k + delta_k^2 / gamma)

    so a weight the data has often touched moves less (the update, the loss
    and the defaults being CRFsuite's ``train_arow.c``).  The fitted model
    is ``mu``; the variances are training state and are not kept.

    Parameters
    ----------
    variance : float, default 1.0
        Initial variance of every weight (> 0, at most 1e100): larger means
        larger first steps.
    gamma : float, default 1.0
        Trade-off between the loss and the change of the weights (> 0, at
        most 1e100): larger means smaller steps and slower shrinking
        variances.
    max_iter : int, default 10
        Passes over the training data.
    tol : float, default 0.0
        Stop after a pass whose mean loss per sequence is at most ``tol``
        (CRFsuite's ``epsilon``); with 0, after a pass without errors.
    shuffle, random_state, early_stopping, patience, all_states, features, verbose
        As for :class:`PassiveAggressive`.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_, stop_reason_, best_iteration_, history_
        As for :class:`PassiveAggressive`.

    The chain is first order, as CRFsuite's; every label must be known.
    There is no averaging (CRFsuite's AROW has none).

    Examples
    --------
    >>> import cseq
    >>> X = [[["w=the"], ["w=dog"], ["w=barks"]], [["w=a"], ["w=cat"], ["w=sleeps"]]]
    >>> y = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB"]]
    >>> cseq.AROW(random_state=0).fit(X, y).predict([[["w=a"], ["w=dog"], ["w=sleeps"]]])
    [['DET', 'NOUN', 'VERB']]

    References
    ----------
    Crammer, K., Kulesza, A., Dredze, M. (2009). Adaptive regularization of
    weight vectors. NIPS.
    Mejer, A., Crammer, K. (2010). Confidence in structured-prediction using
    confidence-weighted models. EMNLP.
    """

    _parameter_constraints = {"variance": Number(0.0, high=MAX_REGULARIZATION, positive=True),
                              "gamma": Number(0.0, high=MAX_REGULARIZATION, positive=True)}

    def __init__(self, *, variance: float = 1.0, gamma: float = 1.0, max_iter: int = 10,
                 tol: float = 0.0, shuffle: bool = True, random_state: int | None = None,
                 early_stopping: bool = False, patience: int = 3, all_states: bool = False,
                 features: Any = None, verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def _finish(self, model):
        return model if self.all_states else self._pruned(model)

    def _train(self, corpus, model, dev, callback):
        mean = model.params.copy()
        cov = np.full_like(mean, float(self.variance))
        trainer = _arow.AROWTrainer(model.index, corpus.view(), mean, cov, float(self.gamma))

        def run_pass(order):
            try:
                errors, loss = trainer.train_epoch(order)
            except FloatingPointError as e:
                raise ConvergenceError(f"AROW training diverged: {e}; try a larger gamma "
                                       "or a smaller variance") from None
            stop = (("no training errors in a pass" if errors == 0
                     else f"mean loss at most tol={self.tol}")
                    if loss / corpus.n_sequences <= self.tol else None)
            return ({"errors": int(errors), "error_rate": errors / corpus.n_tokens,
                     "loss": float(loss)}, stop)
        epochs(self, run_pass, mean.copy, corpus, model, dev, callback)
