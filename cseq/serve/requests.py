"""The requests of ``cseq serve``: a ``POST /tag`` body checked, and its cost bounded.

A request is parsed and checked completely before it is queued: the JSON and
its types, then its size against the limits (:data:`REQUEST_LIMITS`), so that
what one client sends cannot take the memory or the tagging threads of the
others.  Its cost is counted in decoding-lattice cells (:func:`request_cost`),
the quantity the decoders' memory and time grow with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cseq.chain.decoding import lattice_cells

__all__ = ["BadRequest", "TagRequest", "parse_tag_request", "check_widths", "check_size",
           "request_cost", "MAX_NBEST", "REQUEST_LIMITS"]

#: The largest ``nbest`` a request may ask.
MAX_NBEST = 100

#: Per-request bounds (the command line's ``--max-request-tokens`` and
#: ``--max-request-cost`` override them).  ``max_request_cost`` is in lattice
#: cells (tokens x labels, x labels again for a second-order model, x ``nbest``,
#: x 3 with marginals); a cell costs the n-best search 16 bytes, so the default
#: bounds a request's decoding scratch near 64 MB.
REQUEST_LIMITS: dict[str, int] = {
    "max_request_tokens": 20_000,
    "max_request_cost": 4_000_000,
}

_CONSTRAINTS = ("bio", "iob2", "iob1", "bioes")
_OPTIONS = ("marginals", "nbest", "constraints")
_FIELDS = ("tokens", "sentences") + _OPTIONS


class BadRequest(Exception):
    """A request answered with ``status`` and ``message`` (JSON ``{"error": ...}``)."""

    def __init__(self, status: int, message: str, *, headers: tuple[tuple[str, str], ...] = (),
                 close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers
        self.close = close  # the connection ends after the answer


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "?")


def _sentence(value: Any, where: str) -> list[tuple[str, ...]]:
    """One sentence of a request as ``cseq tag`` gives it to the model: a token is a
    string (the word, one column) or a list of column strings."""
    if not isinstance(value, list):
        raise BadRequest(400, f"{where} must be a list of tokens, not {_json_type(value)}")
    rows: list[tuple[str, ...]] = []
    for i, tok in enumerate(value):
        if type(tok) is str:
            rows.append((tok,))
        elif type(tok) is list and all(type(c) is str for c in tok):
            rows.append(tuple(tok))
        else:
            raise BadRequest(400, f"{where}, token {i}: a token is a string or a list of "
                             f"column strings, not {_json_type(tok)}"
                             + (" holding other values" if type(tok) is list else ""))
    return rows


@dataclass(frozen=True)
class TagRequest:
    """A parsed ``POST /tag``: the options (the batching key), sentences, one or many."""

    key: tuple[bool, int | None, str | None]
    X: list[list[tuple[str, ...]]]
    single: bool

    @property
    def n_tokens(self) -> int:
        return sum(map(len, self.X))


def parse_tag_request(body: bytes) -> TagRequest:
    """Check a ``POST /tag`` body; a bad one raises :class:`BadRequest` naming what is wrong."""
    if not body.strip():
        raise BadRequest(400, "the request has no body: send a JSON object with 'tokens' "
                         "(one sentence) or 'sentences' (a list of them)")
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise BadRequest(400, f"malformed JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise BadRequest(400, f"the body must be a JSON object, not {_json_type(doc)}")
    unknown = [k for k in doc if k not in _FIELDS]
    if unknown:
        raise BadRequest(400, f"unknown field(s) {', '.join(map(repr, unknown))}; the fields "
                         f"are {', '.join(_FIELDS)}")
    if ("tokens" in doc) == ("sentences" in doc):
        raise BadRequest(400, "give either 'tokens' (one sentence) or 'sentences' (a list "
                         "of them)")
    marginals = doc.get("marginals", False)
    if type(marginals) is not bool:
        raise BadRequest(400, f"'marginals' must be true or false, not {_json_type(marginals)}")
    nbest = doc.get("nbest")
    if nbest is not None and (type(nbest) is not int or not 1 <= nbest <= MAX_NBEST):
        raise BadRequest(400, f"'nbest' must be an integer from 1 to {MAX_NBEST}, got "
                         f"{json.dumps(nbest)}")
    constraints = doc.get("constraints")
    if constraints is not None and constraints not in _CONSTRAINTS:
        raise BadRequest(400, f"'constraints' must be one of {', '.join(_CONSTRAINTS)} or "
                         f"null, got {json.dumps(constraints)}")
    if "tokens" in doc:
        X = [_sentence(doc["tokens"], "'tokens'")]
    else:
        sentences = doc["sentences"]
        if not isinstance(sentences, list):
            raise BadRequest(400, f"'sentences' must be a list of sentences, not "
                             f"{_json_type(sentences)}")
        X = [_sentence(s, f"sentence {i}") for i, s in enumerate(sentences)]
    return TagRequest((marginals, nbest, constraints), X, "tokens" in doc)


def request_cost(request: TagRequest, n_labels: int, order: int) -> int:
    """The lattice cells tagging ``request`` takes, summed over its sentences
    (:func:`cseq.chain.decoding.lattice_cells`)."""
    marginals, nbest, _ = request.key
    return sum(lattice_cells(len(x), n_labels, order, nbest=nbest, marginals=marginals)
               for x in request.X)


def check_size(request: TagRequest, n_labels: int, order: int, limits: dict[str, Any]) -> None:
    """Refuse, with 413 naming the limit, a request over ``max_request_tokens``
    tokens or ``max_request_cost`` lattice cells."""
    tokens = request.n_tokens
    if tokens > limits["max_request_tokens"]:
        raise BadRequest(413, f"the request has {tokens} tokens; the limit is "
                         f"{limits['max_request_tokens']} (--max-request-tokens): send its "
                         "sentences in several requests")
    cost = request_cost(request, n_labels, order)
    if cost > limits["max_request_cost"]:
        marginals, nbest, _ = request.key
        what = f"nbest {nbest}, " if nbest else ("marginals, " if marginals else "")
        raise BadRequest(413, f"the request costs {cost} lattice cells ({tokens} tokens, "
                         f"{what}{n_labels} labels, order {order}); the limit is "
                         f"{limits['max_request_cost']} (--max-request-cost): ask for a "
                         "smaller nbest or send fewer tokens per request")


def check_widths(columns: tuple[int | None, int], X: list[list[tuple[str, ...]]],
                 single: bool) -> None:
    """Refuse tokens whose number of columns the model does not read (``cseq tag``'s
    column check, for every token, since a request's tokens need not agree)."""
    trained, need = columns
    for s, rows in enumerate(X):
        for i, row in enumerate(rows):
            width = len(row)
            if (trained is None or width == trained) and width >= need:
                continue
            where = f"token {i}" if single else f"sentence {s}, token {i}"
            wanted = (f"{trained} column(s)" if trained is not None
                      else f"at least {need} column(s)")
            hint = "a string (the word)" if wanted == "1 column(s)" else "a list of columns"
            raise BadRequest(400, f"{where} has {width} column(s); the model reads {wanted}: "
                             f"send each token as {hint}")
