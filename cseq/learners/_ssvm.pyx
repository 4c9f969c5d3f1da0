"""The structured SVM's kernels: its stochastic subgradient epoch and the structured hinge loss.

The objective (Tsochantaridis et al. 2005, margin rescaling, in the
form with ``C`` on the sum of losses) is

    F(w) = 1/2 ||w||^2 + C * sum_i H_i(w),
    H_i(w) = max_y [cost(y_i, y) + w . Phi(x_i, y)] - w . Phi(x_i, y_i),

over all parameters (state weights, transitions, start, end, trigrams).  Divided by
``C n`` it is Pegasos' ``lambda/2 ||w||^2 + 1/n sum_i H_i`` with
``lambda = 1 / (C n)``, minimised by stochastic subgradient steps
(Shalev-Shwartz et al. 2011; Ratliff et al. 2007 for structured outputs)
with the step size and weighted average of Lacoste-Julien et al. (2012):
at step ``t`` (1-based) on example ``i``, with ``eta = 2 / (lambda (t + 1))``,

    w <- (1 - eta lambda) w + eta (Phi(x_i, y_i) - Phi(x_i, y*)),

``y*`` the cost-augmented Viterbi path (the update term is zero when
``y* = y_i``), and the average weighs the weights after step ``t`` by
``t``.  Then ``w_{T+1}`` is proportional to ``sum_t t g_t``: early
subgradients, taken while the model was poor, fade, where Pegasos' ``1 /
(lambda t)`` keeps them all at full weight (on EWT its uniform average
stayed 2 points below the perceptron).  The shrink is O(1) through the
scale factor of :class:`cseq.chain._chain.AveragedParams` (weights
``scale * v``), so a step costs O(features of the example), like a
perceptron step; the weighted average is kept by the same lazy averaging.

References
----------
Lacoste-Julien, S., Schmidt, M., Bach, F. (2012). A simpler approach to
obtaining an O(1/t) convergence rate for the projected stochastic subgradient
method. arXiv:1212.2002.
Ratliff, N., Bagnell, J. A., Zinkevich, M. (2007). (Online) subgradient
methods for structured prediction. AISTATS.
Shalev-Shwartz, S., Singer, Y., Srebro, N., Cotter, A. (2011). Pegasos:
primal estimated sub-gradient solver for SVM. Mathematical Programming 127.
Tsochantaridis, I., Joachims, T., Hofmann, T., Altun, Y. (2005). Large margin
methods for structured and interdependent output variables. JMLR 6.
"""

from libc.stdlib cimport free, malloc

import numpy as np

from cseq.chain._decode cimport (loss_augmented_path, path_score, viterbi_back_size, viterbi_path,
                                 viterbi_delta_size)
from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._masks cimport clamp_rows
from cseq.chain._chain cimport (AveragedParams, Chain, ChainIndex, CorpusView, ParamSink, Transitions,
                                  add_path_features, chain_of, check_order, has_unknown,
                                  sequence_emissions, transitions_of)


cdef struct Buffers:
    weight_t* em
    weight_t* delta
    label_t* back
    label_t* pred
    label_t* gold     # the completed gold path of a partially labelled sequence
    weight_t* em_save  # the emissions clamp_rows overwrites, to put back
    const label_t* last_gold  # the gold path _violation used (corpus labels or gold)


cdef class _Scratch:
    """Per-sequence buffers for sequences of up to ``max_len`` tokens, a chain of ``order``."""

    cdef Buffers b

    def __cinit__(self, index_t max_len, index_t n_labels, int order):
        max_len = max(1, max_len)
        self.b.em = <weight_t*>malloc(max_len * n_labels * sizeof(weight_t))
        self.b.delta = <weight_t*>malloc(viterbi_delta_size(n_labels, order) * sizeof(weight_t))
        self.b.back = <label_t*>malloc(viterbi_back_size(max_len, n_labels, order)
                                       * sizeof(label_t))
        self.b.pred = <label_t*>malloc(max_len * sizeof(label_t))
        self.b.gold = <label_t*>malloc(max_len * sizeof(label_t))
        self.b.em_save = <weight_t*>malloc(max_len * n_labels * sizeof(weight_t))
        self.b.last_gold = NULL
        if (self.b.em == NULL or self.b.delta == NULL or self.b.back == NULL
                or self.b.pred == NULL or self.b.gold == NULL or self.b.em_save == NULL):
            raise MemoryError()

    def __dealloc__(self):
        free(self.b.em)
        free(self.b.delta)
        free(self.b.back)
        free(self.b.pred)
        free(self.b.gold)
        free(self.b.em_save)


