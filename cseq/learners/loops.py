"""The training loops the learners share, and early stopping.

Each loop runs inside a fit (:func:`cseq.learners.frame.run`) and reports
every iteration through the estimator's ``_report`` (history, ``verbose``,
the callback, early stopping, the Ctrl-C snapshot), so that all of them
behave alike:

- :func:`passes`: up to ``max_iter`` passes of any pass function (the online
  learners in-process through :func:`epochs`, and iterative parameter mixing
  on a Dask cluster, :mod:`cseq.distributed`);
- :func:`epochs`: passes over a corpus in a fresh order per pass when
  ``shuffle`` (the perceptron, the SSVM, the greedy tagger, PA, AROW);
- :func:`mistake_driven_epochs`: :func:`epochs` of a perceptron-style trainer;
- :func:`train_lbfgs`: L-BFGS (OWL-QN with an L1 term) of a smooth objective,
  stopped by :func:`stalled` (the CRF, the MEMM, and the CRF on Dask).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cseq.exceptions import ConvergenceError
from cseq.learners.protocol import Learner
from cseq.chain.model import LinearChain
from cseq.learners.optimize import MAX_ITER_MESSAGE, lbfgs
from cseq.chain.sequences import Sequences


__all__ = ["EarlyStopping", "MAX_ITER_REASON", "SETTLED", "epochs", "mistake_driven_epochs",
           "passes", "stalled", "still_improving", "train_lbfgs"]

#: ``stop_reason_`` of a fit that used up ``max_iter`` before its convergence
#: test was met; the fit then warns (ConvergenceWarning, :func:`cseq.learners.frame.complete`).
MAX_ITER_REASON = "maximum number of iterations reached"

#: A dev scorer: the token accuracy of a model on the dev set (see
#: :func:`cseq.learners.frame.dev_scorer`), or None without a dev set.
DevScorer = Callable[[LinearChain], float]
#: A fit that ``max_iter`` stopped is left as it is, without a ConvergenceWarning, when its
#: objective improved by at most this fraction over its last ``period`` iterations: the
#: predictions no longer move (docs/accuracy.md, "Quiet defaults": on CoNLL-2000 and WNUT-17
#: dev, once the default CRF's loss improves by less than 0.1% per 10 iterations, running it
#: to CRFsuite's 1e-5 moves span F1 by at most a few hundredths).  Above it, raising
#: ``max_iter`` still changes the model: the warning says so.
SETTLED = 1e-3
#: The user's callback, given every iteration's record.
Callback = Callable[[dict[str, Any]], object]


class EarlyStopping:
    """Keep the parameters of the iteration that scored best on the dev set.

    The fit frame makes one when the estimator's ``early_stopping`` is True;
    ``_report`` feeds it every record that has a ``dev_accuracy``.  At that
    moment ``model.params`` must hold the parameters that were scored (what
    every loop here does to score the dev set).  A copy is taken when the
    accuracy improves; :meth:`update` says to stop once ``patience``
    iterations in a row have not improved on the best; :meth:`restore` puts
    the best parameters back.
    """

    def __init__(self, model: LinearChain, patience: int) -> None:
        self.model = model
        self.patience = int(patience)
        self.best_score = -math.inf
        self.best_iteration: int | None = None
        self.best_params: np.ndarray | None = None
        self.stopped = False

    def update(self, record: dict) -> bool:
        """Take one iteration's record; True when training should stop."""
        score = record.get("dev_accuracy")
        if score is None:
            return False
        if score > self.best_score:
            self.best_score = float(score)
            self.best_iteration = int(record["iteration"])
            self.best_params = self.model.params.copy()
        self.stopped = record["iteration"] - self.best_iteration >= self.patience
        return self.stopped

    def restore(self) -> None:
        """Put the best iteration's parameters into the model."""
        if self.best_params is not None:
            self.model.params = self.best_params


def passes(est: Learner, run_pass: Callable[[int], tuple[dict[str, Any], str | None]],
           weights: Callable[[], np.ndarray], model: LinearChain, dev: DevScorer | None,
           callback: Callback | None) -> None:
    """Up to ``est.max_iter`` passes: ``run_pass(iteration)`` trains one.

    ``run_pass`` returns the record's fields and a stop reason (None: go
    on); ``weights()`` gives the weights to score on ``dev`` after each pass,
    to hand back on Ctrl-C and to keep at the end.  Sets ``model.params``,
    ``stop_reason_`` and ``n_iter_``.
    """
    est.stop_reason_ = f"{est.max_iter} passes done"
    for it in range(1, int(est.max_iter) + 1):
        t = time.perf_counter()
        fields, stop = run_pass(it)
        record = {"iteration": it, **fields, "seconds": time.perf_counter() - t}
        if dev is not None:
            model.params = weights()
            record["dev_accuracy"] = dev(model)
        if est._report(record, callback, snapshot=lambda: (weights(), {})):
            break
        if stop is not None:
            est.stop_reason_ = stop
            break
    model.params = weights()
    est.n_iter_ = len(est.history_)


def epochs(est: Learner, run_pass: Callable[[np.ndarray], tuple[dict[str, Any], str | None]],
           weights: Callable[[], np.ndarray], corpus: Sequences, model: LinearChain,
           dev: DevScorer | None, callback: Callback | None) -> None:
    """:func:`passes` over ``corpus``: ``run_pass(order)`` visits the sequences in ``order``.

    The order is fresh per pass when ``est.shuffle`` (numpy's PCG64 seeded
    by ``est.random_state``, identical on every platform).
    """
    rng = np.random.default_rng(est.random_state)
    order = np.arange(corpus.n_sequences, dtype=np.int64)

    def one(it: int) -> tuple[dict[str, Any], str | None]:
        if est.shuffle:
            rng.shuffle(order)
        return run_pass(order)
    passes(est, one, weights, model, dev, callback)


