"""The averaged structured perceptron (Collins 2002)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cseq.learners import _perceptron
from cseq.chain import _chain
from cseq.learners.base import ChainEstimator
from cseq.learners.loops import mistake_driven_epochs
from cseq.learners.partial import PartialFitMixin, check_scalars, rng_from_state, rng_state
from cseq.registry import EARLY_STOPPING, Command, register
from cseq.io.serialize import MAX_COUNT

__all__ = ["StructuredPerceptron"]


# cseq train's learner for the pos and ner presets (docs/accuracy.md): on EWT and WNUT-17
# dev as accurate as the CRF or more, at a fraction of its training time and model size.
# With the pos preset, a second-order chain: on EWT dev +0.02 to +0.16 over order 1 (seeds
# 0-2, the same tag dictionary), and with the dictionary's 10% share +0.18 over both old
# Defaults on each of 5 seeds (docs/templates.md), for about 2.5x the training
# time (about 11 s).
@register(Command("perceptron", 10, {"seed": "random_state", "order": "order", **EARLY_STOPPING},
                  "averaged structured perceptron", defaults={"random_state": 0},
                  preset_defaults={"pos": {"order": 2}},
                  default_for=("pos", "ner"), quick={"max_iter": 3, "random_state": 0}))
class StructuredPerceptron(PartialFitMixin, ChainEstimator):
    """Averaged structured perceptron for linear chains (Collins 2002).

    Parameters
    ----------
    max_iter : int, default 10
        Passes over the training data.
    order : {1, 2}, default 1
        1: label bigram transitions (a first-order chain).  2: also label
        trigram weights ``trans2[y_{t-2}, y_{t-1}, y_t]``, decoded over label
        pairs in O(n L^3) (about L times first order's Viterbi, see
        docs/learners.md, "Second order").
    average : bool, default True
        Return the average of the weights after every example (lazily
        maintained) instead of the final weights.
    shuffle : bool, default True
        Visit sequences in a new random order each pass.
    random_state : int or None
        Seed of the shuffling (numpy's PCG64, identical on every platform).
    early_stopping : bool, default False
        Score the dev set (``fit``'s ``X_dev``, ``y_dev``, required) after every
        pass, stop after ``patience`` passes without a better accuracy and
        keep the best pass's (averaged) weights (``best_iteration_``).
    patience : int, default 3
    all_states : bool, default False
        Give every (attribute, label) pair a weight, not only pairs seen in training.
    features : featurizer or None
        How ``X`` is turned into attributes; None means per-token feature
        lists or dicts (:class:`~cseq.features.FeatureVocabulary`).
    verbose : bool
        Print one line per iteration: errors, seconds, dev accuracy.

    Attributes
    ----------
    classes_ : list of str
        Labels, sorted; column order of scores.
    model_ : LinearChain
    featurizer_ : the fitted featurizer
    n_iter_ : int
    history_ : list of dict, one per iteration
    stop_reason_ : str
        Why training stopped: ``max_iter`` passes done (the perceptron has no
        convergence test, so this is no warning), no training errors, or
        early stopping.
    best_iteration_ : int or None
        With early stopping, the pass whose weights were kept.

    Notes
    -----
    A perceptron changes only the weights of the mistakes it makes, so most
    state weights end exactly at 0 (69% with the ``pos`` preset on UD English
    EWT).  Unless ``all_states`` is set, the fitted model drops them, and the
    featurizer the attributes left without any weight: every score is
    unchanged, tagging looks up and adds fewer weights, files are smaller.

    ``partial_fit(X, y)`` makes one pass over a batch and continues from the
    previous batches' weights and averaging state, also after a save and a
    load (docs/learners.md, "Training in batches").

    References
    ----------
    Collins, M. (2002). Discriminative training methods for hidden Markov
    models: theory and experiments with perceptron algorithms. EMNLP.
    """

    _partial_labels = True

    def __init__(self, *, max_iter: int = 10, order: int = 1, average: bool = True,
                 shuffle: bool = True, random_state: int | None = None,
                 early_stopping: bool = False, patience: int = 3, all_states: bool = False,
                 features: Any = None, verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def _finish(self, model):
        return model if self.all_states else self._pruned(model)

    #: On Dask: iterative parameter mixing of perceptron epochs (cseq.distributed).
    _distributed = "cseq.distributed.perceptron"

    def _train(self, corpus, model, dev, callback):
        params = _chain.AveragedParams(model.params.copy())
        trainer = _perceptron.PerceptronTrainer(model.index, corpus.view(partial=True), params)
        mistake_driven_epochs(self, trainer, params, corpus, model, dev, callback)

    # -- training in batches (cseq.learners.partial) -----------------------------------
    _partial_arrays = ("w", "u")

    def _partial_start(self) -> dict:
        return {"n_examples": 0, "rng": rng_state(np.random.default_rng(self.random_state))}

    def _check_partial_scalars(self, scalars: dict, n_sequences: int) -> None:
        check_scalars(scalars, {"n_examples": (int, 1, MAX_COUNT)})

    def _partial_pass(self, corpus, model, state, classes):
        params = _chain.AveragedParams(state.arrays["w"], state.arrays["u"],
                                         n_examples=state.scalars["n_examples"])
        trainer = _perceptron.PerceptronTrainer(model.index, corpus.view(partial=True), params)
        order = np.arange(corpus.n_sequences, dtype=np.int64)
        if self.shuffle:
            rng = rng_from_state(state.scalars["rng"])
            rng.shuffle(order)
            state.scalars["rng"] = rng_state(rng)
        errors = trainer.train_epoch(order)
        state.scalars["n_examples"] = int(params.n_examples)
        model.params = params.averaged() if self.average else params.w.copy()
        return {"errors": int(errors), "error_rate": errors / corpus.n_tokens}
