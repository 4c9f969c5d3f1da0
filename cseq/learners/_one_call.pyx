# cython: language_level=3, boundscheck=False, wraparound=False
"""Prediction of a few short sequences in one compiled call.

``predict([x])`` one sentence at a time, the way production code calls a
tagger, spends most of a general call on work that does not depend on the
sentence: Python frames, NumPy arrays for a handful of ids, checks of a
corpus that the model's own featurizer has just packed.  :class:`OneCall`
holds a fitted snapshot's string table and chain, and for a short list of
sequences packs them into C memory (``cseq.features._pack.pack_small``),
decodes them with the chain's kernel (``cseq.chain._decode.decode_all``)
and returns the label lists: the labels of the general path bit for bit,
since both run the same packing walk and the same kernel on the same
arrays.  The GIL is held throughout: the work is a few microseconds,
bounded by ``MAX_FEATURES`` and ``GIL_MIN_WORK`` (what the general path
would also run holding it).  Anything else (a long input, python-crfsuite
items that need converting, scores that overflow) returns None, and the
caller takes the general path, which also reports any error.
"""

from libc.stdlib cimport free, malloc

from cseq._core._gil cimport GIL_MIN_WORK
from cseq._core._types cimport attr_t, index_t, label_t, weight_t
from cseq.chain._chain cimport Chain, ChainIndex, Corpus
from cseq.chain._decode cimport decode_all
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
        cdef index_t s, t, a, b, max_len = 0
        cdef list labels = self.labels, result, row
        if type(X) is not list or len(<list> X) > MAX_SEQUENCES:
            return None
        if pack_small(X, self.table, self.crfsuite, MAX_FEATURES, &p) < 0:
            return None
        try:
            if p.n_tok * self.cells_per_token > GIL_MIN_WORK:
                return None  # long enough to decode without the GIL, the general way
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
            ch.corpus = &corpus
            ch.max_len = max_len
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
