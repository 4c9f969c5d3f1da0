"""CRF++ text models (``crf_learn -t`` writes ``model.txt``) as cseq estimators.

The text model is five blocks separated by empty lines::

    version: 100            header: "name: value" lines (version, cost-factor,
    cost-factor: 1          maxid = number of weights, xsize = columns of x)
    maxid: 450
    xsize: 2

    B-NP                    the labels, in CRF++'s order
    ...

    U00:%x[-2,0]            the templates: U lines, then B lines
    B

    0 U00:_B-2              the feature strings with their first weight's id
    246 B

    0.5206891888815672      maxid weights, one per line
    ...

A feature string starting with ``U`` owns one weight per label
(``alpha[id + label]``), any other (a ``B`` template's) one per label pair
(``alpha[id + previous * L + label]``).  ``crf_test`` expands every template
at every token into a string and adds the weights of the strings it knows.

:func:`from_crfpp` gives the estimator cseq's :class:`~cseq.TemplateFeaturizer`
with the model's templates (the syntax is CRF++'s, with its ``_B-1``/``_B+1``
padding), so it reads raw CoNLL columns exactly as ``crf_test`` does.  cseq
keys an attribute by its template's literal text and the values its macros
read, where CRF++ keys the printed string; so each feature string is split
back into the values every template could have read to print it (``U05:a/b/c``
from ``U05:%x[-1,0]/%x[0,0]`` is ``a`` and ``b/c``, or ``a/b`` and ``c``),
and each such attribute gets that string's weights: the same strings score
the same weights.  Bare ``B`` templates are the transition matrix; a ``B``
template with macros (transitions conditioned on the input) has no
counterpart in cseq's chain and is refused.

``crf_test`` tags with the weights rounded to float32 (its binary model
stores them so) and a cost factor of 1 (its ``-c`` option), which cseq
reproduces; it sums each score in float32 where cseq sums in float64, so
marginals agree to about 1e-6 (``crf_test -v2`` prints six decimals).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

import numpy as np

from cseq.features import _templates
from cseq.chain import _chain
from cseq._core.dtypes import WEIGHT
from cseq.compat.crfsuite_model import check_label_pairs, fitted_crf
from cseq.learners.crf import CRF
from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.features import encode_strings
from cseq.io.serialize import read_file_bytes
from cseq.features.featurizer import TemplateFeaturizer
from cseq.features.featurizer_state import HASH_SCHEME, STATE_FORMAT

__all__ = ["from_crfpp", "crfpp_from_bytes"]

#: CRF++'s macro: ``%x[row,col]``, the row with an optional minus sign only (numbers
#: of more than 9 digits are refused, not parsed).
_CRFPP_MACRO = re.compile(r"%x\[(-?\d{1,9}),(\d{1,9})\]")
#: CRF++ pads at most 8 rows beyond either end (``_B-1`` .. ``_B-8``).
_MAX_ROW = 8
#: The work allowed to split the feature strings into template values: this many
#: steps per string, plus a constant.  A real model takes about one step per string
#: and template (values rarely hold a template's separator); the bound keeps a
#: crafted file from taking exponential time or making more attributes than
#: a small multiple of the weights it holds.
_STEPS_PER_STRING, _STEPS_EXTRA = 16, 100_000
#: CRF++ splits a line into columns at spaces and tabs: no value holds one.
_BLANKS = re.compile(r"[ \t]")


def _bad(msg: str) -> ModelFormatError:
    return ModelFormatError(f"CRF++ model: {msg}")


def _int(text: str, what: str) -> int:
    if not re.fullmatch(r"\d{1,18}", text):
        raise _bad(f"{what} {text[:40]!r} is not a non-negative integer")
    return int(text)


def _blocks(text: str) -> tuple[dict[str, str], list[str], list[str], list[str], list[str]]:
    """The header, labels, templates, feature lines and weight lines of a text model."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line == "" and len(blocks) < 5:
            blocks.append([])
        else:
            blocks[-1].append(line)
    if len(blocks) != 5:
        raise _bad(f"expected 5 blocks separated by empty lines (header, labels, templates, "
                   f"features, weights), found {len(blocks)}")
    header: dict[str, str] = {}
    for line in blocks[0]:
        name, sep, value = line.partition(": ")
        if not sep:
            raise _bad(f"header line {line[:60]!r} is not 'name: value'")
        header[name] = value.strip()
    return header, blocks[1], blocks[2], blocks[3], blocks[4]


def _check_template(line: str, xsize: int) -> None:
    """Refuse a template ``crf_test`` could not apply, or that cseq would read otherwise."""
    if line != line.strip():
        raise _bad(f"template {line!r} has leading or trailing blanks")
    rest = _CRFPP_MACRO.sub("", line)
    if "%" in rest:
        raise _bad(f"template {line!r} has a '%' that is not a CRF++ macro %x[row,col]")
    for m in _CRFPP_MACRO.finditer(line):
        row, col = int(m.group(1)), int(m.group(2))
        if abs(row) > _MAX_ROW or col >= xsize:
            raise _bad(f"template {line!r} reads row {m.group(1)}, column {m.group(2)}: CRF++ "
                       f"reads rows -{_MAX_ROW}..{_MAX_ROW} and columns 0..{xsize - 1}")


