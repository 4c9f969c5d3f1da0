"""The linear-chain model every learner trains: sparse state weights and transitions.

``score(x, y) = sum_t sum_{(a, v) in x_t} v * W[a, y_t] + sum_t T[y_{t-1}, y_t]
+ start[y_0] + end[y_{n-1}]``, and for a second-order chain (``order=2``) also
``+ sum_{t >= 2} T2[y_{t-2}, y_{t-1}, y_t]``.

All parameters live in one flat float64 vector ``params`` laid out as
``[state weights | transitions (L*L, row = previous label) | start (L) | end (L)]``,
followed for order 2 by ``trans2`` (L*L*L, ``T2[a, b, c]`` at ``(a * L + b) * L + c``);
state weight ``k`` belongs to attribute ``a`` with ``attr_ptr[a] <= k <
attr_ptr[a + 1]`` and label ``attr_labels[k]``.  The offsets are defined once,
by the kernels (``cseq.chain._chain.param_layout``); :attr:`LinearChain.layout`
mirrors them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cseq.chain import _chain, _decode, _forward_backward, _word_rows
from cseq._core.dtypes import INDEX, LABEL, WEIGHT
from cseq.chain._masks import NoAllowedPath
from cseq._core.threads import resolve_n_jobs
from cseq.exceptions import InputError, ModelFormatError
from cseq.chain.inference import mask_set
from cseq.chain.sequences import Sequences

__all__ = ["LinearChain", "check_order", "not_finite", "per_sequence", "work_chunks"]


def check_order(order) -> None:
    """Raise InputError unless ``order`` is 1 (label bigrams) or 2 (bigrams and trigrams)."""
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order not in (1, 2):
        raise InputError(f"order must be 1 or 2 (first- or second-order chain), got {order!r}")


def work_chunks(seq_ptr: np.ndarray, n_chunks: int) -> np.ndarray:
    """Split sequences into ``n_chunks`` contiguous runs of about equal token counts.

    Returns boundaries (int64, ``n_chunks + 1`` entries, non-decreasing) over
    sequence indices. The split depends only on the corpus and ``n_chunks``,
    so parallel results are reproducible.
    """
    n_seq = len(seq_ptr) - 1
    n_chunks = max(1, min(n_chunks, max(n_seq, 1)))
    if n_chunks == 1:  # what the general split gives, without its NumPy calls
        return np.array([0, n_seq], dtype=INDEX)
    targets = np.linspace(0, seq_ptr[-1], n_chunks + 1)
    bounds = np.searchsorted(seq_ptr, targets, side="left").astype(INDEX)
    bounds[0], bounds[-1] = 0, n_seq
    return np.maximum.accumulate(np.minimum(bounds, n_seq))


def not_finite(seq: int, what: str) -> InputError:
    """The error for sequence ``seq`` of a corpus whose scores overflowed at prediction."""
    return InputError(
        f"sequence {seq}: scores are not finite (the emission scores or the {what} "
        "overflow float64: feature values times weights are too large for this model)")


def _check_unique_pairs(attr_ptr: np.ndarray, attr_labels: np.ndarray, n_labels: int) -> None:
    """ModelFormatError if an (attribute, label) pair has two state weights.

    The scorers would add both while :meth:`LinearChain.pruned`, ``explain``
    and ``top_features`` see one.  Every writer lists each attribute's labels
    in increasing order, which rules repeats out in one pass; only a row out
    of order costs a sort of the pairs.
    """
    n = len(attr_labels)
    if n < 2:
        return
    step = np.diff(attr_labels)  # step[k]: label of weight k + 1 less that of weight k
    starts = attr_ptr[1:-1]
    step[starts[(starts > 0) & (starts < n)] - 1] = 1  # a new attribute may start anywhere
    if (step > 0).all():
        return
    keys = np.repeat(np.arange(len(attr_ptr) - 1, dtype=np.int64), np.diff(attr_ptr)) \
        * n_labels + attr_labels
    keys.sort()
    repeated = np.flatnonzero(keys[1:] == keys[:-1])
    if len(repeated):
        attr, label = divmod(int(keys[repeated[0]]), n_labels)
        raise ModelFormatError(f"model state index has two weights for attribute {attr} and "
                               f"label {label}")


def per_sequence(chains: list, rows: np.ndarray | None, corpus: Sequences, masks: dict,
                 call: Callable[[tuple, dict], Any]) -> list:
    """``call(chain, kw)`` for every non-empty sequence (None for an empty one).

    ``chains`` are :meth:`LinearChain.dense_chains` of ``corpus``, ``kw`` the
    sequence's constraint keywords for :mod:`cseq.chain.inference` (``masks`` and
    its slice of ``rows``); a ``NoAllowedPath`` names the sequence.
    """
    out = []
    for s, chain in enumerate(chains):
        if chain is None:
            out.append(None)
            continue
        a, b = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        kw = dict(masks, allowed=None if rows is None else rows[a:b])
        try:
            out.append(call(chain, kw))
        except NoAllowedPath as exc:
            raise NoAllowedPath(exc.position, s) from None
    return out


class LinearChain:
    """A first- or second-order linear-chain model: parameters, and inference over packed corpora.

    The model answers every question about reading it (the protocol a
    learner's model class keeps when it reads its parameters otherwise:
    :class:`~cseq.chain.normalized.GlobalChain`, the MEMM's
    :class:`~cseq.learners.memm.LocalChain`, the greedy tagger's
    :class:`~cseq.learners.greedy.GreedyChain`): :meth:`decode`, :meth:`marginals`,
    :meth:`dense_chains`, :meth:`posteriors`, :meth:`sequence_log_prob`, and
    the flags :attr:`linear_scores`, :attr:`probabilistic`,
    :attr:`chain_scores`, :attr:`decodes_word_rows` and :attr:`sparse_kernels`.  :mod:`cseq.decoding`,
    :mod:`cseq.probability`, :mod:`cseq.explain` and :mod:`cseq.report` ask
    the model, never what kind of estimator trained it.

    Parameters
    ----------
    n_labels : int
    attr_ptr : ndarray of int64, shape (n_attributes + 1,)
    attr_labels : ndarray of int32, shape (n_state,)
    params : ndarray of float64, shape (n_state + L*L + 2*L,), plus L*L*L for order 2
    order : int, 1 or 2
        Label bigrams only, or bigrams and trigrams (``trans2``).  Decoding,
        marginals and path features follow the order through the layout.
    """

    #: Whether :meth:`decode` maximizes the sum of the weights the model holds,
    #: so that :func:`cseq.explain.explain` can list its terms.
    linear_scores: bool = True
    #: Whether the model defines ``P(y | x)`` (:meth:`posteriors`,
    #: :meth:`sequence_log_prob`); a plain chain (perceptron, SSVM, PA, AROW)
    #: has scores only.
    probabilistic: bool = False
    #: Whether :meth:`decode` maximizes a chain score that :meth:`dense_chains`
    #: gives, and so decodes under constraints and lists n-best labelings.
    chain_scores: bool = True
    #: Whether :meth:`decode` takes ``word_rows`` (the emission memo of
    #: :func:`cseq.chain.mapping.map_decoded`).
    decodes_word_rows: bool = True
    #: Whether :meth:`decode` and :meth:`marginals` are the kernels' Viterbi path and
    #: forward-backward of :attr:`params` over the packed corpus, which the one-call
    #: path of prediction (``cseq/learners/_one_call.pyx``) runs too.
    sparse_kernels: bool = True

    def __init__(self, n_labels: int, attr_ptr: np.ndarray, attr_labels: np.ndarray,
                 params: np.ndarray, order: int = 1) -> None:
        self.n_labels = int(n_labels)
        self.order = order
        self.attr_ptr = attr_ptr
        self.attr_labels = attr_labels
        self.params = params
        self.validate()

    @classmethod
    def from_corpus(cls, corpus: Sequences, n_attrs: int, n_labels: int,
                    all_states: bool = False, order: int = 1) -> LinearChain:
        """A zero model whose state weights cover the pairs seen in a labeled corpus.

        With ``all_states`` every (attribute, label) pair gets a weight;
        ``order`` 2 adds the label-trigram block.

        Raises
        ------
        InputError
            If ``order`` is not 1 or 2, ``n_labels`` is not in ``1 .. MAX_LABELS``,
            ``n_attrs`` is negative, the corpus uses an attribute id ``>= n_attrs`` or a label
            id ``>= n_labels``, or (without ``all_states``) has no labels.
        """
        if not isinstance(corpus, Sequences):
            raise InputError(f"expected a Sequences corpus, got {type(corpus).__name__}")
        n_attrs, n_labels = int(n_attrs), int(n_labels)
        check_order(order)
        order = int(order)
        if not 1 <= n_labels <= _chain.MAX_LABELS:
            raise InputError(f"n_labels must be between 1 and {_chain.MAX_LABELS}, got {n_labels}")
        if n_attrs < 0:
            raise InputError(f"n_attrs must be non-negative, got {n_attrs}")
        if corpus.max_attr_id() >= n_attrs:
            raise InputError(f"corpus uses attribute id {corpus.max_attr_id()} but n_attrs is "
                             f"{n_attrs}")
        if corpus.labels is not None and len(corpus.labels) and corpus.labels.max() >= n_labels:
            raise InputError(f"corpus uses label id {corpus.labels.max()} but n_labels is "
                             f"{n_labels}")
        if all_states:
            attr_ptr = np.arange(n_attrs + 1, dtype=INDEX) * n_labels
            attr_labels = np.tile(np.arange(n_labels, dtype=LABEL), n_attrs)
        else:
            if corpus.labels is None:
                raise InputError("the state index of a model is built from a labeled corpus")
            attr_ptr, attr_labels = _chain.build_state_index(
                corpus.tok_ptr, corpus.attr_ids, corpus.labels, n_attrs, n_labels)
        params = cls.zero_params(len(attr_labels), n_labels, order)
        return cls(n_labels, attr_ptr, attr_labels, params, order=order)

    @classmethod
    def zero_params(cls, n_state: int, n_labels: int, order: int) -> np.ndarray:
        """Zeros for the parameters of this layout: where ``fit`` and ``partial_fit`` allocate.

        Raises InputError, not a bare MemoryError, when they do not fit in
        memory (an order-2 chain has L**3 trigram weights: 2,000 labels
        need 64 GB).
        """
        try:
            return np.zeros(cls._layout_of(n_state, n_labels, order)["n_params"], dtype=WEIGHT)
        except (ValueError, MemoryError) as exc:
            raise InputError(f"cannot build a model of order {order} with {n_labels} labels: "
                             f"{exc or 'out of memory'}") from None

    @classmethod
    def _layout_of(cls, n_state: int, n_labels: int, order: int) -> dict:
        """The parameter layout of this model class (a subclass may append blocks)."""
        return _chain.param_layout(n_state, n_labels, order)

    @classmethod
    def from_arrays(cls, n_labels: int, arrays: dict[str, np.ndarray],
                    order: int = 1) -> LinearChain:
        """The model stored as :meth:`arrays` in a model file; ModelFormatError if invalid.

        ``order`` comes from the file's header (1 when absent); ``params`` must
        have the length of that order's layout.
        """
        if set(arrays) != {"attr_ptr", "attr_labels", "params"}:
            raise ModelFormatError("model arrays are missing")
        return cls(n_labels, arrays["attr_ptr"], arrays["attr_labels"], arrays["params"],
                   order=order)

    def validate(self) -> None:
        """Check every invariant the kernels rely on; ModelFormatError if one fails."""
        L, ptr, lab, p = self.n_labels, self.attr_ptr, self.attr_labels, self.params
        if L < 1:
            raise ModelFormatError("a model needs at least one label")
        if type(self.order) is not int or self.order not in (1, 2):
            raise ModelFormatError(f"model order must be 1 or 2, got {self.order!r}")
        for name, arr, dtype in (("attr_ptr", ptr, INDEX), ("attr_labels", lab, LABEL),
                                 ("params", p, WEIGHT)):
            if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1 \
                    or not arr.flags.c_contiguous:
                raise ModelFormatError(f"model {name} must be a contiguous 1-d {dtype} array")
        if len(ptr) < 1 or ptr[0] != 0 or ptr[-1] != len(lab) or np.any(np.diff(ptr) < 0):
            raise ModelFormatError("model attr_ptr is inconsistent with attr_labels")
        if len(lab) and (lab.min() < 0 or lab.max() >= L):
            raise ModelFormatError("model attr_labels has a label id out of range")
        _check_unique_pairs(ptr, lab, L)
        try:
            layout = self._layout_of(len(lab), L, self.order)
        except ValueError as exc:
            raise ModelFormatError(f"model has a bad shape: {exc}") from None
        if len(p) != layout["n_params"]:
            raise ModelFormatError(
                f"model params has the wrong length ({len(p)}; a model of order {self.order} "
                f"with {len(lab)} state weights and {L} labels has {layout['n_params']})")
        if not np.isfinite(p).all():
            raise ModelFormatError("model params are not all finite")
        self.layout = layout
        self.index = _chain.ChainIndex(ptr, lab, L, self.order)

    layout: dict
    """Offsets of the parameter blocks (``n_state``, ``trans``, ``start``, ``end``,
    ``trans2``, ``n_params``), from ``cseq.chain._chain.param_layout``."""

    index: _chain.ChainIndex
    """The structure the kernels read (state index and layout)."""

    @property
    def n_attributes(self) -> int:
        return len(self.attr_ptr) - 1

    @property
    def n_state(self) -> int:
        return len(self.attr_labels)

    @property
    def state_weights(self) -> np.ndarray:
        return self.params[:self.n_state]

    @property
    def transitions(self) -> np.ndarray:
        """(L, L) view: ``transitions[i, j]`` scores label i followed by j."""
        L, k = self.n_labels, self.layout["trans"]
        return self.params[k:k + L * L].reshape(L, L)

    @property
    def trans2(self) -> np.ndarray | None:
        """(L, L, L) view, order 2: ``trans2[a, b, c]`` scores labels a, b, c in a row; else None."""
        if self.order != 2:
            return None
        L, k = self.n_labels, self.layout["trans2"]
        return self.params[k:k + L * L * L].reshape(L, L, L)

    @property
    def start(self) -> np.ndarray:
        """(L,) view: score of each label at the first position."""
        k = self.layout["start"]
        return self.params[k:k + self.n_labels]

    @property
    def end(self) -> np.ndarray:
        """(L,) view: score of each label at the last position."""
        k = self.layout["end"]
        return self.params[k:k + self.n_labels]

    def check_corpus(self, corpus: Sequences) -> None:
        """Refuse a corpus whose attribute or label ids the model does not have."""
        if not isinstance(corpus, Sequences):
            raise InputError(f"expected a Sequences corpus, got {type(corpus).__name__}")
        if corpus.max_attr_id() >= self.n_attributes:
            raise InputError(
                f"corpus uses attribute id {corpus.max_attr_id()} but the model has "
                f"{self.n_attributes} attributes")
        if corpus.labels is not None and len(corpus.labels) \
                and corpus.labels.max() >= self.n_labels:
            raise InputError(
                f"corpus uses label id {corpus.labels.max()} but the model has "
                f"{self.n_labels} labels")

    def emissions(self, corpus: Sequences, t0: int, t1: int) -> np.ndarray:
        """State scores of tokens ``t0:t1`` of a corpus, shape (t1 - t0, L)."""
        self.check_corpus(corpus)
        if not 0 <= t0 <= t1 <= corpus.n_tokens:
            raise InputError(f"token range {t0}:{t1} is outside the corpus")
        return _chain.score_corpus_emissions(self.index, self.params, corpus.view(), t0, t1)

    def mask_set(self, corpus: Sequences, allowed=None, allowed_transitions=None,
                 allowed_start=None, allowed_end=None):
        """Validated constraints for :meth:`decode`/:meth:`marginals` on ``corpus`` (None: none).

        ``allowed`` is (n_tokens, L) over the corpus's tokens, the others as in
        :func:`cseq.viterbi`.
        """
        masks = mask_set(self.n_labels, allowed, allowed_transitions, allowed_start,
                         allowed_end, n=corpus.n_tokens)
        return masks

    def word_rows(self, attrs: np.ndarray, group: np.ndarray, n_groups: int,
                  cache: _word_rows.WordRowCache | None = None) -> np.ndarray:
        """Summed state-weight rows of sets of attributes, for :meth:`decode`'s ``word_rows``.

        ``attrs`` (int, (n_words, k)) holds attribute ids (negative: none)
        and ``group`` (k,) the group of each column; ``out[w, g]`` is the sum
        of the rows of ``attrs[w, j]`` over the columns of group ``g``: the
        emission a token gets from those attributes, each of value 1, bit for
        bit (the same additions in the same order, in C:
        :func:`cseq.chain._word_rows.word_rows`).  ``cache``, from
        :meth:`word_row_cache` for ``group`` and ``n_groups`` and used by one
        thread only, keeps the rows of the words it has seen.

        Returns
        -------
        ndarray of float64, shape (n_words, n_groups, n_labels)
        """
        attrs = np.ascontiguousarray(attrs, dtype=np.int32)
        group = np.ascontiguousarray(group, dtype=np.int32)
        if attrs.ndim != 2 or group.shape != (attrs.shape[1],):
            raise InputError(f"word_rows: attrs must be 2-d and group must give each of its "
                             f"columns a group in 0..{n_groups - 1}")
        try:
            return _word_rows.word_rows(self.index, self.params, attrs, group, n_groups, cache)
        except ValueError as exc:
            raise InputError(str(exc)) from None

    def word_row_cache(self, group: np.ndarray, n_groups: int,
                       max_bytes: int = 1 << 22) -> _word_rows.WordRowCache:
        """A cache for :meth:`word_rows` with ``group`` and ``n_groups``, of at most
        about ``max_bytes`` (at least 16 entries, at most 4,096: a sentence's
        words, and the frequent words of a stream, which hit most).

        It belongs to this model's parameters, which a published snapshot
        never changes (:mod:`cseq.fitted`), and to one thread: it is not
        locked.
        """
        group = np.ascontiguousarray(group, dtype=np.int32)
        entry = 4 * len(group) + 8 * n_groups * self.n_labels
        capacity = max(16, min(4096, max_bytes // max(entry, 1)))
        return _word_rows.WordRowCache(self.index, self.params, group, n_groups,
                                    1 << (capacity.bit_length() - 1))

    def decode(self, corpus: Sequences, n_jobs: int = 1, *, allowed=None,
               allowed_transitions=None, allowed_start=None, allowed_end=None,
               word_rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
               ) -> np.ndarray:
        """Viterbi label ids for every token (int32, n_tokens), in parallel over sequences.

        ``allowed`` (bool, (n_tokens, L)), ``allowed_transitions`` ((L, L)),
        ``allowed_start`` and ``allowed_end`` ((L,)) restrict each sequence's
        labelling as in :func:`cseq.viterbi`.  ``word_rows``, ``(rows, words,
        groups)``, adds emission rows looked up per token: for each group
        ``g`` with ``groups[g] == (col, offset)``, token ``t`` gets
        ``rows[words[t + offset, col], g]`` when ``t + offset`` is in its
        sequence (``rows`` from :meth:`word_rows`, ``words`` int32
        (n_tokens, n_cols)).  Raises InputError naming the first sequence
        whose scores overflow, or (``NoAllowedPath``) that the constraints
        leave without a label path.
        """
        self.check_corpus(corpus)
        masks = None if allowed is None and allowed_transitions is None \
            and allowed_start is None and allowed_end is None \
            else self.mask_set(corpus, allowed, allowed_transitions, allowed_start, allowed_end)
        threads = resolve_n_jobs(n_jobs)
        # One thread: one chunk (None), without making its bounds per call.
        chunks = work_chunks(corpus.seq_ptr, threads) if threads > 1 else None
        try:
            return _decode.decode_corpus(self.index, self.params, corpus.view(), chunks,
                                         threads, masks, word_rows)
        except FloatingPointError as exc:
            raise not_finite(exc.args[0], "best path score") from None

    def marginals(self, corpus: Sequences, n_jobs: int = 1, *, allowed=None,
                  allowed_transitions=None, allowed_start=None,
                  allowed_end=None) -> np.ndarray:
        """Label marginals for every token, shape (n_tokens, L).

        With constraints (as for :meth:`decode`), the marginals of the
        distribution restricted to the allowed paths: a disallowed label gets
        exactly 0.  Raises InputError naming the first sequence whose scores
        overflow or that the constraints leave without a label path.
        """
        self.check_corpus(corpus)
        masks = self.mask_set(corpus, allowed, allowed_transitions, allowed_start, allowed_end)
        threads = resolve_n_jobs(n_jobs)
        try:
            return _forward_backward.corpus_marginals(
                self.index, self.params, corpus.view(), work_chunks(corpus.seq_ptr, threads),
                threads, masks)
        except FloatingPointError as exc:
            raise not_finite(exc.args[0], "log Z") from None

    def dense_chains(self, corpus: Sequences) -> list[tuple | None]:
        """Per sequence, ``(emissions, transitions, start, end, transitions2)`` whose path
        score is what :meth:`decode` maximizes (None for an empty sequence).

        What constraints, n-best lists and the restricted distributions of
        :mod:`cseq.decoding` and :mod:`cseq.probability` run on, with the
        array kernels of :mod:`cseq.chain.inference`.  InputError naming the first
        sequence whose emission scores overflow.
        """
        self.check_corpus(corpus)
        em_all = self.emissions(corpus, 0, corpus.n_tokens)
        chain = self._chain_of(corpus)
        out: list[tuple | None] = []
        for s in range(corpus.n_sequences):
            a, b = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
            if a == b:
                out.append(None)
                continue
            em = np.array(em_all[a:b])
            if not np.isfinite(em).all():
                raise not_finite(s, "emission scores")
            out.append(chain(s, em))
        return out

    def _chain_of(self, corpus: Sequences) -> Callable[[int, np.ndarray], tuple]:
        """``chain(s, em)``: :meth:`dense_chains`' tuple for sequence ``s`` of ``corpus`` from its
        finite emission scores ``em`` (a copy, free to change): here the model's own arrays."""
        T, st, en, T2 = self.transitions, self.start, self.end, self.trans2
        return lambda s, em: (em, T, st, en, T2)

    def posteriors(self, corpus: Sequences, *, pairs: bool = False,
                   paths: np.ndarray | None = None) -> list[tuple[Any, float]]:
        """Per sequence, its posterior (``cseq.chain.normalized.Posterior``; None for an empty
        sequence) and ``log P`` of its slice of ``paths`` (label ids of every token; None:
        0.0).

        ``pairs`` adds the posterior's transitions, which span probabilities
        read.  Only a model that defines probabilities (:attr:`probabilistic`)
        has posteriors; this one raises InputError.
        """
        raise InputError(f"a {type(self).__name__} defines no probabilities")

    def sequence_log_prob(self, corpus: Sequences) -> np.ndarray:
        """``log P(y_s | x_s)`` of the labels of ``corpus`` (every label known), per sequence.

        Only a model that defines probabilities has them; this one raises InputError.
        """
        raise InputError(f"a {type(self).__name__} defines no probabilities")

    def path_features(self, corpus: Sequences) -> np.ndarray:
        """Features of the corpus's gold label paths summed over it (the CRF's empirical counts).

        Sequences with an unknown label (-1) are left out.
        """
        self.check_corpus(corpus)
        if corpus.labels is None:
            raise InputError("path features need a labeled corpus")
        return _chain.path_feature_counts(self.index, corpus.view(partial=True),
                                            corpus.labels)

    #: Names of the arrays :meth:`arrays` returns (a model file holds no others).
    ARRAY_NAMES = frozenset({"attr_ptr", "attr_labels", "params"})

    def pruned(self, drop_attributes: bool = False) -> tuple[LinearChain, np.ndarray]:
        """A copy without the state weights that are exactly 0 (they add nothing to any score).

        With ``drop_attributes`` the attributes left without a weight are
        removed too and the others renumbered in order (the featurizer must
        then be renumbered the same way, e.g. ``keep_attributes``).

        Returns
        -------
        model : LinearChain
            Of this model's class; scores every labeling exactly as this model does (for the kept
            attribute ids).
        kept : ndarray of int64
            The attribute ids of this model that the new one has, in order.
        """
        keep = self.state_weights != 0.0
        attr_of = np.repeat(np.arange(self.n_attributes, dtype=INDEX), np.diff(self.attr_ptr))
        counts = np.bincount(attr_of[keep], minlength=self.n_attributes).astype(INDEX)
        kept = (np.flatnonzero(counts) if drop_attributes
                else np.arange(self.n_attributes)).astype(INDEX)
        attr_ptr = np.zeros(len(kept) + 1, dtype=INDEX)
        np.cumsum(counts[kept], out=attr_ptr[1:])
        params = np.concatenate([self.state_weights[keep], self.params[self.n_state:]])
        model = type(self)(self.n_labels, attr_ptr,
                            np.ascontiguousarray(self.attr_labels[keep], dtype=LABEL),
                            np.ascontiguousarray(params, dtype=WEIGHT), order=self.order)
        return model, kept

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays stored in a model file."""
        return {"attr_ptr": self.attr_ptr, "attr_labels": self.attr_labels, "params": self.params}
