"""Brute-force, obviously-correct references for the cseq kernels.

Nothing here imports the library: every function works on plain numpy arrays
(a packed corpus is passed as its arrays, or any object with the attributes
``seq_ptr``, ``tok_ptr``, ``attr_ids``, ``values`` and ``labels``).  Speed is
not a goal; the functions enumerate all ``L ** n`` label paths and use plain
Python loops wherever a loop is the clearest statement of the definition.

The flat parameter layout is the one of ``cseq.chain.model``::

    [state weights (n_state) | transitions (L*L, row = previous label) | start (L) | end (L)]

followed, for a second-order chain, by the label trigrams ``T2`` (L*L*L,
``T2[a, b, c]`` at ``(a * L + b) * L + c``).  Functions on dense chains take
``T2`` (None: first order); a second-order path score adds
``T2[y_{t-2}, y_{t-1}, y_t]`` for every ``t >= 2``.

where state weight ``k`` belongs to attribute ``a`` with
``attr_ptr[a] <= k < attr_ptr[a + 1]`` and to label ``attr_labels[k]``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = [
    "logsumexp",
    "all_paths",
    "path_score",
    "all_path_scores",
    "brute_viterbi",
    "brute_loss_augmented",
    "brute_log_z",
    "brute_marginals",
    "brute_pair_marginals",
    "brute_triple_marginals",
    "path_allowed",
    "brute_constrained",
    "trans2_of",
    "naive_emissions",
    "split_params",
    "sequence_emissions",
    "path_features",
    "brute_expected_counts",
    "brute_log_z_sum",
    "naive_crf_objective",
    "kernel_tie_break",
    "NaivePerceptron",
    "naive_local_distributions",
    "memm_path_log_prob",
    "brute_memm",
    "NaiveGreedy",
    "brute_hinge",
    "NaivePegasos",
    "finite_difference_gradient",
]


# ---------------------------------------------------------------------------
# Dense chains


def finite_difference_gradient(objective, theta: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``objective(theta)[0]``, one coordinate at a time."""
    fd = np.empty_like(theta)
    for k in range(len(theta)):
        up, down = theta.copy(), theta.copy()
        up[k] += eps
        down[k] -= eps
        fd[k] = (objective(up)[0] - objective(down)[0]) / (2 * eps)
    return fd


