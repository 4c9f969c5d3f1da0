"""Probabilities of label sequences, tokens and entity spans under a probabilistic chain.

A CRF (and an HMM, whose scores are log-probabilities) defines
``P(y | x) = exp(score(x, y) - log Z(x))``; a MEMM the product of its local
distributions ``P(y_t | y_{t-1}, x)``.  Given the token and label-pair (and,
at second order, label-trigram) marginals of one sequence, this module
computes

- the log-probability of a label sequence (:func:`path_log_prob`);
- the entropy of the distribution over label sequences
  (:func:`chain_entropy`): ``H = log Z - E[score]`` for a globally normalised
  chain, the sum of the expected local entropies for a MEMM;
- the probability that a span is an entity of a given type
  (:func:`span_probability`): the probability that positions
  ``begin .. begin + m - 1`` carry given labels (``B-X I-X ... I-X``) and that
  the next label is not one that would continue the span (``I-X``).  The
  posterior of a chain of order ``k`` is itself a Markov chain of order ``k``,
  so this is a product of ratios of marginals, ``P(y_i = B) * prod P(y_t |
  y_{t-1})`` with ``P(b | a) = P(a, b) / P(a)`` at first order and
  ``P(c | a, b) = P(a, b, c) / P(a, b)`` at second order, minus the same for
  the span extended by a continuing label.

The estimator methods (``sequence_log_prob``, ``predict_confidence``,
``sequence_entropy``, ``span_marginals``, ``predict_spans`` of
:class:`~cseq.CRF`, :class:`~cseq.HMM` and :class:`~cseq.MEMM`) and
:func:`annotate` call these on every sequence; models without probabilities
(perceptron, structured SVM, greedy tagger) raise :class:`~cseq.InputError`.

References
----------
Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields:
probabilistic models for segmenting and labeling sequence data. ICML.
Culotta, A., McCallum, A. (2004). Confidence estimation for information
extraction. HLT-NAACL (the probability of an extracted field by constrained
forward-backward).
Hernando, D., Crespi, V., Cybenko, G. (2005). Efficient computation of the
hidden Markov model entropy for a given observation sequence. IEEE
Transactions on Information Theory 51(7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cseq.chain import decoding
from cseq.chain.mapping import gold_ids, map_blocks
from cseq.chain.normalized import Posterior, global_posterior, path_score
from cseq.exceptions import InputError
from cseq.chain.fitted import Fitted
from cseq.chain.inference import _chain_arrays, _constrain, _gold_array, forward_backward, viterbi
from cseq.evaluation.metrics import chunks, detect_scheme
from cseq.chain.model import per_sequence
from cseq.chain.sequences import Sequences

__all__ = ["path_log_prob", "chain_entropy", "span_probability", "Tagged", "annotate",
           "sequence_log_prob", "predict_confidence", "sequence_entropy", "span_marginals",
           "predict_spans", "SPAN_SCHEMES"]

#: Chunk schemes whose spans :func:`span_marginals` reads.
SPAN_SCHEMES = ("iob2", "bioes")


# ----------------------------------------------------------------------------
# one sequence, from its marginals


def _prefix_prob(post: Posterior, begin: int, run: Sequence[int]) -> float:
    """``P(y[begin : begin + len(run)] = run)`` from the posterior's marginals."""
    m = len(run)
    if post.triple is None or m == 1:
        p = float(post.marg[begin, run[0]])
        for k in range(1, m):
            if p <= 0.0:
                return 0.0
            p *= float(post.cond(begin + k - 1, run[k - 1])[run[k]])
        return p
    p = float(post.pair[begin, run[0], run[1]])
    for k in range(2, m):
        d = float(post.pair[begin + k - 2, run[k - 2], run[k - 1]])
        if p <= 0.0 or d <= 0.0:
            return 0.0
        p *= float(post.triple[begin + k - 2, run[k - 2], run[k - 1], run[k]]) / d
    return p


