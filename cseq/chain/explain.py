"""Why a linear-chain model labels a sequence as it does.

The score a chain model gives a labeling ``y`` of ``x`` is a sum of terms:
for every token, the weights of its features for its label (times the
features' values), the transition from the previous label (in a second-order
chain also the weight of the two previous labels and this one), the start score
at the first token and the end score at the last.  :func:`explain` lists those
terms for the labeling Viterbi finds, so they add up to the score it
maximizes, and gives each position's *margin*: how much that best score drops
if the position must take another label (the gap between the best and the
second-best max-marginal), a measure of how close the decision was.
:func:`top_features` and :func:`transition_table` read the weights by name;
``cseq info`` prints them.

Everything here reads the model's arrays in Python: it is meant for looking
at a few sequences, not for tagging a corpus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cseq.exceptions import CSeqError, InputError
from cseq.chain.inference import viterbi
from cseq.chain.model import LinearChain

__all__ = ["FeatureContribution", "TokenExplanation", "Explanation", "explain",
           "feature_names", "max_marginals", "top_features", "transition_table"]


@dataclass(frozen=True)
class FeatureContribution:
    """One feature of a token and what it adds to the score of the token's label."""

    name: str
    """What the attribute tests (:func:`feature_names`; for templates the template and the values it read)."""
    value: float
    """The feature's value in this token (1.0 for a string feature)."""
    weight: float
    """The model's weight for this attribute and the token's label."""

    @property
    def contribution(self) -> float:
        """``value * weight``."""
        return self.value * self.weight


@dataclass(frozen=True)
class TokenExplanation:
    """The terms of one position of the best labeling."""

    label: str
    """The predicted label."""
    state: float
    """Sum of the contributions of all the token's features for ``label``."""
    transition: float
    """Weight of the transition from the previous label to ``label`` (0 at the first token)."""
    transition2: float
    """Second order: weight of the two previous labels followed by ``label`` (else 0)."""
    start: float
    """Start score of ``label`` at the first token, else 0."""
    end: float
    """End score of ``label`` at the last token, else 0."""
    margin: float
    """Best score minus the best score with another label here (``inf`` with one label)."""
    features: list[FeatureContribution] = field(default_factory=list)
    """The features with the largest absolute contributions, largest first."""

    @property
    def score(self) -> float:
        """What this position adds to the sequence's score."""
        return self.state + self.transition + self.transition2 + self.start + self.end


@dataclass(frozen=True)
class Explanation:
    """The best labeling of one sequence, position by position."""

    tokens: list[TokenExplanation]
    score: float
    """The score Viterbi maximizes, of the predicted labeling (the tokens' scores add up to it)."""

    @property
    def labels(self) -> list[str]:
        return [t.label for t in self.tokens]


def max_marginals(emissions: np.ndarray, transitions: np.ndarray, start: np.ndarray,
                  end: np.ndarray, transitions2: np.ndarray | None = None) -> np.ndarray:
    """``m[t, y]``: the best score of a labeling with label ``y`` at position ``t``.

    The max-product counterpart of the marginals: a forward and a backward
    Viterbi pass, ``m = alpha + beta`` (over labels, or over label pairs
    with ``transitions2`` for a second-order chain).  Every row's maximum is
    the best score.  Inputs as for :func:`cseq.viterbi` (validated there).
    """
    n, L = emissions.shape
    if n == 0:
        return np.empty((0, L))
    first = start + emissions[0]
    if transitions2 is None or n == 1:
        alpha = np.empty((n, L))
        beta = np.empty((n, L))
        alpha[0] = first
        for t in range(1, n):
            alpha[t] = (alpha[t - 1][:, None] + transitions).max(axis=0) + emissions[t]
        beta[n - 1] = end
        for t in range(n - 2, -1, -1):
            beta[t] = (transitions + (emissions[t + 1] + beta[t + 1])[None, :]).max(axis=1)
        return alpha + beta
    # Second order: states are label pairs (y_{t-1}, y_t), t >= 1.
    step = transitions[None, :, :]                          # T[b, c] as [., b, c]
    alpha2 = np.empty((n, L, L))
    beta2 = np.empty((n, L, L))
    alpha2[1] = first[:, None] + transitions + emissions[1][None, :]
    for t in range(2, n):
        alpha2[t] = ((alpha2[t - 1][:, :, None] + transitions2).max(axis=0)
                     + transitions + emissions[t][None, :])
    beta2[n - 1] = end[None, :]
    for t in range(n - 2, 0, -1):
        ahead = step + emissions[t + 1][None, None, :] + beta2[t + 1][None, :, :]
        beta2[t] = (transitions2 + ahead).max(axis=2)
    both = alpha2[1:] + beta2[1:]                           # [t, y_{t-1}, y_t], t >= 1
    m = np.empty((n, L))
    m[0] = both[0].max(axis=1)
    m[1:] = both.max(axis=1)
    return m


def _weight_lookup(model: LinearChain, attr: int, label: int) -> float:
    lo, hi = int(model.attr_ptr[attr]), int(model.attr_ptr[attr + 1])
    hits = np.flatnonzero(model.attr_labels[lo:hi] == label)
    return float(model.state_weights[lo + hits[0]]) if len(hits) else 0.0