def logsumexp(x) -> float:
    """``log(sum(exp(x)))`` with the maximum subtracted first (stable for any finite x)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    if x.size == 0:
        return -math.inf
    m = float(np.max(x))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.sum(np.exp(x - m))))


def all_paths(n: int, n_labels: int) -> np.ndarray:
    """Every label path of length ``n`` as rows of an (L**n, n) int array, via itertools.product."""
    paths = list(itertools.product(range(n_labels), repeat=n))
    return np.array(paths, dtype=np.int64).reshape(len(paths), n)


def _defaults(E, start, end):
    E = np.asarray(E, dtype=np.float64)
    L = E.shape[1]
    start = np.zeros(L) if start is None else np.asarray(start, dtype=np.float64)
    end = np.zeros(L) if end is None else np.asarray(end, dtype=np.float64)
    return E, start, end


def path_score(E, T, start, end, path, T2=None) -> float:
    """Score of one label path, term by term (with ``T2``, the trigram terms too)."""
    E, start, end = _defaults(E, start, end)
    T = np.asarray(T, dtype=np.float64)
    path = [int(y) for y in path]
    n = len(path)
    if n == 0:
        return 0.0
    s = float(start[path[0]]) + float(end[path[-1]])
    for t in range(n):
        s += float(E[t, path[t]])
    for t in range(1, n):
        s += float(T[path[t - 1], path[t]])
    if T2 is not None:
        for t in range(2, n):
            s += float(T2[path[t - 2], path[t - 1], path[t]])
    return s


def all_path_scores(E, T, start, end, T2=None) -> tuple[np.ndarray, np.ndarray]:
    """All paths and their scores (each computed by :func:`path_score`)."""
    E, start, end = _defaults(E, start, end)
    n, L = E.shape
    paths = all_paths(n, L)
    scores = np.array([path_score(E, T, start, end, p, T2) for p in paths], dtype=np.float64)
    return paths, scores


def brute_viterbi(E, T, start=None, end=None, T2=None) -> tuple[float, set[tuple[int, ...]]]:
    """Best score and the set of every path reaching it exactly."""
    paths, scores = all_path_scores(E, T, start, end, T2)
    best = float(scores.max())
    return best, {tuple(int(y) for y in p) for p, s in zip(paths, scores) if s == best}


def brute_loss_augmented(E, T, start, end, gold, cost=None,
                         T2=None) -> tuple[float, set[tuple[int, ...]]]:
    """Best ``score(y) + sum_t cost[gold[t], y[t]]`` and every path reaching it exactly.

    ``cost`` None is the Hamming cost: 1 for each position whose label is not the gold one.
    """
    paths, scores = all_path_scores(E, T, start, end, T2)
    totals = []
    for p, s in zip(paths, scores):
        c = 0.0
        for t, y in enumerate(p):
            g = int(gold[t])
            c += (0.0 if int(y) == g else 1.0) if cost is None else float(cost[g][int(y)])
        totals.append(s + c)
    totals = np.array(totals)
    best = float(totals.max())
    return best, {tuple(int(y) for y in p) for p, s in zip(paths, totals) if s == best}


def brute_log_z(E, T, start=None, end=None, T2=None) -> float:
    """``log sum over all paths of exp(score)``."""
    _, scores = all_path_scores(E, T, start, end, T2)
    return logsumexp(scores)


def _path_probabilities(E, T, start, end, T2=None):
    paths, scores = all_path_scores(E, T, start, end, T2)
    log_z = logsumexp(scores)
    return paths, np.exp(scores - log_z)


def brute_marginals(E, T, start=None, end=None, T2=None) -> np.ndarray:
    """``P(y_t = j)`` as an (n, L) array: sum of path probabilities with label j at t."""
    E = np.asarray(E, dtype=np.float64)
    n, L = E.shape
    paths, prob = _path_probabilities(E, T, start, end, T2)
    out = np.zeros((n, L))
    for p, pr in zip(paths, prob):
        for t in range(n):
            out[t, p[t]] += pr
    return out


def brute_pair_marginals(E, T, start=None, end=None, T2=None) -> np.ndarray:
    """``P(y_t = i, y_{t+1} = j)`` as an (n - 1, L, L) array."""
    E = np.asarray(E, dtype=np.float64)
    n, L = E.shape
    paths, prob = _path_probabilities(E, T, start, end, T2)
    out = np.zeros((max(n - 1, 0), L, L))
    for p, pr in zip(paths, prob):
        for t in range(n - 1):
            out[t, p[t], p[t + 1]] += pr
    return out


def brute_triple_marginals(E, T, start, end, T2) -> np.ndarray:
    """``P(y_t = a, y_{t+1} = b, y_{t+2} = c)`` as an (n - 2, L, L, L) array."""
    E = np.asarray(E, dtype=np.float64)
    n, L = E.shape
    paths, prob = _path_probabilities(E, T, start, end, T2)
    out = np.zeros((max(n - 2, 0), L, L, L))
    for p, pr in zip(paths, prob):
        for t in range(n - 2):
            out[t, p[t], p[t + 1], p[t + 2]] += pr
    return out


def path_allowed(path, allowed=None, trans_ok=None, start_ok=None, end_ok=None) -> bool:
    """Whether a label path satisfies the constraints, checked position by position.

    ``allowed[t][y]``: label y allowed at t; ``trans_ok[i][j]``: j allowed
    right after i; ``start_ok``/``end_ok``: first/last labels allowed (any
    may be None: no constraint of that kind).
    """
    path = [int(y) for y in path]
    if not path:
        return True
    if start_ok is not None and not start_ok[path[0]]:
        return False
    if end_ok is not None and not end_ok[path[-1]]:
        return False
    for t, y in enumerate(path):
        if allowed is not None and not allowed[t][y]:
            return False
        if t and trans_ok is not None and not trans_ok[path[t - 1]][y]:
            return False
    return True


def brute_constrained(E, T, start=None, end=None, T2=None, allowed=None, trans_ok=None,
                      start_ok=None, end_ok=None) -> dict:
    """Enumerate the allowed paths: their best score and argmax set, log Z and marginals.

    Returns a dict with ``paths`` and ``scores`` (allowed paths only, in
    lexicographic order), ``best`` and ``argmax`` (set of tuples), ``log_z``,
    ``marginals`` (n, L), ``pairs`` (n - 1, L, L) and, with ``T2``,
    ``triples`` (n - 2, L, L, L), all over the distribution restricted to the
    allowed paths.  Empty ``paths`` when none is allowed.
    """
    E = np.asarray(E, dtype=np.float64)
    n, L = E.shape
    every, scores = all_path_scores(E, T, start, end, T2)
    keep = np.array([path_allowed(p, allowed, trans_ok, start_ok, end_ok) for p in every],
                    dtype=bool)
    paths, scores = every[keep], scores[keep]
    out = {"paths": paths, "scores": scores}
    if len(paths) == 0:
        return out
    out["best"] = float(scores.max())
    out["argmax"] = {tuple(int(y) for y in p) for p, s in zip(paths, scores)
                     if s == out["best"]}
    out["log_z"] = logsumexp(scores)
    prob = np.exp(scores - out["log_z"])
    marg = np.zeros((n, L))
    pairs = np.zeros((max(n - 1, 0), L, L))
    triples = np.zeros((max(n - 2, 0), L, L, L))
    for p, pr in zip(paths, prob):
        for t in range(n):
            marg[t, p[t]] += pr
        for t in range(n - 1):
            pairs[t, p[t], p[t + 1]] += pr
        for t in range(n - 2):
            triples[t, p[t], p[t + 1], p[t + 2]] += pr
    out["marginals"], out["pairs"], out["triples"] = marg, pairs, triples
    return out


# ---------------------------------------------------------------------------
# Sparse state weights and packed corpora


def naive_emissions(attr_ptr, attr_labels, state_w, tok_ptr, attr_ids, values, L,
                    t0: int = 0, t1: int | None = None) -> np.ndarray:
    """State scores (t1 - t0, L) of tokens ``t0:t1``.

    For each feature (a, v) of a token and each weight k of attribute a, add
    ``v * w[k]`` to the score of label ``attr_labels[k]``.
    """
    n_tok = len(tok_ptr) - 1
    t1 = n_tok if t1 is None else t1
    out = np.zeros((t1 - t0, L))
    for t in range(t0, t1):
        for f in range(int(tok_ptr[t]), int(tok_ptr[t + 1])):
            a = int(attr_ids[f])
            v = float(values[f])
            for k in range(int(attr_ptr[a]), int(attr_ptr[a + 1])):
                out[t - t0, int(attr_labels[k])] += v * float(state_w[k])
    return out


def split_params(params, n_state: int, L: int):
    """Views (state weights, transitions (L, L), start, end) of a flat parameter vector.

    A second-order vector's trigram block (after ``end``) is :func:`trans2_of`.
    """
    params = np.asarray(params, dtype=np.float64)
    w = params[:n_state]
    T = params[n_state:n_state + L * L].reshape(L, L)
    start = params[n_state + L * L:n_state + L * L + L]
    end = params[n_state + L * L + L:n_state + L * L + 2 * L]
    assert len(params) in (n_state + L * L + 2 * L, n_state + L * L + 2 * L + L ** 3)
    return w, T, start, end


def trans2_of(params, n_state: int, L: int):
    """The (L, L, L) trigram block of a second-order parameter vector, or None (first order)."""
    params = np.asarray(params, dtype=np.float64)
    k = n_state + L * L + 2 * L
    if len(params) == k:
        return None
    assert len(params) == k + L ** 3
    return params[k:].reshape(L, L, L)


def sequence_emissions(params, attr_ptr, attr_labels, L, corpus, s: int) -> np.ndarray:
    """Emission scores (n_s, L) of sequence ``s`` of a packed corpus."""
    w, _, _, _ = split_params(params, len(attr_labels), L)
    t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
    return naive_emissions(attr_ptr, attr_labels, w, corpus.tok_ptr, corpus.attr_ids,
                           corpus.values, L, t0, t1)


def _weight_position(attr_ptr, attr_labels, a: int, y: int) -> int:
    """Position of the weight of (a, y) by linear search, or -1."""
    for k in range(int(attr_ptr[a]), int(attr_ptr[a + 1])):
        if int(attr_labels[k]) == y:
            return k
    return -1


def path_features(attr_ptr, attr_labels, L, corpus, s: int, path, order: int = 1) -> np.ndarray:
    """Φ(x_s, path) in the flat parameter layout: the counts a path's score is linear in.

    With ``order`` 2 also one count per label trigram, in the block after ``end``.
    """
    n_state = len(attr_labels)
    phi = np.zeros(n_state + L * L + 2 * L + (L ** 3 if order == 2 else 0))
    t0 = int(corpus.seq_ptr[s])
    n = int(corpus.seq_ptr[s + 1]) - t0
    assert len(path) == n
    if n == 0:
        return phi
    for t in range(n):
        y = int(path[t])
        for f in range(int(corpus.tok_ptr[t0 + t]), int(corpus.tok_ptr[t0 + t + 1])):
            k = _weight_position(attr_ptr, attr_labels, int(corpus.attr_ids[f]), y)
            if k >= 0:
                phi[k] += float(corpus.values[f])
        if t > 0:
            phi[n_state + int(path[t - 1]) * L + y] += 1.0
        if t > 1 and order == 2:
            phi[n_state + L * L + 2 * L + (int(path[t - 2]) * L + int(path[t - 1])) * L + y] += 1.0
    phi[n_state + L * L + int(path[0])] += 1.0
    phi[n_state + L * L + L + int(path[-1])] += 1.0
    return phi


def brute_expected_counts(params, attr_ptr, attr_labels, L, corpus) -> np.ndarray:
    """Sum over sequences of sum over all paths of p(path | x) * Φ(x, path).

    The order (1 or 2) is read from the length of ``params``.
    """
    params = np.asarray(params, dtype=np.float64)
    _, T, start, end = split_params(params, len(attr_labels), L)
    T2 = trans2_of(params, len(attr_labels), L)
    total = np.zeros(len(params))
    for s in range(len(corpus.seq_ptr) - 1):
        n = int(corpus.seq_ptr[s + 1] - corpus.seq_ptr[s])
        if n == 0:
            continue
        E = sequence_emissions(params, attr_ptr, attr_labels, L, corpus, s)
        paths, prob = _path_probabilities(E, T, start, end, T2)
        for p, pr in zip(paths, prob):
            total += pr * path_features(attr_ptr, attr_labels, L, corpus, s, p,
                                        1 if T2 is None else 2)
    return total


def brute_log_z_sum(params, attr_ptr, attr_labels, L, corpus) -> float:
    """Sum over non-empty sequences of brute-force log Z (the order read from ``params``)."""
    _, T, start, end = split_params(params, len(attr_labels), L)
    T2 = trans2_of(params, len(attr_labels), L)
    total = 0.0
    for s in range(len(corpus.seq_ptr) - 1):
        if corpus.seq_ptr[s + 1] == corpus.seq_ptr[s]:
            continue
        E = sequence_emissions(params, attr_ptr, attr_labels, L, corpus, s)
        total += brute_log_z(E, T, start, end, T2)
    return total


def naive_crf_objective(params, model, corpus, c2: float) -> float:
    """``sum_s (log Z_s - score_s(gold)) + c2 * ||θ||^2`` by enumeration.

    ``model`` supplies ``attr_ptr``, ``attr_labels`` and ``n_labels``; ``corpus``
    must carry gold ``labels``.
    """
    params = np.asarray(params, dtype=np.float64)
    L = int(model.n_labels)
    _, T, start, end = split_params(params, len(model.attr_labels), L)
    T2 = trans2_of(params, len(model.attr_labels), L)
    value = 0.0
    for s in range(len(corpus.seq_ptr) - 1):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        if t1 == t0:
            continue
        E = sequence_emissions(params, model.attr_ptr, model.attr_labels, L, corpus, s)
        gold = [int(y) for y in corpus.labels[t0:t1]]
        value += brute_log_z(E, T, start, end, T2) - path_score(E, T, start, end, gold, T2)
    return value + c2 * float(np.sum(params * params))


# ---------------------------------------------------------------------------
# MEMM: a locally normalised chain, by enumeration


def naive_local_distributions(E, T, start):
    """``P(y_0 = j)`` and ``P(y_t = j | y_{t-1} = p)`` of a MEMM, one softmax at a time.

    Returns ``first`` (L,) and ``cond`` (n - 1, L, L), ``cond[t - 1, p, j]``.
    Each row is ``exp(s - logsumexp(s))`` for its score vector ``s``
    (``E[0] + start``, or ``E[t] + T[p]``), computed in plain Python floats.
    """
    E = np.asarray(E, dtype=np.float64)
    n, L = E.shape

    def softmax(scores):
        z = logsumexp(scores)
        return np.array([math.exp(float(v) - z) for v in scores])
    first = softmax(E[0] + np.asarray(start, dtype=np.float64))
    cond = np.zeros((max(n - 1, 0), L, L))
    for t in range(1, n):
        for p in range(L):
            cond[t - 1, p] = softmax(E[t] + np.asarray(T, dtype=np.float64)[p])
    return first, cond


def memm_path_log_prob(E, T, start, path) -> float:
    """``log P(path | x)``: the sum of the local log-probabilities along the path."""
    E = np.asarray(E, dtype=np.float64)
    T = np.asarray(T, dtype=np.float64)
    start = np.asarray(start, dtype=np.float64)
    value = float(E[0, path[0]] + start[path[0]]) - logsumexp(E[0] + start)
    for t in range(1, len(path)):
        p, j = int(path[t - 1]), int(path[t])
        value += float(E[t, j] + T[p, j]) - logsumexp(E[t] + T[p])
    return value


def brute_memm(E, T, start):
    """Every path, its MEMM log-probability, and the chain's marginals by enumeration."""
    E = np.asarray(E, dtype=np.float64)
    n, L = E.shape
    paths = all_paths(n, L)
    logp = np.array([memm_path_log_prob(E, T, start, p) for p in paths])
    marg = np.zeros((n, L))
    for p, lp in zip(paths, logp):
        for t in range(n):
            marg[t, p[t]] += math.exp(lp)
    return paths, logp, marg