def _run_prob(post: Posterior, begin: int, run: Sequence[int],
              next_not: Sequence[int]) -> float:
    """``P(y[begin:begin + m] = run and y[begin + m] not in next_not)`` (no next label: true)."""
    p = _prefix_prob(post, begin, run)
    if begin + len(run) < len(post.marg):
        for c in next_not:
            p -= _prefix_prob(post, begin, [*run, c])
    return min(max(p, 0.0), 1.0)


# ----------------------------------------------------------------------------
# the array API


def _check_path(path: ArrayLike, n: int, n_labels: int, name: str = "path") -> np.ndarray:
    return _gold_array(path, n, n_labels).astype(np.int64).reshape(n)


def path_log_prob(emissions: ArrayLike, transitions: ArrayLike, path: ArrayLike,
                  start: ArrayLike | None = None, end: ArrayLike | None = None, *,
                  transitions2: ArrayLike | None = None) -> float:
    """``log P(path)`` under a first- or second-order linear chain: ``score(path) - log Z``.

    Parameters
    ----------
    emissions, transitions, start, end, transitions2
        As for :func:`cseq.viterbi`.
    path : array_like of int, shape (n,)
        Label ids, one per position.

    Returns
    -------
    float
        At most 0; 0.0 for an empty sequence.

    Examples
    --------
    >>> import numpy as np, cseq
    >>> lp = cseq.probability.path_log_prob(np.zeros((2, 2)), np.zeros((2, 2)), [0, 1])
    >>> bool(np.isclose(lp, np.log(0.25)))
    True
    """
    em, tr, st, en, t2 = _chain_arrays(emissions, transitions, start, end, transitions2)
    y = _check_path(path, em.shape[0], em.shape[1])
    if em.shape[0] == 0:
        return 0.0
    log_z = forward_backward(em, tr, st, en, transitions2=t2)[0]
    return min(path_score(em, tr, st, en, t2, y) - log_z, 0.0)


def chain_entropy(emissions: ArrayLike, transitions: ArrayLike, start: ArrayLike | None = None,
                  end: ArrayLike | None = None, *,
                  transitions2: ArrayLike | None = None) -> float:
    """Entropy (in nats) of the distribution over label sequences of a linear chain.

    ``H = -sum_y P(y) log P(y) = log Z - E[score(y)]``, the expectation taken
    with the token, pair (and trigram) marginals of forward-backward.

    Parameters are those of :func:`cseq.viterbi`.  Returns 0.0 for an empty
    sequence; at most ``n log L``.

    References
    ----------
    Hernando, D., Crespi, V., Cybenko, G. (2005). Efficient computation of the
    hidden Markov model entropy for a given observation sequence. IEEE
    Transactions on Information Theory 51(7).
    """
    em, tr, st, en, t2 = _chain_arrays(emissions, transitions, start, end, transitions2)
    if em.shape[0] == 0:
        return 0.0
    # The pair marginals summed as forward-backward goes: O(n L) memory.
    return global_posterior(em, tr, st, en, t2)[1].entropy


def span_probability(emissions: ArrayLike, transitions: ArrayLike, begin: int,
                     labels: Sequence[int], *, next_not: Sequence[int] = (),
                     start: ArrayLike | None = None, end: ArrayLike | None = None,
                     transitions2: ArrayLike | None = None) -> float:
    """Probability that positions ``begin, begin + 1, ...`` carry ``labels`` and the next does not
    carry any label of ``next_not``.

    For a BIO entity of type X over positions ``i .. j - 1``: ``labels`` is
    ``[B-X, I-X, ..., I-X]`` (``j - i`` ids) and ``next_not`` is ``[I-X]``;
    a span that ends the sequence has no next label to check.

    Parameters
    ----------
    emissions, transitions, start, end, transitions2
        As for :func:`cseq.viterbi`.
    begin : int
        First position of the span.
    labels : sequence of int
        Label ids of the span's positions (at least one, inside the sequence).
    next_not : sequence of int
        Label ids the position after the span must not have.

    Returns
    -------
    float
        In ``[0, 1]``: a product of ratios of the marginals of forward-backward
        (the posterior of a chain is a Markov chain of the same order).
    """
    em, tr, st, en, t2 = _chain_arrays(emissions, transitions, start, end, transitions2)
    n, L = em.shape
    run = _check_run(begin, labels, next_not, n, L)
    post = global_posterior(em, tr, st, en, t2, pairs=True)[1]
    return _run_prob(post, run[0], run[1], run[2])


