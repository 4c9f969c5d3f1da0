"""What a learner implements, and what the fit frame gives it: the declared protocol.

A learner is a subclass of :class:`~cseq.learners.base.ChainEstimator`, which gives
every hook below a default but ``_train``.  The fit frame
(:mod:`cseq.learners.frame`), ``partial_fit`` (:mod:`cseq.learners.partial`), the
Dask layer (:mod:`cseq.distributed`) and the command line call these hooks
and never ask what class they hold.  The frame and the loops take a
:class:`Learner` (checked statically by mypy); the tests check that every
registered learner has every hook (:func:`protocol_hooks`).

The frame calls, in order (see :func:`cseq.learners.frame.run`):
``_validate_params`` -> ``_new_featurizer`` (to pack the data) ->
``_initial_fitted`` -> ``_train`` (which calls ``_report`` every
iteration) -> ``_finish`` -> ``_commit``; on Ctrl-C ``_finish`` of a copy at
the last reported iteration.  Saving calls ``_model_state`` (which asks
``_training_state``) and loading ``_from_model_state`` (which calls
``_restore_training``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol

import numpy as np

from cseq.chain.fitted import Fitted
from cseq.chain.model import LinearChain
from cseq.chain.sequences import Sequences

__all__ = ["Learner", "PartialLearner", "TrainingState", "protocol_hooks"]

#: What ``_report``'s snapshot returns: the weights of the reported
#: iteration and the fitted attributes that go with them.
Snapshot = Callable[[], tuple[np.ndarray, dict[str, Any]]]


@dataclass
class TrainingState:
    """What an online learner needs to continue training (``partial_fit``).

    ``arrays`` are float64 vectors laid out as the model's ``params`` (they
    grow with the model); ``scalars`` is JSON-able (ints, finite floats, the
    generator state); ``n_sequences`` counts the sequences seen so far.
    """

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    scalars: dict[str, Any] = field(default_factory=dict)
    n_sequences: int = 0


class Learner(Protocol):
    """The hooks of one learner, in the order a fit meets them.

    Attributes every learner has: its hyperparameters (``get_params``),
    among them ``verbose`` and ``all_states``; those the loops read when the
    learner uses them (``max_iter``, ``shuffle``, ``random_state``,
    ``average``, ``tol``, ``period``, ``early_stopping``, ``patience``).
    While a fit runs, the training code sets fitted attributes as plain
    attributes (``history_``, ``n_iter_``, ``stop_reason_``,
    ``best_iteration_`` and the learner's own, listed in ``_fitted_names``);
    ``_commit`` moves them into the published snapshot.
    """

    #: The model class the learner trains: a LinearChain, or a subclass that
    #: appends parameter blocks and decodes its own way (the greedy tagger).
    _model_class: ClassVar[type[LinearChain]]
    #: Whether ``fit`` accepts None labels (partially labelled sequences):
    #: packing gives them label id -1 and the learner's kernel skips them.
    _partial_labels: ClassVar[bool]
    #: The fitted attributes that belong to one fitted state besides
    #: ``model_``, ``classes_`` and ``featurizer_`` (base's plus the learner's).
    _fitted_names: ClassVar[tuple[str, ...]]
    #: How :mod:`cseq.distributed` trains this learner on a Dask cluster: the
    #: dotted name of the module of its strategy, which offers
    #: ``train(est, client, setup, dev, callback, warm_start)`` and
    #: ``WARM_STARTS`` (``"cseq.distributed.crf"``: distributed L-BFGS of the
    #: CRF objective; ``"cseq.distributed.perceptron"``,
    #: ``"cseq.distributed.ssvm"``: iterative parameter mixing of perceptron or
    #: Pegasos epochs), or None (it cannot).  A name, not an import: the
    #: learners stand below the Dask layer and never import it.
    _distributed: ClassVar[str | None]

    # What the frame and the loops read besides the hooks: two hyperparameters
    # every learner has, the fitted state the base keeps (``_fitted``, read as
    # ``featurizer_`` and ``classes_``) and the fitted attributes the training
    # code sets.  Other hyperparameters are read by name (``__getattr__``).
    verbose: bool
    all_states: bool
    _fitted: Fitted | None
    history_: list[dict]
    n_iter_: int
    stop_reason_: str | None
    best_iteration_: int | None

    @property
    def featurizer_(self) -> Any:
        """The featurizer of the fit in progress (or of the fitted state)."""
        ...

    @property
    def classes_(self) -> list[str]:
        """The labels of the fit in progress, sorted: label id ``i`` is ``classes_[i]``."""
        ...

    def __getattr__(self, name: str) -> Any:
        """Hyperparameters (``max_iter``, ``shuffle``, ...) and the learner's own
        fitted attributes, read by name."""
        ...

    def __setattr__(self, name: str, value: Any) -> None:
        """The training code sets fitted attributes by name (``_commit`` moves them
        into the snapshot it publishes)."""

    def _validate_params(self) -> None:
        """Raise InputError (or InputTypeError) for a bad hyperparameter.

        Called first by every fit, ``partial_fit`` and loading; changes nothing.
        """

    def _check_distributed(self, warm_start: str | None) -> None:
        """Raise InputError if this configuration cannot train on Dask.

        Called by :func:`cseq.distributed.fit` after ``_validate_params``,
        only when ``_distributed`` names a strategy module (e.g. the CRF refuses
        ``algorithm="sgd"``).
        """

    def _chain_order(self) -> int:
        """The order of the chain this configuration trains (1, or 2 with ``order=2``)."""
        ...

    def _iterations(self) -> int:
        """The most iterations a fit of this configuration reports (``max_iter``, else 1).

        For progress bars (the command line); not a promise that a fit runs them all.
        """
        ...

    def _can_partial_fit(self) -> bool:
        """Whether this configuration trains in batches (``partial_fit``, ``--resumable``)."""
        ...

    def _new_featurizer(self) -> Any:
        """A fresh, unfitted featurizer for this configuration.

        Called when a fit packs its data (and by ``partial_fit``'s first
        batch and the Dask layer).  The default copies ``features`` (never the
        user's object) or makes a :class:`~cseq.features.FeatureVocabulary`;
        the HMM makes its word lexicon.
        """
        ...

    def _initial_fitted(self) -> dict[str, Any]:
        """The learner's own fitted attributes a fit starts with (e.g. the CRF's
        ``n_pruned_ = 0``), set after the reset and on an interrupted fit's copy."""
        ...

    def _train(self, corpus: Sequences, model: LinearChain,
               dev: Callable[[LinearChain], float] | None,
               callback: Callable[[dict[str, Any]], object] | None) -> None:
        """Train: set ``model.params`` (zero on entry) from a packed labelled corpus.

        ``corpus`` holds label ids in ``classes_`` order (-1 where unknown, if
        ``_partial_labels``); ``model`` has its state index built.  ``dev``
        scores a model on the dev set (token accuracy; None without one).
        Every iteration calls ``_report(record, callback, snapshot)`` with
        ``model.params`` holding the weights it scored, and stops when it
        returns True; the shared loops (:mod:`cseq.learners.loops`) do all
        of this.  Sets ``n_iter_``, ``stop_reason_`` and the learner's own
        fitted attributes.  The only hook without a default.
        """

    def _report(self, record: dict, callback: Callable[[dict[str, Any]], object] | None,
                snapshot: Snapshot | None = None) -> bool:
        """Given by the frame (do not override): record one iteration's ``record``
        (history, ``verbose``, the callback, early stopping, the Ctrl-C
        ``snapshot``); True when early stopping says to stop now."""
        ...

    def _finish(self, model: LinearChain) -> LinearChain:
        """The model to keep after training (and early stopping): ``model``, or a copy.

        Called once at the end of a completed fit (after the weights were
        found finite) and on the copy an interrupted fit hands back; e.g.
        :meth:`_pruned` drops the state weights that are exactly 0.
        """
        ...

    def _pruned(self, model: LinearChain) -> LinearChain:
        """Given by the base: ``model`` without its exactly-zero state weights
        (and the featurizer without the attributes left without any)."""
        ...

    def _begin_fit(self, featurizer: Any, classes: list[str]) -> None:
        """Given by the base: start a fit (unfitted from now on, none of the previous
        fit's attributes)."""

    def _commit(self, model: LinearChain) -> None:
        """Given by the base: publish the fit in progress with ``model``, in one step."""

    def _training_state(self, fitted: Fitted) -> dict:
        """The learner's fitted information of ``fitted`` for the model header (JSON-able).

        Called when saving; the base writes ``n_iter``, ``history``,
        ``stop_reason`` and ``best_iteration`` itself.
        """
        ...

    def _restore_training(self, training: dict) -> None:
        """Inverse of :meth:`_training_state` on loading: set the fitted attributes
        from the header's ``training`` object; ModelFormatError if it is bad."""

    def _model_state(self, fitted: Fitted | None = None) -> tuple[dict, dict[str, np.ndarray]]:
        """Given by the base (a learner extends it to convert a hyperparameter for
        JSON, as the SSVM's ``cost``): the model file's header fields and arrays
        of the snapshot ``fitted`` (the current one if None)."""
        ...

    @classmethod
    def _from_model_state(cls, header: dict, arrays: dict[str, np.ndarray]) -> Any:
        """Given by the base (extended as :meth:`_model_state` is): the estimator a
        model file describes, through ``_validate_params`` and ``_restore_training``;
        ModelFormatError if the file is bad."""
        ...

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The hyperparameters (scikit-learn convention)."""
        ...


class PartialLearner(Learner, Protocol):
    """A learner that trains in batches (:class:`cseq.learners.partial.PartialFitMixin`).

    ``partial_fit`` packs a batch, grows the model and the training state to
    its labels and attributes, calls ``_partial_pass`` once and publishes
    the result; the state is stored in the model file.
    """

    #: The parameter-shaped training vectors (float64, laid out as
    #: ``model.params``) kept between batches, e.g. ``("w", "u")``.
    _partial_arrays: ClassVar[tuple[str, ...]]

    def _check_partial(self) -> None:
        """Raise InputError if this configuration cannot train in batches
        (the CRF with L-BFGS); called before anything else by ``partial_fit``."""

    def _partial_start(self) -> dict:
        """The JSON-able scalars of a fresh training state (counters, the generator state)."""
        ...

    def _partial_pass(self, corpus: Sequences, model: LinearChain, state: TrainingState,
                      classes: list[str]) -> dict:
        """One pass over the batch ``corpus``: update ``state`` in place, set
        ``model.params`` to the weights to predict with, return the record's fields."""
        ...

    def _partial_attributes(self, state: TrainingState, n_iter: int) -> dict[str, Any]:
        """The learner's own fitted attributes after ``n_iter`` batches."""
        ...

    def _check_partial_scalars(self, scalars: dict, n_sequences: int) -> None:
        """On loading: ModelFormatError unless ``scalars`` is what ``_partial_pass``
        leaves after ``n_sequences`` sequences."""


def protocol_hooks(protocol: type) -> frozenset[str]:
    """The hooks (methods and class attributes) ``protocol`` declares, inherited ones too.

    What every class that implements it must have (the instance attributes,
    hyperparameters and fitted attributes, are left out: an unfitted
    estimator has none of the fitted ones).
    """
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass in (Protocol, object, Generic):
            continue
        names |= {name for name, value in vars(klass).items()
                  if callable(value) or isinstance(value, (classmethod, property))}
        names |= {name for name, kind in vars(klass).get("__annotations__", {}).items()
                  if "ClassVar" in str(kind)}
    return frozenset(n for n in names if not n.startswith("__"))
