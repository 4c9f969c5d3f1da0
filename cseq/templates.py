"""Feature templates in CRF++ syntax, token functions, presets and the featurizer.

A template file has one template per line::

    # comment
    U00:%x[-1,0]          # previous word
    U01:%x[0,0:lower]     # current word, lowercased (a cseq token function)
    U05:%x[-1,0]/%x[0,0]  # word bigram
    B                     # label bigrams (always on in cseq; recorded as a flag)

``%x[row,col]`` reads column ``col`` of the token ``row`` positions away from
the current one; rows outside the sentence read the CRF++ padding strings
``_B-1, _B-2, ...`` (before) and ``_B+1, _B+2, ...`` (after).  Each ``U``
template gives every token one attribute: the template line with its macros
replaced by the values read, e.g. ``U05:of/the``.  The attribute is the
template's literal text together with those values, so two templates (or two
value tuples) that happen to print the same string are two attributes.  ``docs/templates.md`` is the
full reference.

:class:`TemplateFeaturizer` turns a corpus into a :class:`cseq.sequences.Sequences`
through the compiled path: :mod:`cseq._tokens` interns cell strings in a C
table and runs the token functions in C once per distinct cell, then (in
:mod:`cseq._templates`) each attribute becomes a 64-bit key combined in C and
mapped to an id through a C hash table, so no Python string is built per
feature.  :func:`expand` is the
plain-Python reference that builds the same attributes as strings.
"""

from __future__ import annotations

import copy
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from cseq import _pack, _templates, _tokens
from cseq._dtypes import ATTR, INDEX, VALUE
from cseq.exceptions import InputError, InputTypeError, ModelFormatError, NotFittedError
from cseq.features import check_strings, decode_strings, encode_strings, register_featurizer
from cseq.model import resolve_n_jobs
from cseq.sequences import Sequences
from cseq.tagdict import UNKNOWN as UNKNOWN_CLASS
from cseq.tagdict import FOLDS, TagDictionary, jackknife

__all__ = [
    "TOKEN_FUNCTIONS",
    "PRESETS",
    "Cell",
    "Template",
    "Templates",
    "TemplateFeaturizer",
    "expand",
    "preset",
]

#: Largest ``|row|`` offset a template may use (padding strings are made per offset).
MAX_OFFSET = 1000
#: Largest column index a template may use.
MAX_COLUMN = 100_000
#: Most hashing buckets (``n_buckets``).  Every bucket is an attribute of the
#: model whether any key falls in it or not: a row pointer in the file (8
#: bytes) and about 40 bytes at the peak of training, so 2**24 buckets make
#: a 134 MB file and 0.7 GB of training memory before the first token.
MAX_BUCKETS = 1 << 24
#: Most ``U`` templates, and most characters of template text, one template
#: set may have (real sets have tens to hundreds of lines).  A model file
#: carries the text and loading parses it, so these bound what a header's
#: templates can cost: about 1 KB of parsed objects per template (two copies).
MAX_TEMPLATES = 10_000
MAX_TEMPLATE_CHARS = 1 << 20
#: Identifies the hash functions of :mod:`cseq._templates`; stored with every
#: fitted featurizer so that a file written by a different scheme is refused.
HASH_SCHEME = "cseq-fmix64-v1"
#: Version of the state layout written by :meth:`TemplateFeaturizer.get_state`.
STATE_FORMAT = 1


# --------------------------------------------------------------------------
# Token functions
# --------------------------------------------------------------------------


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
#: :mod:`cseq._tokens` computes the same in C, and the tests compare the two.  Padding cells are never passed
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


#: The token function learned from labelled data (:mod:`cseq.tagdict`): the
#: labels a string was seen with in training, e.g. ``%x[1,0:tags]``.
TAGS = "tags"


def _pad(offset: int) -> str:
    """CRF++ padding string for a row ``offset`` positions outside the sentence."""
    return f"_B-{offset}" if offset > 0 else f"_B+{-offset}"


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------

_MACRO = re.compile(
    r"%x\[\s*([+-]?\d+)\s*,\s*(\d+)\s*(?::\s*([A-Za-z_][A-Za-z0-9_]*)\s*)?\]"
)

#: The identifier that opens a ``U`` line (``U05:``), as CRF++ writes them.
_TEMPLATE_ID = re.compile(r"U[^:%]*:")


@dataclass(frozen=True)
class Cell:
    """One ``%x[row,col]`` or ``%x[row,col:func]`` macro of a template."""

    row: int
    col: int
    func: str | None = None


@dataclass(frozen=True)
class Template:
    """A parsed ``U`` template line.

    Attributes
    ----------
    parts : tuple of str
        The literal text around the macros (``len(cells) + 1`` pieces).
    cells : tuple of Cell
        The macros, left to right.
    line_no : int
        1-based line number in the template text.
    source : str
        The line as written (stripped).
    """

    parts: tuple[str, ...]
    cells: tuple[Cell, ...]
    line_no: int
    source: str

    def render(self, values: Sequence[str]) -> str:
        """The attribute string for the given cell values."""
        out = [self.parts[0]]
        for v, p in zip(values, self.parts[1:]):
            out.append(v)
            out.append(p)
        return "".join(out)

    def describe(self, values: Sequence[str]) -> str:
        """What the attribute with these cell values tests, for people.

        The template's text without its ``U05:`` identifier (which says
        nothing), ``=``, and the values it read with the literal text between
        them: ``%x[-1,0:lower]/%x[0,0:lower]=of/the`` where :meth:`render`
        gives ``U06:of/the``.  A template without macros (a bias) is its text.
        """
        ident = _TEMPLATE_ID.match(self.source)
        body = self.source[ident.end() if ident else 1:]
        if not self.cells:
            return body or self.source
        out = [values[0]]
        for p, v in zip(self.parts[1:-1], values[1:]):
            out.append(p)
            out.append(v)
        return f"{body}={''.join(out)}"

    @property
    def skeleton(self) -> str:
        """The literal text with one NUL per macro: two templates with the same
        skeleton and the same values give the same attribute, as in CRF++."""
        return "\x00".join(self.parts)


def _bounded_int(text: str) -> int | None:
    """``int(text)`` for a macro number, or None when it has more than 18 digits.

    Python refuses ``int()`` of more than 4,300 digits with a bare ValueError,
    and no valid offset or column is anywhere near that long.
    """
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 18:
        return None
    return sign * int(digits)


def _abbrev(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} characters)"


def _parse_line(line: str, line_no: int) -> Template:
    parts: list[str] = []
    cells: list[Cell] = []
    pos = 0
    while True:
        k = line.find("%", pos)
        if k < 0:
            parts.append(line[pos:])
            break
        m = _MACRO.match(line, k)
        if m is None:
            bad = line[k : k + 20]
            raise InputError(
                f"template line {line_no}: malformed macro at {bad!r} in {line!r}; "
                "expected %x[row,col] or %x[row,col:function]"
            )
        row, col, func = _bounded_int(m.group(1)), _bounded_int(m.group(2)), m.group(3)
        if row is None or abs(row) > MAX_OFFSET:
            raise InputError(
                f"template line {line_no}: row offset {_abbrev(m.group(1))} is beyond "
                f"+/-{MAX_OFFSET}"
            )
        if col is None or col > MAX_COLUMN:
            raise InputError(
                f"template line {line_no}: column {_abbrev(m.group(2))} is beyond {MAX_COLUMN}"
            )
        if func is not None and func not in TOKEN_FUNCTIONS and func != TAGS:
            known = ", ".join([*TOKEN_FUNCTIONS, TAGS])
            raise InputError(
                f"template line {line_no}: unknown token function {func!r}; known: {known}"
            )
        parts.append(line[pos:k])
        cells.append(Cell(row, col, func))
        pos = m.end()
    return Template(tuple(parts), tuple(cells), line_no, line)