def _check_run(begin: Any, labels: Any, next_not: Any, n: int,
               L: int) -> tuple[int, list[int], list[int]]:
    if isinstance(begin, bool) or not isinstance(begin, (int, np.integer)):
        raise InputError(f"begin must be an int, got {begin!r}")
    ids = []
    for name, seq in (("labels", labels), ("next_not", next_not)):
        if isinstance(seq, (str, bytes)):
            raise InputError(f"{name} must be a sequence of label ids, got {seq!r}")
        try:
            vals = [int(v) for v in seq]
            ok = all(not isinstance(v, bool) and float(v) == int(v) for v in seq)
        except (TypeError, ValueError):
            ok = False
        if not ok or any(not 0 <= v < L for v in vals):
            raise InputError(f"{name} must hold label ids in 0..{L - 1}, got {seq!r}")
        ids.append(vals)
    if not ids[0]:
        raise InputError("labels must hold at least one label id")
    if not 0 <= begin <= n - len(ids[0]):
        raise InputError(f"a span of {len(ids[0])} labels at {begin} does not fit in a "
                         f"sequence of {n} positions")
    return int(begin), ids[0], ids[1]


# ----------------------------------------------------------------------------
# estimators


def _probabilistic(est: Any) -> Fitted:
    """The fitted state every later step reads (:mod:`cseq.fitted`), whose model defines
    probabilities; InputError for a model without them."""
    fitted = est._check_fitted()
    if not fitted.model.probabilistic:
        raise InputError(f"{type(est).__name__} models define no probabilities; sequence and "
                         "span probabilities come from a CRF, an HMM or a MEMM")
    return fitted


def _label_ids(classes: Sequence[str]) -> dict[str, int]:
    return {str(name): i for i, name in enumerate(classes)}


def sequence_log_prob(est: Any, X: Sequence[Any], y: Sequence[Sequence[str]], *,
                      n_jobs: int = 1) -> np.ndarray:
    """``log P(y_s | x_s)`` of each given label sequence (float64, one per sequence).

    Raises InputError for a model without probabilities or a label the model
    does not know.
    """
    fitted = _probabilistic(est)
    ids = _label_ids(fitted.classes)
    if not isinstance(y, (list, tuple)):
        y = list(y)
    if not (isinstance(X, (list, tuple)) and len(y) == len(X)):
        n_jobs = 1  # one block: an error names indices of the whole X

    def work(corpus: Sequences, block: slice | None) -> np.ndarray:
        gold = gold_ids(y if block is None else y[block], corpus, ids)
        if len(gold) and gold.min() < 0:
            raise InputError("y holds a label the model does not know")
        return fitted.model.sequence_log_prob(
            Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values, gold))
    parts = map_blocks(fitted, X, n_jobs, work)
    return np.concatenate(parts) if parts else np.zeros(0)


@dataclass
class Tagged:
    """One tagged sequence with its probabilities (see :func:`annotate`).

    Attributes
    ----------
    labels : list of str
        The predicted labels (``est.predict``).
    confidence : ndarray of float64, shape (n,)
        The marginal probability of each predicted label, ``P(y_t = label_t | x)``.
    log_prob : float
        ``log P(labels | x)`` of the whole predicted sequence.
    entropy : float
        Entropy (nats) of the distribution over label sequences.
    spans : list of (type, start, end, probability)
        The predicted entities (``end`` exclusive, as :func:`cseq.metrics.chunks`
        reads them) with the probability that the tokens of each have the
        predicted labels and that the span ends there (under ``iob2``: no
        ``I-type`` next); for a span predicted as ``B-type I-type ...`` this
        is its :meth:`span_marginals <cseq.CRF.span_marginals>`.  None when
        the labels are not BIO or BIOES (or spans were not asked for).
    """

    labels: list[str]
    confidence: np.ndarray
    log_prob: float
    entropy: float
    spans: list[tuple[str, int, int, float]] | None = None