# ---------------------------------------------------------------------------
# Perceptron without lazy averaging


def kernel_tie_break(paths) -> tuple[int, ...]:
    """The path the cseq Viterbi kernel returns among exactly tied best paths.

    The kernel takes the lowest best last label, then at each back-pointer
    the lowest best previous label: among the tied paths that is the one whose
    *reversed* label sequence is lexicographically smallest.  (Only valid
    when scores are computed exactly, e.g. with small dyadic numbers.)
    """
    return min(paths, key=lambda p: tuple(reversed(p)))


class NaivePerceptron:
    """Structured perceptron that stores the full weight vector after every example.

    Same update rule as ``cseq.learners._perceptron.PerceptronTrainer``: decode with the
    current weights (brute-force argmax, ties resolved as the kernel does);
    for every mislabeled token add ``+v`` to the (attribute, gold) weight and
    ``-v`` to the (attribute, predicted) weight of each of its features that
    has a weight; if the first (last) label is wrong, ``start`` (``end``) of
    the gold label gets +1 and of the predicted label -1; every transition
    position touching a wrong label gets +1 on the gold pair and -1 on the
    predicted pair; with ``order`` 2, every trigram position touching a wrong
    label likewise (+1 gold trigram, -1 predicted).  The average is the plain
    mean of the stored vectors.
    """

    def __init__(self, attr_ptr, attr_labels, n_labels: int, corpus, order: int = 1) -> None:
        self.attr_ptr = np.asarray(attr_ptr)
        self.attr_labels = np.asarray(attr_labels)
        self.L = int(n_labels)
        self.corpus = corpus
        self.order = order
        self.n_state = len(self.attr_labels)
        self.weights = np.zeros(self.n_state + self.L * self.L + 2 * self.L
                                + (self.L ** 3 if order == 2 else 0))
        self.history: list[np.ndarray] = []

    def decode(self, s: int) -> tuple[int, ...]:
        """Brute-force best path of sequence ``s`` under the current weights."""
        n = int(self.corpus.seq_ptr[s + 1] - self.corpus.seq_ptr[s])
        if n == 0:
            return ()
        _, T, start, end = split_params(self.weights, self.n_state, self.L)
        T2 = trans2_of(self.weights, self.n_state, self.L)
        E = sequence_emissions(self.weights, self.attr_ptr, self.attr_labels, self.L,
                               self.corpus, s)
        _, best_paths = brute_viterbi(E, T, start, end, T2)
        return kernel_tie_break(best_paths)

    def step(self, s: int) -> int:
        """Train on sequence ``s``; returns the number of mislabeled tokens."""
        c = self.corpus
        L, n_state = self.L, self.n_state
        t0 = int(c.seq_ptr[s])
        n = int(c.seq_ptr[s + 1]) - t0
        gold = [int(y) for y in c.labels[t0:t0 + n]]
        pred = list(self.decode(s))
        errors = sum(1 for g, p in zip(gold, pred) if g != p)
        w = self.weights
        if errors:
            for t in range(n):
                if gold[t] == pred[t]:
                    continue
                for f in range(int(c.tok_ptr[t0 + t]), int(c.tok_ptr[t0 + t + 1])):
                    a, v = int(c.attr_ids[f]), float(c.values[f])
                    k = _weight_position(self.attr_ptr, self.attr_labels, a, gold[t])
                    if k >= 0:
                        w[k] += v
                    k = _weight_position(self.attr_ptr, self.attr_labels, a, pred[t])
                    if k >= 0:
                        w[k] -= v
            start0 = n_state + L * L
            end0 = start0 + L
            if gold[0] != pred[0]:
                w[start0 + gold[0]] += 1.0
                w[start0 + pred[0]] -= 1.0
            if gold[-1] != pred[-1]:
                w[end0 + gold[-1]] += 1.0
                w[end0 + pred[-1]] -= 1.0
            for t in range(1, n):
                if gold[t - 1] != pred[t - 1] or gold[t] != pred[t]:
                    w[n_state + gold[t - 1] * L + gold[t]] += 1.0
                    w[n_state + pred[t - 1] * L + pred[t]] -= 1.0
            tri = end0 + L
            for t in range(2, n):
                if self.order == 2 and gold[t - 2:t + 1] != pred[t - 2:t + 1]:
                    w[tri + (gold[t - 2] * L + gold[t - 1]) * L + gold[t]] += 1.0
                    w[tri + (pred[t - 2] * L + pred[t - 1]) * L + pred[t]] -= 1.0
        self.history.append(w.copy())
        return errors

    def averaged(self) -> np.ndarray:
        """Mean of the weight vectors stored after each example (the weights before any)."""
        if not self.history:
            return self.weights.copy()
        return np.mean(np.array(self.history), axis=0)