class Templates:
    """A parsed template file (CRF++ syntax plus cseq token functions).

    Parameters
    ----------
    text : str
        The template file's text.  Blank lines and lines starting with ``#``
        are ignored; every other line is a ``U`` (unigram) template or a ``B``
        (label bigram) line.

    Attributes
    ----------
    text : str
        The text as given (kept so that a saved model can re-parse it).
    templates : tuple of Template
        The ``U`` templates, in file order.
    bigram : bool
        Whether a bare ``B`` line was present.  cseq's chain always scores
        label transitions, so this is only recorded.

    Raises
    ------
    InputError
        On a malformed line, naming its line number.
    """

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise InputTypeError(f"template text must be a str, not {type(text).__name__}")
        if len(text) > MAX_TEMPLATE_CHARS:
            raise InputError(f"template text of {len(text)} characters is longer than "
                             f"{MAX_TEMPLATE_CHARS} (cseq.templates.MAX_TEMPLATE_CHARS)")
        self.text = text
        self.bigram = False
        templates = []
        for line_no, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line[0] == "U":
                if len(templates) == MAX_TEMPLATES:
                    raise InputError(f"template line {line_no}: more than {MAX_TEMPLATES} U "
                                     "templates (cseq.templates.MAX_TEMPLATES)")
                templates.append(_parse_line(line, line_no))
            elif line[0] == "B":
                if "%" in line:
                    raise InputError(
                        f"template line {line_no}: bigram templates with macros ({line!r}) "
                        "are not supported: cseq's label transitions do not depend on the "
                        "input. Use a bare 'B' line, and U templates for observations."
                    )
                self.bigram = True
            else:
                raise InputError(
                    f"template line {line_no}: {line!r} must start with 'U' (unigram "
                    f"template) or 'B' (label bigrams); presets are {', '.join(PRESETS)}"
                )
        self.templates: tuple[Template, ...] = tuple(templates)

    @classmethod
    def parse(cls, text: str) -> "Templates":
        """Parse template text (same as ``Templates(text)``)."""
        return cls(text)

    @classmethod
    def preset(cls, name: str) -> "Templates":
        """One of the built-in template sets: ``"pos"``, ``"chunk"`` or ``"ner"``."""
        if name not in PRESETS:
            raise InputError(f"unknown template preset {name!r}; presets are {', '.join(PRESETS)}")
        return cls(PRESETS[name])

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> "Templates":
        """Read a template file (UTF-8)."""
        with open(path, encoding="utf-8") as f:
            return cls(f.read())

    @property
    def n_columns(self) -> int:
        """Number of columns a token needs: one more than the largest column used."""
        return max((c.col + 1 for t in self.templates for c in t.cells), default=0)

    @property
    def tag_columns(self) -> tuple[int, ...]:
        """Columns read through the ``tags`` function (learned from labels), ascending."""
        return tuple(sorted({c.col for t in self.templates for c in t.cells if c.func == TAGS}))

    @property
    def max_offset(self) -> int:
        """Largest ``|row|`` used by any macro."""
        return max((abs(c.row) for t in self.templates for c in t.cells), default=0)

    def expand(self, sentence: Sequence[Any]) -> list[list[str]]:
        """Attributes of each token of one sentence, as strings (see :func:`expand`)."""
        return expand(self, sentence)

    def __len__(self) -> int:
        return len(self.templates)

    def __iter__(self):
        return iter(self.templates)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Templates):
            return NotImplemented
        return self.templates == other.templates and self.bigram == other.bigram

    def __hash__(self) -> int:
        return hash((self.templates, self.bigram))

    def __repr__(self) -> str:
        return f"Templates({len(self.templates)} unigram templates, bigram={self.bigram})"


# --------------------------------------------------------------------------
# Presets
# --------------------------------------------------------------------------

_POS = """\
# cseq preset "pos": part-of-speech tagging over column 0 (the word).
# Words in a +/-2 window, lowercased, and the current word as written.
U00:%x[-2,0:lower]
U01:%x[-1,0:lower]
U02:%x[0,0:lower]
U03:%x[1,0:lower]
U04:%x[2,0:lower]
U05:%x[0,0]
U06:%x[-1,0:lower]/%x[0,0:lower]
U07:%x[0,0:lower]/%x[1,0:lower]
# Affixes of the current word.
U10:%x[0,0:prefix1]
U11:%x[0,0:prefix2]
U12:%x[0,0:prefix3]
U13:%x[0,0:prefix4]
U14:%x[0,0:suffix1]
U15:%x[0,0:suffix2]
U16:%x[0,0:suffix3]
U17:%x[0,0:suffix4]
# Suffixes of the neighbours.
U18:%x[-1,0:suffix3]
U19:%x[1,0:suffix3]
# Orthography.
U20:%x[0,0:hashyphen]
U21:%x[0,0:istitle]
U22:%x[0,0:isupper]
U23:%x[0,0:hasdigit]
U24:%x[0,0:alldigits]
U25:%x[0,0:shape]
U26:%x[0,0:shortshape]
U27:%x[0,0:ispunct]
U28:%x[0,0:len]
U29:%x[-1,0:shortshape]/%x[0,0:shortshape]/%x[1,0:shortshape]
# Word pairs and a trigram in the window.
U40:%x[-1,0:lower]/%x[0,0:suffix3]
U41:%x[0,0:suffix3]/%x[1,0:lower]
U42:%x[-1,0:lower]/%x[1,0:lower]
U43:%x[-2,0:lower]/%x[-1,0:lower]
U44:%x[1,0:lower]/%x[2,0:lower]
U45:%x[-2,0:lower]/%x[0,0:lower]
U46:%x[0,0:lower]/%x[2,0:lower]
U47:%x[-1,0:lower]/%x[0,0:lower]/%x[1,0:lower]
# Longer affixes, for unknown words.
U50:%x[0,0:suffix5]
U51:%x[0,0:suffix6]
U52:%x[0,0:prefix5]
# Capitalisation in context (PROPN against NOUN), shape with suffix.
U60:%x[-1,0:lower]/%x[0,0:istitle]
U61:%x[0,0:istitle]/%x[1,0:istitle]
U62:%x[-1,0:istitle]/%x[0,0:istitle]
U63:%x[0,0:shape]/%x[0,0:suffix3]
U64:%x[-1,0:shortshape]/%x[0,0:lower]
U65:%x[0,0:lower]/%x[1,0:shortshape]
U66:%x[-1,0:suffix2]/%x[0,0:lower]
U67:%x[0,0:lower]/%x[1,0:suffix2]
# Ambiguity classes: the tags each word was seen with in training (jackknifed
# on the training data itself, see cseq.tagdict), here and around.
U80:%x[0,0:tags]
U81:%x[1,0:tags]
U82:%x[-1,0:tags]
U83:%x[2,0:tags]
U84:%x[0,0:tags]/%x[1,0:tags]
U85:%x[-1,0:tags]/%x[0,0:tags]
U86:%x[0,0:tags]/%x[0,0:lower]
U87:%x[1,0:tags]/%x[0,0:suffix3]
# Label prior.
U99:bias
B
"""

_CHUNK = """\
# cseq preset "chunk": the CRF++ chunking set, column 0 = word, column 1 = POS.
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0]/%x[0,0]
U06:%x[0,0]/%x[1,0]

U10:%x[-2,1]
U11:%x[-1,1]
U12:%x[0,1]
U13:%x[1,1]
U14:%x[2,1]
U15:%x[-2,1]/%x[-1,1]
U16:%x[-1,1]/%x[0,1]
U17:%x[0,1]/%x[1,1]
U18:%x[1,1]/%x[2,1]

U20:%x[-2,1]/%x[-1,1]/%x[0,1]
U21:%x[-1,1]/%x[0,1]/%x[1,1]
U22:%x[0,1]/%x[1,1]/%x[2,1]

B
"""

_NER = """\
# cseq preset "ner": named entities over column 0 (the word).
# Words in a +/-2 window as written, and lowercased around the current one.
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0:lower]
U06:%x[0,0:lower]
U07:%x[1,0:lower]
U08:%x[-1,0:lower]/%x[0,0:lower]
U09:%x[0,0:lower]/%x[1,0:lower]
# Shapes.
U10:%x[0,0:shape]
U11:%x[-1,0:shortshape]
U12:%x[0,0:shortshape]
U13:%x[1,0:shortshape]
U14:%x[-1,0:shortshape]/%x[0,0:shortshape]/%x[1,0:shortshape]
# Affixes.
U20:%x[0,0:prefix1]
U21:%x[0,0:prefix2]
U22:%x[0,0:prefix3]
U23:%x[0,0:prefix4]
U24:%x[0,0:suffix1]
U25:%x[0,0:suffix2]
U26:%x[0,0:suffix3]
U27:%x[0,0:suffix4]
# Case and character classes.
U30:%x[0,0:istitle]
U31:%x[0,0:isupper]
U32:%x[0,0:hasdigit]
U33:%x[0,0:alldigits]
U34:%x[0,0:hashyphen]
U35:%x[0,0:ispunct]
U36:%x[-1,0:istitle]
U37:%x[1,0:istitle]
U38:%x[-1,0:istitle]/%x[0,0:istitle]/%x[1,0:istitle]
U39:%x[0,0:len]
# Label prior.
U99:bias
B
"""

