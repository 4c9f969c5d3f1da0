"""python-crfsuite's item formats, read into cseq's per-token features.

python-crfsuite (and so sklearn-crfsuite) takes one *item* per token and
turns it into CRFsuite attributes, each a name and a float value, by these
rules (``pycrfsuite.ItemSequence``):

- a dict ``{key: value}``: a ``str`` (or ``bytes``) value ``v`` is the
  attribute ``"key:v"`` with value 1; a number is the value of the attribute
  ``key`` (``True`` is 1, ``False`` 0); a dict, list or set value is read by
  these rules and every attribute it gives is prefixed with ``"key:"``;
- any other item (a list, tuple or set of strings): each string is an
  attribute with value 1.

An attribute with value 0 (``False``, ``0``) is kept, with value 0: it
scores nothing, but as in CRFsuite its occurrence with a label in training
creates the (attribute, label) weight, which the attribute's other
occurrences then train.  An attribute that occurs twice in one item counts
twice, as in CRFsuite (the values add up).

Two inputs python-crfsuite accepts are refused here with
:class:`~cseq.InputTypeError` because they are almost always mistakes: a bare
string as an item (python-crfsuite reads ``"dog"`` as the three attributes
``d``, ``o``, ``g``), and a key that is not a string.

>>> item_attributes({"w": "the", "title": False, "len": 3, "pos": {"tag": "DT", "x": 0.5}})
['w:the', ('title', 0.0), ('len', 3.0), 'pos:tag:DT', ('pos:x', 0.5)]
>>> convert([[{"w": "the", "title": True}, ["bias", "w:dog"]], [{"n": 2, "m": ["a", "b"]}]])
[[{'w:the': 1.0, 'title': 1.0}, ['bias', 'w:dog']], [{'n': 2.0, 'm:a': 1.0, 'm:b': 1.0}]]
>>> convert([[{"w": "the", "title": False}]])
[[{'w:the': 1.0, 'title': 0.0}]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cseq.features import _pack
from cseq.exceptions import InputError, InputTypeError
from cseq.features import FeatureVocabulary, register_featurizer
from cseq._core.threads import resolve_n_jobs
from cseq.chain.sequences import Sequences

__all__ = ["item_attributes", "convert", "CRFsuiteVocabulary"]

_NESTED = (dict, list, set)


def _name(key: Any, where: str) -> str:
    """An attribute name from a dict key or a list element (str, or UTF-8 bytes)."""
    if type(key) is str:
        return key
    if isinstance(key, bytes):
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            raise InputTypeError(f"{where}: attribute name {key!r} is not UTF-8") from None
    if isinstance(key, str):
        return str(key)
    raise InputTypeError(f"{where}: attribute names must be strings, got "
                         f"{type(key).__name__} {key!r}")


def _number(value: Any, name: str, where: str) -> float:
    """``float(value)``; an InputError for an int beyond float's range."""
    try:
        return float(value)
    except OverflowError:
        raise InputError(f"{where}: the value of {name!r} is beyond the range of a float: "
                         f"{value}") from None


def _read(item: Any, prefix: str, out: list, where: str) -> None:
    """Append the attributes of ``item`` (names with ``prefix``) to ``out``.

    ``out`` receives a name for an attribute of value 1 and a ``(name,
    value)`` pair otherwise.
    """
    if type(item) is dict:
        for key, value in item.items():
            name = prefix + _name(key, where)
            kind = type(value)
            if kind is str:
                out.append(f"{name}:{value}")
            elif kind is bool:
                out.append(name if value else (name, 0.0))
            elif kind is float or kind is int:
                out.append(name if value == 1 else (name, _number(value, name, where)))
            elif isinstance(value, _NESTED):
                _read(value, name + ":", out, where)
            elif isinstance(value, str):      # a subclass, e.g. numpy's str_
                out.append(f"{name}:{value}")
            elif isinstance(value, bytes):
                out.append(f"{name}:{_name(value, where)}")
            else:
                try:
                    number = float(value)
                except (TypeError, ValueError):
                    raise InputTypeError(
                        f"{where}: the value of {name!r} must be a string, a number, a bool, "
                        f"a dict, a list or a set, got {type(value).__name__}") from None
                out.append(name if number == 1 else (name, number))
        return
    if isinstance(item, (str, bytes)):
        raise InputTypeError(
            f"{where}: an item must be a dict or a list of attribute strings, got the string "
            f"{item!r} (python-crfsuite would read each character as an attribute; "
            "write [the string] for one attribute)")
    try:
        keys = iter(item)
    except TypeError:
        raise InputTypeError(f"{where}: an item must be a dict or a list of attribute strings, "
                             f"got {type(item).__name__}") from None
    for key in keys:
        out.append(prefix + _name(key, where))