# ---------------------------------------------------------------------------
# Greedy left-to-right tagging


class NaiveGreedy:
    """Greedy averaged multiclass perceptron, written from its definition.

    Layout (``cseq.learners._greedy``): the chain's ``[state | trans | start | end]``,
    then ``two_back`` ((L+1) x L) and ``pair`` ((L+1) x L x L), with ``L`` the
    pad label before the start.  Token ``t`` with history ``(p1, p2)`` and
    label ``y`` has the feature vector ``phi(t, p1, p2, y)``: each feature value
    on the weight of (attribute, y) when it has one, and 1 on ``start[y]``
    (p1 = pad) or ``trans[p1, y]``, on ``two_back[p2, y]`` and, when p1 is not
    the pad, on ``pair[p2, p1, y]``.  The tagger takes the tag dictionary's
    label if a token has an attribute in it, else ``argmax_y w . phi`` (lowest
    label on ties).  Training walks each sequence left to right on its own
    predictions; every scored token is one example, and a wrong guess ``p``
    for gold ``g`` does ``w += phi(g) - phi(p)``.  The weight vector is
    stored after every example; the average is their plain mean.  With
    ``pair=False`` there is no pair block and no pair feature.
    """

    def __init__(self, attr_ptr, attr_labels, n_labels: int, corpus, tagdict=None,
                 pair: bool = True) -> None:
        self.attr_ptr = np.asarray(attr_ptr)
        self.attr_labels = np.asarray(attr_labels)
        self.L = L = int(n_labels)
        self.corpus = corpus
        self.tagdict = None if tagdict is None else np.asarray(tagdict)
        n_state = len(self.attr_labels)
        self.trans = n_state
        self.start = n_state + L * L
        self.two_back = n_state + L * L + 2 * L
        self.pair = self.two_back + (L + 1) * L if pair else None
        self.weights = np.zeros(self.two_back + (L + 1) * L + ((L + 1) * L * L if pair else 0))
        self.history: list[np.ndarray] = []

    def phi(self, t: int, p1: int, p2: int, y: int) -> dict[int, float]:
        c, L = self.corpus, self.L
        out: dict[int, float] = {}
        for f in range(int(c.tok_ptr[t]), int(c.tok_ptr[t + 1])):
            k = _weight_position(self.attr_ptr, self.attr_labels, int(c.attr_ids[f]), y)
            if k >= 0:
                out[k] = out.get(k, 0.0) + float(c.values[f])
        history = [self.start + y if p1 == L else self.trans + p1 * L + y,
                   self.two_back + p2 * L + y]
        if p1 != L and self.pair is not None:
            history.append(self.pair + (p2 * L + p1) * L + y)
        for k in history:
            out[k] = out.get(k, 0.0) + 1.0
        return out

    def dict_label(self, t: int) -> int:
        c = self.corpus
        if self.tagdict is not None:
            for f in range(int(c.tok_ptr[t]), int(c.tok_ptr[t + 1])):
                if self.tagdict[int(c.attr_ids[f])] >= 0:
                    return int(self.tagdict[int(c.attr_ids[f])])
        return -1

    def guess(self, t: int, p1: int, p2: int, weights=None) -> int:
        w = self.weights if weights is None else weights
        scores = [sum(w[k] * v for k, v in self.phi(t, p1, p2, y).items())
                  for y in range(self.L)]
        return int(np.argmax(scores))

    def tag(self, s: int, weights=None) -> list[int]:
        """Labels of sequence ``s`` left to right (no update)."""
        p1 = p2 = self.L
        out = []
        for t in range(int(self.corpus.seq_ptr[s]), int(self.corpus.seq_ptr[s + 1])):
            y = self.dict_label(t)
            if y < 0:
                y = self.guess(t, p1, p2, weights)
            out.append(y)
            p1, p2 = y, p1
        return out

    def step(self, s: int) -> int:
        """Train on sequence ``s``; returns the number of mislabeled tokens."""
        p1 = p2 = self.L
        errors = 0
        for t in range(int(self.corpus.seq_ptr[s]), int(self.corpus.seq_ptr[s + 1])):
            gold = int(self.corpus.labels[t])
            y = self.dict_label(t)
            if y < 0:
                y = self.guess(t, p1, p2)
                if y != gold:
                    for k, v in self.phi(t, p1, p2, gold).items():
                        self.weights[k] += v
                    for k, v in self.phi(t, p1, p2, y).items():
                        self.weights[k] -= v
                self.history.append(self.weights.copy())
            errors += y != gold
            p1, p2 = y, p1
        return errors

    def averaged(self) -> np.ndarray:
        """Mean of the weight vectors stored after each example (the weights before any)."""
        if not self.history:
            return self.weights.copy()
        return np.mean(np.array(self.history), axis=0)


