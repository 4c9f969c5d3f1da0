"""Stochastic gradient descent for the L2-regularised CRF, run without the GIL.

The objective ``sum_s loss_s(w) + c2 * ||w||^2`` is split into per-sequence
terms ``loss_s(w) + (lam / 2) ||w||^2`` with ``lam = 2 * c2 / N``.  A step on
sequence ``s`` at rate ``eta`` is ``w <- (1 - eta * lam) w - eta * grad
loss_s(w)``.  The weights are kept as ``w = scale * v``: the decay multiplies
the scalar ``scale`` only, and the gradient step adds ``-(eta / scale) *
grad`` into ``v`` at the weights the sequence touches, so a step costs
O(features of the sequence + L^2), not O(number of weights) (Shalev-Shwartz
et al. 2007; Bottou 2010; CRFsuite's ``l2sgd``).  ``v`` is folded back into
``w`` whenever ``scale`` gets small, and at the end of every epoch.

The rate follows ``eta_t = 1 / (lam * (t0 + t))`` (Bottou 2010), ``t``
counting steps from the start of training; the caller chooses ``t0``.

References
----------
Bottou, L. (2010). Large-scale machine learning with stochastic gradient
descent. COMPSTAT.
Shalev-Shwartz, S., Singer, Y., Srebro, N. (2007). Pegasos: primal estimated
sub-gradient solver for SVM. ICML.
Okazaki, N. (2007). CRFsuite: a fast implementation of conditional random
fields. http://www.chokkan.org/software/crfsuite/
"""

from libc.math cimport isfinite
from libc.stdlib cimport free, malloc

from cseq.chain._clamped cimport fb_partial_update
from cseq.chain._crf cimport crf_sequence_update
from cseq.chain._forward_backward cimport (FBTables, FBWork, fb_tables_free, fb_tables_init,
                                           fb_work_free, fb_work_init)
from cseq._core._types cimport index_t, weight_t
from cseq.chain._chain cimport Chain, ChainIndex, CorpusView, chain_of, check_order, has_unknown

# Below this the scale is folded into the weights, long before v overflows.
cdef weight_t _MIN_SCALE = 1e-9


