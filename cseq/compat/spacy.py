"""A spaCy pipeline component that tags ``Doc`` objects with a cseq model.

Registered as the spaCy factory ``"cseq"``, both by the entry point
``spacy_factories`` in cseq's ``pyproject.toml`` (found by spaCy in an
installed cseq without importing anything) and by importing this module (the
``@Language.factory`` decorator below)::

    import spacy
    nlp = spacy.blank("en")
    nlp.add_pipe("cseq", config={"model": "ner.cseq", "attr": "ents"})
    doc = nlp("Ann Lee went to Paris")
    [(e.text, e.label_) for e in doc.ents]

``attr`` says what the labels set: ``"tag"`` (``token.tag_``, any labels),
``"pos"`` (``token.pos_``, the model's labels must all be Universal
Dependencies UPOS tags) or ``"ents"`` (``doc.ents``, from labels in a chunk
scheme: BIO/IOB2, BIOES/IOBES, or IOB1 when ``scheme="iob1"`` is given; the
spans are decoded by :func:`cseq.metrics.chunks`, as ``cseq eval`` scores them).

spaCy is an optional dependency (``pip install 'cseq[spacy]'``); it is
imported with this module, never by ``import cseq``.
"""

# No ``from __future__ import annotations``: spaCy validates a factory's config
# against its signature's annotations, which it must be able to evaluate.

from collections.abc import Iterable, Iterator
from typing import Any, List, Optional

from cseq.compat._tagger import fitted_estimator
from cseq.exceptions import InputError, InputTypeError
from cseq.evaluation.metrics import SCHEMES, chunks, detect_scheme

try:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token
    from spacy.util import minibatch
except ImportError as exc:  # pragma: no cover - exercised with spaCy hidden
    raise ImportError("cseq.compat.spacy needs spaCy, an optional dependency of cseq: "
                      "pip install 'cseq[spacy]' (or pip install spacy)") from exc

__all__ = ["CseqComponent", "make_component", "UPOS"]

#: The 17 Universal Dependencies part-of-speech tags, the labels ``attr="pos"`` takes.
UPOS = frozenset({"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART",
                  "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"})

#: What ``attr`` may be.
ATTRS = ("pos", "tag", "ents")


class CseqComponent:
    """Tags each ``Doc`` with a cseq model: its labels go to ``attr``.

    Parameters
    ----------
    nlp : spacy.language.Language
        The pipeline (its vocabulary makes the entity spans).
    name : str
        The component's name in the pipeline.
    model : fitted cseq estimator, or str or os.PathLike
        The estimator, or the path of a cseq model file.  The pipeline's
        config holds the path, so ``nlp.to_disk`` saves the path, not the model.
    attr : {"pos", "tag", "ents"}, default "tag"
    scheme : {"iob2", "iob1", "bioes", "iobes"} or None, default None
        ``attr="ents"``: the labels' chunk scheme; None detects BIO (IOB2) or
        BIOES from the labels (IOB1 cannot be told from IOB2 by its labels).
    columns : list of str, default ["text"]
        The ``Token`` attributes that make the model's input columns: one
        column gives each token as a string, several as a tuple of strings
        (e.g. ``["text", "tag_"]`` for a CoNLL model that reads words and
        tags, after a tagger in the pipeline).

    Raises
    ------
    InputError
        ``attr`` or ``scheme`` is not one of the choices, ``columns`` names no
        ``Token`` attribute or not as many as the model reads, or the model's
        labels do not fit ``attr``: for ``"pos"`` labels that are not UPOS
        tags (named), for ``"ents"`` labels that are not in a chunk scheme.
    """

    def __init__(self, nlp: Language, name: str, model: Any, attr: str = "tag",
                 scheme: Optional[str] = None, columns: Iterable[str] = ("text",)) -> None:
        if attr not in ATTRS:
            raise InputError(f"attr must be one of {', '.join(map(repr, ATTRS))}, got {attr!r}")
        if scheme is not None and scheme not in SCHEMES:
            raise InputError(f"scheme must be None or one of {', '.join(map(repr, SCHEMES))}, "
                             f"got {scheme!r}")
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise InputTypeError(f"columns must be a list of Token attribute names, got "
                                 f"{columns!r}")
        columns = list(columns)
        unknown = [c for c in columns if not hasattr(Token, c)]
        if not columns or unknown:
            raise InputError(f"columns must name Token attributes (e.g. 'text', 'lower_', "
                             f"'tag_'), got {columns!r}")
        self.nlp = nlp
        self.name = name
        self.estimator = fitted_estimator(model)
        self.attr = attr
        self.columns = columns
        n_columns = getattr(self.estimator.featurizer_, "n_columns_", None)
        if n_columns is not None and n_columns > len(columns):
            raise InputError(f"the model reads {n_columns} input columns, but columns gives "
                             f"{len(columns)} ({columns!r})")
        labels = [str(c) for c in self.estimator.classes_]
        self.scheme = None
        if attr == "pos":
            bad = sorted(set(labels) - UPOS)
            if bad:
                raise InputError(f"attr='pos' needs Universal Dependencies UPOS labels; the model "
                                 f"has {bad} (use attr='tag' for other tag sets)")
        elif attr == "ents":
            self.scheme = scheme or detect_scheme(labels)
            if self.scheme is None:
                raise InputError(f"attr='ents' needs labels in a chunk scheme (O, B-TYPE, "
                                 f"I-TYPE, ...); the model's labels are {labels}")
            chunks(labels, self.scheme)  # InputError naming a label the scheme does not allow

    def __call__(self, doc: Doc) -> Doc:
        """Tag one ``Doc`` (in place) and return it."""
        self._tag([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Tag the ``Doc`` objects of ``stream``, ``batch_size`` of them per ``predict`` call."""
        for batch in minibatch(stream, size=batch_size):
            self._tag(batch)
            yield from batch

    def _tag(self, docs: List[Doc]) -> None:
        """Set ``attr`` on every token of ``docs`` from one ``predict`` call."""
        if len(self.columns) == 1:
            column = self.columns[0]
            X = [[getattr(t, column) for t in doc] for doc in docs]
        else:
            X = [[tuple(getattr(t, c) for c in self.columns) for t in doc] for doc in docs]
        for doc, labels in zip(docs, self.estimator.predict(X)):
            if self.attr == "ents":
                doc.ents = [Span(doc, start, end, label=kind)
                            for kind, start, end in chunks(labels, self.scheme)]
            elif self.attr == "pos":
                for token, label in zip(doc, labels):
                    token.pos_ = label
            else:
                for token, label in zip(doc, labels):
                    token.tag_ = label


@Language.factory("cseq", default_config={"attr": "tag", "scheme": None, "columns": ["text"]},
                  assigns=["token.tag", "token.pos", "doc.ents"])
def make_component(nlp: Language, name: str, model: str, attr: str, scheme: Optional[str],
                   columns: List[str]) -> CseqComponent:
    """The ``"cseq"`` factory: ``nlp.add_pipe("cseq", config={"model": path, "attr": ...})``.

    ``model`` is the path of a cseq model file; the other settings are
    :class:`CseqComponent`'s.
    """
    return CseqComponent(nlp, name, model, attr=attr, scheme=scheme, columns=columns)