# ---------------------------------------------------------------------------
# Structured SVM


def _cost_value(cost, g: int, y: int) -> float:
    return (0.0 if g == y else 1.0) if cost is None else float(cost[g][y])


def brute_hinge(params, attr_ptr, attr_labels, L, corpus, s: int, cost=None):
    """Structured hinge loss of sequence ``s`` and its set of argmax paths, by enumeration.

    ``max over paths y of [sum_t cost[gold_t][y_t] + score(y)] - score(gold)``, every
    score computed as ``params . Phi(x_s, y)`` with :func:`path_features` (the
    order read from the length of ``params``).
    """
    t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
    if t1 == t0:
        return 0.0, {()}
    params = np.asarray(params, dtype=np.float64)
    order = 1 if trans2_of(params, len(attr_labels), L) is None else 2
    gold = [int(y) for y in corpus.labels[t0:t1]]
    gold_score = float(params @ path_features(attr_ptr, attr_labels, L, corpus, s, gold, order))
    totals = {}
    for p in itertools.product(range(L), repeat=t1 - t0):
        phi = path_features(attr_ptr, attr_labels, L, corpus, s, p, order)
        totals[p] = float(params @ phi) + sum(_cost_value(cost, g, y) for g, y in zip(gold, p))
    best = max(totals.values())
    return best - gold_score, {p for p, v in totals.items() if v == best}


