"""The supervised hidden Markov model tagger, with TnT's suffix model for unknown words.

The HMM is stored as a :class:`~cseq.chain.model.LinearChain` whose weights are
log-probabilities: ``start = log P(y_0)``, ``transitions = log P(y_t |
y_{t-1})``, ``end = log P(stop | y_{n-1})`` and one dense row of state weights
per *attribute*, where the attributes are the known words (``log P(w | y)``)
and the suffixes of the suffix model (``log P(y | suffix) - log P(y)``, the
unknown-word emission up to a factor that is the same for every label).  A
token has exactly one attribute, its word if known, else the longest suffix
of it the model has seen.  The chain's score of a label path is then
``log P(x, y)`` up to a constant per sentence, so the shared Viterbi and
forward-backward kernels give the HMM's most probable path and its exact
posterior marginals, and the model file is the one every learner writes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from cseq._core.dtypes import ATTR, INDEX, VALUE
from cseq.learners.base import ChainEstimator, Number, check_number
from cseq.chain.normalized import GlobalChain
from cseq.exceptions import InputError, InputTypeError, ModelFormatError, NotFittedError
from cseq.features.protocol import Featurizer, register_featurizer
from cseq.features.vocabulary import decode_strings, encode_strings
from cseq.chain.sequences import Sequences
from cseq.registry import Command, register
from cseq.io.serialize import header_field

__all__ = ["HMM", "WordLexicon", "suffix_probabilities"]

#: Range of ``alpha``: 5e-324 made every unseen pair's probability 0 (log -inf).
_ALPHA_RANGE = (1e-100, 1e100)


def _describe(obj) -> str:
    return type(obj).__name__


def _word_of(tok, name: str | None, i: int, j: int) -> str:
    """The word of token ``X[i][j]`` (see :class:`HMM` for the rules)."""
    if type(tok) is str:
        return tok
    if isinstance(tok, (list, tuple)):
        if name is None:
            if tok and type(tok[0]) is str:
                return tok[0]
            raise InputError(f"X[{i}][{j}]: the token has no first feature (a str) to read "
                             "the word from") if not tok else \
                InputTypeError(f"X[{i}][{j}][0]: the word must be a str, got "
                               f"{_describe(tok[0])}")
        prefix = name + "="
        for feature in tok:
            if type(feature) is str and feature.startswith(prefix):
                return feature[len(prefix):]
        raise InputError(f"X[{i}][{j}]: the token has no feature {prefix}...")
    if isinstance(tok, dict):
        if name is None:
            for key, value in tok.items():
                if type(value) is str:
                    return value
                if type(key) is str:
                    return key
                break
            raise InputError(f"X[{i}][{j}]: the token has no first feature to read the "
                             "word from")
        value = tok.get(name)
        if type(value) is not str:
            raise InputError(f"X[{i}][{j}]: the token has no str feature {name!r}")
        return value
    raise InputTypeError(f"X[{i}][{j}]: a token must be a str, a list of features or a dict, "
                         f"got {_describe(tok)}")


def _words(X, name: str | None) -> tuple[list[str], np.ndarray]:
    """Every token's word, flat, and the sequence offsets (int64)."""
    if type(X) is not list and type(X) is not tuple:
        raise InputTypeError(f"X must be a list of sequences, got {_describe(X)}")
    words: list[str] = []
    seq_ptr = np.zeros(len(X) + 1, dtype=INDEX)
    for i, sent in enumerate(X):
        if type(sent) is not list and type(sent) is not tuple:
            raise InputTypeError(f"X[{i}] must be a list of tokens, got {_describe(sent)}")
        for j, tok in enumerate(sent):
            words.append(_word_of(tok, name, i, j))
        seq_ptr[i + 1] = len(words)
    return words, seq_ptr


def _case(word: str) -> str:
    """The suffix model's case class: ``"U"`` for a capitalised word, ``"l"`` otherwise."""
    return "U" if word[:1].isupper() else "l"