def _spend(budget: list[int]) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise _bad("the feature strings split into too many sets of template values (values "
                   "full of the templates' separators); this file is not a real model")


def _splits(body: str, pos: int, blank: int, seps: tuple[str, ...],
            budget: list[int]) -> list[tuple[str, ...]]:
    """Every way to cut ``body[pos:]`` into ``len(seps) + 1`` CRF++ values around ``seps``.

    A value is non-empty and holds no space or tab (CRF++ columns cannot):
    ``blank`` is the position of the first blank at or after ``pos`` (or
    ``len(body)``).  ``budget`` is a one-element count of steps left, shared
    by all calls: every value tried and every result spends one.
    """
    if not seps:
        if pos == len(body) or blank < len(body):
            return []
        _spend(budget)
        return [(body[pos:],)]
    out: list[tuple[str, ...]] = []
    sep, start = seps[0], pos + 1
    while True:
        j = body.find(sep, start)
        if j < 0 or j > blank:       # no more separators, or the value would hold a blank
            break
        _spend(budget)
        rest_at = j + len(sep)
        next_blank = blank if blank >= rest_at else _first_blank(body, rest_at)
        out.extend((body[pos:j],) + rest
                   for rest in _splits(body, rest_at, next_blank, seps[1:], budget))
        start = j + 1
    return out


def _first_blank(text: str, pos: int) -> int:
    m = _BLANKS.search(text, pos)
    return m.start() if m else len(text)


def _template_values(feature: str, parts: tuple[str, ...],
                     budget: list[int]) -> list[tuple[str, ...]]:
    """The values a template with literal ``parts`` could read to print ``feature``."""
    head, tail = parts[0], parts[-1]
    if len(parts) == 1:
        return [()] if feature == head else []
    if not (feature.startswith(head) and feature.endswith(tail)
            and len(feature) >= len(head) + len(tail)):
        return []
    body = feature[len(head):len(feature) - len(tail)]
    return _splits(body, 0, _first_blank(body, 0), parts[1:-1], budget)


def from_crfpp(path: str | os.PathLike[str], *, cost_factor: float = 1.0,
               encoding: str = "utf-8") -> CRF:
    """A fitted :class:`cseq.CRF` with the templates and weights of a CRF++ text model.

    ``path`` is the ``model.txt`` that ``crf_learn -t template train model``
    writes.  The estimator's featurizer is a :class:`~cseq.TemplateFeaturizer`
    with the model's templates, so it takes sentences as lists of tokens, each
    a tuple of column strings (the columns of ``crf_test``'s input), and
    ``cseq tag`` reads CoNLL files with it once saved.  ``predict`` gives
    ``crf_test``'s labels and ``predict_marginals`` its marginals (``-v2``)
    to about 1e-6 (``crf_test`` sums scores in float32); ``classes_`` keeps
    CRF++'s label order.

    Parameters
    ----------
    path : str or os.PathLike
    cost_factor : float, default 1.0
        ``crf_test -c``: every score is multiplied by it.
    encoding : str, default "utf-8"
        The encoding of the model's strings (CRF++ reads bytes; give the
        encoding its training data had).

    Raises
    ------
    ModelFormatError
        If the file is not a valid CRF++ text model, or has a ``B`` template
        with macros (transitions that depend on the input: cseq's chain has
        none).
    InputError
        If ``cost_factor`` is not a positive finite number.
    OSError
        If the file cannot be read.
    """
    return crfpp_from_bytes(read_file_bytes(path), cost_factor=cost_factor, encoding=encoding,
                            source=f"imported from the CRF++ model {os.fsdecode(path)}")


