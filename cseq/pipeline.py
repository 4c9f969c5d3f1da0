"""Raw text in, tagged sentences out: a segmenter and taggers in one object, and one file.

:class:`Pipeline` holds a :class:`cseq.segment.Segmenter` (sentences, tokens,
multiword tokens) and, optionally, fitted cseq taggers that label the
syntactic words, one per CoNLL-U column (:data:`COLUMNS`: UPOS, XPOS,
FEATS, and LEMMA through a :class:`cseq.segment.lemmas.Lemmatizer`).  It
reads paragraphs (:func:`cseq.io.raw.iter_paragraphs` for a file,
:func:`cseq.io.raw.paragraphs_of` for a string), segments each, and tags the
words in batches of about ``batch_chars`` characters, so a file of any size
needs memory for one batch.  Every token keeps its character offsets, so
labels map back onto the original string.

:meth:`Pipeline.train` trains all of it from one CoNLL-U treebank (``cseq
pipeline train``), :meth:`Pipeline.save` writes it as one file (a cseq model
container whose parts are the models' own files, see
``docs/model-format.md``) and :func:`load_pipeline` reads such a file or the
pipeline shipped in the wheel (``"en"``: UD English EWT, see
``cseq/data/README.md``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.io.raw import Paragraph, paragraphs_of

__all__ = ["COLUMNS", "Pipeline", "TaggedSentence", "format_tagged", "load_pipeline"]

#: The CoNLL-U columns a pipeline may tag, in the order they are tagged and written.
COLUMNS = ("upos", "xpos", "feats", "lemma")


@dataclass(frozen=True, slots=True)
class TaggedSentence:
    """One sentence of raw text, segmented and (with taggers) tagged.

    Attributes
    ----------
    sentence : cseq.segment.Sentence
        Its tokens, with offsets into ``paragraph.text``.
    paragraph : Paragraph
        The paragraph it comes from (its text, and its offset in the file
        or string: add it to a token's offsets to index the whole input).
    labels : tuple of str or None
        One label per syntactic word (``sentence.words()``) of the
        pipeline's first column (UPOS where it tags UPOS); None without a
        tagger.
    first, last : bool
        Whether it is the first (last) sentence of its paragraph.
    columns : dict of str to tuple of str, optional
        Every tagged column's labels by CoNLL-U column name (``"upos"``,
        ``"xpos"``, ``"feats"``, ``"lemma"``); None without a tagger.
    """

    sentence: Any
    paragraph: Paragraph
    labels: tuple[str, ...] | None
    first: bool
    last: bool
    columns: Mapping[str, tuple[str, ...]] | None = None

    @property
    def words(self) -> list[str]:
        """The syntactic words, one per label."""
        return list(self.sentence.words())


class Pipeline:
    """A segmenter and, optionally, taggers: raw text to tagged sentences.

    Parameters
    ----------
    segmenter : cseq.segment.Segmenter
        A fitted segmenter (or an object with its ``segment(text)``; its
        ``segment_many(texts)`` is used where it has one).
    tagger : fitted cseq estimator, optional
        A tagger that reads one column (the word); its labels go to the
        words of the segmented sentences, in the UPOS column.  Shorthand
        for ``taggers={"upos": tagger}``.
    taggers : dict of str to tagger, optional
        A tagger per CoNLL-U column (keys of :data:`COLUMNS`): fitted cseq
        estimators that read the word alone, and for ``"lemma"`` a
        :class:`cseq.segment.lemmas.Lemmatizer`.
    batch_chars : int, default 100000
        Characters of raw text segmented before the taggers run on their
        words at once (a tagger is fastest on large batches).

    Examples
    --------
    >>> nlp = cseq.load_pipeline("en")                        # doctest: +SKIP
    >>> [(w, lab) for s in nlp("It's 3pm. Go!") for w, lab in zip(s.words, s.labels)]  # doctest: +SKIP
    [('It', 'PRON'), ("'s", 'AUX'), ('3', 'NUM'), ('pm', 'NOUN'), ('.', 'PUNCT'), ...]
    """

    def __init__(self, segmenter: Any, tagger: Any = None, *,
                 taggers: Mapping[str, Any] | None = None, batch_chars: int = 100_000) -> None:
        if not callable(getattr(segmenter, "segment", None)):
            raise InputTypeError(f"segmenter must be a cseq Segmenter, got "
                                 f"{type(segmenter).__name__}")
        if tagger is not None and taggers is not None:
            raise InputError("give tagger or taggers, not both")
        if taggers is None:
            taggers = {} if tagger is None else {"upos": tagger}
        if not isinstance(taggers, Mapping):
            raise InputTypeError(f"taggers must be a dict of column to tagger, got "
                                 f"{type(taggers).__name__}")
        unknown = [c for c in taggers if c not in COLUMNS]
        if unknown:
            raise InputError(f"taggers: unknown column {unknown[0]!r} (one of "
                             f"{', '.join(COLUMNS)})")
        #: Columns per token each tagger reads: 1 (the word) or 2 (the word, the predicted UPOS).
        self._reads: dict[str, int] = {}
        for column, est in taggers.items():
            if column == "lemma" and not _is_lemmatizer(est):
                raise InputTypeError("the lemma column takes a cseq.segment.lemmas.Lemmatizer, "
                                     f"got {type(est).__name__}")
            self._reads[column] = _check_tagger(
                est.tagger if column == "lemma" else est, f"the {column} tagger",
                upos=column != "upos" and "upos" in taggers)
        if isinstance(batch_chars, bool) or not isinstance(batch_chars, int) or batch_chars < 1:
            raise InputError(f"batch_chars must be a positive integer, got {batch_chars!r}")
        self.segmenter = segmenter
        #: The taggers by column, in :data:`COLUMNS` order.
        self.taggers: dict[str, Any] = {c: taggers[c] for c in COLUMNS if c in taggers}
        self.batch_chars = batch_chars

    @property
    def tagger(self) -> Any:
        """The tagger of the first tagged column (UPOS where there is one), or None."""
        return next(iter(self.taggers.values()), None)

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
        predicted: dict[str, list[Any]] = {}
        if self.taggers and sentences:
            X = [[(w,) for w in s.words()] for s in sentences]
            with_upos = None
            for column, est in self.taggers.items():
                if self._reads[column] == 2:
                    # the word and its predicted UPOS (the UPOS tagger runs first)
                    if with_upos is None:
                        with_upos = [[(w, u) for (w,), u in zip(x, tags)]
                                     for x, tags in zip(X, predicted["upos"])]
                    predicted[column] = est.predict(with_upos, n_jobs=n_jobs)
                else:
                    predicted[column] = est.predict(X, n_jobs=n_jobs)
        first = next(iter(self.taggers), None)
        k = 0
        for para, sents in batch:
            for i, s in enumerate(sents):
                columns = ({c: tuple(labels[k]) for c, labels in predicted.items()}
                           if predicted else None)
                k += 1
                yield TaggedSentence(s, para, None if columns is None else columns[first],
                                     i == 0, i == len(sents) - 1, columns)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the whole pipeline to one file, atomically (a temporary file, then a rename).

        The file is a cseq model container (``docs/model-format.md``) whose
        header lists the parts and whose arrays are the parts' own model
        files, each checked on its own when loaded; :func:`load_pipeline`
        reads it.

        Raises
        ------
        InputTypeError
            If the segmenter or a tagger is not a fitted cseq model (a rule
            segmenter cannot be saved).
        """
        from cseq.io.serialize import dumps, pack, write_atomic
        estimator = getattr(self.segmenter, "estimator_", None)
        if estimator is None:
            raise InputTypeError("only a fitted cseq Segmenter can be saved in a pipeline file")
        parts = {"segmenter": dumps(estimator)}
        meta: dict[str, Any] = {"format": _PIPELINE_FORMAT, "columns": list(self.taggers)}
        for column, est in self.taggers.items():
            if column == "lemma":
                parts[column] = dumps(est.tagger)
                meta["lemma_table"] = est.get_state()
            else:
                parts[column] = dumps(est)
        arrays = {f"part:{name}": np.frombuffer(data, dtype=np.uint8)
                  for name, data in parts.items()}
        write_atomic(pack({"pipeline": meta}, arrays), path)

    @classmethod
    def train(cls, train: str | os.PathLike[str], dev: str | os.PathLike[str] | None = None, *,
              columns: Sequence[str] = COLUMNS, preset: str = "auto", clusters: Any = None,
              random_state: int = 0, verbose: bool = False, **kwargs: Any) -> Pipeline:
        """Train a segmenter and a tagger per column from one CoNLL-U treebank.

        Parameters
        ----------
        train : path
            The treebank's training file (CoNLL-U with ``# text`` lines or
            ``SpaceAfter=No``, as UD treebanks are).
        dev : path, optional
            A development file, scored after training when ``verbose``.
        columns : sequence of str, default all of :data:`COLUMNS`
            The columns to tag; a column that is ``_`` throughout ``train``
            is left out.
        preset : {"auto", "alphabetic", "nospace"}
            The segmenter's character features; ``"auto"`` chooses
            ``"nospace"`` when fewer than one token in five of ``train`` is
            followed by a space (Chinese, Japanese, Thai).
        clusters : optional
            Word classes for the taggers (``"en"`` or a file, as for
            :class:`cseq.TemplateFeaturizer`); none by default.
        random_state : int
            Seed of every learner.
        verbose : bool
            Print each part's training time (and dev scores) to stderr.
        **kwargs
            Passed to the :class:`Pipeline` (``batch_chars``).

        The settings (``PIPELINE_DEFAULTS`` in this module) are the same
        for every language: docs/languages.md gives how they score on
        eleven treebanks.
        """
        from cseq.segment import Segmenter
        from cseq.segment.conllu import space_share
        path = os.fspath(train)
        unknown = [c for c in columns if c not in COLUMNS]
        if isinstance(columns, str) or unknown:
            raise InputError(f"columns must be a list of {', '.join(COLUMNS)}, got "
                             f"{columns!r:.80}")
        if preset == "auto":
            preset = "nospace" if space_share(path) < 0.2 else "alphabetic"
        t0 = time.perf_counter()
        segmenter = Segmenter(PIPELINE_DEFAULTS["segmenter_learner"], preset,
                              max_iter=PIPELINE_DEFAULTS["segmenter_max_iter"],
                              random_state=random_state, n_jobs=1,
                              **PIPELINE_DEFAULTS["segmenter_params"])
        import warnings
        from cseq.exceptions import ConvergenceWarning
        with warnings.catch_warnings():
            # the iteration budget is a setting: L-BFGS stops there before its tolerance
            warnings.simplefilter("ignore", ConvergenceWarning)
            segmenter.fit(path)
        _say(verbose, f"segmenter ({preset}): {time.perf_counter() - t0:.0f}s")
        from cseq.io.conll_read import read_conllu
        rows = read_conllu(path, label=None, columns=("form", "lemma", "upos", "xpos", "feats"))[0]
        words = [[r[0] for r in sent] for sent in rows]
        index = {"lemma": 1, "upos": 2, "xpos": 3, "feats": 4}
        taggers: dict[str, Any] = {}
        for column in COLUMNS:
            if column not in columns:
                continue
            labels = [[r[index[column]] for r in sent] for sent in rows]
            if all(lab == "_" for sent in labels for lab in sent):
                _say(verbose, f"{column}: '_' throughout, not tagged")
                continue
            t0 = time.perf_counter()
            # after the UPOS tagger, every column reads the word and its UPOS (the gold one
            # in training, the predicted one when tagging)
            upos = [[r[2] for r in sent] for sent in rows] if "upos" in taggers else None
            if column == "lemma":
                from cseq.segment.lemmas import Lemmatizer, lemma_rule
                n = len({lemma_rule(w, lab) for ws, ls in zip(words, labels)
                         for w, lab in zip(ws, ls)})
                taggers[column] = Lemmatizer.fit(
                    _column_tagger(column, n, random_state, clusters, upos is not None),
                    words, labels,
                    upos=upos)
            else:
                n = len({lab for sent in labels for lab in sent})
                X = ([[(w,) for w in ws] for ws in words] if upos is None else
                     [[(w, u) for w, u in zip(ws, us)] for ws, us in zip(words, upos)])
                taggers[column] = _column_tagger(column, n, random_state, clusters,
                                                 upos is not None).fit(X, labels)
            _say(verbose, f"{column} ({n} labels, {_kind(n)}): {time.perf_counter() - t0:.0f}s")
        return cls(segmenter, taggers=taggers, **kwargs)


