"""Training objectives over a packed corpus, as plain (value, gradient) functions."""

from __future__ import annotations

import numpy as np

from cseq import _forward_backward
from cseq.model import LinearChain, resolve_n_jobs, work_chunks
from cseq.sequences import Sequences

__all__ = ["CRFObjective"]


class CRFObjective:
    """Negative L2-regularised conditional log-likelihood of a linear-chain CRF.

    ``f(theta) = sum_s (log Z_s(theta) - score_s(gold)) + c2 * ||theta||^2`` and
    ``grad f = E[counts] - counts(gold) + 2 * c2 * theta``, the regularisation of
    CRFsuite (c2 multiplies the squared norm).  One call makes one GIL-free
    pass over the corpus, split into ``n_jobs`` contiguous chunks of about equal
    token count; chunk gradients are summed in chunk order, so the result for a
    given ``n_jobs`` never depends on thread timing.

    References
    ----------
    Lafferty, McCallum, Pereira (2001); Sha and Pereira (2003).
    """

    def __init__(self, model: LinearChain, corpus: Sequences, c2: float = 1.0,
                 n_jobs: int = 1) -> None:
        model.check_corpus(corpus)
        self.model = model
        self.corpus = corpus
        self.c2 = float(c2)
        self.threads = resolve_n_jobs(n_jobs)
        self.chunks = work_chunks(corpus.seq_ptr, self.threads)
        self.empirical = _forward_backward.empirical_counts(
            model.attr_ptr, model.attr_labels, model.n_labels, corpus.seq_ptr,
            corpus.tok_ptr, corpus.attr_ids, corpus.values, corpus.labels)
        self._buffers = np.empty((len(self.chunks) - 1, len(model.params)), dtype=np.float64)
        self.n_evaluations = 0

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Objective value and gradient at ``theta`` (float64, model layout)."""
        m, c = self.model, self.corpus
        log_z, expected = _forward_backward.crf_log_z_and_expectations(
            theta, m.attr_ptr, m.attr_labels, m.n_labels, c.seq_ptr, c.tok_ptr,
            c.attr_ids, c.values, self.chunks, self._buffers, self.threads)
        self.n_evaluations += 1
        value = log_z - float(theta @ self.empirical) + self.c2 * float(theta @ theta)
        expected -= self.empirical
        expected += (2.0 * self.c2) * theta
        return value, expected
