"""Packed corpora: one contiguous CSR container for many sequences.

This is the only place where Python lists of tokens become arrays.  Every
learner and the tagger read a :class:`Sequences` without touching a Python
object per token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cseq._core.dtypes import ATTR, INDEX, LABEL, VALUE
from cseq.chain._chain import CorpusView
from cseq.exceptions import InputError

__all__ = ["Sequences", "label_lists", "relabel"]


def relabel(raw: np.ndarray, new_id: np.ndarray) -> np.ndarray:
    """``new_id[raw]`` as contiguous int32 label ids, keeping -1 (an unknown label) as -1."""
    out = new_id[np.maximum(raw, 0)].astype(LABEL)
    out[raw < 0] = -1
    return np.ascontiguousarray(out)


def label_lists(names: np.ndarray, ids: np.ndarray, seq_ptr: np.ndarray) -> list[list]:
    """``names[ids]`` (one entry per token) cut into one list per sequence at ``seq_ptr``.

    The cutting is done on Python lists, which slice much faster than one
    small numpy array per sequence turned into a list.
    """
    flat = names[ids].tolist()
    ptr = seq_ptr.tolist()
    return [flat[a:b] for a, b in zip(ptr[:-1], ptr[1:])]


@dataclass(frozen=True, eq=False)
class Sequences:
    """A corpus of sequences packed into flat arrays (CSR layout).

    Attributes
    ----------
    seq_ptr : ndarray of int64, shape (n_sequences + 1,)
        Sequence ``s`` spans tokens ``seq_ptr[s]:seq_ptr[s + 1]``.
    tok_ptr : ndarray of int64, shape (n_tokens + 1,)
        Token ``t`` has features ``tok_ptr[t]:tok_ptr[t + 1]``.
    attr_ids : ndarray of int32, shape (n_features,)
        Attribute id of each feature occurrence.
    values : ndarray of float32, shape (n_features,)
        Value of each feature occurrence (1.0 for plain string features).
    labels : ndarray of int32, shape (n_tokens,), or None
        Label id of each token, when the corpus is labeled; -1 where the
        label is not known (a partially labelled sequence: only the kernels
        that train on partial labels accept a view of such a corpus, see
        :meth:`view`).
    """

    seq_ptr: np.ndarray
    tok_ptr: np.ndarray
    attr_ids: np.ndarray
    values: np.ndarray
    labels: np.ndarray | None = None

    def __post_init__(self) -> None:
        checks = (
            ("seq_ptr", self.seq_ptr, INDEX),
            ("tok_ptr", self.tok_ptr, INDEX),
            ("attr_ids", self.attr_ids, ATTR),
            ("values", self.values, VALUE),
        )
        for name, arr, dtype in checks:
            if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1:
                raise InputError(f"Sequences.{name} must be a 1-d {dtype} array")
            if not arr.flags.c_contiguous:
                raise InputError(f"Sequences.{name} must be C-contiguous")
        if len(self.seq_ptr) < 1 or len(self.tok_ptr) < 1:
            raise InputError("Sequences.seq_ptr and tok_ptr need at least one entry")
        if self.seq_ptr[0] != 0 or self.seq_ptr[-1] != self.n_tokens:
            raise InputError("Sequences.seq_ptr must start at 0 and end at n_tokens")
        if self.tok_ptr[0] != 0 or self.tok_ptr[-1] != len(self.attr_ids):
            raise InputError("Sequences.tok_ptr must start at 0 and end at len(attr_ids)")
        if len(self.values) != len(self.attr_ids):
            raise InputError("Sequences.values and attr_ids differ in length")
        if np.any(np.diff(self.seq_ptr) < 0) or np.any(np.diff(self.tok_ptr) < 0):
            raise InputError("Sequences offsets must be non-decreasing")
        if len(self.attr_ids) and self.attr_ids.min() < 0:
            raise InputError("Sequences.attr_ids must be non-negative")
        if self.labels is not None:
            lab = self.labels
            if not isinstance(lab, np.ndarray) or lab.dtype != LABEL or lab.ndim != 1:
                raise InputError(f"Sequences.labels must be a 1-d {LABEL} array")
            if not lab.flags.c_contiguous:
                raise InputError("Sequences.labels must be C-contiguous")
            if len(lab) != self.n_tokens:
                raise InputError("Sequences.labels must have one label per token")
            if len(lab) and lab.min() < -1:
                raise InputError("Sequences.labels must be label ids, or -1 for an unknown label")

    @classmethod
    def packed(cls, seq_ptr: np.ndarray, tok_ptr: np.ndarray, attr_ids: np.ndarray,
               values: np.ndarray, labels: np.ndarray | None = None) -> Sequences:
        """A corpus from arrays cseq's own packers made (``cseq.features._pack``, the template
        lookup), without :meth:`__post_init__`'s checks.

        Those arrays hold the invariants by construction; the checks (a dozen
        NumPy reductions) are the boundary's, for arrays from outside, and
        cost more than tagging a short sentence.
        """
        self = object.__new__(cls)
        # The frozen dataclass's fields, set in its instance dict at once.
        self.__dict__.update(seq_ptr=seq_ptr, tok_ptr=tok_ptr, attr_ids=attr_ids, values=values,
                             labels=labels)
        return self

    @property
    def n_sequences(self) -> int:
        """Number of sequences."""
        return len(self.seq_ptr) - 1

    @property
    def n_tokens(self) -> int:
        """Number of tokens over all sequences."""
        return len(self.tok_ptr) - 1

    @property
    def lengths(self) -> np.ndarray:
        """Length of each sequence (int64)."""
        return np.diff(self.seq_ptr)

    def view(self, labels: bool = True, partial: bool = False) -> CorpusView:
        """The corpus as the compiled kernels read it (``cseq.chain._chain.CorpusView``).

        With ``labels=False`` the view leaves the labels out, as prediction
        does.  Labels -1 (unknown) are refused unless ``partial`` is True,
        which only the kernels that train on partial labels ask for.
        """
        return CorpusView(self, labels, partial)

    @property
    def partially_labeled(self) -> bool:
        """Whether some label is -1 (not known)."""
        return self.labels is not None and bool(len(self.labels)) and int(self.labels.min()) < 0

    def unknown_sequences(self) -> np.ndarray:
        """Indices (int64) of the sequences with at least one label -1."""
        if not self.partially_labeled:
            return np.zeros(0, dtype=INDEX)
        seq_of = np.repeat(np.arange(self.n_sequences, dtype=INDEX), self.lengths)
        return np.unique(seq_of[self.labels < 0]).astype(INDEX)

    def max_attr_id(self) -> int:
        """Largest attribute id present, or -1 for a corpus with no features."""
        return int(self.attr_ids.max()) if len(self.attr_ids) else -1
