"""The passive-aggressive learner's epoch loop, run without the GIL.

For a sequence whose Viterbi path ``y*`` under the current weights ``w``
differs from the gold path ``y``, with ``delta = Phi(y) - Phi(y*)`` and
``d`` the number of wrong labels, the loss is CRFsuite's

    loss = w . Phi(y*) - w . Phi(y) + (sqrt(d) if error_sensitive else 1)

and the step (Crammer et al. 2006: PA, PA-I, PA-II) is

    tau = loss / ||delta||^2                  (type 0)
    tau = min(C, loss / ||delta||^2)          (type 1)
    tau = loss / (||delta||^2 + 1 / (2 C))    (type 2)

then ``w += tau * delta``.  The average of the weights after every example
is kept lazily by :class:`cseq._weights.AveragedParams`, as for the
perceptron.

References
----------
Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S., Singer, Y. (2006).
Online passive-aggressive algorithms. JMLR 7.
"""

from libc.math cimport isfinite

from cseq._margin cimport (COST_ONE, COST_SQRT, MarginScratch, margin_scratch_free,
                           margin_scratch_init, margin_violation)
from cseq._types cimport index_t, label_t, weight_t
from cseq._weights cimport AveragedParams, Chain, ChainIndex, CorpusView, ParamSink, chain_of, sink_add


cdef class PATrainer:
    """Passive-aggressive training over one packed, fully labeled corpus (first order).

    Parameters
    ----------
    ix : ChainIndex
        The model's structure (a first-order layout).
    cv : CorpusView
        The validated packed corpus, with labels (none unknown).
    params : AveragedParams
        Weights (unscaled) and averaging state, updated in place.
    pa_type : int
        0 (PA), 1 (PA-I) or 2 (PA-II).
    C : float
        Aggressiveness (> 0, finite); unused by type 0.
    error_sensitive : bool
        The loss's margin term is ``sqrt(d)`` (d wrong labels) instead of 1.
    """

    cdef ChainIndex ix
    cdef CorpusView cv
    cdef AveragedParams params
    cdef Chain ch
    cdef MarginScratch m
    cdef int pa_type
    cdef weight_t C
    cdef bint error_sensitive

    def __cinit__(self, ChainIndex ix, CorpusView cv, AveragedParams params, int pa_type,
                  double C, bint error_sensitive):
        if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
            raise ValueError("passive-aggressive training needs a labeled corpus")
        if ix.layout.order != 1:
            raise ValueError("passive-aggressive training is first order")
        if params.scale != 1.0 or params.w.shape[0] != ix.layout.n_params:
            raise ValueError(f"params must be {ix.layout.n_params} unscaled weights")
        if pa_type not in (0, 1, 2) or not (C > 0 and C < float("inf")):
            raise ValueError("pa_type must be 0, 1 or 2 and C positive and finite")
        self.ix = ix
        self.cv = cv
        self.params = params
        self.ch = chain_of(ix, cv)
        self.pa_type = pa_type
        self.C = C
        self.error_sensitive = error_sensitive
        margin_scratch_init(&self.m, &self.ch)

    def __dealloc__(self):
        margin_scratch_free(&self.m)

    cdef weight_t _step_size(self, weight_t loss, weight_t norm2) noexcept nogil:
        if self.pa_type == 1:
            return min(self.C, loss / norm2)
        if self.pa_type == 2:
            return loss / (norm2 + 0.5 / self.C)
        return loss / norm2

    cdef index_t _train_sequence(self, index_t s, ParamSink* sink, weight_t* loss) noexcept nogil:
        """Decode sequence ``s``, update on a mistake; returns the wrong labels, sets ``loss``."""
        cdef MarginScratch* m = &self.m
        cdef index_t j
        cdef weight_t norm2 = 0.0, tau
        cdef index_t d = margin_violation(&self.ch, sink.w, s,
                                          COST_SQRT if self.error_sensitive else COST_ONE, m, loss)
        if d == 0 or not isfinite(loss[0]):
            return d  # no mistake, or no update: the caller stops with an error
        for j in range(m.n):
            norm2 += m.vals[j] * m.vals[j]
        if norm2 > 0.0:
            tau = self._step_size(loss[0], norm2)
            for j in range(m.n):
                sink_add(sink, m.keys[j], tau * m.vals[j])
        return d

    def train_epoch(self, const index_t[::1] order):
        """One pass over the sequences in ``order`` (validated indices).

        Returns
        -------
        errors : int
            Labels the current weights got wrong during the pass.
        loss : float
            Sum of the losses of the updates (CRFsuite's "Loss").

        Raises
        ------
        FloatingPointError
            If a loss left float64; the offending sequence made no update.
        """
        cdef index_t i, errors = 0
        cdef weight_t loss, total = 0.0
        cdef bint finite = True
        cdef ParamSink sink = self.params.sink()
        for i in range(order.shape[0]):
            if order[i] < 0 or order[i] >= self.ch.corpus.n_seqs:
                raise IndexError(f"sequence index {order[i]} out of range")
        with nogil:
            for i in range(order.shape[0]):
                self.params.begin_example(&sink)
                errors += self._train_sequence(order[i], &sink, &loss)
                self.params.end_example(1.0)
                total += loss
                if not isfinite(total):
                    finite = False
                    break
        if not finite:
            raise FloatingPointError(f"the loss left float64 at sequence {order[i]}")
        return int(errors), float(total)
