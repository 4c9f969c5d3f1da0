"""The segmenter's featurizer: strings in, one token per character out.

:class:`CharFeatures` implements the featurizer interface of
:mod:`cseq.features.vocabulary` over ``X`` = a list of strings, so that any
registered learner trains on characters as on tokens, and its model file
stores it (``get_state``: the feature keys in id order).  The features
themselves are computed in C (:mod:`cseq.segment._chars`).

It also carries what turns a labeling back into words and that the model
file must keep with the weights: the preset and the table of multiword
tokens that are not a plain split of their surface (French ``du`` =
``de le``), learned from the training data by
:class:`cseq.segment.Segmenter`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cseq.exceptions import InputError, ModelFormatError
from cseq.features.protocol import Featurizer, register_featurizer
from cseq.chain.sequences import Sequences
from cseq.segment import _chars

__all__ = ["PRESETS", "CharFeatures"]

#: The feature presets: alphabetic languages (the whitespace-delimited chunk
#: around a character is read as a word), and languages written without
#: spaces (character n-grams only, trigrams on both sides).
PRESETS = {"alphabetic": 0, "nospace": 1}


@register_featurizer
class CharFeatures(Featurizer):
    """Character features for segmentation (one sequence per string, one token per character).

    Parameters
    ----------
    preset : {"alphabetic", "nospace"}
    multiword : dict of str to tuple of str, optional
        Multiword tokens that are not a plain split of their surface, surface
        to words (as learned from training data); looked up as given and
        lower-cased.
    """

    kind = "segment-chars"
    #: Names of the arrays :meth:`get_state` returns.
    STATE_ARRAYS = frozenset({"keys"})

    def __init__(self, preset: str = "alphabetic",
                 multiword: dict[str, tuple[str, ...]] | None = None) -> None:
        if not isinstance(preset, str) or preset not in PRESETS:
            raise InputError(f"unknown segmenter preset {preset!r} (one of {sorted(PRESETS)})")
        self.preset = preset
        self.multiword = dict(multiword or {})
        self._ids = _chars.KeyIds()

    def __repr__(self) -> str:
        return (f"CharFeatures(preset={self.preset!r}, multiword=<{len(self.multiword)} "
                "entries>)")

    def get_config(self) -> dict:
        """JSON-able configuration: the preset and the multiword table."""
        return {"kind": self.kind, "preset": self.preset,
                "multiword": [[surface, *words] for surface, words in self.multiword.items()]}

    @classmethod
    def from_config(cls, config: dict) -> CharFeatures:
        """The featurizer :meth:`get_config` describes; ModelFormatError if it is malformed."""
        preset, table = config.get("preset"), config.get("multiword")
        if not isinstance(preset, str) or preset not in PRESETS:
            raise ModelFormatError(f"segmenter features: unknown preset {preset!r:.40}")
        if (not isinstance(table, list)
                or not all(isinstance(row, list) and len(row) >= 3
                           and all(isinstance(s, str) and s for s in row) for row in table)):
            raise ModelFormatError("segmenter features: the multiword table is malformed "
                                   "(rows of a surface and two or more words)")
        return cls(preset, {row[0]: tuple(row[1:]) for row in table})

    def fresh(self) -> CharFeatures:
        """The same configuration, with no feature known."""
        return CharFeatures(self.preset, self.multiword)

    def fit_transform(self, X: Sequence[str]) -> Sequences:
        """Learn the features of the strings ``X`` (extending the known ones) and pack them."""
        return self._pack(X, True)

    def transform(self, X: Sequence[str], *, n_jobs: int = 1) -> Sequences:
        """Pack the strings ``X``, leaving out features not seen in training (one thread)."""
        return self._pack(X, False)

    def _pack(self, X: Sequence[str], grow: bool) -> Sequences:
        if isinstance(X, str):
            raise InputError("the segmenter reads a list of strings, not one string")
        seq_ptr, tok_ptr, attr_ids = _chars.featurize(X, self._ids, grow, PRESETS[self.preset])
        return Sequences.packed(seq_ptr, tok_ptr, attr_ids,
                                np.ones(len(attr_ids), dtype=np.float32))

    @property
    def n_attributes(self) -> int:
        """Number of known features."""
        return len(self._ids)

    def attribute_names(self) -> list[str]:
        """The features' names: their 64-bit keys in hexadecimal (the strings are not kept)."""
        return [f"key={k:016x}" for k in self._ids.keys().tolist()]

    def keep_attributes(self, kept: np.ndarray) -> bool:
        """Keep only the feature ids ``kept`` (ascending), renumbered ``0 .. len(kept) - 1``."""
        self._ids = _chars.KeyIds.from_keys(
            np.ascontiguousarray(self._ids.keys()[np.asarray(kept, dtype=np.int64)]))
        return True

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and arrays that :meth:`from_state` restores."""
        return self.get_config(), {"keys": self._ids.keys()}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> CharFeatures:
        """Rebuild a fitted featurizer from :meth:`get_state` output; ModelFormatError if invalid."""
        if set(arrays) != cls.STATE_ARRAYS:
            raise ModelFormatError("segmenter features: expected the array 'keys'")
        keys = arrays["keys"]
        if keys.dtype != np.uint64 or keys.ndim != 1:
            raise ModelFormatError("segmenter features: 'keys' must be a 1-d uint64 array")
        self = cls.from_config(meta)
        try:
            self._ids = _chars.KeyIds.from_keys(np.ascontiguousarray(keys))
        except ValueError:
            raise ModelFormatError("segmenter features: a feature key is repeated") from None
        return self
