"""Raw text in, tagged sentences out: a segmenter and a tagger in one object.

:class:`Pipeline` holds a :class:`cseq.segment.Segmenter` (sentences, tokens,
multiword tokens) and, optionally, a fitted cseq tagger that labels the
syntactic words.  It reads paragraphs (:func:`cseq.io.raw.iter_paragraphs`
for a file, :func:`cseq.io.raw.paragraphs_of` for a string), segments each,
and tags the words in batches of about ``batch_chars`` characters, so a
file of any size needs memory for one batch.  Every token keeps its
character offsets, so labels map back onto the original string.

:func:`load_pipeline` loads a pipeline shipped in the wheel (``"en"``: a
segmenter and a UPOS tagger trained on UD English EWT, see
``cseq/data/README.md``) or one saved by :meth:`Pipeline.save`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.io.raw import Paragraph, paragraphs_of

__all__ = ["Pipeline", "TaggedSentence", "format_tagged", "load_pipeline"]


@dataclass(frozen=True, slots=True)
class TaggedSentence:
    """One sentence of raw text, segmented and (with a tagger) tagged.

    Attributes
    ----------
    sentence : cseq.segment.Sentence
        Its tokens, with offsets into ``paragraph.text``.
    paragraph : Paragraph
        The paragraph it comes from (its text, and its offset in the file
        or string: add it to a token's offsets to index the whole input).
    labels : tuple of str or None
        One label per syntactic word (``sentence.words()``); None without a
        tagger.
    first, last : bool
        Whether it is the first (last) sentence of its paragraph.
    """

    sentence: Any
    paragraph: Paragraph
    labels: tuple[str, ...] | None
    first: bool
    last: bool

    @property
    def words(self) -> list[str]:
        """The syntactic words, one per label."""
        return list(self.sentence.words())


class Pipeline:
    """A segmenter and, optionally, a tagger: raw text to tagged sentences.

    Parameters
    ----------
    segmenter : cseq.segment.Segmenter
        A fitted segmenter (or an object with its ``segment(text)``; its
        ``segment_many(texts)`` is used where it has one).
    tagger : fitted cseq estimator, optional
        A tagger that reads one column (the word); its labels go to the
        words of the segmented sentences.
    batch_chars : int, default 100000
        Characters of raw text segmented before the tagger runs on their
        words at once (the tagger is fastest on large batches).

    Examples
    --------
    >>> nlp = cseq.load_pipeline("en")                        # doctest: +SKIP
    >>> [(w, lab) for s in nlp("It's 3pm. Go!") for w, lab in zip(s.words, s.labels)]  # doctest: +SKIP
    [('It', 'PRON'), ("'s", 'AUX'), ('3', 'NUM'), ('pm', 'NOUN'), ('.', 'PUNCT'), ...]
    """

    def __init__(self, segmenter: Any, tagger: Any = None, *, batch_chars: int = 100_000) -> None:
        if not callable(getattr(segmenter, "segment", None)):
            raise InputTypeError(f"segmenter must be a cseq Segmenter, got "
                                 f"{type(segmenter).__name__}")
        if tagger is not None:
            _check_tagger(tagger, "the tagger")
        if isinstance(batch_chars, bool) or not isinstance(batch_chars, int) or batch_chars < 1:
            raise InputError(f"batch_chars must be a positive integer, got {batch_chars!r}")
        self.segmenter = segmenter
        self.tagger = tagger
        self.batch_chars = batch_chars

    @classmethod
    def load(cls, segmenter: str | os.PathLike[str], tagger: str | os.PathLike[str] | None = None,
             **kwargs: Any) -> Pipeline:
        """A pipeline of a segmenter file and, optionally, a tagger file.

        Raises
        ------
        InputError, ModelFormatError
            If a file is not what it is given as (a tagger as the segmenter,
            a segmenter as the tagger), naming the file.
        """
        return cls(load_segmenter(segmenter),
                   None if tagger is None else load_tagger(tagger), **kwargs)

    def __call__(self, text: str) -> list[TaggedSentence]:
        """Segment and tag a string (paragraphs separated by blank lines)."""
        return list(self.process(paragraphs_of(text)))

    def process(self, paragraphs: Iterable[Paragraph], *, n_jobs: int = 1
                ) -> Iterator[TaggedSentence]:
        """Segment and tag paragraphs, streaming, in batches of about ``batch_chars``."""
        batch: list[Paragraph] = []
        n_chars = 0
        for para in paragraphs:
            batch.append(para)
            n_chars += len(para.text)
            if n_chars >= self.batch_chars:
                yield from self._tag(batch, n_jobs)
                batch, n_chars = [], 0
        yield from self._tag(batch, n_jobs)

    def _tag(self, paragraphs: list[Paragraph], n_jobs: int) -> Iterator[TaggedSentence]:
        # the paragraphs of a batch segmented together: one featurizing and decoding
        # call per window of text rather than per paragraph (Segmenter.segment_many)
        texts = [para.text for para in paragraphs]
        many = getattr(self.segmenter, "segment_many", None)
        segmented = many(texts) if many is not None else [self.segmenter.segment(t) for t in texts]
        batch = list(zip(paragraphs, segmented))
        sentences = [s for _, sents in batch for s in sents]
        if self.tagger is not None and sentences:
            X = [[(w,) for w in s.words()] for s in sentences]
            labels: Iterator[Any] = iter(self.tagger.predict(X, n_jobs=n_jobs))
        else:
            labels = iter(())
        for para, sents in batch:
            for i, s in enumerate(sents):
                lab = next(labels, None) if self.tagger is not None else None
                yield TaggedSentence(s, para, None if lab is None else tuple(lab),
                                     i == 0, i == len(sents) - 1)


def format_tagged(tagged: Iterable[TaggedSentence], *, fmt: str = "conllu",
                  column: str = "upos") -> Iterator[str]:
    """The output text of tagged sentences, one sentence at a time, numbered from 1.

    ``fmt`` is ``"conllu"``, ``"text"`` or ``"jsonl"``; ``column`` the
    CoNLL-U column of the labels (see
    :func:`cseq.io.conllu_write.format_segmented`).
    """
    from cseq.io.conllu_write import format_segmented
    known: set[str] = set()
    for n, t in enumerate(tagged, 1):
        yield format_segmented(t.sentence, t.labels, paragraph=t.paragraph.text, fmt=fmt,
                               sent_id=n, paragraph_start=t.first, paragraph_end=t.last,
                               offset=t.paragraph.offset, column=column, known_labels=known)


def refuse_segmenter(est: Any, what: str) -> None:
    """Refuse a segmenter's model where a tagger is expected, saying what to do instead.

    A segmenter's file is a learner's model file over characters: it loads as
    a tagger would, but reads strings, not words.
    """
    from cseq.segment.features import CharFeatures
    if isinstance(getattr(est, "featurizer_", None), CharFeatures):
        raise InputError(f"{what} is a segmenter, not a tagger: give it with --segmenter "
                         "(and a tagger's model file as the tagger), or tag with "
                         "cseq.pipeline.Pipeline")


def _check_tagger(tagger: Any, what: str) -> None:
    """Refuse a tagger that cannot tag words alone (one column per token), or a segmenter's model."""
    if getattr(tagger, "model_", None) is None or not callable(getattr(tagger, "predict", None)):
        raise InputTypeError(f"{what} must be a fitted cseq tagger, got {type(tagger).__name__}")
    refuse_segmenter(tagger, what)
    from cseq._tagging import model_columns
    trained, need = model_columns(tagger)
    if (trained is not None and trained != 1) or need > 1:
        raise InputError(f"{what} reads {trained or need} columns per token; raw text gives "
                         "it the word only (train it on the words alone)")


def load_segmenter(path: str | os.PathLike[str]) -> Any:
    """A segmenter from its file; a tagger's file is refused by name."""
    from cseq.segment import Segmenter
    return Segmenter.load(path)


def load_tagger(path: str | os.PathLike[str]) -> Any:
    """A fitted tagger from its file; a segmenter's file is refused by name."""
    from cseq._tagging import load_fitted
    try:
        est = load_fitted(os.fspath(path))
    except ModelFormatError as exc:
        raise ModelFormatError(f"{os.fspath(path)} is not a tagger's model file: {exc}") from None
    _check_tagger(est, os.fspath(path))
    return est


#: Pipelines shipped in the wheel: name -> (segmenter file, tagger file) in cseq/data.
BUNDLED = {"en": ("en_ewt.segmenter", "en_ewt.upos")}


def load_pipeline(name: str = "en", **kwargs: Any) -> Pipeline:
    """The pipeline ``name`` shipped with cseq (``"en"``), or a segmenter file's.

    Parameters
    ----------
    name : str, default "en"
        ``"en"``: a segmenter and a UPOS tagger trained on UD English EWT
        (CC BY-SA 4.0, see ``cseq/data/README.md``).
    **kwargs
        Passed to :class:`Pipeline` (``batch_chars``).

    Raises
    ------
    InputError
        For an unknown name, or if the wheel lacks the pipeline's files.
    """
    if name not in BUNDLED:
        raise InputError(f"no pipeline {name!r}; shipped: {', '.join(sorted(BUNDLED))}")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    seg, tag = (os.path.join(here, f) for f in BUNDLED[name])
    for f in (seg, tag):
        if not os.path.exists(f):
            raise InputError(f"the {name!r} pipeline's file {f} is missing from this installation "
                             "(build it with scripts/build_pipeline.py)")
    return Pipeline.load(seg, tag, **kwargs)