#: Version of the pipeline file's header (``pipeline.format``); a reader refuses a newer one.
_PIPELINE_FORMAT = 1

#: The templates a column tagger adds to the ``pos`` preset when it reads the UPOS as
#: column 1 (the XPOS tagger): the tag here and around, and with the word's suffix and the word.
UPOS_TEMPLATES = """\
U90:%x[0,1]
U91:%x[-1,1]
U92:%x[1,1]
U93:%x[-1,1]/%x[0,1]/%x[1,1]
U94:%x[0,1]/%x[0,0:suffix3]
U95:%x[0,1]/%x[0,0:suffix1]
U96:%x[0,1]/%x[0,0:lower]
"""

#: The lemma tagger's templates: the word, its affixes and shape, the rules seen with it,
#: its UPOS with its suffixes, and its neighbours.  On the dev files of UD Greek GDT,
#: Turkish IMST and French Sequoia they gave lemmas +0.51, +0.95 and +0.19 over the ``pos``
#: preset with UPOS_TEMPLATES, at half the training and tagging time (the rule classes are
#: hundreds of labels, and each template's weights are a row of them).  Chosen on those dev
#: files; ``bench/accuracy/pipeline_columns.py`` compares the candidates on folds of the
#: training files.
LEMMA_TEMPLATES = """\
U00:%x[0,0:lower]
U01:%x[0,0]
U02:%x[0,0:prefix1]
U03:%x[0,0:prefix2]
U04:%x[0,0:prefix3]
U05:%x[0,0:suffix1]
U06:%x[0,0:suffix2]
U07:%x[0,0:suffix3]
U08:%x[0,0:suffix4]
U09:%x[0,0:suffix5]
U10:%x[0,0:suffix6]
U11:%x[0,0:istitle]
U12:%x[0,0:isupper]
U13:%x[0,0:shape]
U14:%x[0,0:len]
U15:%x[0,0:tags]
U16:%x[0,0:tags]/%x[0,0:suffix3]
U17:%x[-1,0:lower]
U18:%x[1,0:lower]
U20:%x[0,1]
U21:%x[0,1]/%x[0,0:suffix1]
U22:%x[0,1]/%x[0,0:suffix2]
U23:%x[0,1]/%x[0,0:suffix3]
U24:%x[0,1]/%x[0,0:suffix4]
U25:%x[0,1]/%x[0,0:lower]
U26:%x[-1,1]/%x[0,1]
U99:bias
"""

