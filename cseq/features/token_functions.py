"""Token functions: what ``%x[row,col:name]`` does to the string of a cell.

These are the definitions: :mod:`cseq.features._tokens` computes the same in C (once
per distinct cell) and ``tests/features/test_tokens.py`` compares the two.  The
``tags`` function is learned from labelled data (:mod:`cseq.features.tagdict`): it is
named here, and a fitted featurizer's tag dictionary gives its values.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

__all__ = ["TOKEN_FUNCTIONS", "TAGS", "padding"]


_ASCII_SHAPE = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "X" * 26 + "x" * 26 + "d" * 10
)


def _shape(w: str) -> str:
    if w.isascii():  # the common case, done in C
        return w.translate(_ASCII_SHAPE)
    return "".join(
        "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c for c in w
    )


_RUNS = re.compile(r"(.)\1+", re.DOTALL)


def _short_shape(w: str) -> str:
    return _RUNS.sub(r"\1", _shape(w))


def _flag(b: bool) -> str:
    return "1" if b else "0"


def _is_title(w: str) -> str:
    # "Mr." and "A" are titles; "USA" and "McDonald" are not.
    return _flag(w[:1].isupper() and not any(map(str.isupper, w[1:])))


def _is_punct(w: str) -> str:
    # Unicode punctuation (P*) or symbols (S*): ",", "--", "$", "%", "+".
    return _flag(bool(w) and all(unicodedata.category(c)[0] in "PS" for c in w))


def _length_bucket(w: str) -> str:
    n = len(w)
    if n <= 4:
        return str(n)
    if n <= 6:
        return "5-6"
    if n <= 9:
        return "7-9"
    return "10+"


def _prefix(n: int) -> Callable[[str], str]:
    def f(w: str) -> str:
        return w[:n]

    f.__name__ = f"prefix{n}"
    return f


def _suffix(n: int) -> Callable[[str], str]:
    def f(w: str) -> str:
        return w[-n:] if w else ""

    f.__name__ = f"suffix{n}"
    return f


#: Token functions usable as ``%x[row,col:name]``.  Each maps a cell string to
#: a string; flags give ``"1"`` or ``"0"``.  These are the definitions:
#: :mod:`cseq.features._tokens` computes the same in C, and the tests compare the two.  Padding cells are never passed
#: through a function: ``%x[-1,0:lower]`` on the first token reads ``_B-1``.
TOKEN_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "lower": str.lower,
    **{f"prefix{n}": _prefix(n) for n in range(1, 7)},
    **{f"suffix{n}": _suffix(n) for n in range(1, 7)},
    "shape": _shape,
    "shortshape": _short_shape,
    "istitle": _is_title,
    "isupper": lambda w: _flag(w.isupper()),
    "hasdigit": lambda w: _flag(any(map(str.isdigit, w))),
    "alldigits": lambda w: _flag(w.isdigit()),
    "hashyphen": lambda w: _flag("-" in w),
    "ispunct": _is_punct,
    "len": _length_bucket,
}


#: The token function learned from labelled data (:mod:`cseq.features.tagdict`): the
#: labels a string was seen with in training, e.g. ``%x[1,0:tags]``.
TAGS = "tags"


def padding(offset: int) -> str:
    """CRF++ padding string for a row ``offset`` positions outside the sentence."""
    return f"_B-{offset}" if offset > 0 else f"_B+{-offset}"