def _scheme_of(classes: Sequence[str], scheme: str | None, required: bool) -> str | None:
    if scheme is None:
        scheme = detect_scheme(str(c) for c in classes)
        if scheme is None and required:
            raise InputError("the model's labels are not BIO or BIOES (B-TYPE, I-TYPE, ...): "
                             "it has no entity spans")
        return scheme
    if scheme not in SPAN_SCHEMES:
        raise InputError(f"scheme must be one of {', '.join(SPAN_SCHEMES)} or None, got "
                         f"{scheme!r}")
    return scheme


def _span_run(ids: dict[str, int], scheme: str, kind: str, begin: int,
              end: int) -> tuple[list[int], list[int]] | None:
    """Label ids of a span of type ``kind`` over ``begin:end`` and of the labels that may
    not follow it; None when the model lacks one of the span's labels (probability 0)."""
    m = end - begin
    if scheme == "iob2":
        names = [f"B-{kind}"] + [f"I-{kind}"] * (m - 1)
        after = [f"I-{kind}"]
    else:
        names = [f"S-{kind}"] if m == 1 else \
            [f"B-{kind}"] + [f"I-{kind}"] * (m - 2) + [f"E-{kind}"]
        after = []
    if any(n not in ids for n in names):
        return None
    return [ids[n] for n in names], [ids[n] for n in after if n in ids]


def _constraints(classes: Sequence[str], constraints: Any, fixed: Any) -> dict | None:
    """The transition masks of ``constraints`` (None when there are no constraints)."""
    if constraints is None and fixed is None:
        return None
    return decoding.transition_masks(classes, constraints)


def _analyse(fitted: Fitted, corpus: Sequences, block: slice | None, masks: dict | None,
             fixed: Any, pairs: bool) -> list[tuple[np.ndarray, Posterior | None, float]]:
    """Per sequence: the predicted label ids, the posterior and ``log P(labels | x)``,
    under the snapshot ``fitted``.

    The posterior holds its transitions only with ``pairs`` (for span
    probabilities; :class:`Posterior`).

    Without constraints, the model's decoder and its posterior.
    With them (``masks`` from :func:`_constraints`, ``fixed`` as for
    ``predict``), the best allowed labeling and the posterior of the
    distribution restricted to the allowed labelings (its marginals, entropy
    and span probabilities are renormalized over them), as
    ``predict(X, constraints=..., fixed=...)`` and ``predict_marginals``
    with the same constraints; the log-probability stays ``log P(y | x)``
    under the model, as :meth:`sequence_log_prob` gives it.
    """
    ptr, model = corpus.seq_ptr, fitted.model
    if masks is None:
        pred = model.decode(corpus)
        return [(pred[int(ptr[s]):int(ptr[s + 1])].astype(np.int64), post, log_prob)
                for s, (post, log_prob) in enumerate(
                    model.posteriors(corpus, pairs=pairs, paths=pred))]

    def one(chain: tuple, kw: dict) -> tuple[np.ndarray, Posterior, float]:
        em, tr, st, en, t2 = chain
        path = viterbi(em, tr, st, en, transitions2=t2, **kw)[0].astype(np.int64)
        post = global_posterior(em, tr, st, en, t2, pairs=pairs, masked=_constrain(
            em, tr, kw.get("allowed"), kw.get("allowed_transitions"), kw.get("allowed_start"),
            kw.get("allowed_end")))[1]
        log_z = global_posterior(em, tr, st, en, t2)[0]
        return path, post, min(path_score(em, tr, st, en, t2, path) - log_z, 0.0)
    rows = decoding.allowed_rows(fitted.classes, fixed, corpus, block)
    found = per_sequence(model.dense_chains(corpus), rows, corpus, masks, one)
    return [(np.zeros(0, dtype=np.int64), None, 0.0) if r is None else r for r in found]