#: The FEATS tagger's: the lemma's templates and the context agreement reads (the tags,
#: suffixes and words around).  Dev accuracy of the bundle against the ``pos`` preset with
#: UPOS_TEMPLATES: Greek -0.35, Turkish +0.21, Czech CLTT +1.11, at 0.6 of the time; on 3
#: folds of Czech CLTT's training file +1.16 +- 0.44 (bench/accuracy/pipeline_columns.py).
FEATS_TEMPLATES = LEMMA_TEMPLATES.replace("U99:bias\n", "") + """\
U30:%x[-1,0:suffix3]
U31:%x[1,0:suffix3]
U32:%x[-1,1]
U33:%x[1,1]
U34:%x[-1,1]/%x[0,1]/%x[1,1]
U35:%x[-2,0:lower]
U36:%x[2,0:lower]
U37:%x[-1,0:lower]/%x[0,0:lower]
U38:%x[0,0:lower]/%x[1,0:lower]
U39:%x[1,1]/%x[0,0:suffix2]
U40:%x[-1,1]/%x[0,0:suffix2]
U41:%x[-1,0:suffix2]/%x[0,0:suffix2]
U42:%x[1,0:tags]
U43:%x[-1,0:tags]
U99:bias
"""


def _without_upos(templates: str) -> str:
    """``templates`` without the lines that read column 1 (a pipeline without UPOS)."""
    return "".join(line for line in templates.splitlines(keepends=True) if ",1]" not in line)


