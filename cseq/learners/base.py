"""The estimator base class every learner shares.

Every estimator has the same API (``fit``, ``predict``, ``score``,
``get_params`` / ``set_params``, ``save``, pickling through the model file
format) and differs only in how it sets the parameters of its
:class:`~cseq.chain.model.LinearChain`.  Each learner lives in its own module
(:mod:`cseq.learners.perceptron`, :mod:`cseq.learners.crf`, ...).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

import numpy as np

from cseq.chain import decoding
from cseq.chain import explain as _explain
from cseq.chain import probability as _probability
from cseq.chain.explain import Explanation
from cseq.exceptions import InputError, NotFittedError
from cseq.chain.fitted import Fitted
from cseq.features.protocol import Featurizer, implements
from cseq.features.vocabulary import FeatureVocabulary
from cseq.learners import frame
from cseq.learners._one_call import OneCall
# Re-exported: their public paths were cseq.learners.base's before the loops moved.
from cseq.learners.loops import MAX_ITER_REASON, EarlyStopping
# Re-exported: their public paths were cseq.learners.base's before the parameters moved.
from cseq.learners.params import (COMMON_CONSTRAINTS, MAX_REGULARIZATION, Constraint, Number,
                                  OneOf, Parameters, check_flag, check_keywords, check_number,
                                  param_names, plain_params)
from cseq.chain.model import LinearChain
from cseq.learners.persist import ModelFile
from cseq.chain.sequences import Sequences

__all__ = ["ChainEstimator", "EarlyStopping", "COMMON_CONSTRAINTS", "Constraint", "Number",
           "OneOf", "check_flag", "check_keywords", "check_number", "param_names",
           "plain_params", "MAX_ITER_REASON", "MAX_REGULARIZATION"]


#: Each fitted snapshot's one-call predictor (False: its model or featurizer has none),
#: kept while the snapshot lives.
_ONE_CALLS: weakref.WeakKeyDictionary[Fitted, OneCall | bool] = weakref.WeakKeyDictionary()


def one_call(fitted: Fitted) -> OneCall | None:
    """The one-call predictor of short inputs (``cseq/learners/_one_call.pyx``) for a snapshot.

    There is one when the featurizer packs tokens with a string table
    (``packing``: feature lists and dicts, python-crfsuite items) and the
    model decodes the kernel's Viterbi path of its weights
    (``sparse_kernels``); its labels are the general path's.  Built once per
    snapshot: a ``partial_fit`` that publishes a new one gets a new one.
    """
    found = _ONE_CALLS.get(fitted)
    if found is None:
        packing = getattr(fitted.featurizer, "packing", None)
        model = fitted.model
        found = False
        if packing is not None and model.sparse_kernels:
            table, crfsuite = packing()
            if len(table) <= model.n_attributes:
                found = OneCall(table, crfsuite, model.index, model.params, list(fitted.classes))
        _ONE_CALLS[fitted] = found
    return found or None


def _in_one_call(fitted: Fitted, method: str, X: Any, n_jobs: Any, constraints: Any,
                 fixed: Any) -> Any:
    """``OneCall.predict`` or ``OneCall.marginals`` (``method``) of ``X`` for a short input
    on one thread without constraints, or None: the caller then takes the general path."""
    if constraints is not None or fixed is not None or type(n_jobs) is not int or n_jobs != 1:
        return None
    fast = one_call(fitted)
    return None if fast is None else getattr(fast, method)(X)


class ChainEstimator(Parameters, ModelFile):
    """Shared machinery of the estimators: parameters, data, prediction, persistence
    (the parameters from :class:`~cseq.learners.params.Parameters`, the model
    file from :class:`~cseq.learners.persist.ModelFile`).

    A learner subclasses it, names its hyperparameters in its ``__init__``
    signature (keyword-only; the base stores them as attributes and lists them
    in ``_param_names``), gives each one not in :data:`COMMON_CONSTRAINTS` a
    constraint in ``_parameter_constraints`` and sets the model's parameters in
    ``_train``; it registers with :func:`cseq.registry.register` (the command
    line's name for it, its options, the name model files give it).
    Learner-specific fitted state (beyond the model, the featurizer, the
    labels and the history) goes through ``_training_state`` /
    ``_restore_training``.

    An iterative learner gets early stopping on the dev set by listing
    ``early_stopping`` and ``patience`` among its parameters, reporting each
    iteration through :meth:`_report` (with ``model.params`` holding the
    parameters it scored) and ending its loop when ``_report`` returns True;
    ``fit`` then restores the best iteration's parameters (see
    :class:`EarlyStopping` and ``docs/architecture.md``).  A learner with a
    convergence test sets ``stop_reason_`` to :data:`MAX_ITER_REASON` when it
    ran out of iterations; ``fit`` then warns with
    :class:`~cseq.exceptions.ConvergenceWarning`.
    """

    #: The model class the learner trains: a LinearChain, or a subclass that
    #: reads its parameters otherwise (defines probabilities, decodes its own
    #: way, appends parameter blocks).  The model answers every reading
    #: question (decode, marginals, probabilities, explainability: the
    #: protocol of :class:`~cseq.chain.model.LinearChain`).
    _model_class: type[LinearChain] = LinearChain
    #: Whether ``fit`` accepts ``None`` labels (positions whose label is not
    #: known: partially labelled sequences, docs/learners.md).
    _partial_labels: bool = False
    #: The fitted attributes that belong to one fitted state (besides
    #: ``model_``, ``classes_``, ``featurizer_``): the training code sets them
    #: as plain attributes, :meth:`_commit` moves them into the snapshot with
    #: the model, and they are read from there (``__getattr__``).
    _fitted_names: tuple[str, ...] = ("history_", "n_iter_", "stop_reason_", "best_iteration_",
                                      "n_evaluations_", "_partial")
    #: The fitted state (:class:`cseq.fitted.Fitted`), replaced whole, never
    #: mutated; None until the first fit starts.
    _fitted: Fitted | None = None

    # -- the fitted state (cseq.fitted) -------------------------------------
    @property
    def model_(self) -> LinearChain | None:
        """The fitted model; None until a fit is committed (and while one is in progress)."""
        fitted = self._fitted
        return None if fitted is None else fitted.model

    @property
    def classes_(self) -> list[str]:
        """The labels, sorted: label id ``i`` is ``classes_[i]``."""
        return self._fitted_or_missing("classes_").classes

    @property
    def featurizer_(self) -> Any:
        """The fitted featurizer."""
        return self._fitted_or_missing("featurizer_").featurizer

    def __sklearn_is_fitted__(self) -> bool:
        """Whether a fit has been committed (scikit-learn's ``check_is_fitted`` asks this:
        the fitted attributes live in the snapshot, not in ``vars(self)``)."""
        fitted = self._fitted
        return fitted is not None and fitted.model is not None

    def _fitted_or_missing(self, name: str) -> Fitted:
        fitted = self._fitted
        if fitted is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r} "
                                 "(it is not fitted)")
        return fitted

    def __getattr__(self, name: str) -> Any:
        # Reached only when the usual lookup fails: the fitted attributes
        # (``_fitted_names``) of a committed fit live in its snapshot.
        fitted = self._fitted
        if fitted is not None and name in fitted.attributes:
            return fitted.attributes[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _begin_fit(self, featurizer: Any, classes: list[str]) -> None:
        """Start a fit: the estimator is unfitted from now on, with ``featurizer``
        and ``classes`` for the training code (``featurizer_``, ``classes_``)
        and none of the previous fit's attributes."""
        self._fitted = Fitted(featurizer, classes, None)
        for name in self._fitted_names:
            self.__dict__.pop(name, None)

    def _commit(self, model: LinearChain) -> None:
        """Publish the fit in progress with ``model`` as the fitted state, in one step.

        The fitted attributes the training code set (``_fitted_names``) go
        into the snapshot; an interrupt before the assignment leaves the
        estimator unfitted, as the fit found it after :meth:`_begin_fit`.
        """
        building = self._fitted
        attributes = {name: self.__dict__.pop(name) for name in self._fitted_names
                      if name in self.__dict__}
        self._fitted = Fitted(building.featurizer, building.classes, model,
                              MappingProxyType(attributes))

    def __sklearn_tags__(self) -> Any:
        """Estimator tags for scikit-learn >= 1.6 (imported only when scikit-learn asks).

        Not a classifier: ``y`` holds one label sequence per sample, so
        scikit-learn's splitters must not stratify on it.
        """
        from sklearn.utils import InputTags, Tags, TargetTags
        return Tags(estimator_type=None, target_tags=TargetTags(required=True),
                    input_tags=InputTags(two_d_array=False, string=True, dict=True))

    # -- fitting: the hooks of cseq.learners.protocol, run by cseq.learners.frame --
    #: How cseq.distributed trains this learner on Dask (see Learner._distributed).
    _distributed: str | None = None

    def _new_featurizer(self):
        """A fresh featurizer: a copy of ``features``, or a FeatureVocabulary (protocol)."""
        features = self.get_params(deep=False).get("features")
        if features is None:
            return FeatureVocabulary()
        if not implements(features, Featurizer):
            raise InputError("features must be None or a featurizer (e.g. TemplateFeaturizer): "
                             "an object with the members of cseq.features.protocol.Featurizer")
        # A fresh copy: the object the user passed is never fitted or mutated.
        return features.fresh()

    def _chain_order(self) -> int:
        """The chain order of this configuration: its ``order``, else 1 (protocol)."""
        return int(self.get_params(deep=False).get("order", 1))

    def _iterations(self) -> int:
        """The most iterations a fit reports: ``max_iter``, else 1 (protocol)."""
        return int(self.get_params(deep=False).get("max_iter", 1))

    def _can_partial_fit(self) -> bool:
        """Whether this configuration trains in batches (protocol; see cseq.learners.partial)."""
        return False

    def _check_distributed(self, warm_start: str | None) -> None:
        """InputError if this configuration cannot train on Dask (protocol)."""

    def _initial_fitted(self) -> dict[str, Any]:
        """The learner's fitted attributes a fit starts with (protocol)."""
        return {}

    def fit(self, X: Sequence[Any], y: Sequence[Sequence[str | None]],
            X_dev: Sequence[Any] | None = None, y_dev: Sequence[Sequence[str]] | None = None, *,
            callback: Callable[[dict[str, Any]], object] | None = None) -> Self:
        """Train on sequences ``X`` with label sequences ``y``; returns self.

        From its start until it returns, the estimator is unfitted (a
        ``predict`` in another thread meanwhile raises NotFittedError, or
        uses the model it took before); a second ``fit`` or ``partial_fit``
        from another thread waits for this one.  The steps around the
        learner's training are :func:`cseq.learners.frame.run`'s.

        Parameters
        ----------
        X : list of sequences (see the class docstring for token forms).
        y : list of label-string sequences, one label per token; ``None``
            where the label is not known, for the learners that train on
            partially labelled sequences (the CRF, the perceptron, the SSVM:
            docs/learners.md).
        X_dev, y_dev : optional development data, scored after every iteration
            (token accuracy as ``dev_accuracy``; span F1 as ``dev_f1`` too
            when the labels are BIO or BIOES, see
            :func:`cseq.metrics.detect_scheme`).
        callback : callable, optional
            Called after every iteration with that iteration's record (the
            dict appended to ``history_``).

        Raises
        ------
        TrainingInterrupted
            On Ctrl-C (a ``KeyboardInterrupt``).  This estimator stays
            unfitted; the exception's ``estimator`` holds the last completed
            iteration when the learner keeps one.
        InputError
            For bad data or hyperparameters, or when called from inside a
            ``fit`` or ``partial_fit`` of the same estimator (its callback).
        """
        def prepare():
            featurizer, corpus, classes = frame.pack(self, X, y)
            model = self._model_class.from_corpus(corpus, featurizer.n_attributes, len(classes),
                                                  bool(self.all_states),
                                                  order=self._chain_order())
            model.check_corpus(corpus)
            return featurizer, classes, model, corpus
        frame.run(self, prepare, self._train, X_dev, y_dev, callback)
        return self

    def _report(self, record: dict, callback, snapshot=None) -> bool:
        """Record one iteration of the fit in progress (:meth:`cseq.learners.frame.Fit.report`)."""
        return self._frame.report(record, callback, snapshot)

    def _finish(self, model: LinearChain) -> LinearChain:
        """The model to keep after training (and early stopping); e.g. a pruned copy."""
        return model

    def _pruned(self, model: LinearChain) -> LinearChain:
        """``model`` without its state weights that are exactly 0.

        The attributes left without any weight are dropped too when the
        featurizer can renumber its attributes (``keep_attributes``).  Every
        score, and so every prediction, stays as it was; tagging looks up and
        adds fewer weights, and model files shrink.
        """
        if not (model.state_weights == 0.0).any():
            return model
        pruned, kept = model.pruned(drop_attributes=True)
        keep_attributes = getattr(self.featurizer_, "keep_attributes", None)
        if keep_attributes is None or not keep_attributes(kept):
            pruned, _ = model.pruned(drop_attributes=False)
        return pruned

    def _train(self, corpus: Sequences, model: LinearChain, dev, callback) -> None:
        """Set ``model.params`` (and fitted statistics) from a packed labeled corpus (protocol)."""
        raise NotImplementedError

    def _check_fitted(self) -> Fitted:
        """The fitted state: the snapshot a reader takes once, at entry (NotFittedError if none)."""
        fitted = self._fitted
        if fitted is None or fitted.model is None:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        return fitted

    # -- prediction (the model decodes: cseq.decoding) ------------------------
    def predict(self, X: Sequence[Any], *, n_jobs: int = 1, constraints: Any = None,
                fixed: Any = None) -> list[list[str]]:
        """Most likely label sequence of each sequence in ``X``.

        Parameters
        ----------
        X : list of sequences, in the form given to :meth:`fit`.
        n_jobs : threads to use (``-1``: all usable CPUs; a larger count is
            clamped to them, see ``cseq._core.threads.resolve_n_jobs``).  Attribute lookup and
            decoding run without the GIL; with several threads, reading one
            block of ``X`` overlaps decoding the others.
        constraints : {"bio", "iob2", "iob1", "bioes"} or bool array (L, L), optional
            Allowed label transitions: a chunk scheme's rules derived from the
            label names, or a matrix in ``classes_`` order
            (:func:`cseq.decoding.scheme_constraints`).
        fixed : list, optional
            One entry per sequence: None, or a dict mapping a position to its
            label (``{3: "B-PER"}``) or to the set of labels allowed there.

        Returns
        -------
        list of list of str
            With constraints, the best labeling among the allowed ones
            (``cseq.decoding``); an InputError names a sequence they leave
            without any.
        """
        fitted = self._check_fitted()
        labels = _in_one_call(fitted, "predict", X, n_jobs, constraints, fixed)
        if labels is not None:
            return labels
        return decoding.predict(self, fitted, X, constraints, fixed, n_jobs)

    def predict_nbest(self, X: Sequence[Any], k: int = 5, *, constraints: Any = None,
                      fixed: Any = None, n_jobs: int = 1) -> list[decoding.NBest]:
        """The ``k`` best labelings of each sequence in ``X``, exactly (not a beam search).

        Returns one :class:`cseq.decoding.NBest` per sequence: ``labels`` (up
        to ``k`` label sequences, best first, ties broken as
        :func:`cseq.viterbi_nbest`), their ``scores`` and, for a CRF, HMM or
        MEMM, their ``log_probs`` (``log P(y | x)``).  ``constraints`` and
        ``fixed`` as for :meth:`predict`.  The greedy tagger refuses.
        """
        return decoding.predict_nbest(self, self._check_fitted(), X, k, constraints, fixed, n_jobs)

    def score(self, X: Sequence[Any], y: Sequence[Sequence[str]], *, n_jobs: int = 1) -> float:
        """Token accuracy of :meth:`predict` on ``X`` against ``y``.

        Labels of ``y`` unknown to the model count as errors. Returns 0.0
        when there are no tokens.
        """
        return decoding.score(self._check_fitted(), X, y, n_jobs)

    # -- explanations -----------------------------------------------------
    def explain(self, x: Any, *, k: int = 10) -> Explanation:
        """The terms of the score of the labeling predicted for one sequence ``x``.

        For each token: the predicted label, its ``k`` features with the
        largest contributions (name, value, weight), the transition, start and
        end terms, and the margin to the best labeling with another label
        there.  The tokens' terms add up to the score Viterbi maximizes.  See
        :func:`cseq.explain.explain`.
        """
        return _explain.explain(self, x, k=k)

    def top_features(self, label: str | None = None,
                     k: int = 20) -> list[tuple[str, float]] | dict[str, list[tuple[str, float]]]:
        """The ``k`` largest state weights of ``label`` (of every label if None), by name.

        See :func:`cseq.explain.top_features`.
        """
        return _explain.top_features(self, label, k)

    @property
    def transitions_(self) -> dict[str, dict[str, float]]:
        """``transitions_[previous][next]``: the transition weights by label name.

        A dict of dicts (``pandas.DataFrame.from_dict(t, orient="index")``
        puts the previous label in the rows).
        """
        return _explain.transition_table(self)

    # -- probabilities (CRF, HMM, MEMM) ------------------------------------
    def _chain_marginals(self, X: Sequence[Any], n_jobs: int, constraints: Any,
                         fixed: Any) -> list[np.ndarray]:
        """``predict_marginals`` of the learners whose model defines probabilities (CRF, HMM,
        MEMM): the model's marginals, under constraints those of the restricted distribution
        (:func:`cseq.decoding.predict_marginals`)."""
        fitted = self._check_fitted()
        marginals = _in_one_call(fitted, "marginals", X, n_jobs, constraints, fixed)
        if marginals is not None:
            return marginals
        return decoding.predict_marginals(self, fitted, X, constraints, fixed, n_jobs)

    def sequence_log_prob(self, X: Sequence[Any], y: Sequence[Sequence[str]], *,
                          n_jobs: int = 1) -> np.ndarray:
        """``log P(y_s | x_s)`` of given label sequences (float64, one per sequence).

        For models that define probabilities (CRF, HMM, MEMM); the others and
        labels unknown to the model raise InputError.  See
        :func:`cseq.probability.sequence_log_prob`.
        """
        return _probability.sequence_log_prob(self, X, y, n_jobs=n_jobs)

    def predict_confidence(self, X: Sequence[Any], *, constraints: Any = None,
                           fixed: Any = None, n_jobs: int = 1) -> list[np.ndarray]:
        """The marginal probability of each label :meth:`predict` gives: an (n_i,) array per
        sequence (CRF, HMM, MEMM).

        With ``constraints`` or ``fixed`` (as for :meth:`predict`), the labels of
        the constrained prediction and their marginals under the distribution
        restricted to the allowed labelings.
        """
        return _probability.predict_confidence(self, X, constraints=constraints, fixed=fixed,
                                               n_jobs=n_jobs)

    def sequence_entropy(self, X: Sequence[Any], *, constraints: Any = None, fixed: Any = None,
                         n_jobs: int = 1) -> np.ndarray:
        """Entropy in nats of each sequence's distribution over labelings (CRF, HMM, MEMM),
        restricted to the allowed labelings with ``constraints`` or ``fixed``."""
        return _probability.sequence_entropy(self, X, constraints=constraints, fixed=fixed,
                                             n_jobs=n_jobs)

    def span_marginals(self, X: Sequence[Any], spans: Sequence[Sequence[tuple[str, int, int]]],
                       *, scheme: str | None = None, constraints: Any = None, fixed: Any = None,
                       n_jobs: int = 1) -> list[np.ndarray]:
        """The probability that each ``(type, start, end)`` span of ``spans[s]`` is an entity.

        BIO or BIOES labels (CRF, HMM, MEMM); see
        :func:`cseq.probability.span_marginals`.
        """
        return _probability.span_marginals(self, X, spans, scheme=scheme,
                                           constraints=constraints, fixed=fixed, n_jobs=n_jobs)

    def predict_spans(self, X: Sequence[Any], *, scheme: str | None = None,
                      constraints: Any = None, fixed: Any = None,
                      n_jobs: int = 1) -> list[list[tuple[str, int, int, float]]]:
        """The entity spans of the predicted labels, ``(type, start, end, probability)``
        (of the constrained prediction with ``constraints`` or ``fixed``)."""
        return _probability.predict_spans(self, X, scheme=scheme, constraints=constraints,
                                          fixed=fixed, n_jobs=n_jobs)