def annotate(est: Any, X: Sequence[Any], *, spans: bool = True, scheme: str | None = None,
             constraints: Any = None, fixed: Any = None, n_jobs: int = 1) -> list[Tagged]:
    """Predict every sequence of ``X`` with its confidence, log-probability, entropy and spans.

    Parameters
    ----------
    est : a fitted CRF, HMM or MEMM.
    X : sequences, as given to ``predict``.
    spans : bool, default True
        List the predicted entity spans with their probabilities (when the
        labels are BIO or BIOES).
    scheme : {"iob2", "bioes"} or None
        The chunk scheme of the labels (None: detected from the model's labels).
    constraints, fixed
        As for ``predict`` (:mod:`cseq.decoding`): the labels are the best
        allowed labeling, and the confidences, entropy and span
        probabilities those of the distribution restricted to the allowed
        labelings; ``log_prob`` stays ``log P(labels | x)`` under the model.
    n_jobs : int
        Threads for featurization and decoding.

    Returns
    -------
    list of Tagged
    """
    fitted = _probabilistic(est)
    scheme = _scheme_of(fitted.classes, scheme, False) if spans else None
    return _annotate(fitted, X, scheme, constraints, fixed, n_jobs)


def _annotate(fitted: Fitted, X: Sequence[Any], scheme: str | None, constraints: Any,
              fixed: Any, n_jobs: int) -> list[Tagged]:
    """:func:`annotate` under the snapshot ``fitted``, spans by ``scheme`` (None: none)."""
    masks = _constraints(fitted.classes, constraints, fixed)
    ids = _label_ids(fitted.classes)
    names = np.asarray(fitted.classes, dtype=object)

    def work(corpus: Sequences, block: slice | None) -> list[Tagged]:
        out = []
        for path, post, log_prob in _analyse(fitted, corpus, block, masks, fixed,
                                             pairs=scheme is not None):
            labels = names[path].tolist()
            found: list[tuple[str, int, int, float]] | None = None if scheme is None else []
            if post is None:
                out.append(Tagged(labels, np.zeros(0), 0.0, 0.0, found))
                continue
            conf = post.marg[np.arange(len(path)), path].copy()
            if found is not None:
                for typ, i, j in chunks(labels, scheme):
                    after = ids.get(f"I-{typ}") if scheme == "iob2" else None
                    found.append((typ, i, j, _run_prob(post, i, path[i:j].tolist(),
                                                       [] if after is None else [after])))
            out.append(Tagged(labels, conf, log_prob, post.entropy, found))
        return out
    n_jobs = decoding.threads_for(fixed, X, n_jobs)
    return [t for block in map_blocks(fitted, X, n_jobs, work) for t in block]


def predict_confidence(est: Any, X: Sequence[Any], *, constraints: Any = None,
                       fixed: Any = None, n_jobs: int = 1) -> list[np.ndarray]:
    """The marginal probability of each predicted label: one (n_i,) array per sequence."""
    return [t.confidence for t in annotate(est, X, spans=False, constraints=constraints,
                                           fixed=fixed, n_jobs=n_jobs)]


def sequence_entropy(est: Any, X: Sequence[Any], *, constraints: Any = None, fixed: Any = None,
                     n_jobs: int = 1) -> np.ndarray:
    """Entropy (nats) of the distribution over the label sequences of each sequence
    (restricted to the allowed labelings with ``constraints`` or ``fixed``)."""
    fitted = _probabilistic(est)
    if constraints is not None or fixed is not None:
        return np.array([t.entropy for t in _annotate(fitted, X, None, constraints, fixed,
                                                      n_jobs)], dtype=np.float64)

    def work(corpus: Sequences, block: slice | None) -> list[float]:
        return [0.0 if p is None else p.entropy for p, _ in fitted.model.posteriors(corpus)]
    return np.array([h for block in map_blocks(fitted, X, n_jobs, work) for h in block],
                    dtype=np.float64)


