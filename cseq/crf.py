"""The linear-chain conditional random field, trained with L-BFGS."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq.base import ChainEstimator, check_number
from cseq.exceptions import ConvergenceError, ModelFormatError
from cseq.model import resolve_n_jobs
from cseq.objectives import CRFObjective
from cseq.optimize import lbfgs
from cseq.serialize import register_estimator

__all__ = ["CRF"]


@register_estimator
class CRF(ChainEstimator):
    """Linear-chain conditional random field trained with L-BFGS.

    Minimises ``-sum log p(y | x) + c2 * ||w||^2`` with L-BFGS
    (:func:`cseq.optimize.lbfgs`);
    objective and gradient come from one GIL-free pass over the corpus,
    parallel over sequences when ``n_jobs > 1``.

    Parameters
    ----------
    c2 : float, default 1.0
        L2 regularisation strength (CRFsuite's ``c2``).
    max_iter : int, default 100
        Maximum L-BFGS iterations.
    tol : float, default 1e-5
        Stop when the objective improved by less than ``tol`` (relative) over
        the last ``period`` iterations (CRFsuite's ``delta`` test).
    period : int, default 10
        Window of that test.
    n_jobs : int, default 1
        Threads for the objective (``-1``: all cores). Results depend on
        ``n_jobs`` only through float rounding.
    all_states : bool, default False
        Give every (attribute, label) pair a weight.
    features : featurizer or None
        As for :class:`StructuredPerceptron`.
    verbose : bool
        Print one line per iteration: loss, seconds, dev accuracy.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_, history_
        As for :class:`StructuredPerceptron`; ``history_`` records the loss.
    n_evaluations_ : int
        Objective and gradient evaluations (line searches may take several
        per iteration).
    stop_reason_ : str

    References
    ----------
    Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields:
    probabilistic models for segmenting and labeling sequence data. ICML.
    Sha, F., Pereira, F. (2003). Shallow parsing with conditional random
    fields. HLT-NAACL.
    """

    _param_names = ("c2", "max_iter", "tol", "period", "n_jobs", "all_states", "features",
                    "verbose")

    def __init__(self, *, c2: float = 1.0, max_iter: int = 100, tol: float = 1e-5,
                 period: int = 10, n_jobs: int = 1, all_states: bool = False, features=None,
                 verbose: bool = False) -> None:
        self.c2 = c2
        self.max_iter = max_iter
        self.tol = tol
        self.period = period
        self.n_jobs = n_jobs
        self.all_states = all_states
        self.features = features
        self.verbose = verbose

    def _validate_params(self) -> None:
        check_number("c2", self.c2, low=0.0)
        check_number("max_iter", self.max_iter, low=1, integer=True)
        check_number("tol", self.tol, low=0.0)
        check_number("period", self.period, low=1, integer=True)
        resolve_n_jobs(self.n_jobs)

    def _train(self, corpus, model, dev, callback):
        objective = CRFObjective(model, corpus, self.c2, self.n_jobs)
        losses: list[float] = []
        clock = [time.perf_counter()]

        def evaluate(theta):
            try:
                value, grad = objective(theta)
            except FloatingPointError as exc:
                raise ConvergenceError(f"CRF objective became non-finite: {exc}") from None
            if not (math.isfinite(value) and np.isfinite(grad).all()):
                raise ConvergenceError(
                    "CRF objective or gradient is not finite (feature values too large?)")
            return value, grad

        def on_iteration(iteration, theta, value):
            now = time.perf_counter()
            record = {"iteration": iteration, "loss": value, "seconds": now - clock[0]}
            losses.append(value)
            if dev is not None:
                model.params = theta
                record["dev_accuracy"] = dev(model)
            self._report(record, callback, snapshot=lambda: (theta, {
                "stop_reason_": f"interrupted after iteration {iteration}",
                "n_evaluations_": objective.n_evaluations}))
            clock[0] = time.perf_counter()
            k = self.period
            return len(losses) > k and \
                (losses[-k - 1] - value) <= self.tol * max(abs(value), 1.0)

        result = lbfgs(evaluate, np.zeros_like(model.params), max_iter=int(self.max_iter),
                       callback=on_iteration)
        if result.nit == 0 and "line search failed" in result.message:
            biggest = float(np.abs(corpus.values).max()) if len(corpus.values) else 0.0
            raise ConvergenceError(
                "L-BFGS could not decrease the CRF objective from its starting point "
                f"(largest feature value {biggest:.3g}: scale feature values down)")
        params = np.ascontiguousarray(result.x, dtype=np.float64)
        if not np.isfinite(params).all():
            raise ConvergenceError(f"L-BFGS returned non-finite weights ({result.message})")
        model.params = params
        self.n_iter_ = len(losses)
        self.n_evaluations_ = objective.n_evaluations
        self.stop_reason_ = str(result.message)

    def predict_marginals(self, X: Sequence[Any], *, n_jobs: int = 1) -> list[np.ndarray]:
        """Label marginals of each token: a list of (n_i, L) arrays, columns in ``classes_`` order."""
        def work(corpus, block):
            return self._split(self.model_.marginals(corpus), corpus)
        return [m for block in self._map_blocks(X, n_jobs, work) for m in block]

    def _training_state(self) -> dict:
        return {"stop_reason": self.stop_reason_, "n_evaluations": int(self.n_evaluations_)}

    def _restore_training(self, training: dict) -> None:
        if "stop_reason" in training:
            self.stop_reason_ = str(training["stop_reason"])
            n_eval = training.get("n_evaluations")
            if type(n_eval) is not int or n_eval < 0:
                raise ModelFormatError("model header has bad training information")
            self.n_evaluations_ = n_eval
