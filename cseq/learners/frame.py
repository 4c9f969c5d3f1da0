"""The fit frame: what every fit does around a learner's training function.

:func:`run` is written once and serves :meth:`ChainEstimator.fit
<cseq.learners.base.ChainEstimator.fit>` (the training function is the learner's
``_train`` on a packed corpus) and :func:`cseq.distributed.fit` (a training
function that runs on a Dask cluster).  Around the training function it

1. validates the hyperparameters and checks that early stopping has a dev set;
2. takes the estimator's training lock (:func:`training`: one ``fit`` or
   ``partial_fit`` at a time);
3. prepares the featurizer, labels and model (the caller's ``prepare``);
4. resets the estimator: unfitted from now on, none of the previous fit's
   attributes (``_begin_fit``), the learner's starting fitted attributes
   (``_initial_fitted``);
5. builds the dev scorer and the early stopping, and runs the training
   function, every iteration of which goes through :class:`Fit.report`;
6. puts back the best iteration's weights (early stopping), or on Ctrl-C
   raises :class:`~cseq.exceptions.TrainingInterrupted` with a fitted copy
   at the last completed iteration (:meth:`Fit.interrupted`);
7. completes: checks the weights, keeps the learner's final model
   (``_finish``), publishes the fit in one step (``_commit``) and warns when
   ``max_iter`` stopped a learner with a convergence test (:func:`complete`).

The hooks it calls are declared in :mod:`cseq.learners.protocol`.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, ContextManager

import numpy as np

from cseq.chain import _labels
from cseq.chain.mapping import gold_ids
from cseq.exceptions import ConvergenceError, ConvergenceWarning, InputError, TrainingInterrupted
from cseq.learners.loops import (MAX_ITER_REASON, Callback, DevScorer, EarlyStopping,
                                 still_improving)
from cseq.learners.protocol import Learner
from cseq.evaluation.metrics import chunk_f1, detect_scheme
from cseq.chain.model import LinearChain
from cseq.chain.sequences import Sequences, label_lists, relabel


__all__ = ["Fit", "check_record", "complete", "dev_scorer", "format_record", "pack", "run",
           "training"]

#: What a fit's ``prepare`` returns: the fitted featurizer, the labels
#: (sorted), the model to train (its parameters zero) and the training data
#: as the training function takes it (a packed corpus, or Dask shards).
Prepared = tuple[Any, list[str], LinearChain, Any]


@contextmanager
def training(est: Learner) -> Iterator[None]:
    """Run one training call (``fit``, ``partial_fit``) on ``est`` at a time.

    A second call from another thread waits for the first to commit (so
    every batch given to ``partial_fit`` is learned, none overwritten);
    a call from inside a running one, in its thread (e.g. from a fit's
    callback), raises InputError rather than waiting for itself.
    Readers never wait: they use the snapshot they take (:mod:`cseq.fitted`).
    """
    lock = est.__dict__.setdefault("_training_lock", threading.Lock())  # atomic
    me = threading.get_ident()
    if est.__dict__.get("_training_thread") == me:
        raise InputError(f"this {type(est).__name__} is already training in this thread: "
                         "fit and partial_fit cannot be called from inside its fit or "
                         "partial_fit (e.g. from a callback)")
    with lock:
        est._training_thread = me
        try:
            yield
        finally:
            est._training_thread = None


def pack(est: Learner, X: Sequence[Any], y: Sequence[Sequence[str | None]]
         ) -> tuple[Any, Sequences, list[str]]:
    """``(featurizer, corpus, classes)``: ``X`` and ``y`` packed for ``est``'s training.

    A fresh featurizer (``_new_featurizer``) learns the attributes; the
    labels are sorted and the corpus's label ids follow them; None labels
    become -1 for a learner that trains on partial labels
    (``_partial_labels``).  InputError for a corpus without sequences,
    tokens or a single known label.
    """
    featurizer = est._new_featurizer()
    # A featurizer that learns from labels (templates with ':tags') gets y.
    if getattr(featurizer, "needs_labels", False):
        corpus = featurizer.fit_transform(X, y)
    else:
        corpus = featurizer.fit_transform(X)
    if corpus.n_sequences == 0:
        raise InputError("cannot fit on an empty corpus (X has no sequences)")
    if corpus.n_tokens == 0:
        raise InputError("cannot fit on a corpus without tokens (every sequence is empty)")
    label_ids: dict[str, int] = {}
    raw = _labels.pack_labels(y, corpus.seq_ptr, label_ids, True, est._partial_labels)
    if not label_ids:
        raise InputError("cannot fit without a single known label (every label is None)")
    classes = sorted(label_ids)
    remap = np.empty(len(classes), dtype=np.int32)
    for new, name in enumerate(classes):
        remap[label_ids[name]] = new
    labels = relabel(raw, remap)
    corpus = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values, labels)
    return featurizer, corpus, classes


def run(est: Learner, prepare: Callable[[], Prepared],
        train: Callable[[Any, LinearChain, DevScorer | None, Callback | None], None],
        X_dev: Sequence[Any] | None, y_dev: Sequence[Sequence[str]] | None,
        callback: Callback | None, *, check: Callable[[], None] | None = None,
        context: ContextManager[Any] | None = None) -> None:
    """One fit of ``est``: the steps of this module's docstring around ``train``.

    ``prepare()`` returns the featurizer, labels, model and training data
    (it runs under the training lock, before the estimator is reset, so
    that bad data leaves a fitted estimator as it was); ``train(data, model,
    dev, callback)`` sets ``model.params`` and the learner's fitted
    attributes, reporting every iteration through ``est._report`` (the
    in-process fit passes the learner's ``_train``).  ``check()`` runs after the
    hyperparameters are validated (the caller's own refusals), and
    ``context`` is entered with the training lock (e.g. the translation of
    a Dask worker loss).
    """
    est._validate_params()
    params = est.get_params(deep=False)
    early = bool(params.get("early_stopping", False))
    if early and (X_dev is None or y_dev is None):
        raise InputError("early_stopping needs a dev set: pass X_dev and y_dev")
    if check is not None:
        check()
    with training(est), context or nullcontext():
        featurizer, classes, model, data = prepare()
        est._begin_fit(featurizer, classes)
        est._partial = None  # partial_fit's training state (cseq.learners.partial): fit starts over
        est.history_ = []
        est.best_iteration_ = None
        est.stop_reason_ = None
        for name, value in est._initial_fitted().items():
            setattr(est, name, value)
        fit = Fit(est, model, EarlyStopping(model, params["patience"]) if early else None)
        est._frame = fit
        try:
            train(data, model, dev_scorer(est, fit, X_dev, y_dev), callback)
            fit.restore_best()
        except KeyboardInterrupt:
            raise TrainingInterrupted(fit.interrupted()) from None
        finally:
            del est._frame
        complete(est, model)


class Fit:
    """The state of one fit in progress: early stopping, the Ctrl-C snapshot, dev extras.

    Held by the estimator as ``_frame`` while its training function runs;
    the estimator's ``_report`` hands every iteration's record to
    :meth:`report`.
    """

    def __init__(self, est: Learner, model: LinearChain,
                 early: EarlyStopping | None) -> None:
        self.est = est
        self.model = model
        self.early = early
        #: Returns the weights of the last reported iteration and the fitted
        #: attributes that go with them (see :meth:`report`).
        self.snapshot: Callable[[], tuple[np.ndarray, dict[str, Any]]] | None = None
        #: Dev scores beyond the accuracy (``dev_f1``) of the last dev scoring.
        self.dev_extra: dict[str, float] | None = None

    def report(self, record: dict, callback: Callback | None,
               snapshot: Callable[[], tuple[np.ndarray, dict[str, Any]]] | None = None) -> bool:
        """Record one iteration: history, verbose line, user callback, early stopping.

        ``snapshot``, if given, returns the weights of this iteration and the
        learner's fitted attributes (e.g. ``{"stop_reason_": ...}``): what
        the fit hands back in :class:`TrainingInterrupted` on Ctrl-C.
        Returns True when early stopping says to stop training now.
        """
        est = self.est
        extra, self.dev_extra = self.dev_extra, None
        if extra and "dev_accuracy" in record:
            record.update(extra)
        check_record(record, type(est).__name__)
        self.snapshot = snapshot
        est.history_.append(record)
        if est.verbose:
            print(format_record(record), flush=True)
        if callback is not None:
            callback(record)
        return self.early.update(record) if self.early is not None else False

    def restore_best(self) -> None:
        """With early stopping, put back the best iteration's weights and say why it stopped."""
        early, est = self.early, self.est
        if early is None:
            return
        early.restore()
        est.best_iteration_ = early.best_iteration
        if early.stopped:
            est.stop_reason_ = (f"early stopping: no dev improvement in {early.patience} "
                                "iterations")

    def interrupted(self) -> Learner | None:
        """A fitted copy of the estimator at the last completed iteration (its snapshot).

        None when no iteration completed, the learner keeps no snapshot, or
        the snapshot's weights are not finite.  The estimator itself stays
        unfitted.
        """
        est, model, snapshot = self.est, self.model, self.snapshot
        self.snapshot = None
        if snapshot is None or not est.history_:
            return None
        params, fitted = snapshot()
        if not np.isfinite(params).all():
            return None
        model.params = np.ascontiguousarray(params, dtype=np.float64)
        copy = type(est)(**est.get_params(deep=False))
        copy._begin_fit(est.featurizer_, est.classes_)
        copy.history_ = list(est.history_)
        copy.n_iter_ = len(copy.history_)
        for name, value in {**est._initial_fitted(), **fitted}.items():
            setattr(copy, name, value)
        copy._commit(copy._finish(model))  # as a completed fit keeps it (e.g. pruned)
        return copy


def dev_scorer(est: Learner, fit: Fit, X_dev: Sequence[Any] | None,
               y_dev: Sequence[Sequence[str]] | None) -> DevScorer | None:
    """The token accuracy of a model on the dev set, featurized once; None without one.

    With BIO or BIOES labels the span F1 goes into ``fit.dev_extra`` too
    (``dev_f1`` of the next record).  InputError unless both or neither of
    ``X_dev`` and ``y_dev`` are given.
    """
    if X_dev is None and y_dev is None:
        return None
    if X_dev is None or y_dev is None:
        raise InputError("give both X_dev and y_dev, or neither")
    corpus = est.featurizer_.transform(X_dev)
    label_ids = {name: i for i, name in enumerate(est.classes_)}
    if not isinstance(y_dev, (list, tuple)):
        y_dev = list(y_dev)  # read twice below
    gold = gold_ids(y_dev, corpus, label_ids)

    scheme = detect_scheme({lab for seq in y_dev for lab in seq})
    names = np.asarray(est.classes_, dtype=object)
    gold_names = [list(seq) for seq in y_dev] if scheme is not None else []

    def dev_accuracy(model: LinearChain) -> float:
        pred = model.decode(corpus)  # the model owns its decoding (cseq.chain)
        if scheme is not None:
            labels = label_lists(names, pred, corpus.seq_ptr)
            fit.dev_extra = {"dev_f1": chunk_f1(gold_names, labels, scheme)}
        return float(np.mean(pred == gold)) if len(gold) else 0.0
    return dev_accuracy


def complete(est: Learner, model: LinearChain) -> None:
    """The end of every fit: check the weights, publish the finished model, warn if
    ``max_iter`` stopped a learner before its convergence test was met while its loss
    was still improving (:func:`cseq.learners.loops.still_improving`)."""
    if not np.isfinite(model.params).all():
        raise ConvergenceError(f"{type(est).__name__} weights became non-finite")
    est._commit(est._finish(model))
    # Read from the snapshot just published.  A loss that had settled needs nothing
    # from the user (loops.SETTLED): only one still improving warns, saying by how much.
    change = still_improving(est) if est.stop_reason_ == MAX_ITER_REASON else None
    if change is not None:
        max_iter = est.get_params(deep=False).get("max_iter")
        moved = "" if math.isinf(change) else \
            f": its loss still fell by {100 * change:.2g}% over the last {est.period} iterations"
        # stacklevel: complete <- run <- the fit the user called <- the user's line.
        warnings.warn(f"{type(est).__name__} stopped at max_iter={max_iter} before its "
                      f"convergence test was met{moved}; the model may still change: raise "
                      f"max_iter (cseq train --max-iter), e.g. to {2 * max_iter}",
                      ConvergenceWarning, stacklevel=4)


def check_record(record: dict, learner: str) -> None:
    """ConvergenceError if a number of an iteration's record is not finite.

    The record goes into ``history_`` and the model file, whose JSON holds
    only finite numbers: an infinite loss (weights so large that their
    squared norm overflows) would make the model unsaveable.
    """
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            when = (f"iteration {record['iteration']}" if "iteration" in record
                    else "this batch")
            raise ConvergenceError(f"{learner}: the {key} of {when} is {value} (the weights "
                                   "became too large)")


def format_record(record: dict) -> str:
    """The ``verbose`` line of one iteration's record."""
    parts = [f"iter {record['iteration']:4d}"]
    if "loss" in record:
        parts.append(f"loss {record['loss']:.6g}")
    if "errors" in record:
        parts.append(f"errors {record['errors']} ({100 * record['error_rate']:.2f}%)")
    parts.append(f"{record['seconds']:.3f}s")
    if "dev_f1" in record:
        parts.append(f"dev span F1 {100 * record['dev_f1']:.2f}%")
    if "dev_accuracy" in record:
        parts.append(f"dev acc {100 * record['dev_accuracy']:.2f}%")
    return "  ".join(parts)
