"""Greedy left-to-right tagging with label-history features: training and tagging, without the GIL.

A greedy tagger labels token ``t`` by the argmax over labels ``y`` of

    sum over features (a, v) of token t of v * W[a, y]     (the chain's state weights)
    + H1[p1, y] + H2[p2, y] + H12[p2, p1, y]              (label history)

where ``p1`` and ``p2`` are the labels it predicted one and two tokens back,
or the pad ``L`` before the start of the sequence.  ``H12`` (the conjunction
of the two) exists from the second token on.

Where the weights live (one flat float64 vector, the chain's layout first):

    [state | trans (L x L) | start (L) | end (L) | two_back ((L+1) x L) | pair ((L+1) x L x L)]

The pair block is optional (``GreedyTagger(pair_history=False)``): its
(L + 1) L^2 weights are 150 MB of float64 at 250 labels and 12 GB at 1,100
(a lemma's edit rules, a rich language's feature bundles), so a model
without it has ``H12 = 0`` and its vector ends after ``two_back``; the
kernels tell the two layouts apart by the vector's length.

``H1`` *is* the chain's first-order block: ``H1[p1, y] = trans[p1, y]`` and
``H1[pad, y] = start[y]``, so a greedy model's one-back weights are read where
every other learner keeps its transitions.  ``end`` stays zero (a greedy
tagger never looks ahead).  ``two_back`` is indexed ``p2 * L + y`` and ``pair``
``(p2 * L + p1) * L + y`` with ``p2 = L`` for the pad; both blocks come after
the chain's ``n_params``, so the chain's offsets and kernels are unchanged.

Training is the averaged multiclass perceptron (Collins 2002) run on the
tagger's own predicted history, not the gold one, as in Honnibal's tagger
and NLTK's ``PerceptronTagger`` (the history features follow Ratnaparkhi
1996's left-to-right tagger): each token scored by the model is one
example; a wrong guess ``p`` for gold ``g`` adds each feature's value to
``W[a, g]`` and subtracts it from ``W[a, p]`` (pairs without a weight are
skipped), and adds one to the gold and subtracts one from the guessed entry
of each history block.  Averaging is the lazy averaging of the seams
(``ParamSink`` / ``sink_add`` into an ``AveragedParams``).

Tokens carrying an attribute of the optional tag dictionary (``tagdict[a] >=
0``) get that label without scoring, are not training examples, and feed
their label into the history, as in NLTK.

References
----------
Collins, M. (2002). Discriminative training methods for hidden Markov models:
theory and experiments with perceptron algorithms. EMNLP.
Honnibal, M. (2013). A good part-of-speech tagger in about 200 lines of
Python. Blog post (the design NLTK's PerceptronTagger follows).
Ratnaparkhi, A. (1996). A maximum entropy model for part-of-speech
tagging. EMNLP.
Daume III, H. (2006). Practical structured learning techniques for natural
language processing. PhD thesis, USC (lazy averaging, section 2.1.1).
"""

from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

import numpy as np

from cseq._core._gil cimport GIL_MIN_WORK
from cseq._core._types cimport attr_t, index_t, label_t, weight_t
from cseq.chain._chain cimport (AveragedParams, Chain, ChainIndex, CorpusView, Layout, ParamSink,
                                  chain_of, find_weight, layout_init, score_emissions,
                                  check_order, sequence_emissions, sink_add)


cdef struct History:
    # Offsets of the label-history blocks after the chain's layout.
    index_t two_back    # (L + 1) x L, row = label two back (L = pad)
    index_t pair        # (L + 1) x L x L, row = (two back, one back); -1 without the block
    index_t n_params    # the whole vector


cdef void history_of(const Layout* lay, History* h, bint pair) noexcept nogil:
    cdef index_t L = lay.n_labels
    h.two_back = lay.n_params
    if pair:
        h.pair = h.two_back + (L + 1) * L
        h.n_params = h.pair + (L + 1) * L * L
    else:
        h.pair = -1
        h.n_params = h.two_back + (L + 1) * L


cdef int history_for(const Layout* lay, History* h, index_t n_params) except -1:
    """The history of a weight vector of ``n_params`` entries: with the pair block or without."""
    history_of(lay, h, False)
    if n_params != h.n_params:
        history_of(lay, h, True)
    if n_params != h.n_params:
        raise ValueError(f"params has {n_params} weights, the greedy layout {h.n_params} (or "
                         f"{h.two_back + (lay.n_labels + 1) * lay.n_labels} without the pair "
                         "block)")
    return 0