def item_attributes(item: Any, where: str = "item") -> list:
    """The CRFsuite attributes of one item: names (value 1) and ``(name, value)`` pairs.

    ``where`` names the item in error messages (e.g. ``"X[3][7]"``).
    """
    out: list = []
    _read(item, "", out, where)
    return out


def convert(X: Sequence[Any]) -> list[list[Any]]:
    """``X`` in python-crfsuite's item formats as cseq tokens, one list per sequence.

    A dict item becomes a dict ``{name: value}`` (the values of a name that
    occurs more than once add up, as the scores of a repeated attribute do
    in CRFsuite); a list of strings stays as it is.
    """
    if isinstance(X, (str, bytes, dict)):
        raise InputTypeError(f"X must be a list of sequences of items, got {type(X).__name__}")
    out = []
    for i, xseq in enumerate(X):
        if isinstance(xseq, (str, bytes, dict)):
            raise InputTypeError(f"X[{i}] must be a sequence of items (one per token), got "
                                 f"{type(xseq).__name__}")
        out.append([_token(item, i, j) for j, item in enumerate(xseq)])
    return out


def _token(item: Any, i: int, j: int) -> Any:
    """One item as a cseq token; the common forms without building a list of attributes."""
    if type(item) is dict:
        token: dict[str, float] = {}
        if _fill(item, "", token) == len(token):
            return token
    elif type(item) is list and all(type(key) is str for key in item):
        return item
    # Anything else, a name given twice, or an error to report with its position.
    attrs = item_attributes(item, f"X[{i}][{j}]")
    if type(item) is not dict and all(type(a) is str for a in attrs):
        return attrs
    token = {}
    for a in attrs:
        name, value = (a, 1.0) if type(a) is str else a
        token[name] = token.get(name, 0.0) + value
    return token


def _fill(mapping: dict, prefix: str, token: dict[str, float]) -> int:
    """Write the attributes of a dict of str keys and str, number or dict values into ``token``.

    Returns how many were written (more than ``len(token)`` if a name came
    twice), or -1 at the first key or value of another kind.
    """
    n = 0
    for key, value in mapping.items():
        if type(key) is not str:
            return -1
        kind = type(value)
        if kind is str:
            token[prefix + key + ":" + value] = 1.0
        elif kind is bool or kind is float:
            token[prefix + key] = float(value)
        elif kind is int:
            if not -2**1023 < value < 2**1023:
                return -1  # beyond float: item_attributes reports it
            token[prefix + key] = float(value)
        elif kind is dict:
            m = _fill(value, prefix + key + ":", token)
            if m < 0:
                return -1
            n += m - 1
        else:
            return -1
        n += 1
    return n


@register_featurizer
class CRFsuiteVocabulary(FeatureVocabulary):
    """A :class:`~cseq.FeatureVocabulary` that reads ``X`` in python-crfsuite's item formats.

    A dict item ``{"w": "the"}`` is the attribute ``w:the`` as in CRFsuite
    (the plain vocabulary would make it ``w=the``).  ``X`` whose items are
    all lists of strings or dicts (``str`` names; ``str``, ``bool``, ``int``
    or ``float`` values, and dicts of those and lists of strings nested up
    to 16 deep) is read by the compiled packer directly
    (``pack_features(crfsuite=True)``), which gives the arrays :func:`convert`
    then packing would, without a Python dict per token; any other ``X``
    (sets, other types, an attribute twice in one item, an error to report)
    goes through :func:`convert` first.  :func:`cseq.from_crfsuite` gives
    its estimators this featurizer, and a model file stores its kind, so a
    saved and reloaded model reads the same items the same way; as
    ``features=CRFsuiteVocabulary()`` it trains a :class:`cseq.CRF` on such
    items.
    """

    kind = "crfsuite"

    def fresh(self) -> CRFsuiteVocabulary:
        """An empty vocabulary of this kind."""
        return CRFsuiteVocabulary()

    def fit_transform(self, X: Sequence[Any]) -> Sequences:
        """Learn the attributes of ``X`` (python-crfsuite items) and pack it."""
        # A None leaves in the table only attributes the converted X adds
        # first, in the same order, so the ids are those of convert's path.
        packed = _pack.pack_features(X, self._table, True, crfsuite=True)
        if packed is None:
            return super().fit_transform(convert(X))
        return Sequences(*packed)

    def transform(self, X: Sequence[Any], *, n_jobs: int = 1) -> Sequences:
        """Pack ``X`` (python-crfsuite items), dropping attributes not in the vocabulary."""
        packed = _pack.pack_features(X, self._table, False, resolve_n_jobs(n_jobs),
                                     crfsuite=True)
        if packed is None:
            return super().transform(convert(X), n_jobs=n_jobs)
        return Sequences.packed(*packed)

    def packing(self) -> tuple[_pack.StringTable, bool]:
        """The string table, read by python-crfsuite's rules (see ``FeatureVocabulary.packing``)."""
        return self._table, True

    def __repr__(self) -> str:
        return "CRFsuiteVocabulary()"
