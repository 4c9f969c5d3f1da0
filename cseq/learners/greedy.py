"""The greedy left-to-right tagger: an averaged perceptron with label-history features."""

from __future__ import annotations

from typing import Any

import numpy as np

from cseq.learners import _greedy
from cseq.chain import _chain
from cseq._core.dtypes import LABEL
from cseq.learners.base import ChainEstimator, Number
from cseq.exceptions import InputError, ModelFormatError
from cseq.learners.loops import mistake_driven_epochs
from cseq._core.threads import resolve_n_jobs
from cseq.chain.model import LinearChain, work_chunks
from cseq.learners.params import check_flag
from cseq.registry import EARLY_STOPPING, Command, register

__all__ = ["GreedyChain", "GreedyChainNoPair", "GreedyTagger"]


class GreedyChain(LinearChain):
    """A chain model with label-history blocks after its layout, tagged greedily.

    ``params`` is the chain's vector (state weights, transitions, start, end;
    the transitions and start are the one-back history weights) followed by
    the two-back and the (two-back, one-back) blocks of
    :func:`cseq.learners._greedy.greedy_layout`.  :meth:`decode` tags left to right,
    which maximizes no chain score and no sum of weights over the sequence:
    the model has no marginals, probabilities, dense chains (constraints,
    n-best lists) or explanations.

    Parameters
    ----------
    n_labels, attr_ptr, attr_labels, params
        As for :class:`~cseq.chain.model.LinearChain` (``params`` longer, see above).
    tag_attrs, tag_labels : ndarray of int32, optional
        The tag dictionary: attribute ``tag_attrs[i]`` (strictly increasing)
        gives its tokens label ``tag_labels[i]``.
    """

    linear_scores = False
    chain_scores = False
    decodes_word_rows = False
    sparse_kernels = False

    def __init__(self, n_labels, attr_ptr, attr_labels, params, tag_attrs=None,
                 tag_labels=None, order: int = 1) -> None:
        self.tag_attrs = np.zeros(0, dtype=LABEL) if tag_attrs is None else tag_attrs
        self.tag_labels = np.zeros(0, dtype=LABEL) if tag_labels is None else tag_labels
        # order is always 1: _layout_of refuses any other.
        super().__init__(n_labels, attr_ptr, attr_labels, params, order=order)

    #: Whether the layout has the (two back, one back, label) block (see
    #: :mod:`cseq.learners._greedy`); :class:`GreedyChainNoPair` is the model without it.
    pair_history = True

    @classmethod
    def _layout_of(cls, n_state: int, n_labels: int, order: int) -> dict:
        if order != 1:
            raise ValueError("a greedy tagger's chain is first order")
        return _greedy.greedy_layout(n_state, n_labels, cls.pair_history)

    def validate(self) -> None:
        super().validate()
        attrs, labels = self.tag_attrs, self.tag_labels
        for name, arr in (("tag_attrs", attrs), ("tag_labels", labels)):
            if not isinstance(arr, np.ndarray) or arr.dtype != LABEL or arr.ndim != 1 \
                    or not arr.flags.c_contiguous:
                raise ModelFormatError(f"model {name} must be a contiguous 1-d int32 array")
        if len(attrs) != len(labels):
            raise ModelFormatError("model tag dictionary: tag_attrs and tag_labels differ in length")
        if len(attrs) and (attrs[0] < 0 or attrs[-1] >= self.n_attributes
                           or np.any(np.diff(attrs) <= 0)):
            raise ModelFormatError("model tag dictionary: attributes out of range or unsorted")
        if len(labels) and (labels.min() < 0 or labels.max() >= self.n_labels):
            raise ModelFormatError("model tag dictionary: label id out of range")
        dense = None
        if len(attrs):
            dense = np.full(self.n_attributes, -1, dtype=LABEL)
            dense[attrs] = labels
        self.tagdict = dense

    @classmethod
    def from_arrays(cls, n_labels: int, arrays: dict[str, np.ndarray],
                    order: int = 1) -> GreedyChain:
        if order != 1:
            raise ModelFormatError("a greedy tagger's chain is first order")
        if set(arrays) != cls.ARRAY_NAMES:
            raise ModelFormatError("model arrays are missing")
        # the vector's length says which layout it has (the pair block is L**3 weights)
        short = _greedy.greedy_layout(len(arrays["attr_labels"]), max(n_labels, 1), False)
        model_class = GreedyChainNoPair if len(arrays["params"]) == short["n_params"] \
            else GreedyChain
        return model_class(n_labels, arrays["attr_ptr"], arrays["attr_labels"], arrays["params"],
                           arrays["tag_attrs"], arrays["tag_labels"])

    ARRAY_NAMES = LinearChain.ARRAY_NAMES | {"tag_attrs", "tag_labels"}

    def arrays(self) -> dict[str, np.ndarray]:
        return {**super().arrays(), "tag_attrs": self.tag_attrs, "tag_labels": self.tag_labels}

    @property
    def two_back(self) -> np.ndarray:
        """(L + 1, L) view: weight of the label two back (row L: before the start) and the label."""
        L, k = self.n_labels, self.layout["two_back"]
        return self.params[k:k + (L + 1) * L].reshape(L + 1, L)

    @property
    def pair(self) -> np.ndarray | None:
        """(L + 1, L, L) view: weight of (two back, one back, label); two back = L is the pad.
        None for a model without the block (:class:`GreedyChainNoPair`)."""
        L, k = self.n_labels, self.layout["pair"]
        if k < 0:
            return None
        return self.params[k:k + (L + 1) * L * L].reshape(L + 1, L, L)

    def decode(self, corpus, n_jobs: int = 1) -> np.ndarray:
        """Greedy left-to-right label ids for every token (int32), in parallel over sequences."""
        self.check_corpus(corpus)
        threads = resolve_n_jobs(n_jobs)
        return _greedy.tag_corpus(self.index, self.params, corpus.view(), self.tagdict,
                                  work_chunks(corpus.seq_ptr, threads), threads)

    def marginals(self, corpus, n_jobs: int = 1):
        raise InputError("a greedy tagger has no label marginals")

    def dense_chains(self, corpus):
        raise InputError("a greedy tagger does not decode a chain score")

    def path_features(self, corpus):
        raise InputError("a greedy tagger's features depend on its own predictions, not on a path")