def greedy_layout(index_t n_state, int n_labels, bint pair=True):
    """The chain's layout (``cseq.chain._chain.param_layout``) plus the history blocks.

    ``n_params`` is the whole vector; ``chain_params`` the chain's part;
    ``two_back`` and ``pair`` the offsets of the history blocks (``pair`` is
    -1 when ``pair`` is False: no such block).
    """
    cdef Layout lay
    cdef History h
    layout_init(&lay, n_state, n_labels, 1)
    history_of(&lay, &h, pair)
    out = dict(lay)
    out.update(chain_params=lay.n_params, two_back=h.two_back, pair=h.pair,
               n_params=h.n_params)
    return out


cdef inline label_t dict_label(const Chain* ch, const label_t* tagdict, index_t t) noexcept nogil:
    """The tag dictionary's label for token ``t`` (its first attribute that has one), or -1."""
    cdef index_t f
    if tagdict != NULL:
        for f in range(ch.corpus.tok_ptr[t], ch.corpus.tok_ptr[t + 1]):
            if tagdict[ch.corpus.attr_ids[f]] >= 0:
                return tagdict[ch.corpus.attr_ids[f]]
    return -1


cdef inline label_t best_label(const Layout* lay, const History* h, const weight_t* w,
                               weight_t* row, label_t p1, label_t p2) noexcept nogil:
    """Add the history scores for ``(p1, p2)`` to the emission ``row``; its argmax (lowest id on ties)."""
    cdef int L = lay.n_labels
    cdef int y
    cdef label_t best = 0
    cdef const weight_t* one = w + (lay.start if p1 == L else lay.trans + p1 * L)
    cdef const weight_t* two = w + h.two_back + p2 * L
    cdef const weight_t* pair = w + h.pair + (p2 * L + p1) * L if h.pair >= 0 else w
    for y in range(L):
        row[y] += one[y] + two[y]
    if p1 < L and h.pair >= 0:
        for y in range(L):
            row[y] += pair[y]
    for y in range(1, L):
        if row[y] > row[best]:
            best = y
    return best


cdef void update(const Chain* ch, const History* h, index_t t, label_t gold, label_t guess,
                 label_t p1, label_t p2, ParamSink* sink) noexcept nogil:
    """The perceptron update of token ``t``: ``+Phi(gold) - Phi(guess)`` given history (p1, p2)."""
    cdef const Layout* lay = ch.layout
    cdef index_t L = lay.n_labels
    cdef index_t f, k, row
    cdef attr_t a
    for f in range(ch.corpus.tok_ptr[t], ch.corpus.tok_ptr[t + 1]):
        a = ch.corpus.attr_ids[f]
        k = find_weight(ch.index, a, gold)
        if k >= 0:
            sink_add(sink, k, ch.corpus.values[f])
        k = find_weight(ch.index, a, guess)
        if k >= 0:
            sink_add(sink, k, -ch.corpus.values[f])
    row = lay.start if p1 == L else lay.trans + p1 * L
    sink_add(sink, row + gold, 1.0)
    sink_add(sink, row + guess, -1.0)
    row = h.two_back + p2 * L
    sink_add(sink, row + gold, 1.0)
    sink_add(sink, row + guess, -1.0)
    if p1 < L and h.pair >= 0:
        row = h.pair + (p2 * L + p1) * L
        sink_add(sink, row + gold, 1.0)
        sink_add(sink, row + guess, -1.0)


cdef int tag_range(const Chain* ch, const History* h, const weight_t* w, const label_t* tagdict,
                   index_t s0, index_t s1, label_t* out) noexcept nogil:
    """Tag sequences ``s0:s1`` left to right into ``out`` (indexed by token); -1 if out of memory."""
    cdef int L = ch.layout.n_labels
    cdef index_t s, t, t0, t1
    cdef label_t p1, p2, y
    cdef weight_t* em = <weight_t*>malloc(ch.max_len * L * sizeof(weight_t) + 1)
    if em == NULL:
        return -1
    for s in range(s0, s1):
        # Emissions do not depend on the history: score the sequence at once
        # (with the emission kernel's prefetching), then walk it.
        t1 = sequence_emissions(ch, w, 1.0, s, em, &t0)
        if t1 == 0:
            continue
        t1 += t0
        p1 = L
        p2 = L
        for t in range(t0, t1):
            y = dict_label(ch, tagdict, t)
            if y < 0:
                y = best_label(ch.layout, h, w, em + (t - t0) * L, p1, p2)
            out[t] = y
            p2 = p1
            p1 = y
    free(em)
    return 0


cdef const label_t* _tagdict_ptr(ChainIndex ix, tagdict) except? NULL:
    cdef const label_t[::1] td
    if tagdict is None:
        return NULL
    td = tagdict
    if td.shape[0] != ix.index.n_attrs:
        raise ValueError(f"tagdict has {td.shape[0]} entries, the model "
                         f"{ix.index.n_attrs} attributes")
    if td.shape[0] == 0:
        return NULL
    return &td[0]


