"""Chains that define probabilities: one sequence's posterior, and the globally normalised chain.

A globally normalised chain (CRF, HMM: :class:`GlobalChain`) defines
``P(y | x) = exp(score(x, y) - log Z(x))``; a locally normalised one (the
MEMM's :class:`cseq.learners.memm.LocalChain`) the product of its local
distributions ``P(y_t | y_{t-1}, x)``.  :func:`global_posterior` and
:func:`local_posterior` turn one sequence's chain into its
:class:`Posterior` (marginals, entropy, the posterior's transitions), which
:mod:`cseq.probability` reads for confidences, entropies and span
probabilities.

References
----------
Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields:
probabilistic models for segmenting and labeling sequence data. ICML.
Hernando, D., Crespi, V., Cybenko, G. (2005). Efficient computation of the
hidden Markov model entropy for a given observation sequence. IEEE
Transactions on Information Theory 51(7).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cseq.chain import _forward_backward
from cseq.exceptions import InputError
from cseq.chain.model import LinearChain, not_finite
from cseq.chain.sequences import Sequences

__all__ = ["GlobalChain", "Posterior", "global_posterior", "local_posterior", "log_softmax_rows",
           "path_score"]


@dataclass
class Posterior:
    """What one sequence's probabilities are computed from.

    ``marg`` (n, L) and the sequence's entropy, in O(n L) memory
    (:func:`global_posterior`, :func:`local_posterior`).  Span
    probabilities also read the posterior's transitions: ``cond(t, i)`` is
    ``P(y_{t+1} = . | y_t = i)`` (L,), made when asked from O(n L) state
    (a first-order chain's backward messages, a MEMM's scores); a
    second-order chain has ``pair`` (n - 1, L, L) and ``triple``
    (n - 2, L, L, L) instead, its per-position marginals.  All three are
    None when no span is asked for.
    """

    marg: np.ndarray
    entropy: float
    cond: Callable[[int, int], np.ndarray] | None = None
    pair: np.ndarray | None = None
    triple: np.ndarray | None = None


def path_score(em: np.ndarray, tr: np.ndarray, st: np.ndarray, en: np.ndarray,
               t2: np.ndarray | None, path: np.ndarray) -> float:
    """The score of label ids ``path`` under the chain ``(em, tr, st, en, t2)``."""
    n = len(path)
    if n == 0:
        return 0.0
    s = float(em[np.arange(n), path].sum()) + float(st[path[0]]) + float(en[path[-1]])
    if n > 1:
        s += float(tr[path[:-1], path[1:]].sum())
    if t2 is not None and n > 2:
        s += float(t2[path[:-2], path[1:-1], path[2:]].sum())
    return s


def global_posterior(em, tr, st, en, t2, seq: int | None = None, *, pairs: bool = False,
                     masked: tuple | None = None) -> tuple[float, Posterior]:
    """log Z and the posterior of a globally normalised chain (CRF, HMM).

    InputError when log Z or the marginals overflow, naming sequence ``seq``
    of a corpus (None: the chain given to a function of the array API).

    The pair (and trigram) marginals are summed over the positions as
    forward-backward goes (``forward_backward_sums``), in O(n L) memory.
    With ``pairs`` (span probabilities), also the posterior's transitions:
    from the backward messages at first order (O(n L)), from per-position
    pair and trigram marginals at second order.  ``masked``, the
    ``(emissions, transitions)`` with -inf where constraints disallow
    (``inference._constrain``), makes it the posterior of the distribution
    restricted to the allowed paths.
    """
    em_run, tr_run = (em, tr) if masked is None else masked
    if pairs and t2 is not None:
        result = _forward_backward.forward_backward_array(em_run, tr_run, st, en, t2)
    else:
        result = _forward_backward.forward_backward_sums(em_run, tr_run, st, en, t2,
                                                         with_beta=pairs)
    log_beta = result[-1] if pairs and t2 is None else None
    if log_beta is not None:
        result = result[:-1]  # -inf where a label cannot reach the end: not a failure
    if not (math.isfinite(result[0]) and all(np.isfinite(r).all() for r in result[1:])):
        if seq is not None:
            raise not_finite(seq, "log Z")
        raise InputError("scores overflow: log Z or the marginals are not finite "
                         "(finite inputs whose sums exceed the float64 range)")
    post = _posterior_of(result, em, tr, st, en, t2)
    if log_beta is not None:
        post.cond = lambda t, i: np.exp(log_softmax_rows(tr_run[i], em_run[t + 1]
                                                         + log_beta[t + 1]))
    return result[0], post


def _posterior_of(result: tuple, em, tr, st, en, t2) -> Posterior:
    """The posterior of forward-backward's ``result`` on the finite scores of the chain.

    ``result`` holds per-position pair (and trigram) marginals, or their sums
    over the positions (``forward_backward_sums``): the expected transition
    score is the same sum either way.  It may be that of a constrained
    forward-backward: its log Z and marginals are then those of the
    distribution restricted to the allowed paths, whose entropy is ``log
    Z_allowed - E[score]`` (a disallowed entry has probability exactly 0, so
    the finite, unmasked scores serve).
    """
    log_z, marg, pair = result[0], result[1], result[2]
    triple = result[3] if t2 is not None else None
    per_position = pair.ndim == 3
    # Summed over the positions first, in their order, as forward_backward_sums
    # adds them: the entropy is then the same to the last bit either way.
    pair_sum = pair.sum(axis=0) if per_position else pair
    expected = float((marg * em).sum()) + float(marg[0] @ st) + float(marg[-1] @ en)
    expected += float((pair_sum * tr).sum())
    if triple is not None:
        expected += float(((triple.sum(axis=0) if per_position else triple) * t2).sum())
    return Posterior(marg, max(log_z - expected, 0.0), None, pair if per_position else None,
                      triple if per_position else None)


#: Entries (positions x L x L) of a MEMM's local distributions made at once by
#: :func:`local_posterior`: its memory does not grow with the sequence.
LOCAL_BLOCK = 1 << 16


def log_softmax_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log softmax(a + b)`` over the last axis, stable for huge scores.

    Scores that overflow give non-finite rows, without a warning: the caller
    checks and names the sequence.
    """
    with np.errstate(all="ignore"):
        z = a + b
        m = z.max(axis=-1, keepdims=True)
        return z - (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))


