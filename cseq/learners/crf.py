"""The linear-chain conditional random field: L-BFGS (L2), OWL-QN (L1, elastic net) or SGD."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq.learners import _crf_sgd
from cseq.learners.base import MAX_REGULARIZATION, ChainEstimator, Number, OneOf
from cseq.chain.normalized import GlobalChain
from cseq.learners.loops import MAX_ITER_REASON, stalled, train_lbfgs
from cseq.exceptions import ConvergenceError, InputError, ModelFormatError
from cseq.learners.objectives import CRFObjective
from cseq.learners.partial import PartialFitMixin, check_scalars, rng_from_state, rng_state
from cseq.registry import EARLY_STOPPING, Command, register
from cseq.io.serialize import MAX_COUNT, header_field
from cseq._core.vectors import dot

__all__ = ["CRF"]

#: Step sizes tried by the SGD calibration (``eta0=None``), and its sample size.
_ETA0_CANDIDATES = (1.0, 0.3, 0.1, 0.03, 0.01)
# The range of c2 and eta0 for SGD.  The step of update t is 1 / (lam * (t0 + t))
# with lam = 2 * c2 / n and t0 = 1 / (lam * eta0); in this range both are finite
# and positive for any corpus size n < 2**63 (c2 = 5e-324 made lam 0, eta0 =
# 1.7e308 made t0 0).
_SGD_RANGE = (1e-100, 1e100)
_CALIBRATION_SEQUENCES = 1000


def _rate_offset(lam: float, eta0: float, error: type[Exception] = InputError,
                 what: str = "eta0") -> float:
    """``t0 = 1 / (lam * eta0)`` of SGD's rate schedule ``1 / (lam * (t0 + t))``.

    The first step's rate is then ``eta0``.  Raises ``error`` when ``lam *
    eta0`` is so small that ``t0`` overflows (every rate would be 0, or the
    division fails): the only way valid ``c2`` and ``eta0`` can break the
    schedule.  ``what`` names the rate in the message.
    """
    t0 = 1.0 / (lam * eta0) if lam * eta0 > 0 else math.inf
    if not math.isfinite(t0):
        raise error(f"SGD's rate schedule overflows: {what}={eta0!r} times the L2 strength per "
                    f"sequence {lam!r} is too small (raise c2 or eta0)")
    return t0


@register(Command("crf", 100, {"c1": "c1", "c2": "c2", "n_jobs": "n_jobs", "order": "order",
                               **EARLY_STOPPING},
                  "linear-chain CRF, L-BFGS (OWL-QN with --c1)",
                  # chunk: elastic net (CRFsuite's best setting on CoNLL-2000), 200
                  # iterations where its loss has settled (docs/accuracy.md).
                  preset_defaults={"pos": {"c2": 0.1, "max_iter": 200},
                                   "chunk": {"c1": 0.1, "c2": 0.1, "max_iter": 200}},
                  default_for=("chunk",), fixed={"algorithm": "lbfgs"}, quick={"max_iter": 15}),
          Command("crf-sgd", 30, {"c2": "c2", "seed": "random_state", "order": "order",
                                  **EARLY_STOPPING},
                  "linear-chain CRF, stochastic gradient descent (L2)",
                  defaults={"random_state": 0}, preset_defaults={"pos": {"c2": 0.1}},
                  fixed={"algorithm": "sgd"},
                  quick={"max_iter": 10, "random_state": 0}),
          info={"n_pruned_": "exactly-zero weights pruned after training"})
class CRF(PartialFitMixin, ChainEstimator):
    """Linear-chain conditional random field.

    Minimises ``-sum log p(y | x) + c1 * ||w||_1 + c2 * ||w||^2`` (CRFsuite's
    scaling of ``c1`` and ``c2``).  ``algorithm="lbfgs"`` uses the project's
    L-BFGS (:func:`cseq.learners.optimize.lbfgs`), which becomes OWL-QN when ``c1 >
    0``; objective and gradient come from one GIL-free pass over the corpus,
    parallel over sequences when ``n_jobs > 1``.  ``algorithm="sgd"``
    (L2 only) takes one stochastic gradient step per sequence with the rate
    ``1 / (lam * (t0 + t))``, ``lam = 2 * c2 / N`` (Bottou 2010), applying the
    L2 decay lazily (:mod:`cseq.learners._crf_sgd`).

    State weights that end exactly at 0 (with ``c1 > 0``, most of them) are
    pruned from the model after training, and attributes left without a
    weight are dropped from the featurizer (except in hashing mode), so the
    model file stores only non-zero state weights; predictions are unchanged.

    Parameters
    ----------
    c1 : float, default 0.0
        L1 regularisation strength (OWL-QN; with ``c2 > 0``, elastic net).  At
        most 1e100 (``cseq.learners.base.MAX_REGULARIZATION``), as ``c2``.
    c2 : float, default 1.0
        L2 regularisation strength (CRFsuite's ``c2``).  ``cseq train`` uses
        0.1 with the ``pos`` preset (docs/learners.md).  At most 1e100; with
        ``algorithm="sgd"`` at least 1e-100 too, so that SGD's step sizes are
        finite.
    algorithm : {"lbfgs", "sgd"}, default "lbfgs"
    max_iter : int, default 100
        Maximum L-BFGS iterations, or SGD epochs.
    order : {1, 2}, default 1
        1: label bigram transitions (a first-order chain).  2: also label
        trigram weights ``trans2[y_{t-2}, y_{t-1}, y_t]``; log Z, the
        expected counts, marginals and Viterbi run over label pairs in
        O(n L^3) (docs/learners.md, "Second order").
    tol : float, default 1e-5
        Stop when the objective improved by less than ``tol`` (relative) over
        the last ``period`` iterations (CRFsuite's ``delta`` test).  A fit
        that reaches ``max_iter`` first warns (:class:`~cseq.ConvergenceWarning`).
    period : int, default 10
        Window of that test.
    eta0 : float or None, default None
        SGD: the initial rate (``t0 = 1 / (lam * eta0)``); None chooses it by
        one trial epoch per candidate on up to 1,000 sequences (the lowest
        loss wins), as CRFsuite's calibration does.  In [1e-100, 1e100].
    random_state : int or None
        SGD: seed of the visiting order (and the calibration sample).
    early_stopping : bool, default False
        Score the dev set (``fit``'s ``X_dev``, ``y_dev``, required) after
        every iteration, stop after ``patience`` iterations without a better
        accuracy and keep the best iteration's weights (``best_iteration_``).
    patience : int, default 5
    n_jobs : int, default 1
        Threads for the L-BFGS objective (``-1``: all usable CPUs; a larger
        count is clamped to them, see ``cseq._core.threads.resolve_n_jobs``).
        Results depend on ``n_jobs`` only through float rounding.  SGD runs on
        one thread.
    all_states : bool, default False
        Give every (attribute, label) pair a weight.
    features : featurizer or None
        As for :class:`StructuredPerceptron`.
    verbose : bool
        Print one line per iteration: loss, seconds, dev accuracy.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_, history_
        As for :class:`StructuredPerceptron`; ``history_`` records the loss
        (for SGD, the sum of the per-sequence losses met during the epoch
        plus the L2 term at its end).
    n_evaluations_ : int
        Objective and gradient evaluations (line searches may take several
        per iteration); for SGD, epochs.
    n_pruned_ : int
        State weights pruned after training because they were exactly 0.
    stop_reason_ : str
    best_iteration_ : int or None
        With early stopping, the iteration whose weights were kept.
    eta0_ : float or None
        SGD: the initial rate used.

    With ``algorithm="sgd"``, ``partial_fit(X, y)`` makes one epoch over a
    batch and continues the step counter and the rate schedule, also after a
    save and a load; its ``lam`` is ``2 * c2 / N`` with ``N`` the sequences
    seen so far (docs/learners.md, "Training in batches").

    References
    ----------
    Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields:
    probabilistic models for segmenting and labeling sequence data. ICML.
    Sha, F., Pereira, F. (2003). Shallow parsing with conditional random
    fields. HLT-NAACL.
    Andrew, G., Gao, J. (2007). Scalable training of L1-regularized log-linear
    models. ICML.
    Bottou, L. (2010). Large-scale machine learning with stochastic gradient
    descent. COMPSTAT.
    """

    _partial_labels = True
    _parameter_constraints = {
        "c1": Number(0.0, high=MAX_REGULARIZATION),
        "c2": Number(0.0, high=MAX_REGULARIZATION),
        "algorithm": OneOf(("lbfgs", "sgd")),
        "eta0": Number(0.0, positive=True, optional=True),
    }
    _model_class = GlobalChain  # P(y | x) = exp(score - log Z): cseq.probability
    _fitted_names = ChainEstimator._fitted_names + ("n_pruned_", "eta0_")

    def __init__(self, *, c1: float = 0.0, c2: float = 1.0, algorithm: str = "lbfgs",
                 max_iter: int = 100, order: int = 1, tol: float = 1e-5, period: int = 10,
                 eta0: float | None = None, random_state: int | None = None,
                 early_stopping: bool = False, patience: int = 5, n_jobs: int = 1,
                 all_states: bool = False, features: Any = None,
                 verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def _check_params_together(self) -> None:
        if self.algorithm == "sgd" and (self.c1 > 0 or not self.c2 > 0):
            raise InputError("algorithm='sgd' needs c2 > 0 and c1 == 0 (L2 only); "
                             "use algorithm='lbfgs' for L1")
        if self.algorithm == "sgd":
            for name in ("c2", "eta0"):
                value = getattr(self, name)
                if value is not None and not _SGD_RANGE[0] <= float(value) <= _SGD_RANGE[1]:
                    raise InputError(f"algorithm='sgd' needs {name} in [1e-100, 1e100] (its "
                                     f"step sizes must be finite and positive), got {value!r}")

    #: On Dask: distributed L-BFGS of the CRF objective (cseq.distributed).
    _distributed = "cseq.distributed.crf"

    def _check_distributed(self, warm_start: str | None) -> None:
        if self.algorithm != "lbfgs":
            raise InputError("cseq.distributed trains the CRF with algorithm='lbfgs' only")

    def _initial_fitted(self) -> dict[str, Any]:
        return {"n_pruned_": 0, "eta0_": None}

    def _train(self, corpus, model, dev, callback):
        if self.algorithm == "sgd":
            self._train_sgd(corpus, model, dev, callback)
        else:
            train_lbfgs(self, CRFObjective(model, corpus, self.c2, self.n_jobs), model, dev,
                        callback, l1=float(self.c1), values=corpus.values)

    def _sgd_epoch(self, trainer, order, lam, t0, t):
        try:
            return trainer.epoch(order, lam, t0, t)
        except FloatingPointError as exc:
            raise ConvergenceError(f"SGD diverged ({exc}); give a smaller eta0") from None

    def _calibrate(self, corpus, model, lam: float, rng) -> float:
        """The candidate rate with the lowest loss after one epoch on a sample."""
        n = corpus.n_sequences
        sample = np.sort(rng.permutation(n)[:_CALIBRATION_SEQUENCES]).astype(np.int64)
        view = corpus.view(partial=True)
        best, best_loss = None, math.inf
        for eta in _ETA0_CANDIDATES:
            w = np.zeros_like(model.params)
            trainer = _crf_sgd.CRFSGDTrainer(model.index, view, w)
            try:
                loss, _ = trainer.epoch(sample, lam, _rate_offset(lam, eta), 0)
            except FloatingPointError:
                continue
            loss += self.c2 * len(sample) / n * dot(w, w)
            if math.isfinite(loss) and loss < best_loss:
                best, best_loss = eta, loss
        if best is None:
            raise ConvergenceError("SGD diverged for every calibration rate; give eta0")
        return best

    def _train_sgd(self, corpus, model, dev, callback):
        n = corpus.n_sequences
        lam = 2.0 * float(self.c2) / n
        rng = np.random.default_rng(self.random_state)
        eta0 = float(self.eta0) if self.eta0 is not None else self._calibrate(corpus, model,
                                                                                lam, rng)
        self.eta0_ = eta0
        t0 = _rate_offset(lam, eta0)
        w = np.zeros_like(model.params)
        trainer = _crf_sgd.CRFSGDTrainer(model.index, corpus.view(partial=True), w)
        losses: list[float] = []
        step = 0
        self.stop_reason_ = MAX_ITER_REASON
        for it in range(1, int(self.max_iter) + 1):
            clock = time.perf_counter()
            order = rng.permutation(n).astype(np.int64)
            loss, step = self._sgd_epoch(trainer, order, lam, t0, step)
            loss += float(self.c2) * dot(w, w)
            losses.append(loss)
            record = {"iteration": it, "loss": loss, "seconds": time.perf_counter() - clock}
            model.params = w
            if dev is not None:
                record["dev_accuracy"] = dev(model)
            if self._report(record, callback, snapshot=lambda it=it: (w.copy(), {
                    "stop_reason_": f"interrupted after epoch {it}",
                    "n_evaluations_": it, "eta0_": eta0})):
                self.stop_reason_ = "stopped by early stopping"
                break
            if stalled(self, losses):
                self.stop_reason_ = "stopped by the convergence test"
                break
        model.params = w.copy()
        self.n_iter_ = len(losses)
        self.n_evaluations_ = len(losses)

    # -- training in batches (cseq.learners.partial) -----------------------------------
    _partial_arrays = ("w",)

    def _check_partial(self) -> None:
        if self.algorithm != "sgd":
            raise InputError("partial_fit needs algorithm='sgd': L-BFGS minimises the whole "
                             "corpus's objective at once and has no state to continue from "
                             "batch to batch")

    def _partial_start(self) -> dict:
        return {"t": 0, "eta0": None, "rng": rng_state(np.random.default_rng(self.random_state))}

    def _check_partial_scalars(self, scalars: dict, n_sequences: int) -> None:
        # The smallest positive float for eta0: > 0, and the schedule is checked below.
        check_scalars(scalars, {"t": (int, 1, MAX_COUNT), "eta0": (float, 5e-324, math.inf)})
        _rate_offset(2.0 * float(self.c2) / n_sequences, scalars["eta0"], ModelFormatError,
                     "model header field training.partial.eta0")

    def _partial_pass(self, corpus, model, state, classes):
        sc = state.scalars
        lam = 2.0 * float(self.c2) / state.n_sequences
        rng = rng_from_state(sc["rng"])
        if sc["eta0"] is None:
            sc["eta0"] = (float(self.eta0) if self.eta0 is not None
                          else self._calibrate(corpus, model, lam, rng))
        w = state.arrays["w"]
        trainer = _crf_sgd.CRFSGDTrainer(model.index, corpus.view(partial=True), w)
        loss, sc["t"] = self._sgd_epoch(trainer, rng.permutation(corpus.n_sequences).astype(
            np.int64), lam, _rate_offset(lam, sc["eta0"]), sc["t"])
        sc["rng"] = rng_state(rng)
        model.params = w.copy()
        return {"loss": loss + float(self.c2) * corpus.n_sequences / state.n_sequences
                * dot(w, w)}

    def _partial_attributes(self, state, n_iter):
        return {"eta0_": state.scalars["eta0"], "n_pruned_": 0, "n_evaluations_": n_iter}

    def _finish(self, model):
        """Prune the state weights that are exactly 0 (and attributes left without any)."""
        pruned = self._pruned(model)
        self.n_pruned_ = model.n_state - pruned.n_state
        return pruned

    def predict_marginals(self, X: Sequence[Any], *, n_jobs: int = 1, constraints: Any = None,
                          fixed: Any = None) -> list[np.ndarray]:
        """Label marginals of each token: a list of (n_i, L) arrays, columns in ``classes_`` order."""
        return self._chain_marginals(X, n_jobs, constraints, fixed)

    def _training_state(self, fitted):
        # stop_reason is the base class's; the optional fields are written when known.
        a = fitted.attributes
        state = {"n_pruned": int(a["n_pruned_"])}
        if a.get("n_evaluations_") is not None:
            state["n_evaluations"] = int(a["n_evaluations_"])
        if a.get("eta0_") is not None:
            state["eta0"] = float(a["eta0_"])
        return state

    def _restore_training(self, training: dict) -> None:
        self.n_evaluations_ = header_field(training, "n_evaluations", "training", int,
                                           default=None)
        self.n_pruned_ = header_field(training, "n_pruned", "training", int, default=0)
        self.eta0_ = header_field(training, "eta0", "training", float, 5e-324, math.inf,
                                  default=None)
