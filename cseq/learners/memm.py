"""The maximum-entropy Markov model: a locally normalised chain trained with L-BFGS."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq.learners import _memm
from cseq.learners.base import MAX_REGULARIZATION, ChainEstimator, Number
from cseq.chain.normalized import Posterior, local_posterior
from cseq.chain.inference import forward_backward, viterbi
from cseq.learners.loops import train_lbfgs
from cseq._core.threads import resolve_n_jobs
from cseq.chain.model import LinearChain, not_finite, per_sequence, work_chunks
from cseq.learners.objectives import MEMMObjective
from cseq.chain.sequences import Sequences
from cseq.registry import EARLY_STOPPING, Command, register
from cseq.io.serialize import header_field

__all__ = ["LocalChain", "MEMM"]


class LocalChain(LinearChain):
    """The MEMM's chain: the linear chain's parameters, normalised per position.

    ``P(y_t = j | y_{t-1} = p, x) = softmax_j(E[t, j] + T[p, j])`` (``start``
    at ``t = 0``; ``end`` unused), and ``P(y | x)`` their product
    (:mod:`cseq.learners._memm`, whose kernels only this class calls).  ``log P(y | x)``
    is a chain score up to a constant (:meth:`dense_chains`), so the model
    decodes under constraints and lists n-best labelings with the chain
    kernels, but its decoder does not maximize the sum of its weights
    (``linear_scores`` False: no ``explain``).
    """

    linear_scores = False
    probabilistic = True
    decodes_word_rows = False
    sparse_kernels = False

    def decode(self, corpus: Sequences, n_jobs: int = 1, *, allowed=None,
               allowed_transitions=None, allowed_start=None, allowed_end=None) -> np.ndarray:
        """The most probable labels of every token (int32): Viterbi over log-probabilities.

        With constraints (as for :meth:`LinearChain.decode`), the best allowed
        labeling of each sequence, by Viterbi on its :meth:`dense_chains`.
        """
        return self._infer(_memm.memm_decode, lambda c, kw: viterbi(
            *c[:4], transitions2=c[4], **kw)[0], corpus, n_jobs, allowed, allowed_transitions,
            allowed_start, allowed_end, np.zeros(0, dtype=np.int32))

    def marginals(self, corpus: Sequences, n_jobs: int = 1, *, allowed=None,
                  allowed_transitions=None, allowed_start=None,
                  allowed_end=None) -> np.ndarray:
        """``P(y_t = j | x)`` for every token, shape (n_tokens, L), by the forward recursion.

        With constraints, the marginals of the distribution restricted to the
        allowed labelings (forward-backward on each :meth:`dense_chains`).
        """
        return self._infer(_memm.memm_marginals, lambda c, kw: forward_backward(
            *c[:4], transitions2=c[4], **kw)[1], corpus, n_jobs, allowed, allowed_transitions,
            allowed_start, allowed_end, np.zeros((0, self.n_labels)))

    def _infer(self, kernel, per_chain, corpus: Sequences, n_jobs: int, allowed,
               allowed_transitions, allowed_start, allowed_end, empty: np.ndarray) -> np.ndarray:
        """``kernel`` (the MEMM's decoder or marginals) over every sequence of ``corpus`` in
        ``n_jobs`` threads; with constraints, ``per_chain(chain, kw)`` on each sequence's
        :meth:`dense_chains` with its constraint keywords, the rows joined (``empty``:
        what to return when there are none)."""
        masks = {"allowed_transitions": allowed_transitions, "allowed_start": allowed_start,
                 "allowed_end": allowed_end}
        if allowed is None and all(m is None for m in masks.values()):
            self.check_corpus(corpus)
            threads = resolve_n_jobs(n_jobs)
            try:
                return kernel(self.index, self.params, corpus.view(),
                              work_chunks(corpus.seq_ptr, threads), threads)
            except FloatingPointError as exc:
                raise not_finite(exc.args[0], "local log Z") from None
        rows = [r for r in per_sequence(self.dense_chains(corpus), allowed, corpus, masks,
                                        per_chain) if r is not None]
        return np.concatenate(rows) if rows else empty

    def _chain_of(self, corpus: Sequences):
        """``log P(y | x) = start[y_0] + sum_t E[t, y_t] + sum_t T[y_{t-1}, y_t] - log Z_0 -
        sum_{t >= 1} log Z_t(y_{t-1})``: ``log Z_t(p)`` is taken from the emission of ``p``
        at ``t - 1``, and ``log Z_0`` is the log partition function of the chain."""
        view = corpus.view()
        T, st, en = self.transitions, self.start, np.zeros(self.n_labels)

        def chain(s: int, em: np.ndarray) -> tuple:
            _, _, lz = _memm.local_distributions(self.index, self.params, view, s)
            if not np.isfinite(lz).all():
                raise not_finite(s, "local log Z")
            em[:-1] -= lz
            return em, T, st, en, None
        return chain

    def posteriors(self, corpus: Sequences, *, pairs: bool = False,
                   paths: np.ndarray | None = None) -> list[tuple[Posterior | None, float]]:
        # The local distributions are the posterior's transitions: ``pairs``
        # costs nothing more here.
        self.check_corpus(corpus)
        ptr = corpus.seq_ptr
        em_all = self.emissions(corpus, 0, corpus.n_tokens)
        out: list[tuple[Posterior | None, float]] = []
        for s in range(corpus.n_sequences):
            a, b = int(ptr[s]), int(ptr[s + 1])
            if a == b:
                out.append((None, 0.0))
                continue
            path = None if paths is None else paths[a:b].astype(np.int64)
            out.append(local_posterior(np.ascontiguousarray(em_all[a:b]), self.transitions,
                                       self.start, path, s))
        return out

    def sequence_log_prob(self, corpus: Sequences) -> np.ndarray:
        self.check_corpus(corpus)
        out = np.zeros(corpus.n_sequences)
        chunks = work_chunks(corpus.seq_ptr, 1)
        try:
            self.objective(self.params, corpus.view(), chunks, np.empty((len(chunks) - 1, 0)),
                           1, False, out)
        except FloatingPointError as exc:
            raise not_finite(exc.args[0], "local log Z") from None
        return -out

    def objective(self, params: np.ndarray, view, chunks: np.ndarray, grad_buffers: np.ndarray,
                  n_jobs: int, with_grad: bool = True, per_sequence: np.ndarray | None = None
                  ) -> tuple[float, np.ndarray | None]:
        """``sum_s -log P(y_s | x_s)`` of the labeled corpus ``view`` at ``params`` and its
        gradient (:func:`cseq.learners._memm.memm_objective`; the training objective's data term)."""
        return _memm.memm_objective(self.index, params, view, chunks, grad_buffers, n_jobs,
                                    with_grad, per_sequence)


@register(Command("memm", 100, {"c2": "c2", "n_jobs": "n_jobs", **EARLY_STOPPING},
                  "maximum-entropy Markov model, L-BFGS", defaults={"c2": 0.1},
                  quick={"max_iter": 15}))
class MEMM(ChainEstimator):
    """Maximum-entropy Markov model: one log-linear classifier per position.

    ``P(y_t | y_{t-1}, x_t)`` is a softmax over labels of the same scores as
    the CRF's, ``E[t, y] + T[y_{t-1}, y]`` (``start[y]`` at ``t = 0``), but
    normalised per position and per previous label instead of over whole
    sequences.  Training minimises ``-sum log P(y_t | y_{t-1}, x_t) + c2 *
    ||w||^2`` with the project's L-BFGS (:func:`cseq.learners.optimize.lbfgs`), one
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
        ``cseq._core.threads.resolve_n_jobs``).
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

    _parameter_constraints = {"c2": Number(0.0, high=MAX_REGULARIZATION)}
    _model_class = LocalChain

    def __init__(self, *, c2: float = 1.0, max_iter: int = 100, tol: float = 1e-5,
                 period: int = 10, early_stopping: bool = False, patience: int = 5,
                 n_jobs: int = 1, all_states: bool = False, features: Any = None,
                 verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def _train(self, corpus, model, dev, callback):
        train_lbfgs(self, MEMMObjective(model, corpus, self.c2, self.n_jobs), model, dev, callback,
                    values=corpus.values)

    def predict_marginals(self, X: Sequence[Any], *, n_jobs: int = 1, constraints: Any = None,
                          fixed: Any = None) -> list[np.ndarray]:
        """Label marginals of each token under the chain: a list of (n_i, L) arrays.

        ``P(y_t = j | x)``, columns in ``classes_`` order, computed exactly by
        the forward recursion of the locally normalised chain
        (:meth:`LocalChain.marginals`).
        """
        return self._chain_marginals(X, n_jobs, constraints, fixed)

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
