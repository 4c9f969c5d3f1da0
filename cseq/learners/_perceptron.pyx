"""Epoch loops of the learners, run without the GIL.

The averaged structured perceptron (Collins 2002) keeps its average lazily
(Daume III 2006, section 2.1.1): next to the weights ``w`` it keeps
``u = sum over updates of (k - 1) * delta``, where ``k`` is the 1-based number
of the example that caused the update.  After ``c`` examples the average of
the ``c`` weight vectors seen after each example is ``w - u / c``, so an
update touches only the weights it changes.

References
----------
Collins, M. (2002). Discriminative training methods for hidden Markov models:
theory and experiments with perceptron algorithms. EMNLP.
Daume III, H. (2006). Practical structured learning techniques for natural
language processing. PhD thesis, USC.
"""

from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from cseq.chain._decode cimport viterbi_back_size, viterbi_delta_size, viterbi_path
from cseq.chain._masks cimport clamp_rows
from cseq._core._types cimport index_t, label_t, weight_t
from cseq.chain._chain cimport (AveragedParams, Chain, ChainIndex, CorpusView, ParamSink, Transitions,
                                  add_path_features, chain_of, check_order, has_unknown,
                                  sequence_emissions, transitions_of)


cdef class PerceptronTrainer:
    """Averaged structured perceptron over one packed, labeled corpus.

    Parameters
    ----------
    ix : ChainIndex
        The model's structure (state index and parameter layout).
    cv : CorpusView
        The validated packed corpus, with labels.  A label -1 (unknown) makes
        the sequence partially labelled: its gold path is then the best
        completion of its known labels under the current weights (Viterbi
        with the known labels clamped), and only a mistake on a known label
        causes an update (errors count known labels only).
    params : AveragedParams
        The weights and averaging state to update in place (of
        ``ix.layout["n_params"]`` entries).  They belong to the caller, so a
        training run can start from any weights and continue later.
    """

    cdef ChainIndex ix
    cdef CorpusView cv
    cdef AveragedParams params
    cdef Chain ch
    cdef weight_t* em
    cdef weight_t* delta
    cdef label_t* back
    cdef label_t* pred
    cdef weight_t* em_gold
    cdef label_t* gold_path

    def __cinit__(self, ChainIndex ix, CorpusView cv, AveragedParams params):
        cdef index_t L = ix.layout.n_labels
        cdef index_t max_len = max(1, cv.max_len)
        if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
            raise ValueError("the perceptron needs a labeled corpus")
        if params.scale != 1.0:
            raise ValueError("the perceptron updates unscaled weights (params.scale must be 1)")
        if params.w.shape[0] != ix.layout.n_params:
            raise ValueError(f"params has {params.w.shape[0]} weights, the layout "
                             f"{ix.layout.n_params}")
        self.ix = ix
        self.cv = cv
        self.params = params
        self.ch = chain_of(ix, cv)
        self.em = <weight_t*>malloc(max_len * L * sizeof(weight_t))
        self.delta = <weight_t*>malloc(viterbi_delta_size(L, ix.layout.order) * sizeof(weight_t))
        self.back = <label_t*>malloc(viterbi_back_size(max_len, L, ix.layout.order)
                                     * sizeof(label_t))
        self.pred = <label_t*>malloc(max_len * sizeof(label_t))
        self.em_gold = <weight_t*>malloc(max_len * L * sizeof(weight_t))
        self.gold_path = <label_t*>malloc(max_len * sizeof(label_t))
        if (self.em == NULL or self.delta == NULL or self.back == NULL or self.pred == NULL
                or self.em_gold == NULL or self.gold_path == NULL):
            raise MemoryError()

    def __dealloc__(self):
        free(self.em)
        free(self.delta)
        free(self.back)
        free(self.pred)
        free(self.em_gold)
        free(self.gold_path)

    cdef index_t _train_sequence(self, index_t s, ParamSink* sink) noexcept nogil:
        """Decode sequence ``s``, update on mistakes; returns the number of wrong tokens."""
        cdef int L = self.ch.layout.n_labels
        cdef index_t t0
        cdef index_t n = sequence_emissions(&self.ch, sink.w, 1.0, s, self.em, &t0)
        cdef const label_t* known = self.ch.corpus.labels + t0
        cdef const label_t* gold = known
        cdef label_t* pred = self.pred
        cdef index_t t, errors = 0
        cdef Transitions tr
        if n == 0:
            return 0
        transitions_of(self.ch.layout, sink.w, &tr)
        viterbi_path(self.em, n, &tr, self.delta, self.back, pred)
        for t in range(n):
            if pred[t] != known[t] and known[t] >= 0:
                errors += 1
        if errors and has_unknown(known, n):
            # The gold path: the best completion of the known labels.
            memcpy(self.em_gold, self.em, <size_t> (n * L) * sizeof(weight_t))
            clamp_rows(self.em_gold, n, L, known)
            viterbi_path(self.em_gold, n, &tr, self.delta, self.back, self.gold_path)
            gold = self.gold_path
        if errors:
            # Phi(gold) - Phi(pred), only where the two paths differ.
            add_path_features(self.ch.layout, self.ch.index, self.ch.corpus, t0, n, gold, pred,
                              1.0, sink)
            add_path_features(self.ch.layout, self.ch.index, self.ch.corpus, t0, n, pred, gold,
                              -1.0, sink)
        return errors

    def train_epoch(self, const index_t[::1] order):
        """Run one pass over the sequences in ``order`` (validated indices).

        Returns
        -------
        int
            Number of tokens the current weights mislabeled during the pass.
        """
        cdef index_t i, errors = 0
        cdef ParamSink sink = self.params.sink()
        check_order(order, self.ch.corpus.n_seqs)
        with nogil:
            for i in range(order.shape[0]):
                # The example's 1-based number minus one: its weight in u.
                self.params.begin_example(&sink)
                errors += self._train_sequence(order[i], &sink)
                self.params.end_example(1.0)
        return errors
