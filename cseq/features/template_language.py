"""The template language: CRF++ template syntax with cseq's token functions.

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

:class:`Templates` parses a template set; :func:`expand` is the plain-Python
reference of what a template set means, building every attribute as a
string (the compiled :class:`~cseq.features.featurizer.TemplateFeaturizer`
must give the same attributes; the tests compare the two).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

from cseq.exceptions import InputError, InputTypeError
from cseq.features.presets import PRESETS
from cseq.features.cluster_functions import cluster_bits, cluster_value
from cseq.features.token_functions import TAGS, TOKEN_FUNCTIONS, padding

__all__ = ["MAX_OFFSET", "MAX_COLUMN", "MAX_TEMPLATES", "MAX_TEMPLATE_CHARS", "Cell", "Template",
           "Templates", "as_templates", "expand", "preset"]

#: Largest ``|row|`` offset a template may use (padding strings are made per offset).
MAX_OFFSET = 1000
#: Largest column index a template may use.
MAX_COLUMN = 100_000
#: Most ``U`` templates, and most characters of template text, one template
#: set may have (real sets have tens to hundreds of lines).  A model file
#: carries the text and loading parses it, so these bound what a header's
#: templates can cost: about 1 KB of parsed objects per template (two copies).
MAX_TEMPLATES = 10_000
MAX_TEMPLATE_CHARS = 1 << 20


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
        if (func is not None and func not in TOKEN_FUNCTIONS and func != TAGS
                and cluster_bits(func) is None):
            known = ", ".join([*TOKEN_FUNCTIONS, TAGS, "cluster", "clusterN (N <= 64)"])
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



def preset(name: str) -> Templates:
    """The built-in template set ``name`` (``"pos"``, ``"chunk"`` or ``"ner"``)."""
    return Templates.preset(name)


def as_templates(templates) -> Templates:
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


def expand(templates: Templates | str, sentence: Sequence[Any], *,
           tags: Callable[[int, str], str] | None = None, clusters: Any = None,
           _si: int = 0) -> list[list[str]]:
    """Attributes of every token of one sentence, as strings (the reference path).

    Parameters
    ----------
    templates : Templates, preset name or template text
    sentence : list of tokens
        Each token is a str or a tuple/list of column strings.
    tags : callable, optional
        ``tags(column, string)`` gives the value of ``%x[row,column:tags]``
        (e.g. :meth:`cseq.features.tagdict.TagDictionary.lookup`); needed when the
        templates use ``tags``.
    clusters : cseq.features.clusters.Clusters, optional
        The table of the ``cluster`` functions; needed when the templates use them.

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
    tpl = as_templates(templates)
    if tpl.tag_columns and tags is None:
        raise InputError("the templates use the 'tags' token function: pass tags=")
    if clusters is None and any(cluster_bits(c.func) is not None for t in tpl for c in t.cells):
        raise InputError("the templates use a 'cluster' token function: pass clusters=")
    rows = sentence_rows(sentence, _si, tpl.n_columns)
    n = len(rows)
    out = []
    for i in range(n):
        feats = []
        for t in tpl.templates:
            values = []
            for c in t.cells:
                j = i + c.row
                if j < 0:
                    values.append(padding(-j))
                elif j >= n:
                    values.append(padding(n - 1 - j))
                elif c.func is None:
                    values.append(rows[j][c.col])
                elif c.func == TAGS:
                    values.append(tags(c.col, rows[j][c.col]))  # type: ignore[misc]
                elif cluster_bits(c.func) is not None:
                    values.append(cluster_value(clusters.path, rows[j][c.col], cluster_bits(c.func)))
                else:
                    values.append(TOKEN_FUNCTIONS[c.func](rows[j][c.col]))
            feats.append(t.render(values))
        out.append(feats)
    return out
