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

cimport cython
from libc.stdlib cimport free, malloc

import numpy as np

from cseq._decode cimport Transitions, viterbi_path
from cseq._types cimport attr_t, index_t, label_t, value_t, weight_t
from cseq._weights cimport (Corpus, StateIndex, find_weight, init_corpus, init_index,
                            score_emissions)


cdef class PerceptronTrainer:
    """Averaged structured perceptron over one packed, labeled corpus.

    Parameters
    ----------
    attr_ptr, attr_labels : the state index (see ``cseq._weights``).
    n_labels : number of labels.
    seq_ptr, tok_ptr, attr_ids, values, labels : the validated packed corpus.

    Notes
    -----
    Parameters are laid out as ``[state | transitions (L*L) | start | end]``,
    the same flat layout the CRF optimises, so every learner shares one
    model representation.
    """

    cdef const index_t[::1] _attr_ptr
    cdef const label_t[::1] _attr_labels
    cdef const index_t[::1] _seq_ptr
    cdef const index_t[::1] _tok_ptr
    cdef const attr_t[::1] _attr_ids
    cdef const value_t[::1] _values
    cdef const label_t[::1] _labels
    cdef object _w_np
    cdef object _u_np
    cdef weight_t[::1] _w
    cdef weight_t[::1] _u
    cdef StateIndex index
    cdef Corpus corpus
    cdef Transitions tr
    cdef int n_labels
    cdef index_t n_state
    cdef index_t max_len
    cdef long long _n_examples
    cdef weight_t* em
    cdef weight_t* delta
    cdef label_t* back
    cdef label_t* pred

    def __cinit__(self, const index_t[::1] attr_ptr, const label_t[::1] attr_labels, int n_labels,
                  const index_t[::1] seq_ptr, const index_t[::1] tok_ptr,
                  const attr_t[::1] attr_ids, const value_t[::1] values,
                  const label_t[::1] labels):
        cdef int L = n_labels
        self._attr_ptr = attr_ptr
        self._attr_labels = attr_labels
        self._seq_ptr = seq_ptr
        self._tok_ptr = tok_ptr
        self._attr_ids = attr_ids
        self._values = values
        self._labels = labels
        self.n_labels = L
        self.n_state = attr_labels.shape[0]
        self._w_np = np.zeros(self.n_state + L * L + 2 * L, dtype=np.float64)
        self._u_np = np.zeros_like(self._w_np)
        self._w = self._w_np
        self._u = self._u_np
        self._n_examples = 0
        init_index(&self.index, attr_ptr, attr_labels)
        self.max_len = max(1, init_corpus(&self.corpus, seq_ptr, tok_ptr, attr_ids, values,
                                          &labels[0] if labels.shape[0] else NULL))
        self.tr.trans = &self._w[self.n_state]
        self.tr.start = &self._w[self.n_state + L * L]
        self.tr.end = &self._w[self.n_state + L * L + L]
        self.tr.n_labels = L
        self.em = <weight_t*>malloc(self.max_len * L * sizeof(weight_t))
        self.delta = <weight_t*>malloc(3 * L * sizeof(weight_t))
        self.back = <label_t*>malloc(self.max_len * L * sizeof(label_t))
        self.pred = <label_t*>malloc(self.max_len * sizeof(label_t))
        if self.em == NULL or self.delta == NULL or self.back == NULL or self.pred == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.em)
        free(self.delta)
        free(self.back)
        free(self.pred)

    cdef inline void _bump(self, index_t k, weight_t d, weight_t age) noexcept nogil:
        self._w[k] += d
        self._u[k] += age * d

    cdef void _update_token(self, index_t t, label_t y, weight_t d, weight_t age) noexcept nogil:
        cdef index_t f, k
        for f in range(self.corpus.tok_ptr[t], self.corpus.tok_ptr[t + 1]):
            k = find_weight(&self.index, self.corpus.attr_ids[f], y)
            if k >= 0:
                self._bump(k, d * self.corpus.values[f], age)

    cdef index_t _train_sequence(self, index_t s) noexcept nogil:
        """Decode sequence ``s``, update on mistakes; returns the number of wrong tokens."""
        cdef int L = self.n_labels
        cdef index_t t0 = self.corpus.seq_ptr[s]
        cdef index_t n = self.corpus.seq_ptr[s + 1] - t0
        cdef const label_t* gold = self.corpus.labels + t0
        cdef label_t* pred = self.pred
        cdef index_t t, errors = 0
        cdef index_t trans0 = self.n_state
        cdef index_t start0 = trans0 + L * L
        cdef index_t end0 = start0 + L
        # The example's 1-based number minus one: the weight it gets in u.
        cdef weight_t age = <weight_t>self._n_examples
        self._n_examples += 1
        if n == 0:
            return 0
        score_emissions(&self.index, &self._w[0], &self.corpus, t0, t0 + n, L, self.em)
        viterbi_path(self.em, n, &self.tr, self.delta, self.back, pred)
        for t in range(n):
            if pred[t] != gold[t]:
                errors += 1
                self._update_token(t0 + t, gold[t], 1.0, age)
                self._update_token(t0 + t, pred[t], -1.0, age)
        if errors == 0:
            return 0
        if pred[0] != gold[0]:
            self._bump(start0 + gold[0], 1.0, age)
            self._bump(start0 + pred[0], -1.0, age)
        if pred[n - 1] != gold[n - 1]:
            self._bump(end0 + gold[n - 1], 1.0, age)
            self._bump(end0 + pred[n - 1], -1.0, age)
        for t in range(1, n):
            if pred[t - 1] != gold[t - 1] or pred[t] != gold[t]:
                self._bump(trans0 + gold[t - 1] * L + gold[t], 1.0, age)
                self._bump(trans0 + pred[t - 1] * L + pred[t], -1.0, age)
        return errors

    def train_epoch(self, const index_t[::1] order):
        """Run one pass over the sequences in ``order`` (validated indices).

        Returns
        -------
        int
            Number of tokens the current weights mislabeled during the pass.
        """
        cdef index_t i, errors = 0
        for i in range(order.shape[0]):
            if order[i] < 0 or order[i] >= self.corpus.n_seqs:
                raise IndexError(f"sequence index {order[i]} out of range")
        with nogil:
            for i in range(order.shape[0]):
                errors += self._train_sequence(order[i])
        return errors

    @property
    def weights(self):
        """A copy of the current (not averaged) parameters."""
        return self._w_np.copy()

    @property
    def n_examples(self):
        """Number of examples (sequences) processed so far."""
        return self._n_examples

    def averaged(self):
        """Average of the parameters after each example so far (``w`` itself before any)."""
        if self._n_examples == 0:
            return self._w_np.copy()
        return self._w_np - self._u_np / float(self._n_examples)
