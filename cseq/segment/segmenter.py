"""The trainable segmenter: sentences, tokens and multiword tokens as character labels.

Each character of the text gets one of :data:`cseq.segment.conllu.LABELS`
(begins a token, a sentence, a multiword token, continues one, splits one,
whitespace between tokens) from a registered learner of cseq over the
character features of :mod:`cseq.segment.features`; the compiled
:func:`cseq.segment._chars.spans` turns the labels into tokens whose offsets
cover every non-whitespace character once.  Multiword tokens that are not a
plain split of their surface get their words from the table learned in
training.

The model file is the learner's own (:mod:`cseq.io.serialize`): the
featurizer it stores carries the preset and the multiword table, so that a
segmenter file has every guarantee of a tagger's file, and
:meth:`Segmenter.load` refuses any model whose featurizer is not the
segmenter's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from cseq.exceptions import InputError, InputTypeError, ModelFormatError, NotFittedError
from cseq.io.serialize import load as load_model
from cseq.registry import COMMANDS, command_of
from cseq.segment import _chars
from cseq.segment.conllu import LABELS, multiword_table, paragraphs
from cseq.segment.features import PRESETS, CharFeatures

__all__ = ["Segmenter", "Sentence", "Token"]

#: The role (:data:`cseq.segment._chars.ROLES`) of each label of LABELS.
_ROLE = {"O": 0, "B": 1, "S": 2, "BW": 3, "SW": 4, "I": 5, "J": 6}
_SENTENCE, _MULTIWORD, _SPACE_AFTER = 1, 2, 4
#: Characters featurized and decoded at a time in a long string, and the
#: context decoded with them on either side (Segmenter._labels).
_WINDOW, _MARGIN = 1 << 16, 256


class Token(NamedTuple):
    """One token of a segmented string.

    A named tuple rather than a dataclass: ``segment()`` makes one per token,
    and a tuple is built in C (``Token._make``) at a third of the cost of a
    frozen dataclass's ``__init__``, which was the largest Python part of a
    ``segment()`` call; the fields, their order, the ``repr`` and the
    immutability are the same.

    Attributes
    ----------
    form : str
        ``text[start:end]`` of the string given to :meth:`Segmenter.segment`.
    start, end : int
        Character offsets (``str`` indices) into that string.
    words : tuple of str
        The syntactic words: ``(form,)`` for a plain token, two or more for a
        multiword token.
    space_after : bool
        Whether whitespace follows in the input (False at its end).
    """

    form: str
    start: int
    end: int
    words: tuple[str, ...]
    space_after: bool


@dataclass(frozen=True, slots=True)
class Sentence:
    """The tokens of one sentence, in order."""

    tokens: tuple[Token, ...]

    @property
    def start(self) -> int:
        """Offset of the sentence's first character."""
        return self.tokens[0].start

    @property
    def end(self) -> int:
        """Offset just past the sentence's last character."""
        return self.tokens[-1].end

    def words(self) -> list[str]:
        """Every token's words, flattened: what a tagger reads."""
        return [w for t in self.tokens for w in t.words]