#: Template text of the built-in presets.
PRESETS: dict[str, str] = {"pos": _POS, "chunk": _CHUNK, "ner": _NER}


def preset(name: str) -> Templates:
    """The built-in template set ``name`` (``"pos"``, ``"chunk"`` or ``"ner"``)."""
    return Templates.preset(name)


def _as_templates(templates) -> Templates:
    if isinstance(templates, Templates):
        return templates
    if isinstance(templates, str):
        if templates in PRESETS:
            return Templates.preset(templates)
        return Templates(templates)
    raise InputTypeError(
        "templates must be a preset name, template text or a Templates object, not "
        f"{type(templates).__name__}"
    )


# --------------------------------------------------------------------------
# Input checking and the plain-Python reference
# --------------------------------------------------------------------------


def _check_corpus(X) -> list:
    if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__"):
        raise InputTypeError(
            f"X must be a list of sentences (lists of tokens), not {type(X).__name__}"
        )
    X = X if isinstance(X, list) else list(X)
    if not X:
        raise InputError("X is empty: need at least one sentence")
    return X


def _n_columns(X: list) -> int | None:
    """Columns per token of the first token of ``X`` (None if it cannot be seen cheaply)."""
    for sent in X:
        if isinstance(sent, (list, tuple)) and sent:
            tok = sent[0]
            return 1 if isinstance(tok, str) else len(tok) if isinstance(tok, (tuple, list)) else None
    return None


def _sentence_rows(sent, si: int, need: int) -> list[tuple]:
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


def expand(templates: Templates | str, sentence: Sequence[Any], *,
           tags: Callable[[int, str], str] | None = None, _si: int = 0) -> list[list[str]]:
    """Attributes of every token of one sentence, as strings (the reference path).

    Parameters
    ----------
    templates : Templates, preset name or template text
    sentence : list of tokens
        Each token is a str or a tuple/list of column strings.
    tags : callable, optional
        ``tags(column, string)`` gives the value of ``%x[row,column:tags]``
        (e.g. :meth:`cseq.tagdict.TagDictionary.lookup`); needed when the
        templates use ``tags``.

    Returns
    -------
    list of list of str
        One list per token, one attribute per ``U`` template, e.g.
        ``["U00:_B-2", "U01:_B-1", "U02:Confidence", ...]``.

    Examples
    --------
    >>> expand("U05:%x[-1,0]/%x[0,0]", ["of", "the"])
    [['U05:_B-1/of'], ['U05:of/the']]
    """
    tpl = _as_templates(templates)
    if tpl.tag_columns and tags is None:
        raise InputError("the templates use the 'tags' token function: pass tags=")
    rows = _sentence_rows(sentence, _si, tpl.n_columns)
    n = len(rows)
    out = []
    for i in range(n):
        feats = []
        for t in tpl.templates:
            values = []
            for c in t.cells:
                j = i + c.row
                if j < 0:
                    values.append(_pad(-j))
                elif j >= n:
                    values.append(_pad(n - 1 - j))
                elif c.func is None:
                    values.append(rows[j][c.col])
                elif c.func == TAGS:
                    values.append(tags(c.col, rows[j][c.col]))  # type: ignore[misc]
                else:
                    values.append(TOKEN_FUNCTIONS[c.func](rows[j][c.col]))
            feats.append(t.render(values))
        out.append(feats)
    return out


# --------------------------------------------------------------------------
# The compiled featurizer
# --------------------------------------------------------------------------


class _Interned:
    """One corpus as interned cells: what the compiled kernels and names need."""

    __slots__ = ("values", "hashes", "slot_ids", "seq_ptr", "pad_before", "pad_after", "words",
                 "word_slots")


