"""What a featurizer is: the declared interface every featurizer implements, and their registry.

A *featurizer* turns the user's ``X`` into a packed corpus
(:class:`~cseq.chain.sequences.Sequences`) and can be stored in a model
file.  :class:`Featurizer` is the interface the estimators require (checked
by :func:`implements` when a fit starts); two optional capabilities extend it:

- :class:`GrowingFeaturizer`: learns new attributes batch after batch, on a
  copy (``partial_fit``);
- :class:`PartsFeaturizer`: learns a corpus's attributes by parts and merges
  them into what one fit of the whole corpus learns (:mod:`cseq.distributed`).

Every featurizer of cseq subclasses the protocols it implements, so that the
class says it (:class:`~cseq.features.vocabulary.FeatureVocabulary`,
:class:`~cseq.features.featurizer.TemplateFeaturizer`, the HMM's
:class:`~cseq.learners.hmm.WordLexicon`, the CRFsuite items of
:mod:`cseq.compat.crfsuite_items`, the segmenter's
:class:`~cseq.segment.features.CharFeatures`); a class of one's own may also
just have the members.  ``register_featurizer`` makes model files that name
its ``kind`` load through it.

The members a featurizer may also have, which readers look for on the
fitted featurizer: ``needs_labels`` (True when ``fit_transform`` needs the
labels, as templates with ``:tags`` do), ``keep_attributes(kept)`` (keep only
some attribute ids, for pruning; returns whether it could), and
``transform_chunks(X, n_chunks)`` (featurize ``X`` once, then hand out its
chunks; the template featurizer's fast prediction path).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from cseq.exceptions import ModelFormatError

if TYPE_CHECKING:
    from typing_extensions import Self

    from cseq.chain.sequences import Sequences

__all__ = ["Featurizer", "GrowingFeaturizer", "PartsFeaturizer", "implements", "FEATURIZERS",
           "register_featurizer", "featurizer_from_config", "featurizer_from_state",
           "featurizer_state_arrays"]


class Featurizer(Protocol):
    """The interface of every featurizer: configuration, fitting, packing, model-file state."""

    #: The name model files store for this class (``register_featurizer``).
    kind: ClassVar[str]
    #: The names of every array :meth:`get_state` may return: the loader
    #: refuses any other before it copies an array.
    STATE_ARRAYS: ClassVar[frozenset[str]]

    def get_config(self) -> dict:
        """JSON-able configuration, without fitted state (stored in the model header)."""
        ...

    @classmethod
    def from_config(cls, config: dict) -> Self:
        """An unfitted featurizer from :meth:`get_config` output."""
        ...

    def fresh(self) -> Self:
        """An unfitted featurizer of the same configuration (``fit`` never reuses a fitted one)."""
        ...

    def fit_transform(self, X: Sequence[Any]) -> Sequences:
        """Learn the attributes of ``X`` and pack it."""
        ...

    def transform(self, X: Sequence[Any], *, n_jobs: int = 1) -> Sequences:
        """Pack ``X`` with the attributes learnt, dropping those it does not know."""
        ...

    @property
    def n_attributes(self) -> int:
        """The number of attribute ids."""
        ...

    def attribute_names(self) -> list[str]:
        """A readable name per attribute id (for explanations and ``cseq info``)."""
        ...

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and named arrays that :meth:`from_state` restores."""
        ...

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> Self:
        """A fitted featurizer from :meth:`get_state` output, checked (ModelFormatError)."""
        ...


class GrowingFeaturizer(Featurizer, Protocol):
    """A featurizer that ``partial_fit`` can grow: new attributes are appended, known ids stay."""

    def partial_fit_transform(self, X: Sequence[Any]) -> Sequences:
        """Add the attributes of ``X`` not yet known and pack it."""
        ...

    def copy(self) -> Self:
        """An independent copy, which ``partial_fit`` grows while readers use this one."""
        ...


class PartsFeaturizer(Featurizer, Protocol):
    """A featurizer that learns a corpus by parts (on a cluster's workers) and merges them."""

    def fit_part(self, X: Sequence[Any]) -> Self:
        """A featurizer of the attributes of ``X`` alone: one part for :meth:`merge`."""
        ...

    def merge(self, parts: Sequence[Any]) -> Self:
        """What :meth:`Featurizer.fit_transform` learns from the parts' corpora concatenated."""
        ...


def _members(protocol: type) -> frozenset[str]:
    names: set[str] = set()
    for base in protocol.__mro__:
        if base in (Protocol, object) or base.__module__ == "typing":
            continue
        names |= {n for n in vars(base) if not n.startswith("_")}
        names |= set(getattr(base, "__annotations__", {}))
    return frozenset(names)


_MEMBERS = {p: _members(p) for p in (Featurizer, GrowingFeaturizer, PartsFeaturizer)}


def implements(obj: Any, protocol: type) -> bool:
    """Whether ``obj`` has every member of ``protocol`` (one of this module's three).

    Read on the class, so that no property runs: ``isinstance`` against a
    runtime-checkable protocol evaluates them (``n_attributes`` of an
    unfitted featurizer raises) before Python 3.12.
    """
    return all(hasattr(type(obj), name) for name in _MEMBERS[protocol])


#: Featurizer classes by their ``kind``, as stored in model files.
FEATURIZERS: dict[str, type] = {}


def register_featurizer(cls: type) -> type:
    """Class decorator: model files naming ``cls.kind`` restore featurizers through ``cls``.

    ``cls.STATE_ARRAYS`` names every array its ``get_state`` may return: the
    loader refuses any other name before it copies an array.
    """
    if not isinstance(getattr(cls, "STATE_ARRAYS", None), frozenset):
        raise TypeError(f"featurizer {cls.__name__} must name its STATE_ARRAYS")
    FEATURIZERS[cls.kind] = cls
    return cls


def _featurizer_class(desc, what: str) -> type:
    kind = desc.get("kind") if isinstance(desc, dict) else None
    cls = FEATURIZERS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ModelFormatError(f"model header has a bad {what} (unknown kind {kind!r})")
    return cls


def featurizer_from_config(config) -> Featurizer:
    """An unfitted featurizer from the configuration stored in a model header."""
    return _featurizer_class(config, "features parameter").from_config(config)


def featurizer_state_arrays(meta) -> frozenset:
    """Names of the arrays a featurizer described by ``meta`` may store."""
    return _featurizer_class(meta, "featurizer description").STATE_ARRAYS


def featurizer_from_state(meta, arrays: dict[str, np.ndarray]) -> Featurizer:
    """A fitted featurizer from the metadata and arrays stored in a model file."""
    return _featurizer_class(meta, "featurizer description").from_state(meta, arrays)
