"""Training in batches: ``partial_fit`` and the training state kept in model files.

:class:`PartialFitMixin` gives an online learner (the averaged perceptron, the
structured SVM, the CRF trained by SGD) a ``partial_fit(X, y)`` that makes one
pass over a batch and keeps everything the next pass needs in a
:class:`TrainingState`: parameter-shaped vectors (the current weights, the
lazy-averaging accumulator) and JSON-able counters (examples seen, step number,
the shuffling generator's state).  The state is stored in the model file
(arrays ``training/<name>``, header ``training.partial``) and restored when it
loads, so training continues after a save and a load exactly where it stopped.

A batch may bring labels and attributes the model has not seen: the featurizer
appends the new attributes (known ones keep their ids), the labels stay sorted
(old ids move up when a new label sorts before them), and :func:`grow` carries
every parameter-shaped vector over to the grown model by (attribute, label)
pair, giving the new pairs 0.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from cseq.chain import _labels
from cseq.chain import _chain
from cseq._core.dtypes import INDEX, LABEL, WEIGHT
from cseq.exceptions import ConvergenceError, InputError, InputTypeError, ModelFormatError
from cseq.features.protocol import GrowingFeaturizer, implements
from cseq.features.vocabulary import FeatureVocabulary
from cseq.chain.fitted import Fitted
from cseq.learners.frame import check_record, format_record, training
# Defined with the protocol whose _partial_pass receives it; cseq.learners.partial.TrainingState stays.
from cseq.learners.protocol import TrainingState
from cseq.chain.model import LinearChain
from cseq.chain.sequences import Sequences, relabel
from cseq.io.serialize import header_field

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["PartialFitMixin", "TrainingState", "grow", "rng_from_state", "rng_state"]


def rng_state(rng: np.random.Generator) -> dict:
    """The state of a PCG64 generator as JSON-able ints."""
    st = rng.bit_generator.state
    return {"state": int(st["state"]["state"]), "inc": int(st["state"]["inc"]),
            "has_uint32": int(st["has_uint32"]), "uinteger": int(st["uinteger"])}


def rng_from_state(state: Any) -> np.random.Generator:
    """The generator :func:`rng_state` described; ModelFormatError if ``state`` is bad."""
    keys = {"state", "inc", "has_uint32", "uinteger"}
    if (not isinstance(state, dict) or set(state) != keys
            or not all(type(state[k]) is int and 0 <= state[k] < 1 << 128 for k in keys)
            or state["has_uint32"] not in (0, 1) or state["uinteger"] >= 1 << 32):
        raise ModelFormatError("model header has a bad random generator state")
    bits = np.random.PCG64()
    bits.state = {"bit_generator": "PCG64",
                  "state": {"state": state["state"], "inc": state["inc"]},
                  "has_uint32": state["has_uint32"], "uinteger": state["uinteger"]}
    return np.random.Generator(bits)


def grow(vec: np.ndarray, old: LinearChain, new: LinearChain, perm: np.ndarray) -> np.ndarray:
    """``vec`` (laid out as ``old.params``) carried over to the layout of ``new``.

    ``perm[l]`` is the new id of old label ``l`` (increasing: labels stay
    sorted); every (attribute, label) pair of ``old`` must be in ``new``.
    State weights move by pair, the transition, start, end and trigram blocks
    by label; whatever ``new`` has that ``old`` had not is 0.
    """
    L0, L1 = old.n_labels, new.n_labels
    out = np.zeros(new.layout["n_params"], dtype=WEIGHT)
    old_keys = (np.repeat(np.arange(old.n_attributes, dtype=np.int64), np.diff(old.attr_ptr))
                * L1 + perm[old.attr_labels])
    new_keys = (np.repeat(np.arange(new.n_attributes, dtype=np.int64), np.diff(new.attr_ptr))
                * L1 + new.attr_labels)
    pos = np.searchsorted(new_keys, old_keys)
    if len(old_keys) and (pos.max() >= len(new_keys) or not np.array_equal(new_keys[pos],
                                                                             old_keys)):
        raise AssertionError("grow: the new state index lacks a pair of the old one")
    out[pos] = vec[:old.n_state]
    lo, ln = old.layout, new.layout
    trans = out[ln["trans"]:ln["trans"] + L1 * L1].reshape(L1, L1)
    trans[np.ix_(perm, perm)] = vec[lo["trans"]:lo["trans"] + L0 * L0].reshape(L0, L0)
    out[ln["start"] + perm] = vec[lo["start"]:lo["start"] + L0]
    out[ln["end"] + perm] = vec[lo["end"]:lo["end"] + L0]
    if old.order == 2:
        tri = out[ln["trans2"]:ln["trans2"] + L1 ** 3].reshape(L1, L1, L1)
        tri[np.ix_(perm, perm, perm)] = vec[lo["trans2"]:lo["trans2"] + L0 ** 3].reshape(
            L0, L0, L0)
    return out


def _grown_index(old: LinearChain | None, perm: np.ndarray, corpus: Sequences, n_attrs: int,
                 n_labels: int, all_states: bool) -> tuple[np.ndarray, np.ndarray]:
    """The state index covering ``old``'s pairs (relabelled) and the batch's gold pairs."""
    if all_states:
        return (np.arange(n_attrs + 1, dtype=INDEX) * n_labels,
                np.tile(np.arange(n_labels, dtype=LABEL), n_attrs))
    ptr, lab = _chain.build_state_index(corpus.tok_ptr, corpus.attr_ids, corpus.labels,
                                          n_attrs, n_labels)
    keys = np.repeat(np.arange(n_attrs, dtype=np.int64), np.diff(ptr)) * n_labels + lab
    if old is not None:
        old_keys = (np.repeat(np.arange(old.n_attributes, dtype=np.int64),
                              np.diff(old.attr_ptr)) * n_labels + perm[old.attr_labels])
        keys = np.union1d(keys, old_keys)
    attr_ptr = np.zeros(n_attrs + 1, dtype=INDEX)
    np.cumsum(np.bincount(keys // n_labels, minlength=n_attrs), out=attr_ptr[1:])
    return attr_ptr, np.ascontiguousarray(keys % n_labels, dtype=LABEL)


class PartialFitMixin:
    """``partial_fit`` for an online learner (mixed into a :class:`~cseq.learners.base.ChainEstimator`).

    The learner lists its parameter-shaped training vectors in
    ``_partial_arrays`` and implements ``_partial_start()`` (a fresh
    :class:`TrainingState`'s scalars) and ``_partial_pass(corpus, model,
    state)`` (one pass over a batch: updates the state in place, sets
    ``model.params`` to the weights to predict with, returns the history
    record); ``_check_partial()`` may refuse a configuration.
    """

    _partial_arrays: tuple[str, ...] = ()
    _model_class: type[LinearChain]  # the estimator's (ChainEstimator)
    _partial_labels: bool

    def _check_partial(self) -> None:
        """Raise InputError if this configuration cannot train in batches."""

    def _can_partial_fit(self) -> bool:
        """Whether this configuration trains in batches (:meth:`_check_partial` passes)."""
        try:
            self._check_partial()
        except InputError:
            return False
        return True

    def partial_fit(self, X: Sequence[Any], y: Sequence[Sequence[str | None]], *,
                    classes: Sequence[str] | None = None) -> Self:
        """One pass over a batch, continuing from the state of the previous batches.

        The first call starts from zero weights; every later call (also after
        :func:`cseq.load` of a model saved in between) continues the same
        training: the weights, the averaging state, the step counter and the
        shuffling generator are kept in the estimator and in its model file.
        A batch may bring new labels and new attributes; the model grows
        (their weights start at 0).

        With ``shuffle=False`` (perceptron, SSVM), ``all_states=True`` and
        every label known from the first call (in its ``y`` or ``classes``),
        the perceptron's calls on ``A`` then ``B`` give exactly the weights of
        one call on ``A + B``: the same updates in the same order
        (docs/learners.md, "Training in batches").

        The batch is committed in one step at the end (:mod:`cseq.fitted`):
        an error or an interrupt (``KeyboardInterrupt``, ``MemoryError``)
        before it leaves the estimator exactly as it was.  ``predict``,
        ``save`` and the other readers may run in other threads meanwhile and
        see the model from before the batch or from after it, never a mix; a
        second ``fit`` or ``partial_fit`` from another thread waits for this
        one.

        Parameters
        ----------
        X, y : a batch, as for :meth:`fit`.
        classes : labels to know from now on even if ``y`` lacks them
            (scikit-learn's convention), so the label set does not change
            when a later batch brings them.

        Raises
        ------
        InputError
            If the estimator was fitted by :meth:`fit` (which keeps no
            training state), if its hyperparameters (``features``, ``order``)
            changed since the previous call, for a configuration that
            cannot train in batches (``CRF(algorithm="lbfgs")``, a featurizer
            with ``min_freq > 1``), or when called from inside a ``fit`` or
            ``partial_fit`` of the same estimator (e.g. from its callback).
        """
        self._validate_params()
        self._check_partial()
        if classes is not None:
            if isinstance(classes, str) or not all(isinstance(c, str) for c in classes):
                raise InputTypeError("classes must be a list of label strings")
        with training(self):  # type: ignore[arg-type]  # one batch at a time
            self._partial_fit(X, y, classes)
        return self

    def _partial_fit(self, X: Sequence[Any], y: Sequence[Sequence[str | None]],
                     classes: Sequence[str] | None) -> None:
        """:meth:`partial_fit`, its arguments checked, the training lock held."""
        # The fitted state this batch continues from, taken once (cseq.fitted):
        # nothing reachable from it is changed; the result is a new snapshot,
        # published by one assignment at the end.
        old: Fitted | None = self._fitted  # type: ignore[attr-defined]
        fitted = old is not None and old.model is not None
        state: TrainingState | None = old.attributes.get("_partial") if fitted else None
        if fitted and state is None:
            raise InputError(f"this {type(self).__name__} was fitted by fit(), which keeps no "
                             "training state to continue from; start with partial_fit on an "
                             "unfitted estimator (or call fit again)")
        if fitted:
            featurizer, old_model = old.featurizer, old.model
            wanted = (FeatureVocabulary() if self.features is None else self.features).get_config()
            if featurizer.get_config() != wanted:
                raise InputError("features changed since the previous partial_fit "
                                 f"({featurizer.get_config()} -> {wanted}); call fit, or "
                                 "partial_fit on a new estimator, to start over")
            if old_model.order != self._chain_order():  # type: ignore[attr-defined]
                raise InputError(f"order changed since the previous partial_fit "
                                 f"({old_model.order} -> {self.order})")
            # Check X and y before the vocabulary grows, so a bad batch costs no copy.
            seq_ptr = featurizer.transform(X).seq_ptr
            label_ids = {name: i for i, name in enumerate(old.classes)}
        else:
            featurizer, old_model = self._new_featurizer(), None
            label_ids = {}
            state = None
        if not implements(featurizer, GrowingFeaturizer):
            raise InputError(f"the featurizer {type(featurizer).__name__} cannot learn in "
                             "batches (it needs partial_fit_transform and copy)")
        if fitted:
            _labels.pack_labels(y, seq_ptr, dict(label_ids), True, self._partial_labels)
            # Copy-on-write: readers of the published snapshot keep using its
            # featurizer while this batch grows the copy.
            featurizer = featurizer.copy()
        n_old = len(label_ids)
        for name in classes or ():
            label_ids.setdefault(name, len(label_ids))
        # A featurizer that learns from labels (':tags') learns them from the first batch.
        if getattr(featurizer, "needs_labels", False):
            corpus = featurizer.partial_fit_transform(X, y)
        else:
            corpus = featurizer.partial_fit_transform(X)
        if corpus.n_sequences == 0 or corpus.n_tokens == 0:
            raise InputError("cannot train on a batch without tokens")
        raw = _labels.pack_labels(y, corpus.seq_ptr, label_ids, True, self._partial_labels)
        if not label_ids:
            raise InputError("cannot train without a single known label (every label is None)")
        names = sorted(label_ids)
        new_id = np.empty(len(names), dtype=LABEL)
        for new, name in enumerate(names):
            new_id[label_ids[name]] = new
        corpus = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values,
                           relabel(raw, new_id))
        perm = new_id[:n_old]
        attr_ptr, attr_labels = _grown_index(old_model, perm, corpus, featurizer.n_attributes,
                                             len(names), bool(self.all_states))
        order = self._chain_order()  # type: ignore[attr-defined]
        zeros = self._model_class.zero_params(len(attr_labels), len(names), order)
        grown = (zeros if old_model is None
                 else grow(old_model.params, old_model, self._model_class(
                     len(names), attr_ptr, attr_labels, zeros, order=order), perm))
        model = self._model_class(len(names), attr_ptr, attr_labels, grown, order=order)
        if state is None:
            state = TrainingState({k: np.zeros_like(grown) for k in self._partial_arrays},
                                  self._partial_start(), 0)
        else:  # new arrays and scalars: the published state stays as it is
            state = TrainingState({k: grow(v, old_model, model, perm)
                                   for k, v in state.arrays.items()},
                                  copy.deepcopy(state.scalars), state.n_sequences)
        state.n_sequences += corpus.n_sequences
        clock = time.perf_counter()
        record = self._partial_pass(corpus, model, state, names)
        if not (all(np.isfinite(v).all() for v in state.arrays.values())
                and np.isfinite(model.params).all()):
            raise ConvergenceError(f"{type(self).__name__} weights became non-finite")
        check_record(record, type(self).__name__)  # before the batch is committed
        history = list(old.attributes["history_"]) if fitted else []
        history.append({"iteration": len(history) + 1, **record,
                        "seconds": time.perf_counter() - clock})
        n_iter = len(history)
        # The commit: one assignment publishes the featurizer, labels, model
        # and training state of this batch together.
        self._fitted = Fitted(featurizer, names, model, MappingProxyType({
            "history_": history, "n_iter_": n_iter, "best_iteration_": None,
            "stop_reason_": f"partial_fit: {state.n_sequences} sequences in {n_iter} batches",
            "_partial": state, **self._partial_attributes(state, n_iter)}))
        for name in self._fitted_names:  # type: ignore[attr-defined]
            self.__dict__.pop(name, None)  # a value a user assigned would hide the new one
        if self.verbose:
            print(format_record(history[-1]), flush=True)

    def _partial_attributes(self, state: TrainingState, n_iter: int) -> dict[str, Any]:
        """The learner's own fitted attributes after ``n_iter`` batches (learner-specific)."""
        return {}

    def _partial_start(self) -> dict:
        """The scalars of a fresh training state (learner-specific)."""
        raise NotImplementedError

    def _partial_pass(self, corpus: Sequences, model: LinearChain, state: TrainingState,
                      classes: list[str]) -> dict:
        """One pass over ``corpus``, updating ``state``; sets ``model.params``; the record."""
        raise NotImplementedError

    # -- persistence: the training state in the model file ---------------------
    def _model_state(self, fitted: Fitted | None = None) -> tuple[dict, dict[str, np.ndarray]]:
        if fitted is None:
            fitted = self._fitted  # type: ignore[attr-defined]
        header, arrays = super()._model_state(fitted)  # type: ignore[misc]
        state = fitted.attributes.get("_partial") if header.get("fitted") else None
        if state is not None:
            header["training"]["partial"] = {"n_sequences": state.n_sequences, **state.scalars}
            arrays.update({f"training/{k}": v for k, v in state.arrays.items()})
        return header, arrays

    @classmethod
    def _model_array_names(cls, header: dict) -> frozenset:
        names = super()._model_array_names(header)  # type: ignore[misc]
        return names | {f"training/{k}" for k in cls._partial_arrays} if names else names

    @classmethod
    def _from_model_state(cls, header: dict, arrays: dict[str, np.ndarray]):
        est = super()._from_model_state(header, arrays)  # type: ignore[misc]
        if est._fitted is not None:
            # Not yet published: completing the snapshot is the load's last step.
            est._fitted = est._fitted.with_attributes(_partial=est._restore_partial(
                header["training"],
                {k[9:]: v for k, v in arrays.items() if k.startswith("training/")}))
        return est

    def _restore_partial(self, training: dict,
                         arrays: dict[str, np.ndarray]) -> TrainingState | None:
        """The training state of the header entry and arrays; ModelFormatError if bad."""
        entry = training.get("partial")
        if entry is None:
            if arrays:
                raise ModelFormatError("model file has training arrays but no training state")
            return None
        if not isinstance(entry, dict) or set(arrays) != set(self._partial_arrays):
            raise ModelFormatError("model header has a bad training state")
        n_seq = header_field(entry, "n_sequences", "training.partial", int, 1)
        n_params = self.model_.layout["n_params"]
        for name, arr in arrays.items():
            if arr.dtype != WEIGHT or arr.shape != (n_params,) or not np.isfinite(arr).all():
                raise ModelFormatError(f"training array {name!r} is not {n_params} finite "
                                       "float64 weights")
        scalars = {k: v for k, v in entry.items() if k != "n_sequences"}
        self._check_partial_scalars(scalars, n_seq)
        return TrainingState({k: np.ascontiguousarray(v) for k, v in arrays.items()},
                             scalars, n_seq)

    def _check_partial_scalars(self, scalars: dict, n_sequences: int) -> None:
        """ModelFormatError unless ``scalars`` is what ``_partial_pass`` leaves after
        ``n_sequences`` sequences (learner-specific)."""
        raise NotImplementedError


def check_scalars(scalars: dict, spec: dict[str, tuple[type, float, float]]) -> None:
    """ModelFormatError unless ``scalars`` has exactly the keys of ``spec`` (plus ``rng``).

    ``spec[name] = (int or float, low, high)``: the value's type and inclusive
    range (see :func:`cseq.serialize.header_field`; counters are bounded by
    ``MAX_COUNT`` so that the kernels' int64 counts cannot overflow);
    ``rng`` must be a generator state (:func:`rng_from_state`).
    """
    extra = set(scalars) ^ (set(spec) | {"rng"})
    if extra:
        raise ModelFormatError(f"model header has a bad training state: training.partial "
                               f"has or lacks {', '.join(sorted(map(str, extra)))}")
    rng_from_state(scalars["rng"])
    for name, (kind, low, high) in spec.items():
        scalars[name] = header_field(scalars, name, "training.partial", kind, low, high)
