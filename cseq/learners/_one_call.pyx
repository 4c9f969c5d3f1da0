# cython: language_level=3, boundscheck=False, wraparound=False
"""Prediction (labels or marginals) of a few short sequences in one compiled call.

``predict([x])`` one sentence at a time, the way production code calls a
tagger, spends most of a general call on work that does not depend on the
sentence: Python frames, NumPy arrays for a handful of ids, checks of a
corpus that the model's own featurizer has just packed.  :class:`OneCall`
holds a fitted snapshot's string table and chain, and for a short list of
sequences packs them into C memory (``cseq.features._pack.pack_small``),
decodes them with the chain's kernel (``cseq.chain._decode.decode_all``)
and returns the label lists, or runs forward-backward
(``cseq.chain._forward_backward.marginals_all``) for the marginals: the
results of the general path bit for bit, since both run the same packing
walk and the same kernels on the same arrays.  The GIL is held throughout: the work is a few microseconds,
bounded by ``MAX_FEATURES`` and ``GIL_MIN_WORK`` (what the general path
would also run holding it).  Anything else (a long input, python-crfsuite
items that need converting, scores that overflow) returns None, and the
caller takes the general path, which also reports any error.
"""

from libc.stdlib cimport free, malloc

import numpy as np

from cseq._core._gil cimport GIL_MIN_WORK
from cseq._core._types cimport attr_t, index_t, label_t, weight_t
from cseq.chain._chain cimport Chain, ChainIndex, Corpus
from cseq.chain._decode cimport decode_all
from cseq.chain._forward_backward cimport marginals_all
from cseq.features._pack cimport Packed, pack_small, packed_free

__all__ = ["OneCall", "MAX_SEQUENCES"]

#: Most sequences one call takes (more go the general way, in blocks and threads).
MAX_SEQUENCES = 16

cdef enum:
    # Most feature strings one call packs: the lookups of a few sentences.
    MAX_FEATURES = 4096


cdef class OneCall:
    """One fitted snapshot's featurizer table and chain, for :meth:`predict` of short input.

    Parameters
    ----------
    table : the featurizer's ``StringTable`` (``FeatureVocabulary.packing``).
    crfsuite : whether the featurizer reads dict tokens by python-crfsuite's rules.
    index : the model's ``ChainIndex``; ``params`` its parameter vector.
    labels : the label names, by label id.
    """

    cdef object table
    cdef bint crfsuite
    cdef ChainIndex ix
    cdef const weight_t[::1] params
    cdef list labels
    cdef int n_labels
    cdef index_t cells_per_token

    def __cinit__(self, table, bint crfsuite, ChainIndex index not None,
                  const weight_t[::1] params, list labels not None):
        self.table = table
        self.crfsuite = crfsuite
        self.ix = index
        self.params = params
        self.labels = labels
        self.n_labels = index.layout.n_labels
        if params.shape[0] != index.layout.n_params or len(labels) != self.n_labels:
            raise ValueError("OneCall: the parameters or labels do not fit the chain")
        # Token-label cells per token (GIL_MIN_WORK's unit): L, L * L for order 2.
        self.cells_per_token = <index_t> self.n_labels * (
            self.n_labels if index.layout.order == 2 else 1)

    cdef int _pack(self, object X, Packed* p, Corpus* corpus, Chain* ch) except -2:
        """Pack ``X`` and point ``corpus`` and ``ch`` at it; -1 (nothing allocated) for an
        input this path does not take."""
        cdef index_t s, max_len = 0
        if type(X) is not list or len(<list> X) > MAX_SEQUENCES:
            return -1
        if pack_small(X, self.table, self.crfsuite, MAX_FEATURES, p) < 0:
            return -1
        if p.n_tok * self.cells_per_token > GIL_MIN_WORK:
            packed_free(p)
            return -1  # long enough to run without the GIL, the general way
        for s in range(p.n_seqs):
            max_len = max(max_len, p.seq_ptr[s + 1] - p.seq_ptr[s])
        corpus.seq_ptr = <const index_t*> p.seq_ptr
        corpus.tok_ptr = <const index_t*> p.tok_ptr
        corpus.attr_ids = <const attr_t*> p.attr
        corpus.values = p.values
        corpus.labels = NULL
        corpus.n_seqs = p.n_seqs
        ch.index = &self.ix.index
        ch.layout = &self.ix.layout
        ch.corpus = corpus
        ch.max_len = max_len
        return 0

    def marginals(self, object X):
        """The label marginals of ``X`` (one (n_i, L) array per sequence, as the model's
        ``marginals`` gives them), or None as for :meth:`predict`."""
        cdef Packed p
        cdef Corpus corpus
        cdef Chain ch
        cdef index_t bad[3]
        cdef index_t s
        cdef double[:, ::1] out
        if self._pack(X, &p, &corpus, &ch) < 0:
            return None
        try:
            flat = np.zeros((p.n_tok, self.n_labels), dtype=np.float64)
            if p.n_tok:
                out = flat
                marginals_all(&ch, &self.params[0], &out[0, 0], bad)
                if bad[0] >= 0:
                    return None  # scores overflow: the general path names the sequence
            return [flat[p.seq_ptr[s]:p.seq_ptr[s + 1]] for s in range(p.n_seqs)]
        finally:
            packed_free(&p)

    def predict(self, object X):
        """The label lists of ``X``, a list of at most MAX_SEQUENCES sequences; or None.

        None when the input is not one this path takes (see the module
        docstring); the caller then predicts the general way.
        """
        cdef Packed p
        cdef Corpus corpus
        cdef Chain ch
        cdef index_t bad[3]
        cdef label_t* out = NULL
        cdef index_t s, t, a, b
        cdef list labels = self.labels, result, row
        if self._pack(X, &p, &corpus, &ch) < 0:
            return None
        try:
            out = <label_t*> malloc(p.n_tok * sizeof(label_t) + 1)
            if out == NULL:
                raise MemoryError()
            if decode_all(&ch, &self.params[0], out, bad) < 0:
                raise MemoryError()
            if bad[0] >= 0:
                return None  # scores overflow: the general path names the sequence
            result = []
            for s in range(p.n_seqs):
                a = p.seq_ptr[s]
                b = p.seq_ptr[s + 1]
                row = [None] * (b - a)
                for t in range(a, b):
                    row[t - a] = labels[out[t]]
                result.append(row)
            return result
        finally:
            free(out)
            packed_free(&p)