def mistake_driven_epochs(est: Learner, trainer: Any, params: Any, corpus: Sequences,
                          model: LinearChain, dev: DevScorer | None,
                          callback: Callback | None) -> None:
    """:func:`epochs` of a perceptron-style ``trainer`` (``train_epoch(order)`` returns its
    errors) over ``params``, an AveragedParams: averaged (``est.average``) or
    last weights; stops after a pass without errors."""
    def run_pass(order):
        errors = int(trainer.train_epoch(order))
        return ({"errors": errors, "error_rate": errors / corpus.n_tokens},
                "no training errors in a pass" if errors == 0 else None)
    epochs(est, run_pass, lambda: params.averaged() if est.average else params.w.copy(),
           corpus, model, dev, callback)


def stalled(est: Learner, losses: list[float]) -> bool:
    """CRFsuite's test: the last ``period`` iterations improved the loss by at most ``tol``.

    Relative to ``max(|loss|, 1)``; for learners with ``tol`` and ``period``.
    """
    k = est.period
    return len(losses) > k and \
        (losses[-k - 1] - losses[-1]) <= est.tol * max(abs(losses[-1]), 1.0)


def still_improving(est: Learner) -> float | None:
    """How much the loss of a fit that ``max_iter`` stopped still improved; None if it settled.

    The relative improvement over the last ``period`` iterations of
    ``est.history_`` (as :func:`stalled` measures it) when it is above
    :data:`SETTLED` (more iterations would still change the model), infinity
    when there are too few iterations to tell (a cap below ``period`` + 1
    cut the fit before it could settle), None otherwise.
    """
    losses = [r["loss"] for r in est.history_ if "loss" in r]
    k = est.period
    if len(losses) <= k:
        return math.inf
    change = (losses[-k - 1] - losses[-1]) / max(abs(losses[-1]), 1.0)
    return change if change > SETTLED else None


def train_lbfgs(est: Learner, objective: Any, model: LinearChain, dev: DevScorer | None,
                callback: Callback | None, *, l1: float = 0.0, x0: np.ndarray | None = None,
                values: np.ndarray | None = None) -> None:
    """Minimise ``objective`` from zero weights (or ``x0``) with :func:`cseq.learners.optimize.lbfgs`.

    The training loop of every learner that minimises a smooth objective
    (``objective(theta) -> (value, gradient)`` with ``c2`` and an
    ``n_evaluations`` count, e.g. :class:`~cseq.learners.objectives.CRFObjective`),
    OWL-QN when ``l1 > 0``.  Each iteration is reported through ``_report``
    (loss, seconds, dev accuracy with ``model.params`` set to the iterate);
    the loop stops by :func:`stalled`, by early stopping, by the gradient
    test or at ``max_iter`` (then ``stop_reason_`` is :data:`MAX_ITER_REASON`
    and the fit warns).  Sets ``model.params``, ``n_iter_``,
    ``n_evaluations_`` and ``stop_reason_``.  ``values`` (the corpus's
    feature values, when at hand) explain a first step that fails.

    References
    ----------
    Nocedal, J. (1980). Updating quasi-Newton matrices with limited storage.
    Mathematics of Computation 35.
    """
    name = type(est).__name__
    losses: list[float] = []
    clock = [time.perf_counter()]

    def evaluate(theta):
        try:
            value, grad = objective(theta)
        except FloatingPointError as exc:
            raise ConvergenceError(f"{name} objective became non-finite: {exc}") from None
        if not (math.isfinite(value) and np.isfinite(grad).all()):
            raise ConvergenceError(
                f"{name} objective or gradient is not finite (feature values too large?)")
        return value, grad

    def on_iteration(iteration, theta, value):
        now = time.perf_counter()
        record = {"iteration": iteration, "loss": value, "seconds": now - clock[0]}
        losses.append(value)
        if dev is not None:
            model.params = theta
            record["dev_accuracy"] = dev(model)
        stop = est._report(record, callback, snapshot=lambda: (theta, {
            "stop_reason_": f"interrupted after iteration {iteration}",
            "n_evaluations_": objective.n_evaluations}))
        clock[0] = time.perf_counter()
        return stop or stalled(est, losses)

    start = np.zeros_like(model.params) if x0 is None else x0
    # The L2 term c2 * ||theta||^2 bounds the curvature from below.
    result = lbfgs(evaluate, start, max_iter=int(est.max_iter),
                   callback=on_iteration, l1=float(l1), curvature=2.0 * objective.c2)
    if result.nit == 0 and "line search failed" in result.message:
        biggest = "" if values is None else \
            f"largest feature value {float(np.abs(values).max()) if len(values) else 0.0:.3g}: "
        raise ConvergenceError(
            f"L-BFGS could not decrease the {name} objective from its starting point "
            f"({biggest}scale feature values down)")
    params = np.ascontiguousarray(result.x, dtype=np.float64)
    if not np.isfinite(params).all():
        raise ConvergenceError(f"L-BFGS returned non-finite weights ({result.message})")
    model.params = params
    est.n_iter_ = len(losses)
    est.n_evaluations_ = objective.n_evaluations
    est.stop_reason_ = MAX_ITER_REASON if result.message == MAX_ITER_MESSAGE \
        else str(result.message)