@register_featurizer
class WordLexicon(Featurizer):
    """The HMM's featurizer: one attribute per token, its word or its longest known suffix.

    Fitting keeps every training word (attribute ids ``0 .. n_words - 1`` in
    order of first appearance) and every suffix of length ``0 ..
    suffix_length`` of the *rare* training words (seen at most
    ``rare_threshold`` times), separately for capitalised and other words
    (Brants 2000), as further attributes in order of length.
    :meth:`transform` gives a known word its own attribute and an unknown
    word the attribute of its longest suffix seen among the rare words of its
    case class (the empty suffix at least; the fallback attribute when its
    class had no rare word).

    Parameters
    ----------
    word : str or None
        Which feature of a token is its word (see :class:`HMM`).
    suffix_length : int
        Longest suffix of the suffix model (TnT uses 10).
    rare_threshold : int
        Words seen at most this often in training feed the suffix model.
    """

    kind = "hmm-lexicon"
    #: Names of the arrays :meth:`get_state` returns.
    STATE_ARRAYS = frozenset({"words/blob", "words/offsets", "suffixes/blob",
                              "suffixes/offsets", "counts"})

    def __init__(self, word: str | None = None, suffix_length: int = 10,
                 rare_threshold: int = 10) -> None:
        self.word = word
        self.suffix_length = suffix_length
        self.rare_threshold = rare_threshold
        self._words: list[str] = []
        self._word_ids: dict[str, int] = {}
        self._suffixes: list[str] = []      # case class + suffix, e.g. "Uing"; "" the fallback
        self._suffix_ids: dict[str, int] = {}
        self._counts = np.zeros(0, dtype=np.int64)

    # -- configuration ----------------------------------------------------
    def get_config(self) -> dict:
        return {"kind": self.kind, "word": self.word, "suffix_length": self.suffix_length,
                "rare_threshold": self.rare_threshold}

    @classmethod
    def from_config(cls, config: dict) -> WordLexicon:
        word = config.get("word")
        m, r = config.get("suffix_length"), config.get("rare_threshold")
        if not (word is None or type(word) is str) or type(m) is not int or type(r) is not int \
                or m < 0 or r < 0:
            raise ModelFormatError("hmm lexicon: bad configuration")
        return cls(word, m, r)

    def fresh(self) -> WordLexicon:
        return WordLexicon(self.word, self.suffix_length, self.rare_threshold)

    # -- fitting and packing ----------------------------------------------
    def fit_transform(self, X) -> Sequences:
        """Learn the words of ``X`` and the suffixes of its rare words; pack ``X``."""
        words, seq_ptr = _words(X, self.word)
        ids = np.empty(len(words), dtype=ATTR)
        table = self._word_ids
        for t, w in enumerate(words):
            k = table.get(w)
            if k is None:
                k = table[w] = len(self._words)
                self._words.append(w)
            ids[t] = k
        self._counts = np.bincount(ids, minlength=len(self._words)).astype(np.int64)
        keys = [""]
        seen = {""}
        rare = [w for w, c in zip(self._words, self._counts) if c <= self.rare_threshold]
        # Up to the longest rare word, not to suffix_length: that may be 2**31 - 1.
        longest = max(map(len, rare), default=0)
        for length in range(min(self.suffix_length, longest) + 1):
            for w in rare:
                if length <= len(w):
                    key = _case(w) + (w[len(w) - length:] if length else "")
                    if key not in seen:
                        seen.add(key)
                        keys.append(key)
        self._set_suffixes(keys)
        return self._pack(ids, seq_ptr)

    def _set_suffixes(self, keys: list[str]) -> None:
        self._suffixes = keys
        self._suffix_ids = {k: len(self._words) + i for i, k in enumerate(keys)}

    def transform(self, X, *, n_jobs: int = 1) -> Sequences:
        """Pack ``X``: each token gets its word's attribute, or its longest known suffix's."""
        if not self._suffixes:
            raise NotFittedError("the word lexicon is not fitted")
        words, seq_ptr = _words(X, self.word)
        ids = np.empty(len(words), dtype=ATTR)
        cache: dict[str, int] = {}
        for t, w in enumerate(words):
            k = self._word_ids.get(w)
            if k is None:
                k = cache.get(w)
                if k is None:
                    k = cache[w] = self.unknown_attribute(w)
            ids[t] = k
        return self._pack(ids, seq_ptr)

    def unknown_attribute(self, word: str) -> int:
        """The attribute of an unknown word: its longest suffix seen in its case class."""
        case = _case(word)
        for length in range(min(self.suffix_length, len(word)), -1, -1):
            k = self._suffix_ids.get(case + (word[len(word) - length:] if length else ""))
            if k is not None:
                return k
        return self._suffix_ids[""]

    @staticmethod
    def _pack(ids: np.ndarray, seq_ptr: np.ndarray) -> Sequences:
        n = len(ids)
        return Sequences(seq_ptr, np.arange(n + 1, dtype=INDEX), ids,
                         np.ones(n, dtype=VALUE), None)

    # -- what the HMM reads -----------------------------------------------
    @property
    def n_words(self) -> int:
        return len(self._words)

    @property
    def n_attributes(self) -> int:
        return len(self._words) + len(self._suffixes)

    def attribute_names(self) -> list[str]:
        """Words, then suffixes as ``suffix[U]=ing`` (``U`` capitalised, ``l`` other)."""
        return self._words + [f"suffix[{k[0]}]={k[1:]}" if k else "suffix[*]="
                              for k in self._suffixes]

    def suffix_structure(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The suffix model's trie, in attribute order after the words.

        Returns
        -------
        parent : int64 (n_suffixes,)
            Index (into the suffixes) of each suffix with its first character
            removed; -1 for the roots (the empty suffix of each case class,
            and the fallback, index 0).
        length : int64 (n_suffixes,)
            Suffix lengths (-1 for the fallback).
        word_ptr, word_suffixes : int64
            For each rare training word ``w`` (in word id order, the others
            have none), the indexes of its suffixes of length ``0 ..
            min(len(w), suffix_length)``: ``word_suffixes[word_ptr[w]:word_ptr[w + 1]]``.
        """
        index = {k: i for i, k in enumerate(self._suffixes)}
        parent = np.full(len(self._suffixes), -1, dtype=np.int64)
        length = np.full(len(self._suffixes), -1, dtype=np.int64)
        for i, k in enumerate(self._suffixes):
            if k:
                length[i] = len(k) - 1
                parent[i] = index[k[0] + k[2:]] if len(k) > 1 else -1
        word_ptr = np.zeros(len(self._words) + 1, dtype=np.int64)
        flat: list[int] = []
        for w_id, (w, c) in enumerate(zip(self._words, self._counts)):
            if c <= self.rare_threshold:
                case = _case(w)
                flat.extend(index[case + (w[len(w) - n:] if n else "")]
                            for n in range(min(len(w), self.suffix_length) + 1))
            word_ptr[w_id + 1] = len(flat)
        return parent, length, word_ptr, np.array(flat, dtype=np.int64)

    # -- model files ------------------------------------------------------
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        words = encode_strings(self._words)
        suffixes = encode_strings(self._suffixes)
        arrays = {"words/blob": words["blob"], "words/offsets": words["offsets"],
                  "suffixes/blob": suffixes["blob"], "suffixes/offsets": suffixes["offsets"],
                  "counts": self._counts}
        return self.get_config(), arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> WordLexicon:
        self = cls.from_config(meta) if isinstance(meta, dict) else None
        if self is None or set(arrays) != cls.STATE_ARRAYS:
            raise ModelFormatError("hmm lexicon: expected its words, suffixes and counts")
        words = decode_strings(arrays["words/blob"], arrays["words/offsets"], "hmm lexicon")
        keys = decode_strings(arrays["suffixes/blob"], arrays["suffixes/offsets"],
                              "hmm lexicon")
        counts = arrays["counts"]
        if (counts.dtype != np.int64 or counts.shape != (len(words),) or len(set(words))
                != len(words) or len(set(keys)) != len(keys) or not keys or keys[0] != ""
                or any(k[0] not in "Ul" for k in keys[1:])):
            raise ModelFormatError("hmm lexicon: inconsistent words, suffixes or counts")
        keyset = set(keys)
        if any(len(k) > 1 and k[0] + k[2:] not in keyset for k in keys[1:]):
            raise ModelFormatError("hmm lexicon: a suffix without its parent")
        self._words = words
        self._word_ids = {w: i for i, w in enumerate(words)}
        self._counts = counts
        self._set_suffixes(keys)
        return self


def suffix_probabilities(counts: np.ndarray, parent: np.ndarray, theta: float) -> np.ndarray:
    """TnT's successive abstraction: ``P(t | suffix)`` for every suffix of the trie.

    ``P(t | s) = (P^(t | s) + theta * P(t | s[1:])) / (1 + theta)``, from the
    shortest suffix to the longest; the root (``parent == -1``) is its own
    maximum-likelihood estimate.  ``counts[i, t]`` are the tag counts of
    suffix ``i``; parents come before their children.
    """
    totals = counts.sum(axis=1, keepdims=True)
    ml = np.divide(counts, totals, out=np.zeros_like(counts, dtype=np.float64),
                   where=totals > 0)
    prob = np.zeros_like(ml)
    for i in range(len(parent)):
        if parent[i] < 0:
            prob[i] = ml[i]
        else:
            prob[i] = (ml[i] + theta * prob[parent[i]]) / (1.0 + theta)
    return prob


def _check_alpha(name: str, value: Any) -> None:
    """Constraint of ``alpha``: a number in [1e-100, 1e100]."""
    check_number(name, value, low=0.0)
    if not _ALPHA_RANGE[0] <= value <= _ALPHA_RANGE[1]:
        raise InputError(f"{name} must be in [1e-100, 1e100] (add-alpha smoothing keeps "
                         f"every probability non-zero: a smaller alpha underflows them to "
                         f"0, a larger one overflows their sums), got {value!r}")


def _check_word(name: str, value: Any) -> None:
    """Constraint of ``word``: None or a feature name."""
    if value is not None and type(value) is not str:
        raise InputError(f"{name} must be a str or None, got {value!r}")


@register(Command("hmm", None, {}, "hidden Markov model with TnT's suffix model for "
                  "unknown words; reads the first column only, no templates", templates=False))
class HMM(ChainEstimator):
    """First-order hidden Markov model tagger, trained by counting (supervised).

    Transitions, start, stop and emission probabilities are maximum-likelihood
    estimates with add-``alpha`` smoothing::

        P(y_0 = t)           = (c(start, t) + alpha) / (n_sentences + alpha * L)
        P(y_i = t | y_{i-1} = p) = (c(p, t) + alpha) / (c(p) + alpha * (L + 1))
        P(stop | y_{n-1} = p)    = (c(p, stop) + alpha) / (c(p) + alpha * (L + 1))
        P(w | t)             = (c(t, w) + alpha) / (c(t) + alpha * V)

    (``L`` labels, ``V`` known words; each label's successors include the
    stop).  Unknown words use the suffix model of TnT (Brants 2000): the tag
    distribution of the words seen at most ``rare_threshold`` times sharing
    the longest suffix (up to ``suffix_length`` characters, separately for
    capitalised words) that training saw, smoothed by successive abstraction
    over shorter suffixes with ``theta`` the sample variance of the
    unconditional tag probabilities (the formula of Brants 2000, whose text
    calls it the standard deviation), and turned into an emission by Bayes'
    rule, ``P(w | t) ∝ P(t | suffix) / P(t)``.  The base of the abstraction
    (the empty suffix) is the tag distribution of the rare words of the case
    class.  ``predict`` is Viterbi, ``predict_marginals`` forward-backward,
    both on the chain whose weights are these log-probabilities (see
    :mod:`cseq.learners.hmm`).

    The word of a token: a ``str`` token is the word (plain word lists, or
    the raw one-column tokens of templates); a list or tuple token (a list of
    feature strings, or raw token columns) gives its first element, or with
    ``word="w"`` its first feature ``"w=..."`` with the prefix removed; a dict
    token gives its first value if that is a str (else its first key), or
    with ``word="w"`` the value of ``"w"``.  Templates do not apply: an HMM
    conditions on the word alone, so raw tokens with columns are read as they
    are (the first column is the word).

    Parameters
    ----------
    alpha : float, default 0.01
        Add-alpha smoothing of transitions and emissions, in [1e-100, 1e100].
    suffix_length : int, default 10
        Longest suffix of the unknown-word model (0 ignores the spelling).
    rare_threshold : int, default 10
        Training words seen at most this often feed the suffix model.
    word : str or None, default None
        Which feature of a token is its word (see above).
    verbose : bool
        Print one line after counting.

    Attributes
    ----------
    classes_, model_, featurizer_, history_
        As for the other estimators; ``featurizer_`` is a :class:`WordLexicon`.
    n_iter_ : int
        Always 1 (one counting pass).
    theta_ : float
        The suffix model's abstraction weight.

    References
    ----------
    Brants, T. (2000). TnT: a statistical part-of-speech tagger. ANLP.
    Rabiner, L. R. (1989). A tutorial on hidden Markov models and selected
    applications in speech recognition. Proc. IEEE 77(2).
    """

    _parameter_constraints = {"alpha": _check_alpha,
                              "suffix_length": Number(0, integer=True),
                              "rare_threshold": Number(0, integer=True),
                              "word": _check_word}
    _model_class = GlobalChain  # its scores are log-probabilities: cseq.probability
    _fitted_names = ChainEstimator._fitted_names + ("theta_",)
    # Every (attribute, label) pair has a weight: an HMM emits every word
    # from every label with some probability.
    all_states = True

    def __init__(self, *, alpha: float = 0.01, suffix_length: int = 10,
                 rare_threshold: int = 10, word: str | None = None,
                 verbose: bool = False) -> None:
        """Store the hyperparameters (:meth:`ChainEstimator.__init_subclass__` does)."""

    def _new_featurizer(self) -> WordLexicon:
        return WordLexicon(self.word, int(self.suffix_length), int(self.rare_threshold))

    def _train(self, corpus, model, dev, callback):
        clock = time.perf_counter()
        lex: WordLexicon = self.featurizer_
        L, V, a = model.n_labels, lex.n_words, float(self.alpha)
        labels = corpus.labels.astype(np.int64)
        words = corpus.attr_ids.astype(np.int64)     # one attribute per token: its word
        seq_ptr = corpus.seq_ptr
        lengths = np.diff(seq_ptr)
        firsts = seq_ptr[:-1][lengths > 0]
        lasts = seq_ptr[1:][lengths > 0] - 1
        inner = np.ones(len(labels), dtype=bool)
        inner[lasts] = False                         # tokens followed by another in their sentence
        pos = np.flatnonzero(inner)

        tag_count = np.bincount(labels, minlength=L).astype(np.float64)
        start_count = np.bincount(labels[firsts], minlength=L).astype(np.float64)
        stop_count = np.bincount(labels[lasts], minlength=L).astype(np.float64)
        pair = np.bincount(labels[pos] * L + labels[pos + 1], minlength=L * L)
        pair = pair.reshape(L, L).astype(np.float64)
        emit = np.zeros((V, L))
        np.add.at(emit, (words, labels), 1.0)

        model.start[:] = np.log((start_count + a) / (len(firsts) + a * L))
        denom = tag_count + a * (L + 1)
        model.transitions[:] = np.log((pair + a) / denom[:, None])
        model.end[:] = np.log((stop_count + a) / denom)
        weights = model.state_weights.reshape(-1, L)
        weights[:V] = np.log((emit + a) / (tag_count + a * V))

        # The suffix model (Brants 2000, section 2.3).
        p_tag = tag_count / tag_count.sum()
        self.theta_ = float(np.var(p_tag, ddof=1)) if L > 1 else 0.0
        parent, _, word_ptr, word_suffixes = lex.suffix_structure()
        suffix_counts = np.zeros((len(parent), L))
        owners = np.repeat(np.arange(V), np.diff(word_ptr))
        np.add.at(suffix_counts, word_suffixes, emit[owners])
        # The fallback (index 0) is the tag distribution of all rare words.
        rare = np.diff(word_ptr) > 0
        suffix_counts[0] = emit[rare].sum(axis=0) if rare.any() else tag_count
        prob = suffix_probabilities(suffix_counts, parent, self.theta_)
        with np.errstate(divide="ignore"):
            weights[V:] = np.log(np.maximum(prob, 1e-300)) - np.log(np.maximum(p_tag, 1e-300))

        self.n_iter_ = 1
        record = {"iteration": 1, "seconds": time.perf_counter() - clock}
        if dev is not None:
            record["dev_accuracy"] = dev(model)
        self._report(record, callback)

    def predict_marginals(self, X: Sequence[Any], *, n_jobs: int = 1, constraints: Any = None,
                          fixed: Any = None) -> list[np.ndarray]:
        """Posterior label marginals ``P(y_t | x)`` by forward-backward: (n_i, L) arrays."""
        return self._chain_marginals(X, n_jobs, constraints, fixed)

    def _training_state(self, fitted) -> dict:
        return {"theta": fitted.attributes["theta_"]}

    def _restore_training(self, training: dict) -> None:
        self.theta_ = header_field(training, "theta", "training", float, 0.0, math.inf)
