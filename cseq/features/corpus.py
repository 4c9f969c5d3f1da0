"""A corpus of raw tokens: checking the user's sentences, and their interned form.

A sentence is a list of tokens; a token is a str (one column) or a tuple or
list of column strings.  The checks here run before any compiled code reads a
corpus (:mod:`cseq.features._tokens` calls :func:`sentence_rows` on each sentence it
interns), and name the sentence, token and column at fault.
"""

from __future__ import annotations

import numpy as np

from cseq.exceptions import InputError, InputTypeError

__all__ = ["Interned", "check_corpus", "dense_ids", "sentence_rows", "token_columns"]


class Interned:
    """One corpus as interned cells: what the compiled kernels and names need."""

    __slots__ = ("values", "hashes", "slot_ids", "seq_ptr", "pad_before", "pad_after", "words",
                 "word_slots")



def check_corpus(X) -> list:
    if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__"):
        raise InputTypeError(
            f"X must be a list of sentences (lists of tokens), not {type(X).__name__}"
        )
    X = X if isinstance(X, list) else list(X)
    if not X:
        raise InputError("X is empty: need at least one sentence")
    return X


def token_columns(X: list) -> int | None:
    """Columns per token of the first token of ``X`` (None if it cannot be seen cheaply)."""
    for sent in X:
        if isinstance(sent, (list, tuple)) and sent:
            tok = sent[0]
            return 1 if isinstance(tok, str) else len(tok) if isinstance(tok, (tuple, list)) else None
    return None


def sentence_rows(sent, si: int, need: int) -> list[tuple]:
    """Validate one sentence and return its tokens as tuples of column strings."""
    if isinstance(sent, (str, bytes)) or not hasattr(sent, "__iter__"):
        raise InputTypeError(
            f"sentence {si} must be a list of tokens, not {type(sent).__name__}"
        )
    rows = []
    n_cols = None
    for ti, tok in enumerate(sent):
        if isinstance(tok, str):
            row = (tok,)
        elif isinstance(tok, (tuple, list)):
            row = tuple(tok)
        else:
            raise InputTypeError(
                f"sentence {si}, token {ti}: a token must be a str or a tuple/list of "
                f"column strings, not {type(tok).__name__}"
            )
        # Columns the templates do not read are not inspected (nor interned).
        for ci, cell in enumerate(row[:need]):
            if not isinstance(cell, str):
                raise InputTypeError(
                    f"sentence {si}, token {ti}, column {ci}: expected str, "
                    f"got {type(cell).__name__}"
                )
        if n_cols is None:
            n_cols = len(row)
        elif len(row) != n_cols:
            raise InputError(
                f"sentence {si}, token {ti} has {len(row)} column(s) but token 0 "
                f"has {n_cols}"
            )
        if len(row) < need:
            raise InputError(
                f"sentence {si}, token {ti} has {len(row)} column(s) but the templates "
                f"read column {need - 1}"
            )
        rows.append(row)
    return rows


def dense_ids(ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(ids, return_inverse=True)`` for ids in ``[0, n)``, in O(len(ids) + n)."""
    seen = np.zeros(n, dtype=bool)
    seen[ids] = True
    used = np.flatnonzero(seen)
    rank = np.cumsum(seen, dtype=np.int64) - 1
    return used, rank[ids]