#: The settings of :meth:`Pipeline.train`, the same for every language.  The segmenter's
#: are the English pipeline's (scripts/build_pipeline.py); a tagger per column reads the
#: ``pos`` templates, as a second-order chain for up to 20 labels, a first-order one for
#: up to 64 and greedy left to right beyond (Viterbi's cost grows as labels**(order + 1)),
#: without the label-pair history (its L**3 weights are 12 GB at a lemma's 1,100 rules).
PIPELINE_DEFAULTS: dict[str, Any] = {
    "segmenter_learner": "crf",
    "segmenter_max_iter": 100,
    "segmenter_params": {"c1": 0.1, "c2": 0.1},
    "tagger_epochs": 10,
    "greedy_epochs": 10,
    # attributes seen once dropped: on Turkish IMST and Greek GDT dev, UPOS, FEATS and lemma
    # accuracy within 0.15 of min_freq 1 (either way), the taggers' files a third to a half
    # smaller (the English pipeline drops those seen fewer than 5 times)
    "min_freq": 2,
    "order2_max_labels": 20,
    "order1_max_labels": 64,
    "upos_templates": UPOS_TEMPLATES,
    "lemma_templates": LEMMA_TEMPLATES,
    "feats_templates": FEATS_TEMPLATES,
}


def _kind(n_labels: int) -> str:
    if n_labels <= PIPELINE_DEFAULTS["order2_max_labels"]:
        return "order 2"
    if n_labels <= PIPELINE_DEFAULTS["order1_max_labels"]:
        return "order 1"
    return "greedy"


