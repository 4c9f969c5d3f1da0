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
is kept lazily by :class:`cseq.chain._chain.AveragedParams`, as for the
perceptron.

References
----------
Crammer, K., Dekel, O., Keshet, J., Shalev-Shwartz, S., Singer, Y. (2006).
Online passive-aggressive algorithms. JMLR 7.
"""

from libc.math cimport isfinite

from cseq.learners._margin cimport (COST_ONE, COST_SQRT, MarginScratch, margin_epoch,
                                    margin_scratch_free, margin_scratch_init, margin_violation)
from cseq._core._types cimport index_t, weight_t
from cseq.chain._chain cimport AveragedParams, Chain, ChainIndex, CorpusView, ParamSink, chain_of, sink_add


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
    cdef ParamSink sink     # params.sink() for the epoch under way

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
        """One pass over the sequences in ``order``: :func:`cseq.learners._margin.margin_epoch`.

        Returns ``(errors, loss)``: the labels the current weights got wrong
        and the sum of the losses (CRFsuite's "Loss"); FloatingPointError when
        a loss leaves float64 (that sequence made no update).
        """
        self.sink = self.params.sink()
        return margin_epoch(order, self.ch.corpus.n_seqs, _pa_step, <void*> self)

    cdef index_t _example(self, index_t s, weight_t* loss) noexcept nogil:
        """:meth:`_train_sequence` on sequence ``s`` as one averaged example."""
        cdef index_t d
        self.params.begin_example(&self.sink)
        d = self._train_sequence(s, &self.sink, loss)
        self.params.end_example(1.0)
        return d


cdef index_t _pa_step(void* learner, index_t s, weight_t* loss) noexcept nogil:
    # margin_epoch's step: `learner` is the PATrainer running the epoch.
    return (<PATrainer> learner)._example(s, loss)
