"""Training objectives over a packed corpus: a data term plus one penalty.

Every loss is split the same way: a *data term*, a sum over sequences that
can be computed in pieces (threads here, shards on a cluster) and added up,
and a *penalty* on the weights, added once.  The optimizer sees their sum.
"""

from __future__ import annotations

import numpy as np

from cseq.chain import _clamped, _crf
from cseq.exceptions import InputError
from cseq._core.threads import resolve_n_jobs
from cseq.chain.model import LinearChain, work_chunks
from cseq.chain.sequences import Sequences
from cseq._core.vectors import dot

__all__ = ["CRFObjective", "MEMMObjective", "l2_penalty"]


def l2_penalty(theta: np.ndarray, c2: float) -> tuple[float, np.ndarray]:
    """``c2 * ||theta||^2`` and its gradient (CRFsuite's scaling of ``c2``)."""
    return c2 * dot(theta, theta), (2.0 * c2) * theta


class CRFObjective:
    """Negative L2-regularised conditional log-likelihood of a linear-chain CRF.

    ``f(theta) = sum_s (log Z_s(theta) - score_s(gold)) + c2 * ||theta||^2`` and
    ``grad f = E[counts] - counts(gold) + 2 * c2 * theta``, the regularisation of
    CRFsuite (c2 multiplies the squared norm).  :meth:`data_term` makes one
    GIL-free pass over the corpus, split into ``n_jobs`` contiguous chunks of
    about equal token count; chunk gradients are summed in chunk order, so the
    result for a given ``n_jobs`` never depends on thread timing.

    A sequence with unknown labels (-1) contributes ``log Z_s - log
    Z_clamped_s`` (the likelihood of all its completions) and ``E[counts] -
    E_clamped[counts]`` instead (:mod:`cseq.chain._clamped`): one more
    forward-backward pass over those sequences.  Without unknown labels
    nothing changes.

    References
    ----------
    Lafferty, McCallum, Pereira (2001); Sha and Pereira (2003); Tsuboi et al.
    (2008), training CRFs on incomplete annotations.
    """

    def __init__(self, model: LinearChain, corpus: Sequences, c2: float = 1.0,
                 n_jobs: int = 1) -> None:
        model.check_corpus(corpus)
        if corpus.labels is None:
            raise InputError("the CRF objective needs a labeled corpus")
        self.model = model
        self.corpus = corpus
        self.c2 = float(c2)
        self.threads = resolve_n_jobs(n_jobs)
        self.chunks = work_chunks(corpus.seq_ptr, self.threads)
        self._view = corpus.view(labels=False)
        self.empirical = model.path_features(corpus)
        self._buffers = np.empty((len(self.chunks) - 1, len(model.params)), dtype=np.float64)
        self.n_evaluations = 0
        # Partially labelled sequences, their work chunks (by token count).
        self._partial = corpus.unknown_sequences()
        if len(self._partial):
            self._partial_view = corpus.view(partial=True)
            lengths = corpus.lengths[self._partial]
            ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=ptr[1:])
            self._partial_chunks = work_chunks(ptr, self.threads)

    def data_term(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """``sum_s log Z_s - theta . counts(gold)`` and its gradient (no penalty).

        A partially labelled sequence's term is ``log Z_s - log Z_clamped_s``.
        """
        log_z, expected = _crf.crf_log_z_and_expectations(
            self.model.index, theta, self._view, self.chunks, self._buffers, self.threads)
        self.n_evaluations += 1
        expected -= self.empirical
        value = log_z - dot(theta, self.empirical)
        if len(self._partial):
            log_zc, clamped = _clamped.clamped_log_z_and_expectations(
                self.model.index, theta, self._partial_view, self._partial, self._partial_chunks,
                self._buffers, self.threads)
            value -= log_zc
            expected -= clamped
        return value, expected

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Objective value and gradient at ``theta`` (float64, model layout)."""
        value, grad = self.data_term(theta)
        penalty, pgrad = l2_penalty(theta, self.c2)
        grad += pgrad
        return value + penalty, grad


class MEMMObjective:
    """Negative L2-regularised local log-likelihood of a maximum-entropy Markov model.

    ``f(theta) = sum_s sum_t (log Z_t(y_{t-1}) - E[t, y_t] - T[y_{t-1}, y_t]) +
    c2 * ||theta||^2`` (``start`` in place of ``T`` at ``t = 0``), the same
    split as :class:`CRFObjective`: :meth:`data_term` is a sum over sequences
    computed in one GIL-free pass (:meth:`cseq.learners.memm.LocalChain.objective`), chunked
    over ``n_jobs`` threads and summed in chunk order, plus :func:`l2_penalty`.
    The ``end`` block gets no gradient but its penalty, so it stays at zero.

    References
    ----------
    McCallum, Freitag, Pereira (2000). Maximum entropy Markov models for
    information extraction and segmentation. ICML.
    """

    def __init__(self, model: LinearChain, corpus: Sequences, c2: float = 1.0,
                 n_jobs: int = 1) -> None:
        model.check_corpus(corpus)
        if corpus.labels is None:
            raise InputError("the MEMM objective needs a labeled corpus")
        self.model = model
        self.corpus = corpus
        self.c2 = float(c2)
        self.threads = resolve_n_jobs(n_jobs)
        self.chunks = work_chunks(corpus.seq_ptr, self.threads)
        self._view = corpus.view()
        self._buffers = np.empty((len(self.chunks) - 1, len(model.params)), dtype=np.float64)
        self.n_evaluations = 0

    def data_term(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """``sum_s -log P(y_s | x_s)`` under the local model, and its gradient (no penalty)."""
        self.n_evaluations += 1
        return self.model.objective(theta, self._view, self.chunks, self._buffers, self.threads)

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Objective value and gradient at ``theta`` (float64, model layout)."""
        value, grad = self.data_term(theta)
        penalty, pgrad = l2_penalty(theta, self.c2)
        grad += pgrad
        return value + penalty, grad
