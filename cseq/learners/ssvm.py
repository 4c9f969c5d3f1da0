"""The structured support vector machine (margin rescaling), trained by stochastic subgradient."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cseq.learners import _ssvm
from cseq.chain import _chain
from cseq.learners.base import MAX_REGULARIZATION, ChainEstimator, Number
from cseq.exceptions import InputError, InputTypeError
from cseq.chain.inference import _RaggedWarning, check_cost_matrix
from cseq.learners.loops import epochs
from cseq.learners.partial import PartialFitMixin, check_scalars, rng_from_state, rng_state
from cseq.registry import EARLY_STOPPING, Command, register
from cseq.io.serialize import MAX_COUNT
from cseq._core.vectors import dot

__all__ = ["StructuredSVM"]


def _cost_array(cost) -> np.ndarray:
    """``cost`` (not a dict) as an array; InputError for strings and ragged nested lists."""
    if isinstance(cost, (str, bytes)):
        raise InputError("cost must be None, a square (L, L) array or a dict of dicts over "
                         f"label names; got {type(cost).__name__}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", _RaggedWarning)
            return np.asarray(cost)
    except (ValueError, TypeError, _RaggedWarning):
        lengths = [len(row) if hasattr(row, "__len__") else "a scalar" for row in cost] \
            if hasattr(cost, "__iter__") else []
        raise InputError("cost must be a square (L, L) array, but its rows differ in length "
                         f"({', '.join(map(str, lengths[:10]))}"
                         f"{', ...' if len(lengths) > 10 else ''})") from None


def _check_cost(name: str, cost: Any) -> None:
    """Constraint of ``cost``: None, a dict of dicts of costs, or a square cost matrix.

    A dict's label names are checked against the labels when the fit knows
    them (:meth:`StructuredSVM.cost_matrix`).
    """
    if cost is None:
        return
    if isinstance(cost, dict):
        for gold, row in cost.items():
            if not isinstance(gold, str) or not isinstance(row, dict):
                raise InputTypeError("a cost dict maps label names to dicts of "
                                     f"label names to costs; got {gold!r}: {row!r}")
            for pred, value in row.items():
                if not isinstance(pred, str):
                    raise InputTypeError(f"cost[{gold!r}] has a non-string key {pred!r}")
                if isinstance(value, bool) or not isinstance(
                        value, (int, float, np.integer, np.floating)):
                    raise InputTypeError(f"cost[{gold!r}][{pred!r}] must be a number, "
                                         f"got {value!r}")
                if not (math.isfinite(value) and value >= 0):
                    raise InputError(f"cost[{gold!r}][{pred!r}] must be finite and "
                                     f"non-negative, got {value!r}")
                if pred == gold and value != 0:
                    raise InputError(f"cost[{gold!r}][{pred!r}] must be 0: predicting "
                                     "the gold label costs nothing")
        return
    arr = _cost_array(cost)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise InputError("cost must be None, a square (L, L) array or a dict of dicts "
                         f"over label names; got {type(cost).__name__} of shape {arr.shape}")
    check_cost_matrix(arr, arr.shape[0])


@register(Command("ssvm", 10, {"C": "C", "seed": "random_state", "order": "order",
                                **EARLY_STOPPING},
                  "structured SVM, L2 and hinge loss, stochastic subgradient",
                  # More passes on the presets: its weighted average climbs for longer than
                  # the perceptron's (10 passes ended 0.37 F1 under the CRF on chunk, 2.7
                  # under the perceptron on ner, 0.16 under the CRF on pos; docs/accuracy.md).
                  defaults={"random_state": 0},
                  preset_defaults={"chunk": {"max_iter": 40}, "ner": {"max_iter": 40},
                                   "pos": {"max_iter": 20}},
                  quick={"max_iter": 3, "random_state": 0}))
class StructuredSVM(PartialFitMixin, ChainEstimator):
    """Structured SVM for linear chains: L2 plus the structured hinge loss (margin rescaling).

    Minimises the primal objective over all weights ``w`` (state weights,
    transitions, start and end scores)::

        1/2 ||w||^2 + C * sum_i max_y [cost(y_i, y) + w.Phi(x_i, y) - w.Phi(x_i, y_i)]

    (Tsochantaridis et al. 2005) where ``cost`` sums a label-pair cost over
    positions: the Hamming cost by default.  The inner max is cost-augmented
    Viterbi (:func:`cseq.loss_augmented_viterbi`).

    Training is Pegasos' stochastic subgradient method (Shalev-Shwartz et al.
    2011) with ``lambda = 1 / (C n)``: one step per sequence, step size
    ``1 / (lambda t)``, the L2 shrink folded into a scale factor so that a step
    costs O(features of the sequence), as a perceptron update does.  It was
    chosen over block-coordinate Frank-Wolfe (Lacoste-Julien et al. 2013),
    which needs no step size and gives a duality gap, because BCFW keeps a
    weight vector per training sequence (or its sparse difference), memory a
    12,000-sentence corpus with a million parameters cannot afford, and
    because the subgradient step reuses the shared lazy averaging and
    path-features kernel exactly as the perceptron does.  Averaging the
    iterates (``average=True``) smooths the stochastic steps.  The primal
    objective, evaluated at the weights ``fit`` would return, is recorded
    after every pass in ``history_`` (``"loss"``).

    Parameters
    ----------
    C : float, default 1.0
        Weight of the sum of hinge losses against ``1/2 ||w||^2`` (> 0, at
        most 1e100: the loss grows as ``C**2`` and would leave float64).
        Larger means less regularization.  1.0 keeps it level with the
        averaged perceptron on the same features (CoNLL-2000 dev 94.25 span
        F1 against 94.24; 0.1 gave 93.91) and within 0.1 on EWT (95.31%
        against 95.40%; 0.1 gave 95.36%): docs/accuracy.md.
    max_iter : int, default 10
        Passes over the training data.  ``cseq train`` gives the ``chunk``
        and ``ner`` presets 40 and ``pos`` 20: there the weighted average
        was still climbing after 10 (docs/accuracy.md, "Learner defaults
        within 0.3").
    order : {1, 2}, default 1
        1: label bigram transitions (a first-order chain).  2: also label
        trigram weights ``trans2[y_{t-2}, y_{t-1}, y_t]``; the cost-augmented
        Viterbi and the hinge loss run over label pairs in O(n L^3)
        (docs/learners.md, "Second order").
    cost : None, array_like (L, L) or dict of dicts
        Cost of predicting label ``y`` where the gold label is ``g``. None is
        the Hamming cost (1 for every wrong label). An (L, L) array is indexed
        by ``classes_`` (the labels sorted): ``cost[g, y]``. A dict of dicts
        maps gold label names to predicted label names to costs
        (``{"B-PER": {"B-ORG": 0.5}}``); pairs left out cost 1 (0 on the
        diagonal). Costs must be finite and non-negative with a zero
        diagonal (the gold label costs nothing); unknown label names are
        errors.
    average : bool, default True
        Return the average of the weights after every step (lazily
        maintained) instead of the last ones.
    shuffle : bool, default True
        Visit sequences in a new random order each pass.
    random_state : int or None
        Seed of the shuffling (numpy's PCG64): the same seed gives the same model.
    early_stopping : bool, default False
        Score the dev set (``fit``'s ``X_dev``, ``y_dev``, required) after
        every pass, stop after ``patience`` passes without a better accuracy
        and keep the best pass's weights (``best_iteration_``).
    patience : int, default 3
    all_states : bool, default False
        Give every (attribute, label) pair a weight, not only pairs seen in training.
    features : featurizer or None
        As for :class:`StructuredPerceptron`.
    verbose : bool
        Print one line per pass: objective, seconds, dev accuracy.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_
        As for :class:`StructuredPerceptron`.
    history_ : list of dict
        One per pass: ``loss`` (the primal objective), ``hinge`` (its sum of
        hinge losses), ``violations`` (sequences whose cost-augmented path was
        not the gold one during the pass), ``seconds``, ``dev_accuracy``.

    ``partial_fit(X, y)`` makes one pass over a batch and continues the same
    step sequence and average, also after a save and a load; its ``lambda``
    is ``1 / (C n)`` with ``n`` the sequences seen so far (docs/learners.md,
    "Training in batches").

    References
    ----------
    Tsochantaridis, I., Joachims, T., Hofmann, T., Altun, Y. (2005). Large
    margin methods for structured and interdependent output variables. JMLR 6.
    Shalev-Shwartz, S., Singer, Y., Srebro, N., Cotter, A. (2011). Pegasos:
    primal estimated sub-gradient solver for SVM. Mathematical Programming 127.
    Ratliff, N., Bagnell, J. A., Zinkevich, M. (2007). (Online) subgradient
    methods for structured prediction. AISTATS.
    Lacoste-Julien, S., Jaggi, M., Schmidt, M., Pletscher, P. (2013).
    Block-coordinate Frank-Wolfe optimization for structural SVMs. ICML.
    """

    _partial_labels = True
    _parameter_constraints = {"C": Number(0.0, high=MAX_REGULARIZATION, positive=True),
                              "cost": _check_cost}

    def __init__(self, *, C: float = 1.0, max_iter: int = 10, order: int = 1,
                 cost: ArrayLike | Mapping[str, Mapping[str, float]] | None = None,
                 average: bool = True, shuffle: bool = True, random_state: int | None = None,
                 early_stopping: bool = False, patience: int = 3, all_states: bool = False,
                 features: Any = None, verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def cost_matrix(self, classes: list[str] | None = None) -> np.ndarray | None:
        """The (L, L) cost matrix over ``classes`` (default ``classes_``); None for Hamming.

        Raises InputError if the cost does not fit the labels (wrong shape,
        unknown label names).
        """
        if classes is None:
            classes = self._check_fitted().classes
        cost, L = self.cost, len(classes)
        if cost is None:
            return None
        if isinstance(cost, dict):
            ids = {name: i for i, name in enumerate(classes)}
            unknown = sorted({g for g in cost if g not in ids}
                             | {y for row in cost.values() for y in row if y not in ids})
            if unknown:
                raise InputError(f"cost names labels absent from the training data: "
                                 f"{', '.join(map(repr, unknown[:5]))}"
                                 f"{' ...' if len(unknown) > 5 else ''} "
                                 f"(labels: {', '.join(classes[:10])}"
                                 f"{' ...' if L > 10 else ''})")
            arr = 1.0 - np.eye(L)
            for gold, row in cost.items():
                for pred, value in row.items():
                    arr[ids[gold], ids[pred]] = float(value)
            return check_cost_matrix(arr, L)
        arr = _cost_array(cost)
        if arr.shape != (L, L):
            raise InputError(f"cost has shape {arr.shape} but the training data has {L} "
                             f"labels: it must be ({L}, {L}), indexed by the sorted labels")
        return check_cost_matrix(arr, L)

    def _weights_now(self, params: _chain.AveragedParams) -> np.ndarray:
        return params.averaged() if self.average else params.weights()

    #: On Dask: iterative parameter mixing of Pegasos epochs (cseq.distributed).
    _distributed = "cseq.distributed.ssvm"

    def _train(self, corpus, model, dev, callback):
        cost = self.cost_matrix(self.classes_)
        params = _chain.AveragedParams(model.params.copy())
        view = corpus.view(partial=True)
        trainer = _ssvm.SSVMTrainer(model.index, view, params, float(self.C), cost)
        def run_pass(order):
            violations, _ = trainer.train_epoch(order)
            w = self._weights_now(params)
            hinge, _ = _ssvm.structured_hinge(model.index, w, view, cost)
            return ({"loss": 0.5 * dot(w, w) + float(self.C) * hinge, "hinge": hinge,
                     "violations": int(violations)}, None)
        epochs(self, run_pass, lambda: self._weights_now(params), corpus, model, dev, callback)

    # -- training in batches (cseq.learners.partial) -----------------------------------
    _partial_arrays = ("w", "u")

    def _partial_start(self) -> dict:
        return {"n_examples": 0, "scale": 1.0, "scale_sum": 0.0, "weight_sum": 0.0,
                "rng": rng_state(np.random.default_rng(self.random_state))}

    def _check_partial_scalars(self, scalars: dict, n_sequences: int) -> None:
        check_scalars(scalars, {"n_examples": (int, 1, MAX_COUNT),
                                "scale": (float, _chain.MIN_SCALE, 1.0),
                                "scale_sum": (float, 0.0, math.inf),
                                "weight_sum": (float, 1.0, math.inf)})

    def _partial_pass(self, corpus, model, state, classes):
        sc = state.scalars
        params = _chain.AveragedParams(state.arrays["w"], state.arrays["u"],
                                         n_examples=sc["n_examples"], scale=sc["scale"],
                                         scale_sum=sc["scale_sum"], weight_sum=sc["weight_sum"])
        trainer = _ssvm.SSVMTrainer(model.index, corpus.view(partial=True), params, float(self.C),
                                    self.cost_matrix(classes), n_sequences=state.n_sequences)
        order = np.arange(corpus.n_sequences, dtype=np.int64)
        if self.shuffle:
            rng = rng_from_state(sc["rng"])
            rng.shuffle(order)
            sc["rng"] = rng_state(rng)
        violations, online = trainer.train_epoch(order)
        sc.update(n_examples=int(params.n_examples), scale=float(params.scale),
                  scale_sum=float(params.scale_sum), weight_sum=float(params.weight_sum))
        model.params = self._weights_now(params)
        return {"hinge": float(online), "violations": int(violations)}

    # -- persistence: the cost goes into the JSON header as lists -----------
    def _model_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        header, arrays = super()._model_state()
        cost = header["params"].get("cost")
        if isinstance(cost, dict):
            cost = {g: {y: float(v) for y, v in row.items()} for g, row in cost.items()}
        elif cost is not None:
            cost = np.asarray(cost, dtype=np.float64).tolist()
        header["params"] = {**header["params"], "cost": cost}
        return header, arrays

    @classmethod
    def _from_model_state(cls, header: dict, arrays: dict[str, np.ndarray]):
        est = super()._from_model_state(header, arrays)
        if isinstance(est.cost, list):
            est.cost = np.asarray(est.cost, dtype=np.float64)
        return est