def feature_names(featurizer: Any) -> list[str] | None:
    """What each attribute id of a fitted featurizer tests, for people; None if unnamed.

    The one naming used by :func:`explain`, :func:`top_features`, ``cseq
    info`` and the HTML report: a featurizer's ``feature_names()`` when it
    has one (templates: ``%x[-1,0:lower]=the``, not the attribute string
    ``U01:the``), else its ``attribute_names()`` (feature lists and dicts:
    the feature strings, already readable).
    """
    names = getattr(featurizer, "feature_names", None) or getattr(
        featurizer, "attribute_names", None)
    if names is None:
        return None
    try:
        return list(names())
    except CSeqError:
        return None


def explain(est: Any, x: Any, *, k: int = 10) -> Explanation:
    """Explain the labeling ``est`` predicts for one sequence ``x``.

    Parameters
    ----------
    est : a fitted chain estimator whose decoder maximizes the linear score
        (perceptron, CRF, structured SVM, HMM).
    x : one sequence, in the form given to ``fit`` (one element of ``X``).
    k : int, default 10
        Features listed per token (by absolute contribution); all of them
        count in :attr:`TokenExplanation.state`.

    Returns
    -------
    Explanation
        ``Explanation.labels`` is ``est.predict([x])[0]`` and the tokens'
        scores add up to ``Explanation.score``, the score of that labeling.

    Raises
    ------
    InputError
        If the estimator's decoder does not maximize a linear score (MEMM,
        greedy tagger), ``k`` is negative, or ``x`` is not one sequence.
    """
    fitted = est._check_fitted()  # one snapshot for the whole explanation (cseq.fitted)
    model: LinearChain = fitted.model
    if not model.linear_scores:
        raise InputError(f"{type(est).__name__} does not decode by maximizing a sum of weights; "
                         "explain reads the perceptron, CRF, StructuredSVM and HMM")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InputError(f"k must be a non-negative int, got {k!r}")
    corpus = fitted.featurizer.transform([x])
    n = corpus.n_tokens
    if n == 0:
        return Explanation(tokens=[], score=0.0)
    em = model.emissions(corpus, 0, n)
    tr, st, en, t2 = model.transitions, model.start, model.end, model.trans2
    path, best = viterbi(em, tr, st, en, transitions2=t2)
    mm = max_marginals(em, tr, st, en, t2)
    names = feature_names(fitted.featurizer)
    classes = fitted.classes
    L = model.n_labels
    tokens = []
    for t in range(n):
        y = int(path[t])
        lo, hi = int(corpus.tok_ptr[t]), int(corpus.tok_ptr[t + 1])
        feats = [FeatureContribution(
            name=names[a] if names is not None else f"attribute {a}", value=float(v),
            weight=_weight_lookup(model, int(a), y))
            for a, v in zip(corpus.attr_ids[lo:hi].tolist(), corpus.values[lo:hi].tolist())]
        others = np.delete(mm[t], y)
        tokens.append(TokenExplanation(
            label=str(classes[y]), state=float(em[t, y]),
            transition=float(tr[path[t - 1], y]) if t else 0.0,
            transition2=float(t2[path[t - 2], path[t - 1], y]) if t2 is not None and t >= 2
            else 0.0,
            start=float(st[y]) if t == 0 else 0.0,
            end=float(en[y]) if t == n - 1 else 0.0,
            margin=float(mm[t, y] - others.max()) if L > 1 else float("inf"),
            features=sorted(feats, key=lambda f: -abs(f.contribution))[:k]))
    return Explanation(tokens=tokens, score=float(best))


def top_features(est: Any, label: str | None = None,
                 k: int = 20) -> list[tuple[str, float]] | dict[str, list[tuple[str, float]]]:
    """The ``k`` largest state weights of ``label`` as ``(attribute name, weight)`` pairs.

    With ``label=None``, a dict from every label to its list.  Names come
    from :func:`feature_names`: for template featurizers the template and the
    values it read (``%x[-1,0:lower]=the``), the feature strings for feature
    lists, ``"hash[i]"`` in hashing mode.

    Raises
    ------
    InputError
        If ``label`` is not one of the model's labels or ``k`` is negative.
    """
    fitted = est._check_fitted()
    model = fitted.model
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InputError(f"k must be a non-negative int, got {k!r}")
    classes = [str(c) for c in fitted.classes]
    if label is not None and label not in classes:
        raise InputError(f"unknown label {label!r}; the model's labels are {classes}")
    names = feature_names(fitted.featurizer)
    w, lab = model.state_weights, model.attr_labels
    attr_of = np.repeat(np.arange(model.n_attributes), np.diff(model.attr_ptr))

    def of(y: int) -> list[tuple[str, float]]:
        idx = np.flatnonzero(lab == y)
        top = idx[np.argsort(-w[idx], kind="stable")[:k]]
        return [(names[attr_of[i]] if names is not None else f"attribute {attr_of[i]}",
                 float(w[i])) for i in top]
    if label is not None:
        return of(classes.index(label))
    return {c: of(y) for y, c in enumerate(classes)}


def transition_table(est: Any) -> dict[str, dict[str, float]]:
    """``table[previous][next]``: the weight of label ``previous`` followed by ``next``.

    A dict of dicts; ``pandas.DataFrame.from_dict(table, orient="index")``
    has the previous label as rows.
    """
    fitted = est._check_fitted()
    tr = fitted.model.transitions
    classes = [str(c) for c in fitted.classes]
    return {a: {b: float(tr[i, j]) for j, b in enumerate(classes)} for i, a in enumerate(classes)}