def _column_tagger(column: str, n_labels: int, seed: int, clusters: Any,
                   upos: bool = False) -> Any:
    """An unfitted tagger for ``column`` of ``n_labels`` labels (PIPELINE_DEFAULTS); with
    ``upos``, one that reads the UPOS as column 1 too."""
    from cseq.features.featurizer import TemplateFeaturizer
    from cseq.features.presets import PRESETS
    from cseq.learners.greedy import GreedyTagger
    from cseq.learners.perceptron import StructuredPerceptron
    if column in ("lemma", "feats"):
        templates = PIPELINE_DEFAULTS[f"{column}_templates"]
        templates = templates if upos else _without_upos(templates)
    else:
        templates = PRESETS["pos"] + (PIPELINE_DEFAULTS["upos_templates"] if upos else "")
    features = TemplateFeaturizer(templates, min_freq=PIPELINE_DEFAULTS["min_freq"],
                                       clusters=clusters)
    kind = _kind(n_labels)
    if kind == "greedy":
        return GreedyTagger(max_iter=PIPELINE_DEFAULTS["greedy_epochs"], random_state=seed,
                                 pair_history=False, features=features)
    return StructuredPerceptron(max_iter=PIPELINE_DEFAULTS["tagger_epochs"],
                                     random_state=seed, order=2 if kind == "order 2" else 1,
                                     features=features)


def _say(verbose: bool, message: str) -> None:
    if verbose:
        print(message, file=sys.stderr, flush=True)


def _is_lemmatizer(est: Any) -> bool:
    from cseq.segment.lemmas import Lemmatizer
    return isinstance(est, Lemmatizer)