cdef class _Cost:
    """A validated (L, L) cost matrix held for the kernels; ``ptr`` NULL for Hamming."""

    cdef const weight_t[:, ::1] view
    cdef const weight_t* ptr

    def __cinit__(self, cost, int n_labels):
        self.ptr = NULL
        if cost is not None:
            self.view = cost
            if self.view.shape[0] != n_labels or self.view.shape[1] != n_labels:
                raise ValueError(f"cost must be ({n_labels}, {n_labels})")
            self.ptr = &self.view[0, 0]


cdef const label_t* _gold_of(const Chain* ch, index_t s, const Transitions* tr,
                            Buffers* buf) noexcept nogil:
    """The gold path of sequence ``s``, whose emissions are in ``buf.em``.

    The corpus labels; for a partially labelled sequence (labels -1), the
    best completion of its known labels under the current scores (Viterbi
    with the known labels clamped: the latent structural SVM's imputation,
    Yu and Joachims 2009), written to ``buf.gold``.  ``buf.em`` is left as
    it was.  The result is also kept in ``buf.last_gold``.
    """
    cdef index_t t0 = ch.corpus.seq_ptr[s]
    cdef index_t n = ch.corpus.seq_ptr[s + 1] - t0
    cdef const label_t* known = ch.corpus.labels + t0
    buf.last_gold = known
    if has_unknown(known, n):
        _clamp_decode(buf, n, ch.layout.n_labels, known, tr)
        buf.last_gold = buf.gold
    return buf.last_gold


cdef void _clamp_decode(Buffers* buf, index_t n, int L, const label_t* known,
                        const Transitions* tr) noexcept nogil:
    """Best completion of ``known`` under the emissions ``buf.em`` (left unchanged) into ``buf.gold``."""
    cdef index_t t
    cdef int j
    cdef label_t y
    # clamp_rows overwrites the other labels of the known rows with -inf;
    # they are saved first and put back after the decoding.
    for t in range(n):
        y = known[t]
        if y >= 0:
            for j in range(L):
                if j != y:
                    buf.em_save[t * L + j] = buf.em[t * L + j]
    clamp_rows(buf.em, n, L, known)
    viterbi_path(buf.em, n, tr, buf.delta, buf.back, buf.gold)
    for t in range(n):
        y = known[t]
        if y >= 0:
            for j in range(L):
                if j != y:
                    buf.em[t * L + j] = buf.em_save[t * L + j]


cdef weight_t _violation(const Chain* ch, const weight_t* params, weight_t scale, index_t s,
                         const weight_t* cost, Buffers* buf) noexcept nogil:
    """Structured hinge loss of sequence ``s`` under weights ``scale * params``.

    Writes the cost-augmented path into ``buf.pred``.  Emissions and
    transitions are those of ``params``; the cost enters divided by
    ``scale``, so the path is the argmax under ``scale * params`` and the
    loss is ``scale`` times the margin found.  Clamped at 0 (rounding can
    leave a tiny negative when the gold path is the argmax).  For a
    partially labelled sequence the gold path is the best completion of its
    known labels (:func:`_gold_of`), and the cost counts against it.
    """
    cdef index_t t0
    cdef index_t n = sequence_emissions(ch, params, 1.0, s, buf.em, &t0)
    cdef const label_t* gold
    cdef Transitions tr
    cdef weight_t gold_score, best
    if n == 0:
        return 0.0
    transitions_of(ch.layout, params, &tr)
    gold = _gold_of(ch, s, &tr, buf)
    gold_score = path_score(buf.em, n, &tr, gold)
    best = loss_augmented_path(buf.em, n, &tr, gold, cost, 1.0 / scale, buf.delta, buf.back,
                               buf.pred)
    return max(0.0, scale * (best - gold_score))