def crfpp_from_bytes(raw: bytes, *, cost_factor: float = 1.0, encoding: str = "utf-8",
                     source: str = "imported from a CRF++ model") -> CRF:
    """:func:`from_crfpp` of a text model's bytes; ``source`` becomes ``stop_reason_``."""
    if isinstance(cost_factor, bool) or not isinstance(cost_factor, (int, float, np.number)) \
            or not (math.isfinite(cost_factor) and cost_factor > 0):
        raise InputError(f"cost_factor must be a positive finite number, got {cost_factor!r}")
    if not isinstance(encoding, str):
        raise InputTypeError(f"encoding must be a str, got {type(encoding).__name__}")
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise _bad(f"cannot decode the file as {encoding}: {exc}") from None
    header, labels, template_lines, feature_lines, weight_lines = _blocks(text)
    for name in ("version", "maxid", "xsize"):
        if name not in header:
            raise _bad(f"the header has no '{name}:' line")
    version = _int(header["version"], "version")
    if not 100 <= version < 200:
        raise _bad(f"version {version} is not a CRF++ 0.5x text model (100)")
    maxid, xsize = _int(header["maxid"], "maxid"), _int(header["xsize"], "xsize")
    L = len(labels)
    if not 1 <= L <= _chain.MAX_LABELS or len(set(labels)) != L:
        raise _bad(f"the labels must be 1 to {_chain.MAX_LABELS} distinct strings")
    check_label_pairs(L, len(raw), _bad)
    if xsize < 1:
        raise _bad("xsize must be at least 1")
    if len(weight_lines) != maxid:
        raise _bad(f"maxid is {maxid} but the file has {len(weight_lines)} weights")
    try:
        alpha = np.array([float(w) for w in weight_lines], dtype=WEIGHT)
    except ValueError:
        raise _bad("a weight is not a number") from None
    if not np.isfinite(alpha).all():
        raise _bad("a weight is not finite")
    # crf_test tags with the float32 weights of CRF++'s binary model.
    alpha = alpha.astype(np.float32).astype(WEIGHT) * float(cost_factor)

    unigram, bigram = [], []
    for line in template_lines:
        if line[:1] == "U":
            _check_template(line, xsize)
            unigram.append(line)
        elif line[:1] == "B":
            if "%" in line:
                raise _bad(f"the bigram template {line!r} conditions label transitions on the "
                           "input, which cseq's chain cannot represent (its transitions "
                           "depend on the labels only); such models cannot be imported")
            bigram.append(line)
        else:
            raise _bad(f"template {line[:60]!r} is neither a U nor a B template")
    features: dict[str, int] = {}
    for line in feature_lines:
        fid, sep, name = line.partition(" ")
        fid_value = _int(fid, "feature id")
        width = L if name[:1] == "U" else L * L
        if not sep or not name or fid_value + width > maxid:
            raise _bad(f"feature line {line[:60]!r} is malformed or its weights pass maxid")
        if features.setdefault(name, fid_value) != fid_value:
            raise _bad(f"feature {name[:60]!r} is listed twice")

    transitions = np.zeros((L, L), dtype=WEIGHT)
    for name in bigram:
        if name in features:
            transitions += alpha[features[name]:features[name] + L * L].reshape(L, L)

    meta, arrays, rows = _featurizer("\n".join(unigram + bigram), features, xsize)
    n_attr = len(rows)
    state = alpha[(np.asarray(rows, dtype=np.int64)[:, None] + np.arange(L)).reshape(-1)] \
        if n_attr else np.zeros(0, dtype=WEIGHT)
    return fitted_crf((meta, arrays), TemplateFeaturizer(meta["templates"]), n_attr,
                      list(labels), np.repeat(np.arange(n_attr), L),
                      np.tile(np.arange(L), n_attr), state, transitions, source)


def _featurizer(text: str, features: dict[str, int],
                xsize: int) -> tuple[dict, dict[str, np.ndarray], list[int]]:
    """The TemplateFeaturizer state for ``features`` under the templates ``text``.

    Returns its metadata, its arrays, and for each attribute the id of the
    first weight of the feature string it prints.
    """
    try:
        probe = TemplateFeaturizer(text)
    except (InputError, InputTypeError) as exc:
        raise _bad(f"cseq cannot read the templates: {exc}") from None
    templates = probe.templates.templates
    first_of: dict[str, int] = {}       # one template per skeleton: the same keys
    for i, t in enumerate(templates):
        first_of.setdefault(t.skeleton, i)
    by_head: dict[int, dict[str, list[int]]] = {}
    for i in first_of.values():
        head = templates[i].parts[0]
        by_head.setdefault(len(head), {}).setdefault(head, []).append(i)
    strings: dict[str, int] = {}
    name_template: list[int] = []
    name_cells: list[int] = []
    rows: list[int] = []
    budget = [_STEPS_PER_STRING * len(features) + _STEPS_EXTRA]
    for name, fid in features.items():
        if name[:1] != "U":
            continue
        for size, heads in by_head.items():
            for i in heads.get(name[:size], ()):
                for values in _template_values(name, templates[i].parts, budget):
                    name_template.append(i)
                    name_cells.extend(strings.setdefault(v, len(strings)) for v in values)
                    rows.append(fid)
    table = encode_strings(list(strings))
    tmpl = np.array(name_template, dtype=np.int32)
    cells = np.array(name_cells, dtype=np.int32)
    keys = _templates.attribute_keys(probe._seeds, probe._n_cells, tmpl, cells,
                                     _templates.hash_pieces(table["blob"], table["offsets"]))
    if len(np.unique(keys)) != len(keys):
        raise _bad("two feature strings have the same cseq attribute key (a 64-bit hash "
                   "collision); this model cannot be imported")
    meta: dict[str, Any] = {"kind": "templates", "format": STATE_FORMAT, "hash": HASH_SCHEME,
                            "templates": text, "min_freq": 1, "n_buckets": None,
                            "bigram": probe.templates.bigram, "n_columns": xsize,
                            "n_attributes": len(rows)}
    arrays: dict[str, np.ndarray] = {"keys": keys, "name_template": tmpl, "name_cells": cells,
                                     "strings": table["blob"], "string_ptr": table["offsets"]}
    return meta, arrays, rows