class NaivePegasos:
    """Stochastic subgradient steps on the structured SVM, dense weights, no scale factor.

    Step ``t`` (1-based, counted over every example seen) on sequence ``s``:
    ``w <- (1 - 2/(t+1)) w + eta (Phi(gold) - Phi(y*))`` with
    ``eta = 2 / (lambda (t + 1))`` (Lacoste-Julien et al. 2012), where ``y*``
    is the cost-augmented argmax under the weights before the step (the
    update term is zero when ``y* == gold``).  Keeps every weight vector; the
    average weighs the one after step ``t`` by ``t``.
    """

    def __init__(self, attr_ptr, attr_labels, n_labels: int, corpus, C: float, cost=None,
                 order: int = 1):
        self.attr_ptr, self.attr_labels = np.asarray(attr_ptr), np.asarray(attr_labels)
        self.L, self.corpus, self.cost = int(n_labels), corpus, cost
        self.order = order
        self.lam = 1.0 / (C * (len(corpus.seq_ptr) - 1))
        self.weights = np.zeros(len(self.attr_labels) + self.L * self.L + 2 * self.L
                                + (self.L ** 3 if order == 2 else 0))
        self.history: list[np.ndarray] = []

    def step(self, s: int, pred) -> None:
        """Step on sequence ``s`` whose cost-augmented path is ``pred`` (checked by the caller)."""
        c, L = self.corpus, self.L
        t0, t1 = int(c.seq_ptr[s]), int(c.seq_ptr[s + 1])
        gold = [int(y) for y in c.labels[t0:t1]]
        t = len(self.history) + 1
        eta = 2.0 / (self.lam * (t + 1))
        phi_gold = path_features(self.attr_ptr, self.attr_labels, L, c, s, gold, self.order)
        phi_pred = path_features(self.attr_ptr, self.attr_labels, L, c, s, list(pred),
                                 self.order)
        self.weights = (1.0 - eta * self.lam) * self.weights + eta * (phi_gold - phi_pred)
        self.history.append(self.weights.copy())

    def averaged(self) -> np.ndarray:
        """Average of the stored weight vectors, the one after step t weighted by t."""
        if not self.history:
            return self.weights.copy()
        steps = np.arange(1, len(self.history) + 1, dtype=np.float64)
        return (steps[:, None] * np.array(self.history)).sum(axis=0) / steps.sum()