cdef class SSVMTrainer:
    """Stochastic subgradient training of the structured SVM (see the module docstring).

    Parameters
    ----------
    ix : ChainIndex
        The model's structure.
    cv : CorpusView
        The validated packed corpus, with labels.
    params : AveragedParams
        Weights (``params.scale * params.w``) and averaging state, updated in
        place; the step number is ``params.n_examples + 1`` and the
        average weighs step ``t`` by ``t``, so a run can continue from any
        state.
    C : float
        Weight of the sum of hinge losses (> 0); ``lambda = 1 / (C * n_sequences)``.
    cost : ndarray of float64, shape (L, L), or None
        Validated label-pair cost (None: Hamming).
    n_sequences : int, optional
        The ``n`` of ``lambda``: the corpus's sequences when omitted (``fit``);
        ``partial_fit`` gives the sequences seen so far.
    """

    cdef ChainIndex ix
    cdef CorpusView cv
    cdef AveragedParams params
    cdef Chain ch
    cdef _Cost cost
    cdef _Scratch buf
    cdef weight_t lam
    cdef index_t last_n

    def __cinit__(self, ChainIndex ix, CorpusView cv, AveragedParams params, double C, cost=None,
                  n_sequences=None):
        if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
            raise ValueError("the structured SVM needs a labeled corpus")
        if params.w.shape[0] != ix.layout.n_params:
            raise ValueError(f"params has {params.w.shape[0]} weights, the layout "
                             f"{ix.layout.n_params}")
        if not (C > 0 and C < float("inf")) or cv.corpus.n_seqs == 0:
            raise ValueError("C must be positive and finite, the corpus non-empty")
        self.ix = ix
        self.cv = cv
        self.params = params
        self.ch = chain_of(ix, cv)
        self.cost = _Cost(cost, ix.layout.n_labels)
        self.buf = _Scratch(cv.max_len, ix.layout.n_labels, ix.layout.order)
        if n_sequences is None:
            n_sequences = cv.corpus.n_seqs
        if not 1 <= n_sequences < 1 << 62:
            raise ValueError("n_sequences must be positive")
        self.lam = 1.0 / (C * <double>n_sequences)
        self.last_n = 0

    @property
    def lam(self):
        """Pegasos' lambda, ``1 / (C * n_sequences)``."""
        return self.lam

    cdef int _step(self, index_t s, ParamSink* sink, weight_t* loss) noexcept nogil:
        """One step on sequence ``s``; returns 1 if the gold path was violated."""
        cdef index_t t0 = self.ch.corpus.seq_ptr[s]
        cdef index_t n = self.ch.corpus.seq_ptr[s + 1] - t0
        cdef const label_t* gold
        cdef label_t* pred = self.buf.b.pred
        cdef weight_t step = <weight_t>(self.params.n_examples + 1)
        cdef weight_t eta = 2.0 / (self.lam * (step + 1.0))
        cdef index_t t
        cdef bint differs = False
        self.last_n = n
        loss[0] = _violation(&self.ch, sink.w, self.params.scale, s, self.cost.ptr, &self.buf.b)
        gold = self.buf.b.last_gold
        for t in range(n):
            if pred[t] != gold[t]:
                differs = True
                break
        # w <- (1 - eta lambda) w: O(1) through the scale (0 at the first step).
        self.params.shrink((step - 1.0) / (step + 1.0))
        if differs:
            # + eta (Phi(gold) - Phi(pred)), in the units of w (divided by scale).
            self.params.begin_example(sink)
            add_path_features(self.ch.layout, self.ch.index, self.ch.corpus, t0, n, gold, pred,
                              eta / self.params.scale, sink)
            add_path_features(self.ch.layout, self.ch.index, self.ch.corpus, t0, n, pred, gold,
                              -eta / self.params.scale, sink)
        self.params.end_example(step)
        return differs

    def last_path(self):
        """The cost-augmented path of the last step (int32), for tests."""
        return np.array(<label_t[:max(self.last_n, 1)]>self.buf.b.pred)[:self.last_n].copy()

    def train_epoch(self, const index_t[::1] order):
        """One pass over the sequences in ``order`` (validated indices).

        Returns
        -------
        violations : int
            Sequences whose cost-augmented path was not the gold one (each
            gave an update).
        online_loss : float
            Sum of the hinge losses met during the pass, each under the
            weights of its step.
        """
        cdef index_t i, violations = 0
        cdef weight_t loss, total = 0.0
        cdef ParamSink sink = self.params.sink()
        check_order(order, self.ch.corpus.n_seqs)
        with nogil:
            for i in range(order.shape[0]):
                violations += self._step(order[i], &sink, &loss)
                total += loss
        return int(violations), float(total)


def structured_hinge(ChainIndex ix, const weight_t[::1] params, CorpusView cv, cost=None):
    """Sum over a labeled corpus of the structured hinge losses under ``params``.

    ``H_i = max_y [cost(y_i, y) + score(x_i, y)] - score(x_i, y_i)``, by
    cost-augmented Viterbi (``cost`` a validated (L, L) array, None for
    Hamming).

    Returns
    -------
    total : float
    violated : int
        Sequences whose cost-augmented path is not the gold one.
    """
    cdef int L = ix.layout.n_labels
    cdef _Cost c = _Cost(cost, L)
    if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
        raise ValueError("the hinge loss needs a labeled corpus")
    if params.shape[0] != ix.layout.n_params:
        raise ValueError("params does not match the layout")
    cdef Chain ch = chain_of(ix, cv)
    cdef _Scratch buf = _Scratch(cv.max_len, L, ix.layout.order)
    cdef index_t s, t, t0, n, violated = 0
    cdef weight_t total = 0.0
    with nogil:
        for s in range(cv.corpus.n_seqs):
            total += _violation(&ch, &params[0], 1.0, s, c.ptr, &buf.b)
            t0 = cv.corpus.seq_ptr[s]
            n = cv.corpus.seq_ptr[s + 1] - t0
            for t in range(n):
                if buf.b.pred[t] != buf.b.last_gold[t]:
                    violated += 1
                    break
    return float(total), int(violated)