def format_tagged(tagged: Iterable[TaggedSentence], *, fmt: str = "conllu",
                  column: str = "upos") -> Iterator[str]:
    """The output text of tagged sentences, one sentence at a time, numbered from 1.

    ``fmt`` is ``"conllu"``, ``"text"`` or ``"jsonl"``.  A sentence of a
    pipeline with several columns writes each in its own CoNLL-U column
    (``column`` is then not used); one with a single column writes it in
    ``column`` (see :func:`cseq.io.conllu_write.format_segmented`).
    """
    from cseq.io.conllu_write import format_segmented
    known: set[Any] = set()
    for n, t in enumerate(tagged, 1):
        labels: Any = t.labels
        if t.columns is not None and len(t.columns) > 1:
            labels = t.columns
        yield format_segmented(t.sentence, labels, paragraph=t.paragraph.text, fmt=fmt,
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


def _check_tagger(tagger: Any, what: str, upos: bool = False) -> int:
    """Refuse a tagger that cannot tag words alone (one column per token), or a segmenter's
    model; with ``upos`` (a pipeline with a UPOS tagger) a second column, the predicted
    UPOS, is allowed.  Returns the columns the tagger reads."""
    if getattr(tagger, "model_", None) is None or not callable(getattr(tagger, "predict", None)):
        raise InputTypeError(f"{what} must be a fitted cseq tagger, got {type(tagger).__name__}")
    refuse_segmenter(tagger, what)
    from cseq._tagging import model_columns
    trained, need = model_columns(tagger)
    n = trained or need
    if n > (2 if upos else 1) or need > n:
        if upos:
            raise InputError(f"{what} reads {n} columns per token; a pipeline gives it the "
                             "word and the predicted UPOS at most")
        raise InputError(f"{what} reads {n} columns per token; raw text gives it the word "
                         "only (train it on the words alone)")
    return n


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


#: Pipelines shipped in the wheel: name -> pipeline file in cseq/data.
BUNDLED = {"en": "en_ewt.cseqp"}


def load_pipeline(name: str | os.PathLike[str] = "en", **kwargs: Any) -> Pipeline:
    """The pipeline ``name`` shipped with cseq (``"en"``), or a pipeline file's.

    Parameters
    ----------
    name : str or os.PathLike, default "en"
        ``"en"``: a segmenter and a UPOS tagger trained on UD English EWT
        (CC BY-SA 4.0, see ``cseq/data/README.md``); otherwise the path of
        a file :meth:`Pipeline.save` (``cseq pipeline train``) wrote.
    **kwargs
        Passed to :class:`Pipeline` (``batch_chars``).

    Raises
    ------
    InputError
        For an unknown name that is not a file, or if the wheel lacks the
        pipeline's file.
    ModelFormatError
        If the file is not a valid pipeline file (a single model's file, a
        truncated or corrupted one), naming it.
    """
    if isinstance(name, str) and name in BUNDLED and not os.path.exists(name):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", BUNDLED[name])
        if not os.path.exists(path):
            raise InputError(f"the {name!r} pipeline's file {path} is missing from this "
                             "installation (build it with scripts/build_pipeline.py)")
    elif isinstance(name, (str, os.PathLike)):
        path = os.fspath(name)
        if not os.path.exists(path):
            raise InputError(f"no pipeline {path!r}: neither a shipped one "
                             f"({', '.join(sorted(BUNDLED))}) nor a file")
    else:
        raise InputTypeError(f"load_pipeline takes a name or a path, got {type(name).__name__}")
    from cseq.io.serialize import read_file_bytes
    try:
        return _pipeline_from_bytes(read_file_bytes(path), **kwargs)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None


def _pipeline_from_bytes(data: bytes, **kwargs: Any) -> Pipeline:
    """The pipeline of a pipeline file's bytes, every part checked as a model file of its own."""
    from cseq.io.serialize import loads, unpack
    from cseq.segment import Segmenter
    from cseq.segment.lemmas import Lemmatizer

    def known(header: dict) -> set[str]:
        meta = header.get("pipeline")
        if not isinstance(meta, dict):
            what = ("a single model's file, not a pipeline file (give it with --segmenter or "
                    "as a tagger)") if "estimator" in header else "not a pipeline file"
            raise ModelFormatError(what)
        version = meta.get("format")
        if type(version) is not int or not 1 <= version <= _PIPELINE_FORMAT:
            raise ModelFormatError(f"pipeline format {version!r:.20} is not supported (this "
                                   f"cseq reads 1..{_PIPELINE_FORMAT})")
        columns = meta.get("columns")
        if (not isinstance(columns, list) or len(set(map(str, columns))) != len(columns)
                or not all(c in COLUMNS for c in columns)):
            raise ModelFormatError(f"the pipeline's columns {columns!r:.80} are not a list of "
                                   f"distinct {', '.join(COLUMNS)}")
        return {f"part:{name}" for name in ("segmenter", *columns)}

    header, arrays = unpack(data, known)
    meta = header["pipeline"]
    missing = [n for n in known(header) if n not in arrays]
    if missing:
        raise ModelFormatError(f"the pipeline file lacks its part {missing[0][5:]!r}")

    def part(name: str) -> Any:
        try:
            return loads(arrays[f"part:{name}"].tobytes())
        except ModelFormatError as exc:
            raise ModelFormatError(f"its {name} part: {exc}") from None

    segmenter = Segmenter.from_estimator(part("segmenter"), "its segmenter part")
    taggers: dict[str, Any] = {}
    for column in meta["columns"]:
        est = part(column)
        if getattr(est, "model_", None) is None:
            raise ModelFormatError(f"its {column} part is an unfitted model")
        if column == "lemma":
            est = Lemmatizer(est, Lemmatizer.table_from_state(meta.get("lemma_table")))
        taggers[column] = est
    try:
        return Pipeline(segmenter, taggers=taggers, **kwargs)
    except (InputError, InputTypeError) as exc:
        raise ModelFormatError(f"its parts do not make a pipeline: {exc}") from None
