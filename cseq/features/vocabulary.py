"""Attribute vocabularies: user-made feature lists and dicts to packed corpora.

:class:`FeatureVocabulary` is the featurizer (:mod:`cseq.features.protocol`)
of the python-crfsuite style of input: one list of feature strings, or one
dict, per token; :class:`cseq.templates.TemplateFeaturizer` handles raw
tokens.  The string-table encoding here (:func:`encode_strings`,
:func:`decode_strings`, :func:`check_strings`) is how every featurizer
stores strings in a model file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq.features import _pack
from cseq.exceptions import ModelFormatError
from cseq._core.threads import resolve_n_jobs
from cseq.chain.sequences import Sequences
from cseq.features.protocol import GrowingFeaturizer, PartsFeaturizer, register_featurizer

__all__ = ["FeatureVocabulary", "encode_strings", "decode_strings", "check_strings"]

def encode_strings(strings: list[str]) -> dict[str, np.ndarray]:
    """Pack strings into a UTF-8 blob and offsets (any code point, lone surrogates included)."""
    encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
    blob = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
    return {"blob": blob, "offsets": offsets}


def check_strings(blob: np.ndarray, offsets: np.ndarray, what: str) -> None:
    """Raise ModelFormatError unless :func:`decode_strings` would succeed, without decoding.

    The blob must be UTF-8 as a whole (lone surrogates allowed) and every
    string start where a character starts, so each string is UTF-8.
    """
    if blob.dtype != np.uint8 or offsets.dtype != np.int64 or blob.ndim != 1 or offsets.ndim != 1:
        raise ModelFormatError(f"{what}: bad string table dtypes")
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(blob) or np.any(np.diff(offsets) < 0):
        raise ModelFormatError(f"{what}: string offsets are inconsistent")
    try:
        blob.tobytes().decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{what}: invalid UTF-8 ({exc})") from None
    starts = offsets[:-1][offsets[:-1] < len(blob)]
    if np.any((blob[starts] & 0xC0) == 0x80):
        raise ModelFormatError(f"{what}: invalid UTF-8 (a string starts inside a character)")


def decode_strings(blob: np.ndarray, offsets: np.ndarray, what: str) -> list[str]:
    """Inverse of :func:`encode_strings`; raises ModelFormatError on inconsistent arrays."""
    if blob.dtype != np.uint8 or offsets.dtype != np.int64 or blob.ndim != 1 or offsets.ndim != 1:
        raise ModelFormatError(f"{what}: bad string table dtypes")
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(blob) or np.any(np.diff(offsets) < 0):
        raise ModelFormatError(f"{what}: string offsets are inconsistent")
    data = blob.tobytes()
    try:
        return [data[offsets[i]:offsets[i + 1]].decode("utf-8", "surrogatepass")
                for i in range(len(offsets) - 1)]
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{what}: invalid UTF-8 ({exc})") from None


@register_featurizer
class FeatureVocabulary(GrowingFeaturizer, PartsFeaturizer):
    """Featurizer for per-token feature lists or dicts (python-crfsuite style).

    Each token of ``X`` is a list of feature strings (``["w=The", "pos=DT"]``)
    or a dict ``{name: value}``: a number is the feature's value, ``True``
    is 1.0, ``False`` leaves the feature out and a string ``v`` becomes the
    feature ``name=v`` with value 1.0.  Features unseen in training are
    ignored by :meth:`transform`.
    """

    kind = "vocabulary"
    #: Names of the arrays :meth:`get_state` returns.
    STATE_ARRAYS = frozenset({"blob", "offsets"})

    def __init__(self) -> None:
        self._table = _pack.StringTable()

    def get_config(self) -> dict:
        """JSON-able configuration (no fitted state)."""
        return {"kind": self.kind}

    @classmethod
    def from_config(cls, config: dict) -> FeatureVocabulary:
        """An empty vocabulary (the configuration has nothing else)."""
        return cls()

    def fresh(self) -> FeatureVocabulary:
        """An empty vocabulary (used by ``fit``, so refitting never reuses attributes)."""
        return FeatureVocabulary()

    def fit_transform(self, X: Sequence[Any]) -> Sequences:
        """Learn the attributes of ``X`` (extending the vocabulary) and pack it."""
        return Sequences(*_pack.pack_features(X, self._table, True))

    def partial_fit_transform(self, X: Sequence[Any]) -> Sequences:
        """Add the attributes of ``X`` not yet known (appended: known ids stay) and pack it."""
        return self.fit_transform(X)

    def copy(self) -> FeatureVocabulary:
        """An independent copy: what :meth:`partial_fit_transform` adds to it is not in this one.

        ``partial_fit`` grows a copy while readers keep using this vocabulary.
        """
        out = self.fresh()  # of this kind: a subclass reads X its own way
        out._table = self._table.copy()
        return out

    def transform(self, X: Sequence[Any], *, n_jobs: int = 1) -> Sequences:
        """Pack ``X``, dropping attributes not in the vocabulary.

        The feature strings are copied with the GIL held and then looked up
        without it, in ``n_jobs`` threads.
        """
        return Sequences.packed(*_pack.pack_features(X, self._table, False,
                                                    resolve_n_jobs(n_jobs)))

    def packing(self) -> tuple[_pack.StringTable, bool]:
        """The string table :meth:`transform` looks attributes up in, and whether it reads
        dict tokens by python-crfsuite's rules (``pack_features(crfsuite=...)``).

        For the one-call path of prediction, which packs short inputs the
        way :meth:`transform` does, into C memory.  The table of a fitted
        estimator's featurizer is never changed (``partial_fit`` grows a copy).
        """
        return self._table, False

    def fit_part(self, X: Sequence[Any]) -> FeatureVocabulary:
        """A vocabulary of the attributes of ``X`` alone: one part for :meth:`merge`.

        ``self`` is left unchanged.  Used by :mod:`cseq.distributed`, where
        each partition of a corpus learns its attributes on its worker.
        """
        part = self.fresh()
        part.fit_transform(X)
        return part

    def merge(self, parts: Sequence[FeatureVocabulary]) -> FeatureVocabulary:
        """The vocabulary :meth:`fit_transform` learns from the parts' corpora concatenated.

        ``parts`` are :meth:`fit_part` results in corpus order; attributes
        keep their order of first appearance, so the ids are those a single
        ``fit_transform`` of the whole corpus gives.  Returns a new fitted
        vocabulary; ``self`` is left unchanged.
        """
        seen: dict[str, None] = {}
        for part in parts:
            seen.update(dict.fromkeys(part.attribute_names()))
        merged = self.fresh()
        merged._table = _pack.StringTable.from_strings(list(seen))
        return merged

    @property
    def n_attributes(self) -> int:
        """Number of known attributes."""
        return len(self._table)

    def attribute_names(self) -> list[str]:
        """Attribute strings in id order."""
        return self._table.names()

    def keep_attributes(self, kept: np.ndarray) -> bool:
        """Keep only the attribute ids ``kept`` (ascending), renumbered ``0 .. len(kept) - 1``."""
        names = self._table.names()
        self._table = _pack.StringTable.from_strings([names[i] for i in np.asarray(kept).tolist()])
        return True

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and arrays that :meth:`from_state` restores."""
        return {"kind": self.kind}, encode_strings(self._table.names())

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> FeatureVocabulary:
        """Rebuild a vocabulary from :meth:`get_state` output; ModelFormatError if invalid."""
        if set(arrays) != cls.STATE_ARRAYS:
            raise ModelFormatError("feature vocabulary: expected arrays 'blob' and 'offsets'")
        names = decode_strings(arrays["blob"], arrays["offsets"], "feature vocabulary")
        self = cls()
        try:
            self._table = _pack.StringTable.from_strings(names)
        except ValueError:
            raise ModelFormatError("feature vocabulary: duplicate attribute names") from None
        return self