def local_posterior(em: np.ndarray, tr: np.ndarray, st: np.ndarray, path: np.ndarray | None,
                    seq: int) -> tuple[Posterior, float]:
    """A MEMM's posterior and ``log P(path)`` (0.0 without a path).

    ``P(y_0 = j) = softmax(em[0] + start)`` and ``P(y_t = j | y_{t-1} = p) =
    softmax_j(em[t, j] + tr[p, j])``, as ``_memm.local_distributions``
    makes them, here a block of positions at a time, so that memory is
    O(n L); the posterior's transitions are these local distributions.
    The entropy is ``H(y_0) + sum_t sum_p P(y_{t-1} = p) H(y_t | y_{t-1} = p)``.
    """
    n, L = em.shape
    marg = np.empty((n, L))
    log_first = log_softmax_rows(em[0], st)
    if not np.isfinite(log_first).all():
        raise not_finite(seq, "local log Z")
    marg[0] = np.exp(log_first)
    h = -float(marg[0] @ log_first)
    log_p = float(log_first[path[0]]) if path is not None else 0.0
    step = max(1, LOCAL_BLOCK // (L * L))
    for t0 in range(1, n, step):
        t1 = min(n, t0 + step)
        log_cond = log_softmax_rows(em[t0:t1, None, :], tr[None])  # (block, p, j)
        if not np.isfinite(log_cond).all():
            raise not_finite(seq, "local log Z")
        cond = np.exp(log_cond)
        row_h = -(cond * log_cond).sum(axis=2)  # H(y_t | y_{t-1} = p), (block, p)
        for k in range(t1 - t0):
            t = t0 + k
            h += float(marg[t - 1] @ row_h[k])
            marg[t] = marg[t - 1] @ cond[k]
        if path is not None:
            ts = np.arange(t1 - t0)
            log_p += float(log_cond[ts, path[t0 - 1:t1 - 1], path[t0:t1]].sum())
    post = Posterior(marg, max(h, 0.0),
                     lambda t, i: np.exp(log_softmax_rows(em[t + 1], tr[i])))
    return post, min(log_p, 0.0)


class GlobalChain(LinearChain):
    """A linear chain read as ``P(y | x) = exp(score(x, y) - log Z(x))``: the CRF's and the HMM's.

    The same parameters, decoding and marginals as :class:`~cseq.chain.model.LinearChain`
    (whose marginals are already those of this distribution); what it adds is
    that the model defines probabilities: posteriors and the log-probability
    of a labeling, by forward-backward per sequence.
    """

    probabilistic = True

    def posteriors(self, corpus: Sequences, *, pairs: bool = False,
                   paths: np.ndarray | None = None) -> list[tuple[Posterior | None, float]]:
        self.check_corpus(corpus)
        out: list[tuple[Posterior | None, float]] = []
        ptr = corpus.seq_ptr
        em_all = self.emissions(corpus, 0, corpus.n_tokens)
        tr, st, en, t2 = self.transitions, self.start, self.end, self.trans2
        for s in range(corpus.n_sequences):
            a, b = int(ptr[s]), int(ptr[s + 1])
            if a == b:
                out.append((None, 0.0))
                continue
            em = np.ascontiguousarray(em_all[a:b])
            log_z, post = global_posterior(em, tr, st, en, t2, s, pairs=pairs)
            out.append((post, 0.0 if paths is None else min(
                path_score(em, tr, st, en, t2, paths[a:b].astype(np.int64)) - log_z, 0.0)))
        return out

    def sequence_log_prob(self, corpus: Sequences) -> np.ndarray:
        self.check_corpus(corpus)
        out = np.zeros(corpus.n_sequences)
        em_all = self.emissions(corpus, 0, corpus.n_tokens)
        tr, st, en, t2 = self.transitions, self.start, self.end, self.trans2
        ptr, gold = corpus.seq_ptr, corpus.labels
        for s in range(corpus.n_sequences):
            a, b = int(ptr[s]), int(ptr[s + 1])
            if a == b:
                continue
            em = np.ascontiguousarray(em_all[a:b])
            log_z = _forward_backward.forward_backward_sums(em, tr, st, en, t2)[0]
            if not math.isfinite(log_z):
                raise not_finite(s, "log Z")
            out[s] = min(path_score(em, tr, st, en, t2, gold[a:b].astype(np.int64)) - log_z,
                         0.0)
        return out