def _check_spans(spans: Any, n_seq: int) -> list[list[tuple[str, int, int]]]:
    if not isinstance(spans, (list, tuple)) or len(spans) != n_seq:
        raise InputError(f"spans must be a list with one list of (type, start, end) per "
                         f"sequence ({n_seq})")
    out = []
    for s, seq in enumerate(spans):
        if isinstance(seq, (str, bytes)) or not isinstance(seq, (list, tuple)):
            raise InputError(f"spans[{s}] must be a list of (type, start, end) tuples")
        rows = []
        for k, span in enumerate(seq):
            ok = isinstance(span, (list, tuple)) and len(span) == 3 \
                and isinstance(span[0], str) and all(
                    isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                    for v in span[1:])
            if not ok:
                raise InputError(f"spans[{s}][{k}] must be a (type, start, end) tuple, got "
                                 f"{span!r}")
            rows.append((span[0], int(span[1]), int(span[2])))
        out.append(rows)
    return out


def span_marginals(est: Any, X: Sequence[Any], spans: Any, *, scheme: str | None = None,
                   constraints: Any = None, fixed: Any = None,
                   n_jobs: int = 1) -> list[np.ndarray]:
    """The probability of each given entity span: one float64 array per sequence.

    ``spans[s]`` lists ``(type, start, end)`` tuples for sequence ``s``
    (``end`` exclusive, as :func:`cseq.metrics.chunks` gives them).  Under
    ``iob2`` a span is ``B-type`` at ``start``, ``I-type`` through ``end - 1``
    and no ``I-type`` at ``end``; under ``bioes`` it is ``S-type``, or
    ``B-type I-type ... E-type``.  A span whose labels the model does not
    have has probability 0.  With ``constraints`` or ``fixed`` (as for
    ``predict``), the probability under the distribution restricted to the
    allowed labelings.
    """
    fitted = _probabilistic(est)
    scheme = _scheme_of(fitted.classes, scheme, True)
    masks = _constraints(fitted.classes, constraints, fixed)
    ids = _label_ids(fitted.classes)
    n_seq = len(X) if hasattr(X, "__len__") else None
    if n_seq is None:
        X = list(X)
        n_seq = len(X)
    wanted = _check_spans(spans, n_seq)

    def work(corpus: Sequences, block: slice | None) -> list[np.ndarray]:
        mine = wanted if block is None else wanted[block]
        posts = [r[1] for r in _analyse(fitted, corpus, block, masks, fixed, True)] \
            if masks is not None else [p for p, _ in fitted.model.posteriors(corpus, pairs=True)]
        lengths = np.diff(corpus.seq_ptr)
        out = []
        for s, (post, rows) in enumerate(zip(posts, mine)):
            probs = np.zeros(len(rows))
            for k, (typ, i, j) in enumerate(rows):
                if not 0 <= i < j <= lengths[s]:
                    raise InputError(f"span {(typ, i, j)} is not inside its sequence of "
                                     f"{int(lengths[s])} tokens")
                run = _span_run(ids, scheme, typ, i, j)
                if run is not None and post is not None:
                    probs[k] = _run_prob(post, i, run[0], run[1])
            out.append(probs)
        return out
    n_jobs = decoding.threads_for(fixed, X, n_jobs)
    return [p for block in map_blocks(fitted, X, n_jobs, work) for p in block]


def predict_spans(est: Any, X: Sequence[Any], *, scheme: str | None = None,
                  constraints: Any = None, fixed: Any = None,
                  n_jobs: int = 1) -> list[list[tuple[str, int, int, float]]]:
    """The predicted entity spans of each sequence, ``(type, start, end, probability)``
    (with ``constraints`` or ``fixed``, those of the constrained prediction)."""
    fitted = _probabilistic(est)
    scheme = _scheme_of(fitted.classes, scheme, True)
    return [t.spans or [] for t in _annotate(fitted, X, scheme, constraints, fixed, n_jobs)]
