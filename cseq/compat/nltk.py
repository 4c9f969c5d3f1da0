"""An NLTK tagger (``nltk.tag.api.TaggerI``) that tags with a cseq model.

Code written against NLTK's tagger interface (``tag``, ``tag_sents``,
``accuracy``, ``confusion``, ``evaluate_per_tag``, ...) runs on a cseq model
by constructing :class:`CseqTagger` where it constructed an NLTK tagger::

    from cseq.compat.nltk import CseqTagger
    tagger = CseqTagger("pos.cseq")          # or a fitted estimator
    tagger.tag(["The", "dog", "barks"])      # [("The", "DET"), ("dog", "NOUN"), ...]
    tagger.accuracy(gold_sentences)          # gold: lists of (word, tag) pairs

NLTK is an optional dependency (``pip install 'cseq[nltk]'``); it is imported
with this module, never by ``import cseq``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cseq.compat._tagger import fitted_estimator
from cseq.exceptions import InputTypeError

try:
    from nltk.tag.api import TaggerI
except ImportError as exc:  # pragma: no cover - exercised with NLTK hidden
    raise ImportError("cseq.compat.nltk needs NLTK, an optional dependency of cseq: "
                      "pip install 'cseq[nltk]' (or pip install nltk)") from exc

__all__ = ["CseqTagger"]


class CseqTagger(TaggerI):
    """NLTK's ``TaggerI`` over a fitted cseq estimator.

    Parameters
    ----------
    model : fitted cseq estimator, or str or os.PathLike
        The estimator, or the path of a cseq model file (:func:`cseq.load`).
    features : callable or None, default None
        Maps one sentence (a list of tokens as NLTK gives them) to the
        model's input for it (one element of ``X`` as given to ``fit``): for
        a model trained on feature lists or dicts.  None passes the tokens
        as they are, which suits template models (``cseq train``'s, or a
        :class:`cseq.TemplateFeaturizer`) trained on words.

    Attributes
    ----------
    estimator : the fitted cseq estimator.

    Notes
    -----
    :meth:`tag_sents` tags all its sentences in one ``predict`` call, and
    :meth:`tag` and NLTK's scoring methods (``accuracy``, ``confusion``,
    ``evaluate_per_tag``, ...) go through it.

    Examples
    --------
    >>> import cseq
    >>> est = cseq.StructuredPerceptron(max_iter=5, random_state=0,
    ...                                 features=cseq.TemplateFeaturizer("pos")).fit(
    ...     [["the", "dog"], ["a", "cat"]], [["DET", "NOUN"], ["DET", "NOUN"]])
    >>> tagger = CseqTagger(est)
    >>> tagger.tag(["the", "cat"])
    [('the', 'DET'), ('cat', 'NOUN')]
    >>> tagger.accuracy([[("a", "DET"), ("dog", "NOUN")]])
    1.0
    """

    def __init__(self, model: Any, *, features: Callable[[list[Any]], Any] | None = None
                 ) -> None:
        if features is not None and not callable(features):
            raise InputTypeError(f"features must be a callable or None, got "
                                 f"{type(features).__name__}")
        self.estimator = fitted_estimator(model)
        self.features = features

    def tag(self, tokens: Sequence[Any]) -> list[tuple[Any, str]]:
        """``[(token, tag), ...]`` for one sentence (a list of tokens)."""
        return self.tag_sents([tokens])[0]

    def tag_sents(self, sentences: Iterable[Sequence[Any]]) -> list[list[tuple[Any, str]]]:
        """:meth:`tag` of each sentence, all in one ``predict`` call.

        ``sentences`` may be any iterable (NLTK's ``accuracy`` passes a
        generator); a sentence must be a list or tuple of tokens, not a
        string (NLTK would tag its characters).
        """
        sents = []
        for i, sent in enumerate(sentences):
            if isinstance(sent, (str, bytes)) or not isinstance(sent, Sequence):
                raise InputTypeError(f"sentence {i} must be a list of tokens, got "
                                     f"{type(sent).__name__} (split it into tokens first)")
            sents.append(list(sent))
        X = sents if self.features is None else [self.features(s) for s in sents]
        labels = self.estimator.predict(X)
        return [list(zip(s, tags)) for s, tags in zip(sents, labels)]