class GreedyChainNoPair(GreedyChain):
    """A :class:`GreedyChain` without the (two back, one back, label) block: for many labels."""

    pair_history = False


class _ModelClass:
    """``GreedyTagger._model_class``: the chain of its ``pair_history`` on an instance,
    :class:`GreedyChain` on the class (whose ``from_arrays`` reads either layout)."""

    def __get__(self, obj: Any, owner: type) -> type[GreedyChain]:
        if obj is not None and not obj.get_params(deep=False).get("pair_history", True):
            return GreedyChainNoPair
        return GreedyChain


def _check_tag_dict(name: str, value: Any) -> None:
    """Constraint of ``tag_dict``: None or a non-empty attribute-name prefix."""
    if value is not None and (not isinstance(value, str) or not value):
        raise InputError(f"{name} must be None or a non-empty attribute-name prefix, "
                         f"got {value!r}")


@register(Command("greedy", 5, {"seed": "random_state", **EARLY_STOPPING},
                  "greedy left-to-right averaged perceptron with label history, the fastest "
                  "to tag", defaults={"random_state": 0},
                  quick={"max_iter": 3, "random_state": 0}))
class GreedyTagger(ChainEstimator):
    """Greedy left-to-right tagger trained as an averaged multiclass perceptron.

    Each token is labeled in turn by the argmax of its state scores (the same
    attributes and state weights as every other learner) plus label-history
    scores: the label predicted one back, two back, and the pair of them.
    Training runs on the tagger's own predicted history, not the gold one, so
    it learns to recover from its own mistakes (Honnibal 2013; NLTK's
    ``PerceptronTagger``).  Tagging costs O(L) per token instead of Viterbi's
    O(L^2), and nothing is looked ahead.

    The history features are label-only (one back, two back, their pair); a
    word-and-previous-label conjunction, as NLTK has, is not built in: the
    templates' window features carry the context.

    Parameters
    ----------
    max_iter : int, default 5
        Passes over the training data.
    average : bool, default True
        Use the average of the weights after every scored token (lazily
        maintained) instead of the final weights.
    shuffle : bool, default True
        Visit sequences in a new random order each pass.
    random_state : int or None
        Seed of the shuffling (numpy's PCG64).
    early_stopping : bool, default False
        Score the dev set (``fit``'s ``X_dev``, ``y_dev``, required) after
        every pass, stop after ``patience`` passes without a better accuracy
        and keep the best pass's weights (``best_iteration_``).
    patience : int, default 3
    tag_dict : str or None, default None
        Turn on the tag dictionary: attributes whose name starts with this
        prefix are the word (e.g. ``"U05:"`` for the ``pos`` preset's word as
        written, or ``"w="`` for feature lists holding ``"w=<word>"``).  A
        word seen at least ``tag_dict_min_count`` times in training with one
        label at least ``tag_dict_min_share`` of the time gets that label
        directly, without scoring, when training and tagging.
    tag_dict_min_count : int, default 20
        NLTK's ``freq_thresh``.
    tag_dict_min_share : float, default 0.97
        NLTK's ``ambiguity_thresh``.
    all_states : bool, default False
        Give every (attribute, label) pair a weight.
    pair_history : bool, default True
        Score the pair (two back, one back) with the label: ``(L + 1) L**2``
        weights, which is 150 MB at 250 labels; False leaves the pair out
        (the one-back and two-back labels stay), for columns of hundreds of
        labels (lemma rules, feature bundles).
    features : featurizer or None
        As for :class:`~cseq.StructuredPerceptron`.
    verbose : bool
        Print one line per iteration: errors, seconds, dev accuracy.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_, history_
        As for :class:`~cseq.StructuredPerceptron`; ``model_`` is a
        :class:`GreedyChain`.
    tag_dict_size_ : int
        Words in the tag dictionary.

    References
    ----------
    Collins, M. (2002). Discriminative training methods for hidden Markov
    models: theory and experiments with perceptron algorithms. EMNLP.
    Ratnaparkhi, A. (1996). A maximum entropy model for part-of-speech
    tagging. EMNLP.
    Honnibal, M. (2013). A good part-of-speech tagger in about 200 lines of
    Python. Blog post; NLTK's ``PerceptronTagger``.
    """

    _parameter_constraints = {"tag_dict": _check_tag_dict,
                              "pair_history": check_flag,
                              "tag_dict_min_count": Number(1, integer=True),
                              "tag_dict_min_share": Number(0.0, high=1.0)}
    _model_class = _ModelClass()

    def __init__(self, *, max_iter: int = 5, average: bool = True, shuffle: bool = True,
                 random_state: int | None = None, early_stopping: bool = False,
                 patience: int = 3, tag_dict: str | None = None,
                 tag_dict_min_count: int = 20, tag_dict_min_share: float = 0.97,
                 all_states: bool = False, pair_history: bool = True, features: Any = None,
                 verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def _build_tag_dict(self, corpus, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
        """(attributes, labels) of the tag dictionary from a labeled training corpus."""
        names = self.featurizer_.attribute_names()
        word = np.fromiter((n.startswith(self.tag_dict) for n in names), dtype=bool,
                           count=len(names))
        if not word.any():
            raise InputError(f"tag_dict: no attribute name starts with {self.tag_dict!r}")
        token_of = np.repeat(np.arange(corpus.n_tokens), np.diff(corpus.tok_ptr))
        keep = word[corpus.attr_ids]
        attrs = corpus.attr_ids[keep].astype(np.int64)
        labels = corpus.labels[token_of[keep]]
        counts = np.zeros((int(word.sum()), n_labels), dtype=np.int64)
        rank = np.cumsum(word) - 1  # word attribute -> its row
        np.add.at(counts, (rank[attrs], labels), 1)
        total = counts.sum(axis=1)
        best = counts.argmax(axis=1)
        mode = counts.max(axis=1)
        ok = (total >= self.tag_dict_min_count) & (mode >= self.tag_dict_min_share * total)
        ok &= total > 0
        return (np.flatnonzero(word)[ok].astype(LABEL), best[ok].astype(LABEL))

    def _train(self, corpus, model, dev, callback):
        if self.tag_dict is not None:
            model.tag_attrs, model.tag_labels = self._build_tag_dict(corpus, model.n_labels)
            model.validate()
        params = _chain.AveragedParams(model.params.copy())
        trainer = _greedy.GreedyTrainer(model.index, corpus.view(), params, model.tagdict)
        mistake_driven_epochs(self, trainer, params, corpus, model, dev, callback)

    @property
    def tag_dict_size_(self) -> int:
        return len(self._check_fitted().model.tag_attrs)