def _recase(form: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """Lower-cased ``words`` of a table entry in the case of ``form`` (all upper, or title)."""
    if len(form) > 1 and form.isupper():
        return tuple(w.upper() for w in words)
    if form[:1].isupper():
        return (words[0][:1].upper() + words[0][1:], *words[1:])
    return words


def _lines_twice(source: Any) -> Any:
    """``source`` in a form that can be read twice (a path stays a path)."""
    if isinstance(source, (str, os.PathLike)):
        return source
    if hasattr(source, "read"):
        return list(source)
    if isinstance(source, Iterable) and not isinstance(source, (bytes, dict)):
        return list(source)
    raise InputTypeError("segmenter data must be a CoNLL-U path or an iterable of its lines, "
                         f"got {type(source).__name__}")


class Segmenter:
    """Splits raw text into sentences, tokens and words, as character-level sequence labeling.

    Parameters
    ----------
    learner : str
        A ``cseq train --algorithm`` name that reads features (``"perceptron"``,
        ``"crf"``, ``"crf-sgd"``, ``"ssvm"``, ...).
    preset : {"alphabetic", "nospace"}
        The character features: ``"nospace"`` for languages written without
        spaces.
    max_iter : int, optional
        Training iterations (the learner's default otherwise).
    random_state : int
        Seed of the learners that shuffle.
    verbose : int
        Passed to the learner (its progress lines).
    **learner_params
        Any other hyperparameter of the learner (``c2=0.1``, ...).

    Examples
    --------
    >>> def row(i, form, misc="_"):
    ...     return chr(9).join([str(i), form, *["_"] * 7, misc])  # TAB-separated
    >>> sentence = ["# text = Hi there.", row(1, "Hi"), row(2, "there", "SpaceAfter=No"),
    ...             row(3, "."), ""]
    >>> seg = Segmenter("crf", max_iter=30).fit(sentence * 10)
    >>> [[t.form for t in s.tokens] for s in seg.segment("Hi there. Hi there.")]
    [['Hi', 'there', '.'], ['Hi', 'there', '.']]
    >>> seg.segment("Hi there.")[0].tokens[1]
    Token(form='there', start=3, end=8, words=('there',), space_after=False)
    """

    def __init__(self, learner: str = "perceptron", preset: str = "alphabetic", *,
                 max_iter: int | None = None, random_state: int = 0, verbose: int = 0,
                 **learner_params: Any) -> None:
        command = COMMANDS.get(learner) if isinstance(learner, str) else None
        if command is None:
            raise InputError(f"unknown learner {learner!r} (one of {sorted(COMMANDS)})")
        if not command.templates:
            raise InputError(f"the {learner} learner reads words, not features: it cannot "
                             "segment characters")
        if not isinstance(preset, str) or preset not in PRESETS:
            raise InputError(f"unknown segmenter preset {preset!r} (one of {sorted(PRESETS)})")
        self.learner, self.preset = learner, preset
        self.max_iter, self.random_state, self.verbose = max_iter, random_state, verbose
        self.learner_params = dict(learner_params)
        #: The fitted learner (None until :meth:`fit` or :meth:`load`).
        self.estimator_: Any = None
        self._roles: tuple[Any, np.ndarray] | None = None
        self.new_estimator(CharFeatures(preset))  # refuse bad hyperparameters now, not after reading

    def new_estimator(self, features: CharFeatures) -> Any:
        """A new, unfitted learner of this configuration reading ``features``."""
        command = COMMANDS[self.learner]
        params: dict[str, Any] = {**command.defaults, **self.learner_params}
        names = set(command.estimator._param_names)
        if self.max_iter is not None:
            params["max_iter"] = self.max_iter
        for name, value in (("random_state", self.random_state), ("verbose", bool(self.verbose))):
            if name in names:
                params[name] = value
        params.update(command.fixed)
        params["features"] = features
        try:
            est = command.estimator(**params)
            est._validate_params()
        except (TypeError, ValueError) as exc:
            raise InputError(f"bad {self.learner} hyperparameters for the segmenter: {exc}") from None
        return est

    def iterations(self) -> int:
        """The most iterations a fit of this configuration reports (its learner's)."""
        return self.new_estimator(CharFeatures(self.preset))._iterations()

    def fit(self, train: Any, dev: Any = None, *,
            callback: Callable[[dict[str, Any]], object] | None = None) -> Segmenter:
        """Train on CoNLL-U ``train`` (a path, an open file or an iterable of its lines).

        ``dev`` (same forms) is scored after every iteration (character label
        accuracy, the learner's ``dev_accuracy``); ``callback`` gets each
        iteration's record.  The multiword table comes from ``train``.
        """
        train = _lines_twice(train)
        X, y = self._data(train)
        X_dev = y_dev = None
        if dev is not None:
            X_dev, y_dev = self._data(dev)
        est = self.new_estimator(CharFeatures(self.preset, multiword_table(train)))
        est.fit(X, y, X_dev, y_dev, callback=callback)
        self.estimator_ = est
        return self

    @staticmethod
    def _data(source: Any) -> tuple[list[str], list[list[str]]]:
        paras = list(paragraphs(source))
        if not paras:
            raise InputError("the segmenter's CoNLL-U data holds no sentence")
        return [p.text for p in paras], [p.labels for p in paras]

    def _fitted(self) -> tuple[Any, np.ndarray]:
        """The learner's fitted snapshot and the role of each of its label ids."""
        if self.estimator_ is None:
            raise NotFittedError("this Segmenter is not fitted yet; call fit or load")
        fitted = self.estimator_._check_fitted()
        # the roles of the last snapshot seen, kept: making them costs as much as a
        # short paragraph's decoding; a new snapshot (refit, load) gets its own
        cached = self._roles
        if cached is not None and cached[0] is fitted:
            return cached
        roles = np.array([_ROLE[c] for c in fitted.classes], dtype=np.int8)
        self._roles = (fitted, roles)
        return fitted, roles

    def segment(self, text: str) -> list[Sentence]:
        """The sentences of ``text``; every token's offsets index ``text`` itself.

        Every non-whitespace character of ``text`` is in exactly one token,
        tokens are in order and only whitespace lies between them; an empty
        or whitespace-only string has no sentence.
        """
        if not isinstance(text, str):
            raise InputTypeError(f"segment() takes a str, got {type(text).__name__}")
        fitted, roles = self._fitted()
        if not text or text.isspace():
            return []
        return self._sentences(text, self._labels(fitted, text), fitted, roles)

    def segment_many(self, texts: Sequence[str]) -> list[list[Sentence]]:
        """``segment()`` of each string, the short ones featurized and decoded together.

        The same sentences as one ``segment()`` call per string (the labels
        of a string do not depend on the strings beside it: each is its own
        sequence); for many short strings (paragraphs) it saves the fixed
        cost of a featurizing and a decoding call per string.  Strings are
        grouped up to :data:`_WINDOW` characters, so the features' memory is
        that of one window, as for one long string.
        """
        if isinstance(texts, str):
            raise InputTypeError("segment_many() takes a list of strings, not one string")
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise InputTypeError(f"segment_many() takes strings, got {type(text).__name__}")
        fitted, roles = self._fitted()
        out: list[list[Sentence]] = [[] for _ in texts]
        group: list[int] = []
        n_group = 0
        for i, text in enumerate(texts):
            if not text or text.isspace():
                continue
            if len(text) > _WINDOW:
                out[i] = self._sentences(text, self._labels(fitted, text), fitted, roles)
                continue
            if n_group + len(text) > _WINDOW:
                self._segment_group(texts, group, out, fitted, roles)
                group, n_group = [], 0
            group.append(i)
            n_group += len(text)
        self._segment_group(texts, group, out, fitted, roles)
        return out

    def _segment_group(self, texts: list[str], group: list[int], out: list[list[Sentence]],
                       fitted: Any, roles: np.ndarray) -> None:
        """Fill ``out[i]`` for the strings ``texts[i]``, ``i`` in ``group``, in one decoding."""
        if not group:
            return
        labels = fitted.model.decode(fitted.featurizer.transform([texts[i] for i in group]))
        at = 0
        for i in group:
            n = len(texts[i])
            out[i] = self._sentences(texts[i], labels[at:at + n], fitted, roles)
            at += n

    def _sentences(self, text: str, labels: np.ndarray, fitted: Any, roles: np.ndarray
                   ) -> list[Sentence]:
        """The sentences of ``text`` from the label id of each of its characters."""
        starts, ends, flags, split_ptr, splits = _chars.spans(text, labels, roles)
        table = fitted.featurizer.multiword
        a_list, b_list, f_list = starts.tolist(), ends.tolist(), flags.tolist()
        forms = [text[a:b] for a, b in zip(a_list, b_list)]
        words = [(form,) for form in forms]
        multiword = [t for t, f in enumerate(f_list) if f & _MULTIWORD]
        if multiword:
            split_list, ptr = splits.tolist(), split_ptr.tolist()
            for t in multiword:
                words[t] = self._words(forms[t], a_list[t], split_list[ptr[t]:ptr[t + 1]], table)
        # the tokens in one pass of C (Token._make over zip), then cut into sentences
        tokens = list(map(Token._make, zip(forms, a_list, b_list, words,
                                           [f & _SPACE_AFTER != 0 for f in f_list])))
        cuts = [t for t, f in enumerate(f_list) if f & _SENTENCE and t]
        return [Sentence(tuple(tokens[i:j])) for i, j in zip([0, *cuts], [*cuts, len(tokens)])]

    @staticmethod
    def _labels(fitted: Any, text: str) -> np.ndarray:
        """The label id of every character of ``text``.

        A long string is featurized and decoded :data:`_WINDOW` characters at
        a time, each window with :data:`_MARGIN` characters of context either
        side that are decoded and dropped: the features of a character read
        a few characters and the chunks around it, and distant characters
        reach its label only through the chain, whose best path forgets them
        within a few words; so the labels are those of the whole string
        (the tests compare both) and the features' memory (some 200 bytes a
        character) is that of one window, whatever the string's length.
        """
        n = len(text)
        if n <= _WINDOW + 2 * _MARGIN:
            return fitted.model.decode(fitted.featurizer.transform([text]))
        labels = np.empty(n, dtype=np.int32)
        for a in range(0, n, _WINDOW):
            b = min(n, a + _WINDOW)
            lo, hi = max(0, a - _MARGIN), min(n, b + _MARGIN)
            window = fitted.model.decode(fitted.featurizer.transform([text[lo:hi]]))
            labels[a:b] = window[a - lo:b - lo]
        return labels

    @staticmethod
    def _words(form: str, start: int, splits: list[int],
               table: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
        """The words of a multiword token: from the table (as written, then lower-cased),
        else split at the predicted points, else the token alone."""
        words = table.get(form)
        if words is not None:
            return words
        words = table.get(form.lower())
        if words is not None:
            return _recase(form, words)
        cuts = [0, *(s - start for s in splits), len(form)]
        return tuple(form[i:j] for i, j in zip(cuts, cuts[1:]) if j > i) or (form,)

    def score(self, source: Any) -> dict[str, float]:
        """Tokens, words and sentences F1 (in %) on CoNLL-U ``source``, paragraph by paragraph.

        A token or sentence counts when its offsets match gold; a token's
        words when its offsets and its words match (a quick check; the UD
        scorer aligns words by characters).
        """
        counts = {k: [0, 0, 0] for k in ("tokens", "words", "sentences")}  # gold, predicted, both
        for para in paragraphs(source):
            pred = self.segment(para.text)
            gold_tok = {(a, b): w for sent in para.sentences for a, b, w in sent}
            pred_tok = {(t.start, t.end): t.words for s in pred for t in s.tokens}
            gold_sent = {(s[0][0], s[-1][1]) for s in para.sentences if s}
            pred_sent = {(s.start, s.end) for s in pred}
            both = gold_tok.keys() & pred_tok.keys()
            for key, g, p, n in (
                    ("tokens", len(gold_tok), len(pred_tok), len(both)),
                    ("words", sum(map(len, gold_tok.values())), sum(map(len, pred_tok.values())),
                     sum(len(gold_tok[k]) for k in both if gold_tok[k] == pred_tok[k])),
                    ("sentences", len(gold_sent), len(pred_sent), len(gold_sent & pred_sent))):
                counts[key][0] += g
                counts[key][1] += p
                counts[key][2] += n
        return {k: (200.0 * n / (g + p) if g + p else 100.0) for k, (g, p, n) in counts.items()}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model file atomically (the learner's file: temp file and rename)."""
        if self.estimator_ is None:
            raise NotFittedError("cannot save this Segmenter: it is not fitted")
        self.estimator_.save(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Segmenter:
        """A segmenter from a model file :meth:`save` wrote (never unpickles).

        Raises
        ------
        ModelFormatError
            If the file is not a cseq model, or a model that is not a
            segmenter (e.g. a tagger).
        """
        return cls.from_estimator(load_model(path), str(path))

    @classmethod
    def from_estimator(cls, est: Any, where: str = "the model") -> Segmenter:
        """A segmenter around a fitted learner whose featurizer is the segmenter's."""
        fitted = getattr(est, "_fitted", None)
        if fitted is None or fitted.model is None or not isinstance(fitted.featurizer,
                                                                    CharFeatures):
            raise ModelFormatError(f"{where} is not a segmenter model (a tagger's model? train "
                                   "one with cseq train FILE.conllu --segmenter)")
        unknown = set(fitted.classes) - set(LABELS)
        if unknown:
            raise ModelFormatError(f"{where}: labels {sorted(unknown)} are not segmenter labels")
        command = command_of(est)
        if command is None:
            raise ModelFormatError(f"{where}: its learner is not one of cseq train's commands")
        params = {k: v for k, v in est.get_params(deep=False).items()
                  if k not in command.fixed and k != "features"}
        self = cls(command.name, fitted.featurizer.preset, max_iter=params.pop("max_iter", None),
                   random_state=params.pop("random_state", 0),
                   verbose=params.pop("verbose", False), **params)
        self.estimator_ = est
        return self
