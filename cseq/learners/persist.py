"""An estimator as its model file holds it: the header fields and arrays of
its fitted state, and the estimator rebuilt from them.

:mod:`cseq.io.serialize` packs these into the container (magic, version, the
array table, the checksum) and unpacks them; this module says what goes in
and checks what comes out before any kernel sees it.  :class:`ModelFile` is
a base of :class:`cseq.learners.base.ChainEstimator` (as
:class:`cseq.learners.params.Parameters` is): its methods are the learner
protocol's persistence hooks (:mod:`cseq.learners.protocol`), which a learner
extends, calling ``super()``, for the state only it has (the SSVM's,
``partial_fit``'s).
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from cseq.exceptions import ModelFormatError, NotFittedError
from cseq.features import featurizer_from_config, featurizer_from_state, featurizer_state_arrays
from cseq.learners.params import plain_params
from cseq.io.serialize import dumps, header_field, loads, write_atomic

if TYPE_CHECKING:
    from cseq.chain.fitted import Fitted

__all__ = ["ModelFile"]


class ModelFile:
    """Saving, pickling and loading an estimator through the model file format.

    Reads what :class:`cseq.learners.base.ChainEstimator` holds: the fitted snapshot
    (``_fitted``), the parameters (``get_params``, ``_param_names``), the
    model class, and the fit's steps (``_begin_fit``, ``_commit``).
    """

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model file (see :mod:`cseq.io.serialize`) atomically.

        The file gets the permissions a new file gets (the umask), or keeps
        those of the file it replaces.

        Raises
        ------
        NotFittedError
            If the estimator is not fitted (or its fit was interrupted): such
            a file could not tag anything.
        """
        state = self._model_state()  # one snapshot, checked and written
        if not state[0]["fitted"]:
            raise NotFittedError(f"cannot save this {type(self).__name__}: it is not fitted "
                                 "(fit it first; an interrupted fit leaves it unfitted)")
        write_atomic(dumps(self, state), path)

    def to_bytes(self) -> bytes:
        """The model file's bytes (of one snapshot of the fitted state)."""
        return dumps(self)

    def __reduce__(self):
        return (loads, (self.to_bytes(),))

    def _training_state(self, fitted: Fitted) -> dict:
        """Learner-specific training information of ``fitted`` for the model header (JSON-able)."""
        return {}

    def _restore_training(self, training: dict) -> None:
        """Inverse of :meth:`_training_state`; ModelFormatError if ``training`` is bad."""

    def _model_state(self, fitted: Fitted | None = None) -> tuple[dict, dict[str, np.ndarray]]:
        """The header fields and arrays that :meth:`_from_model_state` restores.

        They describe the snapshot ``fitted``; None takes the estimator's
        current one (once: an override takes it first and passes it on, so
        that every part of the file comes from the same fitted state).
        """
        if fitted is None:
            fitted = self._fitted
        params = plain_params(self.get_params(deep=False))
        features = params.pop("features", None)
        model = fitted.model if fitted is not None else None
        header: dict = {"params": params, "fitted": model is not None}
        arrays: dict[str, np.ndarray] = {}
        if features is not None:
            header["features"] = features.get_config()
        if model is not None:
            fitted_attributes = fitted.attributes
            meta, farrays = fitted.featurizer.get_state()
            header["featurizer"] = meta
            header["classes"] = list(fitted.classes)
            # Wall-clock seconds are left out so that the same training gives
            # byte-identical files.
            history = [{k: v for k, v in rec.items() if k != "seconds"}
                       for rec in fitted_attributes["history_"]]
            header["training"] = {"n_iter": int(fitted_attributes["n_iter_"]), "history": history,
                                  **self._training_state(fitted)}
            if fitted_attributes.get("stop_reason_") is not None:
                header["training"]["stop_reason"] = str(fitted_attributes["stop_reason_"])
            if fitted_attributes.get("best_iteration_") is not None:
                header["training"]["best_iteration"] = int(fitted_attributes["best_iteration_"])
            arrays.update({f"featurizer/{k}": v for k, v in farrays.items()})
            arrays.update({f"model/{k}": v for k, v in model.arrays().items()})
            if model.order != 1:
                # Absent means 1, so first-order files are unchanged.
                header["order"] = int(model.order)
        return header, arrays

    @classmethod
    def _model_array_names(cls, header: dict) -> frozenset:
        """Every array name a file with this header may hold (checked before any is read)."""
        if header.get("fitted") is not True:
            return frozenset()
        return frozenset(
            {f"featurizer/{n}" for n in featurizer_state_arrays(header.get("featurizer"))}
            | {f"model/{n}" for n in cls._model_class.ARRAY_NAMES})

    @classmethod
    def _from_model_state(cls, header: dict, arrays: dict[str, np.ndarray]):
        """Rebuild an estimator from :meth:`_model_state` output; ModelFormatError if invalid."""
        params = header.get("params")
        if not isinstance(params, dict) or not set(params) <= set(cls._param_names) - {"features"}:
            raise ModelFormatError("model header has bad hyperparameters")
        try:
            est = cls(**params)
            est._validate_params()
        except (TypeError, ValueError) as exc:
            raise ModelFormatError(f"model header has bad hyperparameters: {exc}") from None
        if "features" in header:
            est.features = featurizer_from_config(header["features"])
        if header.get("fitted") is not True:
            return est
        labels = header.get("classes")
        if (not isinstance(labels, list) or not labels
                or not all(isinstance(c, str) for c in labels) or len(set(labels)) != len(labels)):
            raise ModelFormatError("model header has bad labels")
        training = header.get("training")
        if not isinstance(training, dict):
            raise ModelFormatError("model header field training is not an object")
        n_iter = header_field(training, "n_iter", "training", int)
        best = header_field(training, "best_iteration", "training", int, 1, default=None)
        stop = training.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise ModelFormatError("model header field training.stop_reason is not a string")
        history = _checked_history(training.get("history", []))
        featurizer = featurizer_from_state(header.get("featurizer"), _sub(arrays, "featurizer/"))
        order = header.get("order", 1)
        if type(order) is not int or order not in (1, 2):
            raise ModelFormatError(f"model header has a bad chain order {order!r} (1 or 2)")
        chain_order = est._chain_order()
        if order != chain_order:
            raise ModelFormatError(f"model header says order {order} but the "
                                   f"{cls.__name__}'s parameters order {chain_order!r}")
        model = cls._model_class.from_arrays(len(labels), _sub(arrays, "model/"), order=order)
        if model.n_attributes != featurizer.n_attributes:
            raise ModelFormatError("model and featurizer disagree on the number of attributes")
        est._begin_fit(featurizer, labels)
        est.n_iter_, est.best_iteration_, est.stop_reason_, est.history_ = (n_iter, best, stop,
                                                                            history)
        est._restore_training(training)
        est._commit(model)
        return est


#: The numbers the learners record in ``history_`` (what the report plots).
_HISTORY_NUMBERS = ("loss", "errors", "error_rate", "hinge", "violations", "dev_accuracy",
                    "dev_f1")


def _checked_history(history: Any) -> list[dict]:
    """``training.history`` of a model header, checked as the records ``_report`` makes.

    A list of objects, each with an ``iteration`` (an int >= 1) and, where
    present, the numbers of :data:`_HISTORY_NUMBERS` finite: what saving,
    pickling and the report read back.  Other keys are kept as they are
    (new optional keys do not change the format).  ModelFormatError naming
    the record otherwise.
    """
    if not isinstance(history, list):
        raise ModelFormatError("model header field training.history is not a list")
    for i, record in enumerate(history):
        where = f"training.history[{i}]"
        if not isinstance(record, dict):
            raise ModelFormatError(f"model header field {where} is not an object")
        header_field(record, "iteration", where, int, 1)
        for key in _HISTORY_NUMBERS:
            header_field(record, key, where, float, -math.inf, math.inf, default=None)
    return history


def _sub(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