# ---------------------------------------------------------------------------
# Passive-aggressive and AROW (CRFsuite's update rules, dense and slow)


class NaiveMargin:
    """Passive-aggressive or AROW on dense vectors, as ``cseq.learners._pa``/``cseq.learners._arow`` train.

    ``step(s)`` decodes sequence ``s`` by brute force under the current
    weights (ties resolved as the kernel does), and when the path is wrong
    forms ``delta = Φ(gold) - Φ(pred)`` with :func:`path_features` and
    updates: PA (``kind`` 0, 1, 2) ``w += tau delta`` with ``tau`` from
    ``loss / ||delta||^2``; AROW (``kind="arow"``) the mean and the diagonal
    covariance.  The weights after every step are kept, so that
    :meth:`averaged` is their plain mean.  ``ambiguous`` is set when a step
    met several best paths tied up to rounding under nonzero weights: the
    kernel, adding in another order, may then have chosen another one, and
    a comparison must stop there.
    """

    def __init__(self, attr_ptr, attr_labels, n_labels: int, corpus, kind, C: float = 1.0,
                 error_sensitive: bool = True, variance: float = 1.0,
                 gamma: float = 1.0) -> None:
        self.attr_ptr = np.asarray(attr_ptr)
        self.attr_labels = np.asarray(attr_labels)
        self.L = int(n_labels)
        self.corpus = corpus
        self.kind, self.C, self.error_sensitive, self.gamma = kind, C, error_sensitive, gamma
        self.n_state = len(self.attr_labels)
        self.weights = np.zeros(self.n_state + self.L * self.L + 2 * self.L)
        self.cov = np.full_like(self.weights, variance)
        self.history: list[np.ndarray] = []
        self.ambiguous = False

    def step(self, s: int) -> tuple[int, float]:
        """Train on sequence ``s``; returns the wrong labels and the loss."""
        c = self.corpus
        t0, t1 = int(c.seq_ptr[s]), int(c.seq_ptr[s + 1])
        gold = tuple(int(y) for y in c.labels[t0:t1])
        errors, loss = 0, 0.0
        if gold:
            _, T, start, end = split_params(self.weights, self.n_state, self.L)
            E = sequence_emissions(self.weights, self.attr_ptr, self.attr_labels, self.L, c, s)
            paths, scores = all_path_scores(E, T, start, end)
            best = float(scores.max())
            # Ties up to rounding: the kernel adds the terms in another order.
            tied = [tuple(int(y) for y in p) for p, v in zip(paths, scores)
                    if v >= best - 1e-9 * max(1.0, abs(best))]
            pred = kernel_tie_break(tied)
            errors = sum(g != p for g, p in zip(gold, pred))
            # Under zero weights every score is exactly 0 and the tie-break exact.
            self.ambiguous |= len(tied) > 1 and bool(self.weights.any())
        if errors:
            margin = float(errors) if self.kind == "arow" else (
                math.sqrt(errors) if self.error_sensitive else 1.0)
            loss = best - path_score(E, T, start, end, gold) + margin
            delta = (path_features(self.attr_ptr, self.attr_labels, self.L, c, s, gold)
                     - path_features(self.attr_ptr, self.attr_labels, self.L, c, s, pred))
            if self.kind == "arow":
                alpha = loss / (self.gamma + float(np.sum(self.cov * delta ** 2)))
                self.weights = self.weights + alpha * self.cov * delta
                self.cov = 1.0 / (1.0 / self.cov + delta ** 2 / self.gamma)
            else:
                norm2 = float(delta @ delta)
                tau = {0: loss / norm2, 1: min(self.C, loss / norm2),
                       2: loss / (norm2 + 0.5 / self.C)}[self.kind]
                self.weights = self.weights + tau * delta
        self.history.append(self.weights.copy())
        return errors, loss

    def averaged(self) -> np.ndarray:
        """Mean of the weight vectors stored after each example (the weights before any)."""
        if not self.history:
            return self.weights.copy()
        return np.mean(np.array(self.history), axis=0)