def tag_corpus(ChainIndex ix, const weight_t[::1] params, CorpusView cv, tagdict,
               const index_t[::1] chunks, int n_jobs):
    """Greedy labels for every token of a validated corpus, without the GIL.

    Parameters
    ----------
    ix : the model's structure (its layout gives the chain's part of ``params``).
    params : the whole vector (``greedy_layout(...)["n_params"]`` entries).
    cv : the packed corpus.
    tagdict : None or int32 array, one entry per attribute: its label, or -1.
    chunks : sequence boundaries of the work chunks (as ``decode_corpus``).
    n_jobs : number of threads.

    Returns
    -------
    ndarray of int32, one label id per token.
    """
    cdef History h
    history_for(&ix.layout, &h, params.shape[0])
    cdef const label_t* td = _tagdict_ptr(ix, tagdict)
    cdef index_t n_tok = cv.corpus.seq_ptr[cv.corpus.n_seqs]
    out_np = np.zeros(n_tok, dtype=np.int32)
    if n_tok == 0:
        return out_np
    cdef label_t[::1] out = out_np
    cdef Chain ch = chain_of(ix, cv)
    cdef index_t n_chunks = chunks.shape[0] - 1
    cdef index_t c
    cdef int failed = 0
    if n_jobs == 1 and n_chunks == 1 and n_tok * ix.layout.n_labels < GIL_MIN_WORK:
        # A short sentence: tagged holding the GIL (GIL_MIN_WORK, cseq/_core/_gil.pxd).
        failed = -tag_range(&ch, &h, &params[0], td, chunks[0], chunks[1], &out[0])
    else:
        for c in prange(n_chunks, nogil=True, schedule="static", chunksize=1,
                        num_threads=n_jobs):
            failed += -tag_range(&ch, &h, &params[0], td, chunks[c], chunks[c + 1], &out[0])
    if failed:
        raise MemoryError("cseq: out of memory while tagging")
    return out_np


cdef class GreedyTrainer:
    """Averaged greedy perceptron over one packed, labeled corpus.

    Parameters
    ----------
    ix : ChainIndex
        The model's structure.
    cv : CorpusView
        The validated packed corpus, with labels.
    params : AveragedParams
        The weights and averaging state, updated in place
        (``greedy_layout(...)["n_params"]`` entries).
    tagdict : None or int32 array (n_attributes,)
        Tag dictionary: tokens with an attribute whose entry is >= 0 get
        that label and are not trained on.
    """

    cdef ChainIndex ix
    cdef CorpusView cv
    cdef AveragedParams params
    cdef object tagdict_ref
    cdef const label_t* tagdict
    cdef Chain ch
    cdef History h
    cdef weight_t* row

    def __cinit__(self, ChainIndex ix, CorpusView cv, AveragedParams params, tagdict=None):
        if cv.corpus.labels == NULL and cv.corpus.seq_ptr[cv.corpus.n_seqs] > 0:
            raise ValueError("the greedy tagger needs a labeled corpus")
        history_for(&ix.layout, &self.h, params.w.shape[0])
        self.tagdict = _tagdict_ptr(ix, tagdict)
        self.tagdict_ref = tagdict
        self.ix = ix
        self.cv = cv
        self.params = params
        self.ch = chain_of(ix, cv)
        self.row = <weight_t*>malloc(ix.layout.n_labels * sizeof(weight_t))
        if self.row == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.row)

    cdef index_t _train_sequence(self, index_t s, ParamSink* sink) noexcept nogil:
        """Tag sequence ``s`` left to right, updating after each wrong guess; returns its errors."""
        cdef int L = self.ch.layout.n_labels
        cdef index_t t, errors = 0
        cdef label_t p1 = L, p2 = L, y, gold
        for t in range(self.ch.corpus.seq_ptr[s], self.ch.corpus.seq_ptr[s + 1]):
            gold = self.ch.corpus.labels[t]
            y = dict_label(&self.ch, self.tagdict, t)
            if y < 0:
                # One example per scored token: its 1-based number minus one.
                self.params.begin_example(sink)
                self.params.end_example(1.0)
                score_emissions(self.ch.index, sink.w, self.ch.corpus, t, t + 1, L, self.row)
                y = best_label(self.ch.layout, &self.h, sink.w, self.row, p1, p2)
                if y != gold:
                    update(&self.ch, &self.h, t, gold, y, p1, p2, sink)
            if y != gold:
                errors += 1
            p2 = p1
            p1 = y
        return errors

    def train_epoch(self, const index_t[::1] order):
        """Run one pass over the sequences in ``order``.

        Returns
        -------
        int
            Tokens mislabeled during the pass (by the weights of the moment,
            or by the tag dictionary).
        """
        cdef index_t i, errors = 0
        cdef ParamSink sink = self.params.sink()
        check_order(order, self.ch.corpus.n_seqs)
        with nogil:
            for i in range(order.shape[0]):
                errors += self._train_sequence(order[i], &sink)
        return errors