cdef class CRFSGDTrainer:
    """SGD epochs for the L2-regularised CRF over one packed, labeled corpus.

    Parameters
    ----------
    ix : ChainIndex
        The model's structure.
    cv : CorpusView
        The validated packed corpus, with labels; a sequence with labels -1
        (unknown) takes its step on ``log Z - log Z_clamped``
        (:mod:`cseq.chain._clamped`).
    w : ndarray of float64
        The weights (``ix.layout["n_params"]`` entries), updated in place: they
        belong to the caller.  Between epochs they are the current weights.
    """

    cdef ChainIndex ix
    cdef CorpusView cv
    cdef Chain ch
    cdef readonly object w
    cdef weight_t[::1] _w
    cdef weight_t scale
    cdef FBWork wk
    cdef weight_t* marg
    cdef weight_t* pairs
    cdef weight_t* marg2
    cdef weight_t* pairs2
    cdef weight_t* trans
    cdef index_t n_trans

    def __cinit__(self, ChainIndex ix, CorpusView cv, w):
        cdef int L = ix.layout.n_labels
        self.marg = NULL
        self.pairs = NULL
        self.marg2 = NULL
        self.pairs2 = NULL
        self.trans = NULL
        self.wk.em = NULL
        self.wk.alpha = NULL
        self.wk.beta = NULL
        self.wk.scale = NULL
        self.wk.tmp = NULL
        if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
            raise ValueError("SGD needs a labeled corpus")
        if w.shape[0] != ix.layout.n_params:
            raise ValueError(f"w has {w.shape[0]} weights, the layout {ix.layout.n_params}")
        self.ix = ix
        self.cv = cv
        self.w = w
        self._w = w
        self.scale = 1.0
        self.ch = chain_of(ix, cv)
        if fb_work_init(&self.wk, cv.max_len, L, ix.layout.order) != 0:
            raise MemoryError()
        # The transition blocks are contiguous in the layout (trans, start,
        # end, then trans2 for order 2): copied scaled before every step.
        self.n_trans = ix.layout.n_params - ix.layout.trans
        self.marg = <weight_t*>malloc(self.wk.capacity * L * sizeof(weight_t))
        self.pairs = <weight_t*>malloc((L * L + (L * L * L if ix.layout.order == 2 else 0))
                                       * sizeof(weight_t))
        self.trans = <weight_t*>malloc(self.n_trans * sizeof(weight_t))
        # The second forward-backward pass of a partially labelled sequence.
        self.marg2 = <weight_t*>malloc(self.wk.capacity * L * sizeof(weight_t))
        self.pairs2 = <weight_t*>malloc((L * L + (L * L * L if ix.layout.order == 2 else 0))
                                        * sizeof(weight_t))
        if (self.marg == NULL or self.pairs == NULL or self.trans == NULL or self.marg2 == NULL
                or self.pairs2 == NULL):
            raise MemoryError()

    def __dealloc__(self):
        fb_work_free(&self.wk)
        free(self.marg)
        free(self.pairs)
        free(self.trans)
        free(self.marg2)
        free(self.pairs2)

    cdef void _fold(self) noexcept nogil:
        cdef index_t k
        if self.scale != 1.0:
            for k in range(self._w.shape[0]):
                self._w[k] *= self.scale
            self.scale = 1.0

    def epoch(self, const index_t[::1] order, double lam, double t0, long long t):
        """One pass over the sequences in ``order``; step ``t`` has rate ``1 / (lam * (t0 + t))``.

        Parameters
        ----------
        order : sequence indices to visit.
        lam : per-sequence L2 weight (``2 * c2 / N``), > 0.
        t0 : offset of the rate schedule, > 0.
        t : steps taken before this epoch.

        Returns
        -------
        loss : float
            Sum of the sequences' ``log Z - score(gold)``, each at the weights
            the step on it started from.
        t : int
            Steps taken after this epoch.

        Raises
        ------
        FloatingPointError
            When a sequence's log Z is not finite (the weights diverged).
        """
        cdef index_t i, k, s, bad = -1
        cdef int L = self.ix.layout.n_labels
        cdef index_t tr0 = self.ix.layout.trans
        cdef weight_t eta, gain, loss, total = 0.0
        cdef FBTables tb
        cdef int failed = 0
        if not (lam > 0 and t0 > 0):
            raise ValueError("lam and t0 must be positive")
        check_order(order, self.ch.corpus.n_seqs)
        with nogil:
            for i in range(order.shape[0]):
                s = order[i]
                eta = 1.0 / (lam * (t0 + t))
                t += 1
                self.scale *= 1.0 - eta * lam
                if self.scale < _MIN_SCALE:
                    self._fold()
                gain = eta / self.scale
                for k in range(self.n_trans):
                    self.trans[k] = self.scale * self._w[tr0 + k]
                if fb_tables_init(&tb, self.trans, self.trans + L * L, self.trans + L * L + L,
                                  self.trans + L * L + 2 * L if self.n_trans > L * L + 2 * L
                                  else NULL, L) != 0:
                    failed = 1
                    break
                if has_unknown(self.ch.corpus.labels + self.ch.corpus.seq_ptr[s],
                               self.ch.corpus.seq_ptr[s + 1] - self.ch.corpus.seq_ptr[s]):
                    # A partially labelled sequence: log Z - log Z_clamped (cseq.chain._clamped).
                    loss = fb_partial_update(&self.ch, &tb, &self.wk, &self._w[0], self.scale,
                                             s, gain, self.marg, self.pairs, self.marg2,
                                             self.pairs2, &self._w[0])
                else:
                    loss = crf_sequence_update(&self.ch, &tb, &self.wk, &self._w[0], self.scale,
                                               s, gain, self.marg, self.pairs, &self._w[0])
                fb_tables_free(&tb)
                if not isfinite(loss):
                    bad = s
                    break
                total += loss
            self._fold()
        if failed:
            raise MemoryError("cseq: out of memory in SGD")
        if bad >= 0:
            raise FloatingPointError(f"log Z is not finite for sequence {bad}")
        return float(total), t
