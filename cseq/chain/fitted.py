"""An estimator's fitted state as one immutable snapshot.

Everything a fitted estimator predicts and saves from (the featurizer, the
labels, the model) and the fitted attributes that describe how that model
was trained (``history_``, ``n_iter_``, ``stop_reason_``, partial_fit's
training state, ...) form one :class:`Fitted` object, held in the
estimator's single attribute ``_fitted``.  This is what makes the
concurrency contract of ``docs/reliability.md`` hold:

- Training builds a new snapshot beside the old one and publishes it by one
  attribute assignment (``partial_fit`` grows a copy of the featurizer,
  never the one in use), so an interrupt or an error before that step
  leaves the old snapshot in place, whole.
- Readers (``predict``, ``predict_marginals``, ``save``, ``explain``, the
  probability methods, ...) take the snapshot once, at entry, and pass it
  down; they never read ``model_`` or ``classes_`` a second time, so a
  ``partial_fit`` that commits meanwhile does not change what they see.

Nothing reachable from a published snapshot is mutated again: the model's
arrays, the featurizer's tables and the label list stay as they were when
it was published.  ``model_``, ``classes_`` and ``featurizer_`` read the
current snapshot, as do the fitted attributes listed in the estimator's
``_fitted_names``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from cseq.chain.model import LinearChain

__all__ = ["Fitted"]


@dataclass(frozen=True, eq=False)
class Fitted:
    """One consistent fitted state of an estimator (never mutated once published).

    Attributes
    ----------
    featurizer : the fitted featurizer.
    classes : list of str
        The labels, sorted; label id ``i`` is ``classes[i]``.
    model : LinearChain or None
        None while a ``fit`` is in progress: the featurizer and labels are
        known to the training code, but the estimator is not fitted.
    attributes : mapping
        The other fitted attributes, by name (``"history_"``, ``"n_iter_"``,
        ``"_partial"``, ...), read-only.
    """

    featurizer: Any
    classes: list[str]
    model: LinearChain | None
    attributes: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @cached_property
    def label_names(self) -> np.ndarray:
        """``classes`` as an object array, for turning label ids into names by indexing.

        Derived once per snapshot (stored in this snapshot, so a ``partial_fit``
        that publishes new labels publishes a new one with them): every
        ``predict`` needs it, and building it costs as much as tagging a short
        sentence.
        """
        return np.asarray(self.classes, dtype=object)

    def with_attributes(self, **attributes: Any) -> Fitted:
        """A new snapshot: this one with ``attributes`` set (the others kept)."""
        return replace(self, attributes=MappingProxyType({**self.attributes, **attributes}))