class TransformChunks:
    """A corpus interned by :meth:`TemplateFeaturizer.transform_chunks`.

    ``len(chunks)`` chunks of consecutive sentences; ``chunks.block(k)`` is
    the slice of the corpus that chunk ``k`` covers and
    ``chunks.sequences(k)`` packs it.  Read-only once made: threads may
    pack different chunks at the same time.
    """

    def __init__(self, featurizer: "TemplateFeaturizer", data: _Interned | None, memo: Any,
                 max_tokens: int | None, min_chunks: int = 1, *,
                 whole: Sequences | None = None) -> None:
        self._f, self._data, self._memo, self._whole = featurizer, data, memo, whole
        if data is None:
            self._bounds = [0, whole.n_sequences if whole is not None else 0]
            return
        ptr = data.seq_ptr
        n_seq, n_tok = len(ptr) - 1, int(ptr[-1])
        size = n_tok if max_tokens is None else max_tokens
        size = max(1, min(size, -(-n_tok // max(min_chunks, 1))))
        if n_seq <= 1 or n_tok <= size:
            self._bounds = [0, n_seq]
        else:
            # A chunk ends with the first sentence that reaches each multiple of size.
            ends = np.searchsorted(ptr[1:], np.arange(size, n_tok, size))
            self._bounds = sorted({0, n_seq, *(int(e) + 1 for e in ends if e + 1 < n_seq)})

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def block(self, k: int) -> slice:
        """The sentences of chunk ``k``."""
        return slice(self._bounds[k], self._bounds[k + 1])

    def sequences(self, k: int, *, n_jobs: int = 1, without_memo: bool = False) -> Sequences:
        """Chunk ``k`` packed, as :meth:`TemplateFeaturizer.transform` packs it.

        With ``without_memo``, less the attributes :meth:`memo_attributes`
        gives per word for the tokens that read them: the caller adds those
        (``LinearChain.decode``'s ``word_rows``, with :meth:`words`).
        """
        f, data = self._f, self._data
        if data is None:
            if without_memo:
                raise ValueError("a hashed featurizer has no memo attributes")
            return self._whole
        s0, s1 = self._bounds[k], self._bounds[k + 1]
        t0, t1 = int(data.seq_ptr[s0]), int(data.seq_ptr[s1])
        seq_ptr = data.seq_ptr[s0:s1 + 1] - t0 if t0 else data.seq_ptr[s0:s1 + 1]
        attr, tok_ptr = f._table.lookup_packed(
            data.slot_ids[t0:t1], data.hashes, seq_ptr, f._tmpl_ptr, f._cell_row,
            f._cell_slot, f._seeds, data.pad_before, data.pad_after, data.words[t0:t1],
            self._memo, resolve_n_jobs(n_jobs), without_memo)
        return Sequences.packed(np.ascontiguousarray(seq_ptr), tok_ptr, attr,
                                np.ones(len(attr), dtype=VALUE))

    def words(self, k: int) -> np.ndarray:
        """int32 (n_tokens, n_columns): the word id of each token of chunk ``k`` in each column."""
        if self._data is None:
            raise ValueError("a hashed featurizer has no word ids")
        data, s0, s1 = self._data, self._bounds[k], self._bounds[k + 1]
        return data.words[int(data.seq_ptr[s0]):int(data.seq_ptr[s1])]

    def memo_attributes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The attributes of the templates that read one cell, per distinct word (None: none).

        Returns ``(ids, group, groups)``: ``ids`` int32 (n_words, n_memo),
        the attribute id of memo template ``j`` read on word ``w`` (-1 when
        the table lacks it; -2 when it is looked up per token, which
        :meth:`sequences` then keeps); ``group`` (n_memo,) the group of each
        memo template; ``groups`` int32 (n_groups, 2), the column and row
        offset every template of a group reads.  A token whose row
        ``t + offset`` is in its sentence has, from group ``g``, the
        attributes ``ids[words[t + offset, col], group == g]``.
        """
        f = self._f
        if self._data is None or self._memo.n_memo == 0:
            return None
        return self._memo.memo_ids, f._memo_group, f._memo_groups


def _dense_ids(ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(ids, return_inverse=True)`` for ids in ``[0, n)``, in O(len(ids) + n)."""
    seen = np.zeros(n, dtype=bool)
    seen[ids] = True
    used = np.flatnonzero(seen)
    rank = np.cumsum(seen, dtype=np.int64) - 1
    return used, rank[ids]


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lens)])``, vectorized."""
    before = np.cumsum(lens) - lens
    return np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - before, lens)


def _le(dtype) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


@register_featurizer
class TemplateFeaturizer:
    """Turn token columns into packed attribute ids through feature templates.

    Parameters
    ----------
    templates : str or Templates, default "pos"
        A preset name (``"pos"``, ``"chunk"``, ``"ner"``), template file text,
        or a :class:`Templates`.
    min_freq : int, default 1
        Attributes seen fewer than ``min_freq`` times by :meth:`fit_transform`
        are dropped; the kept ones get dense ids ``0 .. n_attributes - 1`` in
        order of first appearance.
    n_buckets : int or None, default None
        Hashing mode: the attribute id is ``key % n_buckets`` and no table is
        stored (bounded memory; distinct attributes may share a bucket).
        ``min_freq`` must then be 1.  At most :data:`MAX_BUCKETS` (2**24):
        every bucket costs the model memory, used or not.

    Attributes
    ----------
    n_columns_ : int or None
        Columns per token of the training data (``fit_transform``), kept in
        model files: ``cseq tag`` uses it to notice a label column left in its
        input.  None before fitting, or for models saved without it.

    Notes
    -----
    Attribute identity is a 64-bit hash of the template's literal text and the
    UTF-8 bytes of the values it reads (see ``docs/templates.md``: two distinct
    attribute strings share a key with probability about ``n**2 / 2**65`` for
    ``n`` distinct attributes).  A fitted featurizer keeps, per attribute, its
    template and the strings it read, so :meth:`attribute_names` works after
    :meth:`from_state` too.

    Examples
    --------
    >>> f = TemplateFeaturizer("U00:%x[0,0:lower]\\nU01:%x[-1,0]")
    >>> seqs = f.fit_transform([["The", "cat"], ["the", "dog"]])
    >>> f.n_attributes, seqs.n_tokens
    (6, 4)
    >>> f.attribute_names()[:3]
    ['U00:the', 'U01:_B-1', 'U00:cat']
    """

    kind = "templates"
    #: Names of the arrays :meth:`get_state` may return (none in hashing mode).
    STATE_ARRAYS = frozenset({"keys", "name_template", "name_cells", "strings", "string_ptr",
                              *TagDictionary.ARRAYS})

    def __init__(self, templates: str | Templates = "pos", *, min_freq: int = 1,
                 n_buckets: int | None = None) -> None:
        self.templates = _as_templates(templates)
        if not self.templates.templates:
            raise InputError("the templates define no unigram (U) template")
        if isinstance(min_freq, bool) or not isinstance(min_freq, (int, np.integer)):
            raise InputTypeError(f"min_freq must be an int, not {type(min_freq).__name__}")
        if min_freq < 1:
            raise InputError(f"min_freq must be >= 1, got {min_freq}")
        if n_buckets is not None:
            if isinstance(n_buckets, bool) or not isinstance(n_buckets, (int, np.integer)):
                raise InputTypeError(
                    f"n_buckets must be an int or None, not {type(n_buckets).__name__}"
                )
            if not 1 <= n_buckets <= MAX_BUCKETS:
                raise InputError(f"n_buckets must be in [1, 2**24] (every bucket is an "
                                 f"attribute of the model, used or not), got {n_buckets}")
            if min_freq != 1:
                raise InputError("min_freq needs an attribute table; use min_freq=1 with n_buckets")
            n_buckets = int(n_buckets)
        self.min_freq = int(min_freq)
        self.n_buckets = n_buckets
        self._compile_spec()
        self._table = None  # KeyTable once fitted (table mode)
        self._name_template = None  # int32 (n_attributes,)
        self._name_cells = None  # int32, the cells of each attribute, concatenated
        self._name_strings = None  # list of str the cells index (see _strings)
        self._name_blob = None  # or those strings as stored in a file: (UTF-8 blob, offsets)
        self._names = None  # cached names: {Template method: list} (_render_names)
        self._tags: TagDictionary | None = None  # the classes of ``tags`` cells, once fitted
        self.n_columns_: int | None = None  # columns per token in training, once fitted

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters (scikit-learn convention; ``deep`` is ignored)."""
        return {"templates": self.templates, "min_freq": self.min_freq,
                "n_buckets": self.n_buckets}

    def set_params(self, **params: Any) -> TemplateFeaturizer:
        """Set constructor parameters, checked as the constructor checks them.

        The featurizer becomes unfitted.  Returns self.
        """
        unknown = set(params) - {"templates", "min_freq", "n_buckets"}
        if unknown:
            raise InputError(f"TemplateFeaturizer has no parameter {sorted(unknown)[0]!r}")
        merged = {**self.get_params(), **params}
        self.__init__(merged.pop("templates"), **merged)  # type: ignore[misc]
        return self

    def get_config(self) -> dict:
        """JSON-able configuration (no fitted state); :meth:`from_config` rebuilds it."""
        return {"kind": "templates", "templates": self.templates.text,
                "min_freq": self.min_freq, "n_buckets": self.n_buckets}

    @classmethod
    def from_config(cls, config: dict) -> "TemplateFeaturizer":
        """An unfitted featurizer from :meth:`get_config` output; ModelFormatError if invalid."""
        try:
            return cls(config["templates"], min_freq=config["min_freq"],
                       n_buckets=config["n_buckets"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"bad template featurizer configuration: {exc}") from None

    def fresh(self) -> "TemplateFeaturizer":
        """An unfitted featurizer with the same templates and options (used by ``fit``)."""
        return TemplateFeaturizer(self.templates, min_freq=self.min_freq, n_buckets=self.n_buckets)

    def copy(self) -> "TemplateFeaturizer":
        """A copy that :meth:`partial_fit_transform` may grow, leaving this one as it is.

        ``partial_fit`` grows a copy while readers keep looking attributes
        up in this featurizer (copy-on-write, :mod:`cseq.fitted`).  The
        attribute table is copied (:meth:`KeyTable.copy`, memory speed); the
        rest is shared, as nothing replaces it in place: growing assigns
        new name arrays and lists, and the tag dictionary is the first
        batch's for good.
        """
        out = copy.copy(self)
        if self._table is not None:
            out._table = self._table.copy()
        return out

    # -- template spec as arrays ----------------------------------------------

    def _compile_spec(self) -> None:
        tpl = self.templates.templates
        self._tag_columns = self.templates.tag_columns
        cells = [list(t.cells) for t in tpl]
        slots: dict[tuple[int, str | None], int] = {}
        rows, cell_slots, ptr = [], [], [0]
        for t_cells in cells:
            for c in t_cells:
                key = (c.col, c.func)
                if key not in slots:
                    slots[key] = len(slots)
                rows.append(c.row)
                cell_slots.append(slots[key])
            ptr.append(len(rows))
        self._slots = list(slots)  # (column, function) of each slot
        self._columns = sorted({col for col, _ in self._slots})
        # Positions by dict, not list.index: a template set may read thousands
        # of columns, and a model file's header chooses it.
        col_pos = {col: k for k, col in enumerate(self._columns)}
        self._col_index = np.asarray(self._columns, dtype=np.int32)
        self._slot_col = np.asarray([col_pos[c] for c, _ in self._slots], np.int32)
        # A ``tags`` slot is computed as ``lower`` (the key of the tag
        # dictionary), then its values are replaced by the classes
        # (_tags_interned, _tags_hashed): a slot of its own, apart from ``lower``.
        self._slot_func = np.asarray(
            [-1 if f is None else _tokens.FUNCTIONS.index("lower" if f == TAGS else f)
             for _, f in self._slots], np.int32
        )
        self._tag_slots = [slots[(c, TAGS)] for c in self._tag_columns]
        # Templates that read one column of one row are looked up once per
        # distinct string of that column (KeyTable.word_memo): when tagging,
        # whatever the row; when fitting, those of the current row.
        one = [bool(tc) and all(c.row == tc[0].row and c.col == tc[0].col for c in tc)
               for tc in cells]
        self._memo_col = np.asarray(
            [col_pos[tc[0].col] if ok else -1 for tc, ok in zip(cells, one)],
            dtype=np.int32)
        self._memo_row = np.asarray([tc[0].row if ok else 0 for tc, ok in zip(cells, one)],
                                    dtype=np.int32)
        # The memo templates grouped by the (column, row) they read, for
        # TransformChunks.memo_attributes: fixed by the templates, so built here
        # once rather than per transform.
        memo = self._memo_col >= 0
        pairs = np.stack([self._memo_col[memo], self._memo_row[memo]], axis=1).reshape(-1, 2)
        groups, group = np.unique(pairs, axis=0, return_inverse=True)
        self._memo_group = group.reshape(-1).astype(np.int32)
        self._memo_groups = np.ascontiguousarray(groups, dtype=np.int32)
        # When fitting, a word's jackknifed class depends on its sentence's
        # fold, not on the word alone: templates with ``tags`` are not memoized.
        tagged = np.asarray([any(c.func == TAGS for c in tc) for tc in cells], dtype=bool)
        self._fit_memo_col = np.where((self._memo_row == 0) & ~tagged, self._memo_col,
                                      -1).astype(np.int32)
        self._cell_row = np.asarray(rows, dtype=np.int32)
        self._cell_slot = np.asarray(cell_slots, dtype=np.int32)
        self._tmpl_ptr = np.asarray(ptr, dtype=np.int32)
        self._n_cells = np.diff(self._tmpl_ptr).astype(np.int32)
        self._seeds = _templates.hash_strings([t.skeleton for t in tpl])
        self._max_offset = self.templates.max_offset
        self._need = self.templates.n_columns

    # -- the tags function ---------------------------------------------------------

    @property
    def needs_labels(self) -> bool:
        """Whether :meth:`fit_transform` needs ``y``: the templates use ``:tags``."""
        return bool(self._tag_columns)

    def _tags_interned(self, data: _Interned, y: Sequence[Sequence[str]] | None = None,
                       folds: list | None = None, first_sequence: int = 0) -> None:
        """Put the classes of the ``tags`` slots in ``data`` (from :meth:`_intern`).

        The slots hold each token's lowercased cell (the ``lower`` value);
        they get its class instead, interned like every value: with ``y``,
        a new dictionary is learned and the tokens get their jackknifed
        classes (:func:`cseq.tagdict.jackknife`, sentence ``i`` in fold
        ``i % FOLDS``); with ``folds`` (:meth:`tag_folds`), the jackknifed
        classes of a part of a corpus that starts at sentence
        ``first_sequence``; without either, the fitted dictionary's classes.
        """
        if not self._tag_columns:
            return
        lengths = np.diff(data.seq_ptr)
        fold = np.repeat((first_sequence + np.arange(len(lengths), dtype=np.int64)) % FOLDS,
                         lengths)
        if y is not None:
            label_ids: dict[str, int] = {}
            labels = _pack.pack_labels(y, data.seq_ptr, label_ids, True, True)
            names = [""] * len(label_ids)
            for name, i in label_ids.items():
                names[i] = name
        tables = []
        for k, s in enumerate(self._tag_slots):
            lowered, inv = _dense_ids(data.slot_ids[:, s], len(data.values))
            words = data.values.strings(lowered.tolist())
            if y is not None:
                whole, per_fold, classes = jackknife(inv, len(words), labels, names, fold)
                per_token = per_fold[inv, fold]
                tables.append(dict(zip(words, [classes[c] for c in whole.tolist()])))
            elif folds is not None:
                word_id, per_fold, classes = folds[k]
                try:
                    ids = np.asarray([word_id[w] for w in words], dtype=np.int64)
                except KeyError as exc:
                    raise InputError(f"the tag folds do not know the string {exc.args[0]!r}: "
                                     "they come from other data") from None
                per_token = per_fold[ids[inv], fold] if len(words) else inv
            else:
                table = self._tags.tables[k]  # type: ignore[union-attr]
                classes = [table.get(w, UNKNOWN_CLASS) for w in words]
                per_token = inv
            data.slot_ids[:, s] = _tokens.intern_strings(data.values, classes)[per_token]
        if y is not None:
            self._tags = TagDictionary(tables, self._tag_columns)
        data.hashes = data.values.hashes()

    def _tags_hashed(self, data: _Interned) -> None:
        """:meth:`_tags_interned` for :meth:`_intern_lookup`'s hashed values: the
        hash of each cell string's class, by the fitted dictionary."""
        for k, s in enumerate(self._tag_slots):
            ids = data.word_slots[:, s]
            present = np.flatnonzero(ids >= 0)
            table = self._tags.tables[k]  # type: ignore[union-attr]
            classes = [table.get(w.lower(), UNKNOWN_CLASS)
                       for w in data.values.strings(present.tolist())]
            data.hashes[ids[present]] = _templates.hash_strings(classes)

    # -- interning ---------------------------------------------------------------

    def _intern(self, X) -> _Interned:
        X = _check_corpus(X)
        out = _Interned()
        (out.values, out.slot_ids, lengths, out.pad_before, out.pad_after, out.words,
         out.word_slots) = _tokens.intern_columns(
            X, self._need, self._col_index, self._slot_col, self._slot_func,
            self._max_offset, _sentence_rows,
        )
        out.hashes = out.values.hashes()
        out.seq_ptr = np.zeros(len(X) + 1, dtype=INDEX)
        np.cumsum(lengths, out=out.seq_ptr[1:])
        return out

    def _intern_lookup(self, X, n_jobs: int = 1) -> _Interned:
        """:meth:`_intern` for looking attributes up: token function values
        hashed, not interned (``_tokens.intern_for_lookup``)."""
        X = _check_corpus(X)
        out = _Interned()
        (out.values, out.slot_ids, lengths, out.pad_before, out.pad_after, out.words,
         out.word_slots, out.hashes) = _tokens.intern_for_lookup(
            X, self._need, self._col_index, self._slot_col, self._slot_func,
            self._max_offset, _sentence_rows, n_jobs,
        )
        out.seq_ptr = np.zeros(len(X) + 1, dtype=INDEX)
        np.cumsum(lengths, out=out.seq_ptr[1:])
        return out

    def _key_args(self, data: _Interned) -> tuple:
        """The arguments of :func:`cseq._templates.extract_keys` for ``data``."""
        return (data.slot_ids, data.hashes, data.seq_ptr, self._tmpl_ptr, self._cell_row,
                self._cell_slot, self._seeds, data.pad_before, data.pad_after)

    @staticmethod
    def _pack(ids: np.ndarray, seq_ptr: np.ndarray) -> Sequences:
        """Drop ids < 0 and pack the rest, row by row, into a Sequences."""
        n_tok = ids.shape[0]
        tok_ptr = np.zeros(n_tok + 1, dtype=INDEX)
        if ids.size and ids.min() < 0:
            keep = ids >= 0
            np.cumsum(keep.sum(axis=1), out=tok_ptr[1:])
            attr = np.ascontiguousarray(ids[keep], dtype=ATTR)
        else:
            np.cumsum(np.full(n_tok, ids.shape[1], dtype=INDEX), out=tok_ptr[1:])
            attr = np.ascontiguousarray(ids.reshape(-1), dtype=ATTR)
        return Sequences(
            seq_ptr=seq_ptr,
            tok_ptr=tok_ptr,
            attr_ids=attr,
            values=np.ones(len(attr), dtype=VALUE),
            labels=None,
        )

    # -- the interface -----------------------------------------------------------

    def fit_transform(self, X: Sequence[Any], y: Sequence[Sequence[str]] | None = None
                      ) -> Sequences:
        """Learn the attribute table from ``X`` and return ``X`` packed.

        Parameters
        ----------
        X : list of sentences
            Each sentence is a list of tokens; a token is a str or a
            tuple/list of column strings.
        y : list of label sequences, optional
            Needed when the templates use ``:tags`` (:attr:`needs_labels`):
            the tag dictionary is learned from them, and ``X``'s own classes
            are jackknifed (:mod:`cseq.tagdict`).  Otherwise ignored.

        Returns
        -------
        Sequences
            ``labels`` is None.
        """
        X = _check_corpus(X)
        self.n_columns_ = _n_columns(X)
        if self._tag_columns and y is None:
            raise InputError("the templates use the 'tags' token function, which is "
                             "learned from labels: fit with y (an estimator's fit does)")
        data = self._intern(X)
        self._tags_interned(data, y)
        return self._learn(data)

    def _learn(self, data: _Interned) -> Sequences:
        """Learn the attribute table from interned ``data`` and return it packed."""
        if self.n_buckets is not None:
            self._names = None
            return self._pack(self._bucket(data), data.seq_ptr)
        table = _templates.KeyTable()
        ids = table.add_tokens(*self._key_args(data), data.words, data.word_slots,
                               self._fit_memo_col)
        first_tok, first_tmpl = table.first_token, table.first_template
        keep = table.counts >= self.min_freq
        if not keep.all():
            kept = np.flatnonzero(keep)
            remap = np.full(len(table), -1, dtype=np.int32)
            remap[kept] = np.arange(len(kept), dtype=np.int32)
            ids = remap[ids]
            table = _templates.KeyTable.from_keys(table.keys[kept])
            first_tok, first_tmpl = first_tok[kept], first_tmpl[kept]
        self._store_names(data, first_tok, first_tmpl)
        self._table = table
        self._names = None
        return self._pack(ids, data.seq_ptr)

    def partial_fit_transform(self, X: Sequence[Any], y: Sequence[Sequence[str]] | None = None
                              ) -> Sequences:
        """Add the attributes of ``X`` not yet in the table, then pack ``X``.

        Known attributes keep their ids and new ones are appended in order of
        first appearance, so fitting ``A`` and then ``B`` numbers every
        attribute as fitting ``A + B`` at once does (what ``partial_fit``
        needs).  An unfitted featurizer is fitted by :meth:`fit_transform`
        (with ``y`` when the templates use ``:tags``); in hashing mode nothing
        is learnt.  The ``tags`` dictionary is the first batch's: later
        batches read their classes from it, as new text does.

        Raises
        ------
        InputError
            With ``min_freq > 1``: a frequency cut needs the whole corpus.
        """
        if self.min_freq != 1:
            raise InputError(f"min_freq={self.min_freq} counts attributes over the whole corpus: "
                             "training in batches needs min_freq=1 (or n_buckets)")
        if (self.n_buckets is None and self._table is None) or (
                self._tag_columns and self._tags is None):
            return self.fit_transform(X, y)
        X = _check_corpus(X)
        if self.n_columns_ is None:
            self.n_columns_ = _n_columns(X)
        data = self._intern(X)
        self._tags_interned(data)
        if self.n_buckets is not None:
            return self._pack(self._bucket(data), data.seq_ptr)
        table = self._table
        old = len(table)
        strings = self._strings()
        ids = table.add_tokens(*self._key_args(data), data.words, data.word_slots,
                               self._fit_memo_col)
        if len(table) > old:
            tmpl, cells, new_strings = self._names_of(data, table.first_token[old:],
                                                      table.first_template[old:])
            self._name_template = np.concatenate([self._name_template, tmpl]).astype(np.int32)
            self._name_cells = np.concatenate(
                [self._name_cells, cells + np.int32(len(strings))]).astype(np.int32)
            self._name_strings = list(strings) + new_strings
            self._name_blob = None
            self._names = None
        return self._pack(ids, data.seq_ptr)
    def fit_part(self, X: Sequence[Any], tags: tuple | None = None,
                 first_sequence: int = 0) -> "TemplateFeaturizer":
        """A featurizer fitted on ``X`` alone, every attribute kept and counted: a part for :meth:`merge`.

        ``min_freq`` is not applied (it applies to the whole corpus, in
        :meth:`merge`).  ``self`` is left unchanged.  Used by
        :mod:`cseq.distributed`, where each partition of a corpus learns its
        attributes on its worker.  With ``:tags`` templates, ``tags`` is
        :meth:`tag_folds` of the whole corpus and ``X`` its sentences
        ``first_sequence, ...``.
        """
        part = TemplateFeaturizer(self.templates, min_freq=1, n_buckets=self.n_buckets)
        if self._tag_columns:
            if tags is None:
                raise InputError("templates with ':tags' (such as the pos preset) need the "
                                 "tag folds of the whole corpus (tag_counts, then tag_folds) "
                                 "to fit on a part")
            X = _check_corpus(X)
            part.n_columns_ = _n_columns(X)
            part._tags = tags[0]
            data = part._intern(X)
            part._tags_interned(data, folds=tags[1], first_sequence=first_sequence)
            part._learn(data)
        else:
            part.fit_transform(X)
        part.counts_ = part._table.counts if part._table is not None else None
        return part

    # -- tags over the parts of a corpus (cseq.distributed) ----------------------

    def tag_counts(self, X: Sequence[Any], y: Sequence[Sequence[str | None]],
                   first_sequence: int = 0) -> dict[str, Any]:
        """The label counts behind the ``tags`` classes of a part of a corpus.

        ``X`` and ``y`` are the sentences ``first_sequence, ...`` of the
        whole corpus (their folds are ``(first_sequence + i) % FOLDS``).
        Returns a dict of plain lists and arrays for :meth:`tag_folds`: the
        labels, and per tag column the lowercased strings and the
        ``(string, label, fold)`` entries with their counts.
        """
        X = _check_corpus(X)
        data = self._intern(X)
        label_ids: dict[str, int] = {}
        labels = _pack.pack_labels(y, data.seq_ptr, label_ids, True, True)
        lengths = np.diff(data.seq_ptr)
        fold = np.repeat((first_sequence + np.arange(len(lengths), dtype=np.int64)) % FOLDS,
                         lengths)
        columns = []
        for s in self._tag_slots:
            lowered, inv = _dense_ids(data.slot_ids[:, s], len(data.values))
            keys, counts = np.unique(np.stack([inv, labels.astype(np.int64), fold]), axis=1,
                                     return_counts=True)
            columns.append({"words": data.values.strings(lowered.tolist()),
                            "entries": keys, "counts": counts})
        return {"labels": sorted(label_ids, key=label_ids.__getitem__), "columns": columns}

    def tag_folds(self, parts: Sequence[dict[str, Any]]) -> tuple[TagDictionary, list]:
        """The tag dictionary and jackknifed classes of a corpus from its parts' :meth:`tag_counts`.

        Returns ``(dictionary, folds)``: the dictionary ``fit_transform`` of
        the whole corpus learns, and per tag column ``(string -> id,
        classes per id and fold, class names)``, which :meth:`fit_part` and
        :meth:`transform_part` give each part's tokens (the classes
        ``fit_transform`` gives them).
        """
        labels = sorted(set().union(*(p["labels"] for p in parts)))
        label_id = {name: i for i, name in enumerate(labels)}
        tables, folds = [], []
        for k in range(len(self._tag_slots)):
            word_id: dict[str, int] = {}
            ws, ls, fs, cs = [], [], [], []
            for p in parts:
                col = p["columns"][k]
                gw = np.asarray([word_id.setdefault(w, len(word_id)) for w in col["words"]],
                                dtype=np.int64)
                # Local label ids -> merged ones; -1 (unknown) stays -1.
                lmap = np.asarray([label_id[n] for n in p["labels"]] + [-1], dtype=np.int64)
                e = np.asarray(col["entries"], dtype=np.int64).reshape(3, -1)
                ws.append(gw[e[0]])
                ls.append(lmap[e[1]])
                fs.append(e[2])
                cs.append(np.asarray(col["counts"], dtype=np.int64))
            cat = (lambda a: np.concatenate(a) if a else np.zeros(0, dtype=np.int64))  # noqa: E731
            whole, per_fold, names = jackknife(cat(ws), len(word_id), cat(ls), labels, cat(fs),
                                               count=cat(cs))
            tables.append(dict(zip(word_id, [names[c] for c in whole.tolist()])))
            folds.append((word_id, per_fold, names))
        return TagDictionary(tables, self._tag_columns), folds

    def transform_part(self, X: Sequence[Any], folds: list, first_sequence: int = 0
                       ) -> Sequences:
        """Pack the sentences ``first_sequence, ...`` of a training corpus with
        their jackknifed ``tags`` classes (``folds`` from :meth:`tag_folds`),
        as :meth:`fit_transform` of the whole corpus packs them."""
        self._check_fitted()
        X = _check_corpus(X)
        data = self._intern(X)
        self._tags_interned(data, folds=folds, first_sequence=first_sequence)
        if self.n_buckets is not None:
            return self._pack(self._bucket(data), data.seq_ptr)
        ids = self._table.lookup_tokens(*self._key_args(data), data.words, data.word_slots,
                                        self._fit_memo_col)
        return self._pack(ids, data.seq_ptr)

    def merge(self, parts: Sequence["TemplateFeaturizer"]) -> "TemplateFeaturizer":
        """The featurizer :meth:`fit_transform` learns from the parts' corpora concatenated.

        ``parts`` are :meth:`fit_part` results in corpus order.  The counts
        of an attribute are summed over the parts before ``min_freq`` is
        applied, and the kept attributes are numbered in order of first
        appearance, so the attribute ids (and names) are those a single
        ``fit_transform`` of the whole corpus gives.  Returns a new fitted
        featurizer; ``self`` is left unchanged.
        """
        merged = self.fresh()
        merged.n_columns_ = next((p.n_columns_ for p in parts if p.n_columns_ is not None), None)
        merged._tags = next((p._tags for p in parts if p._tags is not None), None)
        if self.n_buckets is not None:
            return merged
        parts = [p for p in parts if p._table is not None and len(p._table)]
        if any(getattr(p, "counts_", None) is None for p in parts):
            raise InputError("TemplateFeaturizer.merge takes the results of fit_part")
        if not parts:
            merged._table = _templates.KeyTable()
            merged._name_template = np.zeros(0, dtype=np.int32)
            merged._name_cells = np.zeros(0, dtype=np.int32)
            merged._name_strings = []
            return merged
        keys = np.concatenate([p._table.keys for p in parts])
        counts = np.concatenate([p.counts_ for p in parts])
        owner = np.repeat(np.arange(len(parts)), [len(p._table) for p in parts])
        local = np.concatenate([np.arange(len(p._table)) for p in parts])
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        total = np.zeros(len(uniq), dtype=np.int64)
        np.add.at(total, inverse.reshape(-1), counts)
        # Unique keys in order of first appearance, then min_freq.
        order = np.argsort(first, kind="stable")
        order = order[total[order] >= self.min_freq]
        pos = first[order]
        merged._table = _templates.KeyTable.from_keys(np.ascontiguousarray(uniq[order]))
        # Names: each kept attribute's template and cells from the part where it first appears.
        where = owner[pos]
        name_template = np.empty(len(pos), dtype=np.int32)
        for k, part in enumerate(parts):
            sel = where == k
            name_template[sel] = part._name_template[local[pos[sel]]]
        n_cells = self._n_cells[name_template].astype(np.int64)
        out_ptr = np.zeros(len(pos) + 1, dtype=np.int64)
        np.cumsum(n_cells, out=out_ptr[1:])
        name_cells = np.empty(int(out_ptr[-1]), dtype=np.int32)
        strings: dict[str, int] = {}
        for k, part in enumerate(parts):
            sel = np.flatnonzero(where == k)
            if not len(sel):
                continue
            ids = local[pos[sel]]
            part_ptr = np.zeros(len(part._name_template) + 1, dtype=np.int64)
            np.cumsum(part._n_cells[part._name_template], out=part_ptr[1:])
            remap = np.array([strings.setdefault(w, len(strings)) for w in part._strings()],
                             dtype=np.int32)
            lens = n_cells[sel]
            src = _ranges(part_ptr[ids], lens)
            dst = _ranges(out_ptr[sel], lens)
            name_cells[dst] = remap[part._name_cells[src]]
        merged._name_template = name_template
        merged._name_cells = name_cells
        merged._name_strings = list(strings)
        merged._name_blob = None
        merged._names = None
        return merged

    def _store_names(self, data: _Interned, tok: np.ndarray, tmpl: np.ndarray) -> None:
        """Record, per attribute, its template and the strings it read.

        ``tok`` and ``tmpl`` give, per attribute id, the token and template of
        its first occurrence in ``data``.
        """
        self._name_template, self._name_cells, self._name_strings = self._names_of(data, tok, tmpl)
        self._name_blob = None

    def _names_of(self, data: _Interned, tok: np.ndarray,
                  tmpl: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Template, cells and strings of attributes first seen at tokens ``tok``, templates ``tmpl``."""
        used, cells = _templates.name_cells(
            data.slot_ids,
            data.seq_ptr,
            self._tmpl_ptr,
            self._cell_row,
            self._cell_slot,
            data.pad_before,
            data.pad_after,
            np.ascontiguousarray(tok, dtype=np.int64),
            np.ascontiguousarray(tmpl, dtype=np.int32),
            len(data.values),
        )
        return tmpl, cells, data.values.strings(used.tolist())

    def _strings(self) -> list[str]:
        """The strings the attributes' cells index, decoded from the file on first use."""
        if self._name_strings is None and self._name_blob is not None:
            self._name_strings = decode_strings(*self._name_blob,
                                                "template featurizer string table")
        return self._name_strings

    def _bucket(self, data: _Interned) -> np.ndarray:
        keys = _templates.extract_keys(*self._key_args(data))
        return (keys % np.uint64(self.n_buckets)).astype(np.int32)

    def transform(self, X: Sequence[Any], *, n_jobs: int = 1) -> Sequences:
        """Pack ``X`` with the fitted attribute table.

        Attributes not in the table are dropped.  In hashing mode nothing is
        dropped and no fit is needed.  ``n_jobs`` threads look the keys up.
        """
        if self.n_buckets is not None:
            self._check_fitted()
            data = self._intern(_check_corpus(X))
            self._tags_interned(data)
            return self._pack(self._bucket(data), data.seq_ptr)
        self._check_fitted()
        n_jobs = resolve_n_jobs(n_jobs)
        chunks = self.transform_chunks(X, n_jobs=n_jobs, max_tokens=None)
        return chunks.sequences(0, n_jobs=n_jobs)

    def transform_chunks(self, X: Sequence[Any], *, n_jobs: int = 1, max_tokens: int | None = 8192,
                         min_chunks: int = 1) -> "TransformChunks":
        """``X`` interned once, to be packed a range of sentences at a time.

        The word-level work (cells interned, token functions, the attributes
        that read one word) is done here, for all of ``X``, in ``n_jobs``
        threads where it can; each chunk of at most about ``max_tokens``
        tokens (whole sentences; None: no limit), and at least
        ``min_chunks`` chunks when there are sentences enough, is then
        looked up when asked for, in any thread: :meth:`transform` of
        ``X[chunks.block(k)]`` is ``chunks.sequences(k)``, without arrays as
        large as all of ``X``'s features.  In hashing mode there is one chunk.
        """
        if self.n_buckets is not None:
            return TransformChunks(self, None, None, None, 1, whole=self.transform(X))
        self._check_fitted()
        n_jobs = resolve_n_jobs(n_jobs)
        data = self._intern_lookup(_check_corpus(X), n_jobs)
        self._tags_hashed(data)
        memo = self._table.word_memo(data.hashes, self._tmpl_ptr, self._cell_row,
                                     self._cell_slot, self._seeds, data.word_slots,
                                     self._memo_col, self._memo_row, n_jobs)
        return TransformChunks(self, data, memo, max_tokens, min_chunks)

    def _check_fitted(self) -> None:
        if (self.n_buckets is None and self._table is None) or (
                self._tag_columns and self._tags is None):
            raise NotFittedError("TemplateFeaturizer is not fitted: call fit_transform first")

    @property
    def n_attributes(self) -> int:
        """Number of attribute ids (``n_buckets`` in hashing mode)."""
        if self.n_buckets is not None:
            return self.n_buckets
        self._check_fitted()
        return len(self._table)

    @property
    def bigram(self) -> bool:
        """Whether the templates had a ``B`` line (recorded only)."""
        return self.templates.bigram

    def attribute_names(self) -> list[str]:
        """The attribute string of each attribute id, as CRF++ builds it: ``"U05:of/the"``.

        The identity of an attribute (what ``GreedyTagger(tag_dict="U05:")``
        matches, what CRF++ model files list); :meth:`feature_names` says what
        it tests.  In hashing mode a bucket cannot be named by the features
        that fall in it; the names are ``"hash[<id>]"``.
        """
        return self._render_names("render")

    def feature_names(self) -> list[str]:
        """What each attribute id tests, e.g. ``"%x[-1,0:lower]/%x[0,0:lower]=of/the"``.

        The names :func:`cseq.explain.feature_names` gives ``explain``,
        ``top_features``, ``cseq info`` and the report (see
        :meth:`Template.describe`); ``"hash[<id>]"`` in hashing mode.
        """
        return self._render_names("describe")

    def _render_names(self, how: str) -> list[str]:
        """Each attribute's name by the Template method ``how`` (``render``, ``describe``)
        from the strings it read; cached until the attributes change."""
        if self.n_buckets is not None:
            return [f"hash[{i}]" for i in range(self.n_buckets)]
        self._check_fitted()
        cached = self._names or {}
        if how not in cached:
            tpl = self.templates.templates
            strings = self._strings()
            cells = self._name_cells.tolist()
            names = []
            k = 0
            for t in self._name_template.tolist():
                tt = tpl[t]
                m = len(tt.cells)
                names.append(getattr(tt, how)([strings[c] for c in cells[k : k + m]]))
                k += m
            # A new dict, never one a copy of this featurizer may share.
            self._names = cached = {**cached, how: names}
        return list(cached[how])

    def keep_attributes(self, kept: np.ndarray) -> bool:
        """Keep only the attribute ids ``kept`` (ascending), renumbered ``0 .. len(kept) - 1``.

        Used to drop attributes a model gives no weight (e.g. after L1
        training), so that model files shrink.  Returns False, changing
        nothing, in hashing mode (bucket ids cannot be renumbered).
        """
        if self.n_buckets is not None:
            return False
        self._check_fitted()
        kept = np.asarray(kept, dtype=np.int64)
        counts = self._n_cells[self._name_template]
        ptr = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        lens = counts[kept].astype(np.int64)
        before = np.cumsum(lens) - lens
        cell_pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(ptr[kept] - before, lens)
        cells = self._name_cells[cell_pos]
        used, cells = np.unique(cells, return_inverse=True)
        strings = self._strings()
        self._table = _templates.KeyTable.from_keys(self._table.keys[kept])
        self._name_template = np.ascontiguousarray(self._name_template[kept])
        self._name_cells = np.ascontiguousarray(cells.reshape(-1), dtype=np.int32)
        self._name_strings = [strings[i] for i in used.tolist()]
        self._name_blob = None
        self._names = None
        return True

    def features_python(self, X: Sequence[Any]) -> list[list[list[str]]]:
        """The attributes of ``X`` as strings, by the plain-Python reference path.

        Slow; for tests and for checking a template file by eye.
        """
        X = _check_corpus(X)
        tags = None
        if self._tag_columns:
            self._check_fitted()
            tags = self._tags.lookup  # type: ignore[union-attr]
        return [expand(self.templates, sent, tags=tags, _si=si) for si, sent in enumerate(X)]

    # -- state -------------------------------------------------------------------

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and named little-endian arrays describing this featurizer.

        Arrays (table mode): ``keys`` (uint64, key of each attribute id),
        ``name_template`` (int32, template of each id), ``name_cells`` (int32,
        indices into the string table, the template's cell count per id,
        concatenated), ``strings`` (uint8, UTF-8 bytes) and ``string_ptr``
        (int64 offsets).  Hashing mode stores none of these.  With ``:tags``
        templates, in both modes, the tag dictionary's arrays too
        (:meth:`cseq.tagdict.TagDictionary.get_arrays`).
        """
        meta = {
            "kind": "templates",
            "format": STATE_FORMAT,
            "hash": HASH_SCHEME,
            "templates": self.templates.text,
            "min_freq": self.min_freq,
            "n_buckets": self.n_buckets,
            "bigram": self.templates.bigram,
            "n_columns": self.n_columns_,
        }
        self._check_fitted()
        tag_arrays = self._tags.get_arrays() if self._tags is not None else {}
        if self.n_buckets is not None:
            meta["n_attributes"] = self.n_buckets
            return meta, tag_arrays
        meta["n_attributes"] = len(self._table)
        if self._name_blob is not None:  # as loaded: the stored strings again
            table = {"blob": self._name_blob[0], "offsets": self._name_blob[1]}
        else:
            table = encode_strings(self._name_strings)
        arrays = {
            "keys": self._table.keys.astype(_le(np.uint64)),
            "name_template": self._name_template.astype(_le(np.int32)),
            "name_cells": self._name_cells.astype(_le(np.int32)),
            "strings": table["blob"],
            "string_ptr": table["offsets"],
            **tag_arrays,
        }
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> "TemplateFeaturizer":
        """Rebuild a featurizer from :meth:`get_state` output, checking everything.

        Raises
        ------
        ModelFormatError
            If anything is missing, of the wrong type or shape, out of range,
            or if the stored keys do not match the stored attribute names.
        """

        def bad(msg: str) -> ModelFormatError:
            return ModelFormatError(f"template featurizer state: {msg}")

        if not isinstance(meta, dict) or not isinstance(arrays, dict):
            raise bad("meta and arrays must be dicts")
        if meta.get("kind") != "templates":
            raise bad(f"kind is {meta.get('kind')!r}, expected 'templates'")
        if meta.get("format") != STATE_FORMAT:
            raise bad(f"unsupported format {meta.get('format')!r} (this cseq reads {STATE_FORMAT})")
        if meta.get("hash") != HASH_SCHEME:
            raise bad(f"hash scheme {meta.get('hash')!r} is not {HASH_SCHEME!r}")
        text = meta.get("templates")
        if not isinstance(text, str):
            raise bad("'templates' must be the template text")
        for key in ("min_freq", "n_attributes"):
            v = meta.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise bad(f"{key!r} must be a non-negative int")
        n_buckets = meta.get("n_buckets")
        if n_buckets is not None and (isinstance(n_buckets, bool) or not isinstance(n_buckets, int)):
            raise bad("'n_buckets' must be an int or null")
        n_columns = meta.get("n_columns")  # optional: files before 0.1 lack it
        if n_columns is not None and (isinstance(n_columns, bool) or not isinstance(n_columns, int)
                                      or n_columns < 1):
            raise bad("'n_columns' must be a positive int or null")
        try:
            obj = cls(text, min_freq=meta["min_freq"], n_buckets=n_buckets)
        except (InputError, InputTypeError) as exc:
            raise bad(str(exc)) from exc
        obj.n_columns_ = n_columns
        n_attr = meta["n_attributes"]
        if obj._tag_columns:
            obj._tags = TagDictionary.from_arrays(arrays, obj._tag_columns,
                                                  "template featurizer state")
        arrays = {k: v for k, v in arrays.items() if k not in TagDictionary.ARRAYS}
        if n_buckets is not None:
            if arrays:
                raise bad(f"hashing mode stores no arrays, got {sorted(arrays)}")
            if n_attr != n_buckets:
                raise bad("n_attributes differs from n_buckets")
            return obj

        expected = {
            "keys": np.uint64,
            "name_template": np.int32,
            "name_cells": np.int32,
            "strings": np.uint8,
            "string_ptr": np.int64,
        }
        if set(arrays) != set(expected):
            raise bad(f"arrays must be {sorted(expected)}, got {sorted(arrays)}")
        arr = {}
        for name, dtype in expected.items():
            a, want = arrays[name], np.dtype(dtype)
            if not isinstance(a, np.ndarray) or a.ndim != 1:
                raise bad(f"{name!r} must be a 1-d array")
            # Either byte order is fine; kind and width must match.
            if a.dtype.kind != want.kind or a.dtype.itemsize != want.itemsize:
                raise bad(f"{name!r} has dtype {a.dtype}, expected {want}")
            arr[name] = np.ascontiguousarray(a, dtype=want)
        keys, tmpl, cells = arr["keys"], arr["name_template"], arr["name_cells"]
        blob, sptr = arr["strings"], arr["string_ptr"]
        if len(keys) != n_attr or len(tmpl) != n_attr:
            raise bad("'keys' and 'name_template' must hold n_attributes entries")
        n_tmpl = len(obj.templates.templates)
        if n_attr and (tmpl.min() < 0 or tmpl.max() >= n_tmpl):
            raise bad("'name_template' out of range")
        counts = obj._n_cells[tmpl] if n_attr else np.zeros(0, np.int32)
        if len(cells) != int(counts.sum()):
            raise bad("'name_cells' length does not match the templates' cell counts")
        check_strings(blob, sptr, "template featurizer string table")
        if len(cells) and (cells.min() < 0 or cells.max() >= len(sptr) - 1):
            raise bad("'name_cells' out of range")
        # The keys must be exactly what the names hash to: catches corruption
        # and a template text that does not belong to these keys.  The
        # strings' UTF-8 bytes are hashed as stored, in C; they are made str
        # only when names are asked for.
        hashes = _templates.hash_pieces(blob, sptr)
        recomputed = _templates.attribute_keys(obj._seeds, obj._n_cells, tmpl, cells, hashes)
        if not np.array_equal(recomputed, keys):
            raise bad("attribute keys do not match their names (corrupted or wrong templates)")
        try:
            obj._table = _templates.KeyTable.from_keys(keys)
        except ValueError as exc:
            raise bad(str(exc)) from exc
        obj._name_template = tmpl
        obj._name_cells = cells
        obj._name_blob = (blob, sptr)
        return obj

    def __repr__(self) -> str:
        mode = f"n_buckets={self.n_buckets}" if self.n_buckets is not None else f"min_freq={self.min_freq}"
        return f"TemplateFeaturizer({self.templates!r}, {mode})"
