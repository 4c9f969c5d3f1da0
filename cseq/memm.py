"""The maximum-entropy Markov model: a locally normalised chain trained with L-BFGS."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq import _memm, decoding
from cseq.base import MAX_REGULARIZATION, ChainEstimator, check_number
from cseq.learners.loops import train_lbfgs
from cseq.model import LinearChain, not_finite, resolve_n_jobs, work_chunks
from cseq.objectives import MEMMObjective
from cseq.sequences import Sequences
from cseq.serialize import header_field, register_estimator

__all__ = ["MEMM"]


@register_estimator
class MEMM(ChainEstimator):
    """Maximum-entropy Markov model: one log-linear classifier per position.

    ``P(y_t | y_{t-1}, x_t)`` is a softmax over labels of the same scores as
    the CRF's, ``E[t, y] + T[y_{t-1}, y]`` (``start[y]`` at ``t = 0``), but
    normalised per position and per previous label instead of over whole
    sequences.  Training minimises ``-sum log P(y_t | y_{t-1}, x_t) + c2 *
    ||w||^2`` with the project's L-BFGS (:func:`cseq.optimize.lbfgs`), one
    GIL-free pass over the corpus per evaluation, parallel over sequences.
    Training is cheaper than the CRF's (one softmax per token, no
    forward-backward), and the model is subject to the *label bias* problem:
    a previous label with few successors passes its probability mass on
    whatever the observation (Lafferty et al. 2001; see ``docs/learners.md``).

    ``predict`` returns the most probable label sequence (Viterbi over
    log-probabilities) and ``predict_marginals`` the exact marginals of the
    chain.  The model's ``end`` block is not used and stays zero.

    Parameters
    ----------
    c2 : float, default 1.0
        L2 regularisation strength (``c2 * ||w||^2``, as for :class:`CRF`), at
        most 1e100.
    max_iter : int, default 100
        Maximum L-BFGS iterations.
    tol : float, default 1e-5
        Stop when the objective improved by less than ``tol`` (relative) over
        the last ``period`` iterations.
    period : int, default 10
        Window of that test.  A fit that reaches ``max_iter`` first warns
        (:class:`~cseq.ConvergenceWarning`).  The loop is the CRF's
        (:func:`cseq.learners.loops.train_lbfgs`).
    early_stopping : bool, default False
        Score the dev set (``fit``'s ``X_dev``, ``y_dev``, required) after
        every iteration, stop after ``patience`` iterations without a better
        accuracy and keep the best iteration's weights (``best_iteration_``).
    patience : int, default 5
    n_jobs : int, default 1
        Threads for the objective, decoding and marginals (``-1``: all usable
        CPUs; a larger count is clamped to them, see
        ``cseq.model.resolve_n_jobs``).
    all_states : bool, default False
        Give every (attribute, label) pair a weight.
    features : featurizer or None
        As for :class:`StructuredPerceptron`.
    verbose : bool
        Print one line per iteration: loss, seconds, dev accuracy.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_, history_
        As for :class:`CRF`; ``history_`` records the loss.
    n_evaluations_ : int
    stop_reason_ : str
    best_iteration_ : int or None
        With early stopping, the iteration whose weights were kept.

    References
    ----------
    McCallum, A., Freitag, D., Pereira, F. (2000). Maximum entropy Markov
    models for information extraction and segmentation. ICML.
    Ratnaparkhi, A. (1996). A maximum entropy model for part-of-speech
    tagging. EMNLP.
    Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields:
    probabilistic models for segmenting and labeling sequence data. ICML
    (the label bias problem).
    """

    _param_names = ("c2", "max_iter", "tol", "period", "early_stopping", "patience", "n_jobs",
                    "all_states", "features", "verbose")
    _probabilities = "local"  # see cseq.probability
    _linear_scores = False  # locally normalised scores: no explain

    def __init__(self, *, c2: float = 1.0, max_iter: int = 100, tol: float = 1e-5,
                 period: int = 10, early_stopping: bool = False, patience: int = 5,
                 n_jobs: int = 1, all_states: bool = False, features: Any = None,
                 verbose: bool = False) -> None:
        self.c2 = c2
        self.max_iter = max_iter
        self.tol = tol
        self.period = period
        self.early_stopping = early_stopping
        self.patience = patience
        self.n_jobs = n_jobs
        self.all_states = all_states
        self.features = features
        self.verbose = verbose

    def _validate_params(self) -> None:
        super()._validate_params()
        check_number("c2", self.c2, low=0.0, high=MAX_REGULARIZATION)
        check_number("max_iter", self.max_iter, low=1, integer=True)
        check_number("tol", self.tol, low=0.0)
        check_number("period", self.period, low=1, integer=True)
        resolve_n_jobs(self.n_jobs)

    def _train(self, corpus, model, dev, callback):
        train_lbfgs(self, MEMMObjective(model, corpus, self.c2, self.n_jobs), model, dev, callback,
                    values=corpus.values)

    def _decode(self, model: LinearChain, corpus: Sequences) -> np.ndarray:
        model.check_corpus(corpus)
        try:
            return _memm.memm_decode(model.index, model.params, corpus.view(),
                                     work_chunks(corpus.seq_ptr, 1), 1)
        except FloatingPointError as exc:
            raise not_finite(exc.args[0], "local log Z") from None

    def predict_marginals(self, X: Sequence[Any], *, n_jobs: int = 1, constraints: Any = None,
                          fixed: Any = None) -> list[np.ndarray]:
        """Label marginals of each token under the chain: a list of (n_i, L) arrays.

        ``P(y_t = j | x)``, columns in ``classes_`` order, computed exactly by
        the forward recursion of the locally normalised chain.
        """
        fitted = self._check_fitted()
        if constraints is not None or fixed is not None:
            # The restricted distribution's marginals (see cseq.decoding).
            return decoding.predict_marginals(self, fitted, X, constraints, fixed, n_jobs)
        model = fitted.model

        def work(corpus, block):
            model.check_corpus(corpus)
            try:
                m = _memm.memm_marginals(model.index, model.params, corpus.view(),
                                         work_chunks(corpus.seq_ptr, 1), 1)
            except FloatingPointError as exc:
                raise not_finite(exc.args[0], "local log Z") from None
            return self._split(m, corpus)
        return [m for block in self._map_blocks(fitted, X, n_jobs, work) for m in block]

    def sequence_log_proba(self, X: Sequence[Any], y: Sequence[Sequence[str]]) -> np.ndarray:
        """The same as :meth:`sequence_log_prob` (the name this method had first)."""
        return self.sequence_log_prob(X, y)

    def _training_state(self, fitted) -> dict:
        # stop_reason is the base class's; n_evaluations is written when known.
        n_eval = fitted.attributes.get("n_evaluations_")
        return {} if n_eval is None else {"n_evaluations": int(n_eval)}

    def _restore_training(self, training: dict) -> None:
        self.n_evaluations_ = header_field(training, "n_evaluations", "training", int,
                                           default=None)
