"""AROW's epoch loop (adaptive regularization of weights), run without the GIL.

AROW keeps a mean weight vector ``mu`` (the weights that tag) and a diagonal
covariance ``Sigma`` (one variance per parameter, all ``variance`` at the
start).  For a sequence whose Viterbi path ``y*`` under ``mu`` differs from
the gold path ``y`` in ``d`` labels, with ``delta = Phi(y) - Phi(y*)``, the
loss is CRFsuite's ``mu . Phi(y*) - mu . Phi(y) + d`` and the update
(Crammer et al. 2009, for structured outputs Mejer and Crammer 2010) is

    alpha = loss / (gamma + sum_k Sigma_k delta_k^2)
    mu_k    += alpha * Sigma_k * delta_k
    Sigma_k  = 1 / (1 / Sigma_k + delta_k^2 / gamma)

so weights the data has often touched move less.

References
----------
Crammer, K., Kulesza, A., Dredze, M. (2009). Adaptive regularization of
weight vectors. NIPS.
Mejer, A., Crammer, K. (2010). Confidence in structured-prediction using
confidence-weighted models. EMNLP.
"""

from libc.math cimport isfinite

from cseq.learners._margin cimport (COST_COUNT, MarginScratch, margin_epoch, margin_scratch_free,
                                    margin_scratch_init, margin_violation)
from cseq._core._types cimport index_t, weight_t
from cseq.chain._chain cimport Chain, ChainIndex, CorpusView, chain_of


cdef class AROWTrainer:
    """AROW training over one packed, fully labeled corpus (first order).

    Parameters
    ----------
    ix : ChainIndex
        The model's structure (a first-order layout).
    cv : CorpusView
        The validated packed corpus, with labels (none unknown).
    mean, cov : ndarray of float64, shape (n_params,)
        The weights and their variances (positive), updated in place; they
        belong to the caller.
    gamma : float
        The trade-off (> 0, finite): larger means smaller steps.
    """

    cdef ChainIndex ix
    cdef CorpusView cv
    cdef weight_t[::1] mean
    cdef weight_t[::1] cov
    cdef Chain ch
    cdef MarginScratch m
    cdef weight_t gamma

    def __cinit__(self, ChainIndex ix, CorpusView cv, weight_t[::1] mean, weight_t[::1] cov,
                  double gamma):
        if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
            raise ValueError("AROW training needs a labeled corpus")
        if ix.layout.order != 1:
            raise ValueError("AROW training is first order")
        if mean.shape[0] != ix.layout.n_params or cov.shape[0] != ix.layout.n_params:
            raise ValueError(f"mean and cov must have {ix.layout.n_params} entries")
        if not (gamma > 0 and gamma < float("inf")):
            raise ValueError("gamma must be positive and finite")
        self.ix = ix
        self.cv = cv
        self.mean = mean
        self.cov = cov
        self.ch = chain_of(ix, cv)
        self.gamma = gamma
        margin_scratch_init(&self.m, &self.ch)

    def __dealloc__(self):
        margin_scratch_free(&self.m)

    cdef index_t _train_sequence(self, index_t s, weight_t* loss) noexcept nogil:
        """Decode sequence ``s``, update on a mistake; returns the wrong labels, sets ``loss``."""
        cdef weight_t* mu = &self.mean[0]
        cdef weight_t* sigma = &self.cov[0]
        cdef MarginScratch* m = &self.m
        cdef index_t j, k
        cdef weight_t v, frac = self.gamma, alpha
        cdef index_t d = margin_violation(&self.ch, mu, s, COST_COUNT, m, loss)
        if d == 0 or not isfinite(loss[0]):
            return d  # no mistake, or no update: the caller stops with an error
        for j in range(m.n):
            frac += sigma[m.keys[j]] * m.vals[j] * m.vals[j]
        alpha = loss[0] / frac
        for j in range(m.n):
            k = m.keys[j]
            v = m.vals[j]
            mu[k] += alpha * sigma[k] * v
            sigma[k] = 1.0 / (1.0 / sigma[k] + v * v / self.gamma)
        return d

    def train_epoch(self, const index_t[::1] order):
        """One pass over the sequences in ``order``, as :meth:`cseq.learners._pa.PATrainer.train_epoch`.

        Returns ``(errors, loss)`` (see :func:`cseq.learners._margin.margin_epoch`);
        the loss's margin term is the number of wrong labels.
        """
        return margin_epoch(order, self.ch.corpus.n_seqs, _arow_step, <void*> self)


cdef index_t _arow_step(void* learner, index_t s, weight_t* loss) noexcept nogil:
    # margin_epoch's step: `learner` is the AROWTrainer running the epoch.
    return (<AROWTrainer> learner)._train_sequence(s, loss)
