"""Public inference kernels on plain numpy arrays.

These validate their inputs once and then run the compiled, GIL-free
kernels that the estimators use.  Each takes an optional ``transitions2``
(L, L, L): the label-trigram scores of a second-order chain, whose path
score adds ``transitions2[y_{t-2}, y_{t-1}, y_t]`` for every ``t >= 2`` to the
first-order score.
"""

from __future__ import annotations

import warnings
from typing import overload

import numpy as np
from numpy.typing import ArrayLike

from cseq.chain import _decode, _forward_backward, _masks, _nbest
from cseq.chain._chain import MAX_LABELS
from cseq.exceptions import InputError, InputTypeError

__all__ = ["viterbi", "viterbi_nbest", "loss_augmented_viterbi", "forward_backward",
           "check_cost_matrix",
           "as_mask_array", "mask_set"]

# NumPy before 1.24 turns a ragged nested list into an object array with this
# warning (later versions raise ValueError); it lives in np.exceptions from 1.25.
_RaggedWarning = getattr(np, "exceptions", np).VisibleDeprecationWarning


def _rectangular(x, name: str, what: str) -> np.ndarray:
    """``np.asarray(x)``, refusing None, strings and ragged nested lists (``what``: "numeric")."""
    if isinstance(x, (str, bytes)) or x is None:
        raise InputTypeError(f"{name} must be a {what} array, got {type(x).__name__}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", _RaggedWarning)
            return np.asarray(x)
    except (ValueError, TypeError, _RaggedWarning) as exc:
        raise InputError(f"{name} is not a rectangular {what} array ({exc})") from None


def as_score_array(x, name: str, shape: tuple[int | None, ...]) -> np.ndarray:
    """Validate a real-valued score array and return it as C-contiguous float64.

    ``shape`` entries of None accept any size. Integer, float32 and float64
    inputs are accepted (copied when needed); bool, complex, object and string
    arrays are refused, and so are NaN and infinite values.
    """
    arr = _rectangular(x, name, "numeric")
    if arr.dtype.kind not in "iuf":
        raise InputTypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != len(shape):
        raise InputError(f"{name} must be {len(shape)}-dimensional, got shape {arr.shape}")
    for axis, (got, want) in enumerate(zip(arr.shape, shape)):
        if want is not None and got != want:
            raise InputError(f"{name} has shape {arr.shape}; axis {axis} must be {want}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InputError(f"{name} has a non-finite value at index {tuple(int(i) for i in bad)}")
    return arr


def _chain_arrays(emissions: ArrayLike, transitions: ArrayLike, start: ArrayLike | None,
                  end: ArrayLike | None, transitions2: ArrayLike | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    em = as_score_array(emissions, "emissions", (None, None))
    n_labels = em.shape[1]
    if n_labels == 0:
        raise InputError("emissions must have at least one label column")
    if n_labels > MAX_LABELS:
        raise InputError(f"emissions have {n_labels:,} label columns; the kernels take at most "
                         f"{MAX_LABELS:,} labels")
    tr = as_score_array(transitions, "transitions", (n_labels, n_labels))
    st = np.zeros(n_labels) if start is None else as_score_array(start, "start", (n_labels,))
    en = np.zeros(n_labels) if end is None else as_score_array(end, "end", (n_labels,))
    t2 = None if transitions2 is None else as_score_array(
        transitions2, "transitions2", (n_labels, n_labels, n_labels))
    return em, tr, st, en, t2


def as_mask_array(x, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Validate a boolean mask (True = allowed) and return it as C-contiguous uint8 0/1.

    Bool arrays and integer arrays of 0 and 1 are accepted; anything else,
    and a wrong shape, is refused.
    """
    arr = _rectangular(x, name, "boolean")
    if arr.dtype.kind not in "biu":
        raise InputTypeError(f"{name} must be a boolean array (True = allowed), got dtype "
                             f"{arr.dtype}")
    if arr.shape != shape:
        raise InputError(f"{name} has shape {arr.shape}; it must be {shape}")
    if arr.dtype.kind != "b" and arr.size and not np.isin(arr, (0, 1)).all():
        raise InputError(f"{name} must hold only 0/1 or False/True")
    return np.ascontiguousarray(arr, dtype=np.uint8)


def mask_set(n_labels: int, allowed=None, allowed_transitions=None, allowed_start=None,
             allowed_end=None, n: int | None = None):
    """The kernels' ``cseq.chain._masks.MaskSet`` of validated constraints, or None if none is given.

    ``allowed`` must be (n, L) when ``n`` is given, else (any, L) (one row
    per corpus token, checked by the caller).
    """
    if allowed is None and allowed_transitions is None and allowed_start is None \
            and allowed_end is None:
        return None
    L = n_labels
    if allowed is not None:
        rows = n if n is not None else (np.shape(allowed)[0] if np.ndim(allowed) == 2 else -1)
        allowed = as_mask_array(allowed, "allowed", (rows, L))
    masks = _masks.MaskSet(
        L,
        None if allowed is None or allowed.size == 0 else allowed,
        None if allowed_transitions is None else as_mask_array(allowed_transitions,
                                                               "allowed_transitions", (L, L)),
        None if allowed_start is None else as_mask_array(allowed_start, "allowed_start", (L,)),
        None if allowed_end is None else as_mask_array(allowed_end, "allowed_end", (L,)))
    return masks


def _constrain(em: np.ndarray, tr: np.ndarray, allowed, allowed_transitions, allowed_start,
               allowed_end) -> tuple[np.ndarray, np.ndarray]:
    """Emissions and transitions with -inf where the constraints disallow.

    Without constraints, the arrays themselves; an empty sequence only has
    its constraints validated.
    """
    masks = mask_set(em.shape[1], allowed, allowed_transitions, allowed_start, allowed_end,
                     n=em.shape[0])
    if masks is None or em.shape[0] == 0:
        return em, tr
    return _masks.masked_chain(masks, em, tr)


def viterbi(emissions: ArrayLike, transitions: ArrayLike, start: ArrayLike | None = None,
            end: ArrayLike | None = None, *,
            transitions2: ArrayLike | None = None, allowed: ArrayLike | None = None,
            allowed_transitions: ArrayLike | None = None, allowed_start: ArrayLike | None = None,
            allowed_end: ArrayLike | None = None) -> tuple[np.ndarray, float]:
    """Highest-scoring label sequence of a first- or second-order linear chain.

    The score of labels ``y`` is ``start[y0] + sum_t emissions[t, y_t] +
    sum_t transitions[y_{t-1}, y_t] + end[y_{n-1}]``, plus ``sum_{t >= 2}
    transitions2[y_{t-2}, y_{t-1}, y_t]`` for a second-order chain (decoded
    over label pairs in O(n L^3)).

    Parameters
    ----------
    emissions : array_like, shape (n, L)
        Score of each label at each position.
    transitions : array_like, shape (L, L)
        ``transitions[i, j]`` scores label ``i`` followed by label ``j``.
    start, end : array_like, shape (L,), optional
        Scores of the first and of the last label (zero when omitted).
    transitions2 : array_like, shape (L, L, L), optional
        ``transitions2[a, b, c]`` scores labels ``a, b, c`` at consecutive
        positions (second order); None for a first-order chain.
    allowed : array_like of bool, shape (n, L), optional
        Constraints: ``allowed[t, j]`` False forbids label ``j`` at position
        ``t`` (a forced label is a row with one True).
    allowed_transitions : array_like of bool, shape (L, L), optional
        ``allowed_transitions[i, j]`` False forbids label ``j`` right after
        label ``i``.
    allowed_start, allowed_end : array_like of bool, shape (L,), optional
        The labels allowed at the first and at the last position.

    Returns
    -------
    path : ndarray of int32, shape (n,)
        The best labels among the allowed paths; ties go to the lower label
        id.
    score : float
        Its score (0.0 for an empty sequence).

    Raises
    ------
    InputError
        When the constraints leave no label path (``cseq.chain._masks.NoAllowedPath``,
        naming the first position no allowed path reaches).

    Examples
    --------
    >>> import numpy as np, cseq
    >>> path, score = cseq.viterbi(np.array([[1.0, 0.0], [0.0, 2.0]]), np.zeros((2, 2)))
    >>> path.tolist(), score
    ([0, 1], 3.0)
    """
    em, tr, st, en, t2 = _chain_arrays(emissions, transitions, start, end, transitions2)
    em, tr = _constrain(em, tr, allowed, allowed_transitions, allowed_start, allowed_end)
    if em.shape[0] == 0:
        return np.empty(0, dtype=np.int32), 0.0
    path, score = _decode.viterbi_array(em, tr, st, en, t2)
    if not np.isfinite(score):
        raise InputError("scores overflow: the best path's score is not finite "
                         "(finite inputs whose sum exceeds the float64 range)")
    return path, score


def n_best_count(k, n: int, n_labels: int) -> int:
    """``min(k, L ** n)`` for a validated ``k`` (a positive int); InputError otherwise."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a positive int, got {k!r}")
    k = int(k)
    if n_labels == 1 or n * np.log2(n_labels) < 63:
        return min(k, n_labels ** n)
    return k


def viterbi_nbest(emissions: ArrayLike, transitions: ArrayLike, k: int,
                  start: ArrayLike | None = None, end: ArrayLike | None = None, *,
                  transitions2: ArrayLike | None = None, allowed: ArrayLike | None = None,
                  allowed_transitions: ArrayLike | None = None,
                  allowed_start: ArrayLike | None = None,
                  allowed_end: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest-scoring label sequences of a chain, exactly (not a beam).

    Scores, ``transitions2`` and the constraints are those of :func:`viterbi`.
    Every label (or label pair, at second order) keeps its ``k`` best partial
    paths, merged from its predecessors' lists: O(n L^2 k) at first order,
    O(n L^3 k) at second (Schwartz and Chow 1990).

    Parameters
    ----------
    emissions, transitions, start, end, transitions2
        As for :func:`viterbi`.
    k : int
        How many paths (at least 1).
    allowed, allowed_transitions, allowed_start, allowed_end
        Constraints, as for :func:`viterbi`: only allowed paths are listed.

    Returns
    -------
    paths : ndarray of int32, shape (k', n)
        The best paths, best first; ``k' = min(k, L ** n)``, or fewer when the
        constraints allow fewer paths.  Ties (equal scores) are broken as
        :func:`viterbi` breaks them: the path whose reversed label sequence is
        lexicographically smaller comes first, so ``paths[0]`` is Viterbi's.
    scores : ndarray of float64, shape (k',)
        Their scores, non-increasing.  An empty sequence has one path, empty,
        of score 0.

    Raises
    ------
    InputError
        For a bad ``k``, bad arrays, or constraints that allow no path.

    References
    ----------
    Schwartz, R., Chow, Y.-L. (1990). The N-best algorithm: an efficient and
    exact procedure for finding the N most likely sentence hypotheses. ICASSP.

    Examples
    --------
    >>> import numpy as np, cseq
    >>> paths, scores = cseq.viterbi_nbest(np.array([[1.0, 0.0], [0.0, 2.0]]), np.zeros((2, 2)), 3)
    >>> paths.tolist(), scores.tolist()
    ([[0, 1], [1, 1], [0, 0]], [3.0, 2.0, 1.0])
    """
    em, tr, st, en, t2 = _chain_arrays(emissions, transitions, start, end, transitions2)
    n, n_labels = em.shape
    kk = n_best_count(k, n, n_labels)
    em, tr = _constrain(em, tr, allowed, allowed_transitions, allowed_start, allowed_end)
    if n == 0:
        return np.zeros((1, 0), dtype=np.int32), np.zeros(1)
    paths, scores = _nbest.nbest_array(em, tr, st, en, kk, t2)
    if len(scores) == 0 or not np.isfinite(scores[0]):
        raise InputError("scores overflow: the best path's score is not finite "
                         "(finite inputs whose sum exceeds the float64 range)")
    return paths, scores


def check_cost_matrix(cost, n_labels: int, name: str = "cost") -> np.ndarray:
    """Validate a label-pair cost matrix; returns it as C-contiguous float64.

    ``cost[g, y]`` is what predicting label ``y`` costs where the gold label
    is ``g``.  It must be (L, L), finite and non-negative, with a zero
    diagonal: predicting the gold label costs nothing, so the gold path has
    cost 0 and the structured hinge loss is never negative.
    """
    arr = as_score_array(cost, name, (n_labels, n_labels))
    if (arr < 0).any():
        bad = np.argwhere(arr < 0)[0]
        raise InputError(f"{name} must be non-negative; {name}[{bad[0]}, {bad[1]}] is "
                         f"{arr[bad[0], bad[1]]!r}")
    diag = np.diagonal(arr)
    if (diag != 0).any():
        i = int(np.flatnonzero(diag)[0])
        raise InputError(f"{name} must have a zero diagonal (predicting the gold label costs "
                         f"nothing); {name}[{i}, {i}] is {diag[i]!r}")
    return arr


def _gold_array(gold, n: int, n_labels: int) -> np.ndarray:
    if isinstance(gold, (str, bytes)) or gold is None:
        raise InputTypeError(f"gold must be an array of label ids, got {type(gold).__name__}")
    try:
        arr = np.asarray(gold)
    except (ValueError, TypeError) as exc:
        raise InputError(f"gold is not a 1-d array of label ids ({exc})") from None
    if arr.size == 0 and arr.ndim == 1:
        arr = arr.astype(np.int32)
    if arr.dtype.kind not in "iu":
        raise InputTypeError(f"gold must hold integer label ids, got dtype {arr.dtype}")
    if arr.shape != (n,):
        raise InputError(f"gold has shape {arr.shape}; it must be ({n},), one label per position")
    if n and (arr.min() < 0 or arr.max() >= n_labels):
        t = int(np.flatnonzero((arr < 0) | (arr >= n_labels))[0])
        raise InputError(f"gold[{t}] is {int(arr[t])}, not a label id in 0..{n_labels - 1}")
    return np.ascontiguousarray(arr, dtype=np.int32)


def loss_augmented_viterbi(emissions: ArrayLike, transitions: ArrayLike, gold: ArrayLike,
                           cost: ArrayLike | None = None, start: ArrayLike | None = None,
                           end: ArrayLike | None = None, *,
                           transitions2: ArrayLike | None = None,
                           allowed: ArrayLike | None = None,
                           allowed_transitions: ArrayLike | None = None,
                           allowed_start: ArrayLike | None = None,
                           allowed_end: ArrayLike | None = None) -> tuple[np.ndarray, float]:
    """Highest-scoring label sequence under score plus cost against a gold sequence.

    Finds ``argmax_y score(y) + sum_t cost[gold[t], y[t]]``, where ``score`` is
    that of :func:`viterbi`: the most violating path of the structured hinge
    loss (Tsochantaridis et al. 2005).  The cost is added to the emission
    scores and the same Viterbi kernel runs.

    Parameters
    ----------
    emissions, transitions, start, end, transitions2
        As for :func:`viterbi`.
    allowed, allowed_transitions, allowed_start, allowed_end
        Constraints, as for :func:`viterbi`: the argmax is over the allowed
        paths only.
    gold : array_like of int, shape (n,)
        The gold label ids.
    cost : array_like, shape (L, L), optional
        ``cost[g, y]``: what label ``y`` costs where the gold label is ``g``;
        finite, non-negative, zero diagonal (:func:`check_cost_matrix`).
        None means the Hamming cost, ``1`` for every wrong label.

    Returns
    -------
    path : ndarray of int32, shape (n,)
        The best labels; ties go to the lower label id.
    score : float
        Its augmented score ``score(path) + cost(gold, path)`` (0.0 for an
        empty sequence).  Minus the gold path's score, it is the structured
        hinge loss.

    References
    ----------
    Tsochantaridis, I., Joachims, T., Hofmann, T., Altun, Y. (2005). Large
    margin methods for structured and interdependent output variables. JMLR 6.

    Examples
    --------
    >>> import numpy as np, cseq
    >>> em = np.array([[2.0, 0.0], [0.0, 0.5]])
    >>> path, score = cseq.loss_augmented_viterbi(em, np.zeros((2, 2)), [0, 1])
    >>> path.tolist(), score
    ([0, 0], 3.0)
    """
    em, tr, st, en, t2 = _chain_arrays(emissions, transitions, start, end, transitions2)
    n, n_labels = em.shape
    gold_arr = _gold_array(gold, n, n_labels)
    cost_arr = None if cost is None else check_cost_matrix(cost, n_labels)
    em, tr = _constrain(em, tr, allowed, allowed_transitions, allowed_start, allowed_end)
    if n == 0:
        return np.empty(0, dtype=np.int32), 0.0
    path, score = _decode.loss_augmented_viterbi_array(em, tr, st, en, gold_arr, cost_arr, t2)
    if not np.isfinite(score):
        raise InputError("scores overflow: the best path's score is not finite "
                         "(finite inputs whose sum exceeds the float64 range)")
    return path, score


@overload
def forward_backward(emissions: ArrayLike, transitions: ArrayLike, start: ArrayLike | None = None,
                     end: ArrayLike | None = None, *, transitions2: None = None,
                     allowed: ArrayLike | None = None, allowed_transitions: ArrayLike | None = None,
                     allowed_start: ArrayLike | None = None, allowed_end: ArrayLike | None = None) -> tuple[float, np.ndarray, np.ndarray]: ...
@overload
def forward_backward(emissions: ArrayLike, transitions: ArrayLike, start: ArrayLike | None = None,
                     end: ArrayLike | None = None, *, transitions2: ArrayLike,
                     allowed: ArrayLike | None = None, allowed_transitions: ArrayLike | None = None,
                     allowed_start: ArrayLike | None = None, allowed_end: ArrayLike | None = None) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]: ...
def forward_backward(emissions: ArrayLike, transitions: ArrayLike, start: ArrayLike | None = None,
                     end: ArrayLike | None = None, *, transitions2: ArrayLike | None = None,
                     allowed: ArrayLike | None = None, allowed_transitions: ArrayLike | None = None,
                     allowed_start: ArrayLike | None = None, allowed_end: ArrayLike | None = None) -> (tuple[float, np.ndarray, np.ndarray]
                           | tuple[float, np.ndarray, np.ndarray, np.ndarray]):
    """Log partition function and marginals of a first- or second-order linear chain.

    Parameters are those of :func:`viterbi`.  With constraints, the
    distribution is restricted to the allowed label paths (renormalized):
    ``log_z`` sums over those only, and a disallowed label, pair or triple
    has a marginal of exactly 0.

    Returns
    -------
    log_z : float
        ``log sum_y exp(score(y))`` over the (allowed) paths (0.0 for an empty
        sequence).
    marginals : ndarray, shape (n, L)
        ``P(y_t = j)``.
    pair_marginals : ndarray, shape (max(n - 1, 0), L, L)
        ``P(y_t = i, y_{t+1} = j)``.
    triple_marginals : ndarray, shape (max(n - 2, 0), L, L, L)
        Only with ``transitions2`` (a fourth result):
        ``P(y_t = a, y_{t+1} = b, y_{t+2} = c)``.

    Notes
    -----
    Runs in scaled probability space, or in log space when transition scores
    spread over more than 250 (see ``cseq.chain._forward_backward``), so results
    stay finite and accurate for any finite scores and any length.  A
    second-order chain runs over label pairs, O(n L^3).  Disallowed
    transitions make it run in log space (disallowed scores are -inf there,
    never NaN); constraints on labels alone keep the scaled mode.
    """
    em, tr, st, en, t2 = _chain_arrays(emissions, transitions, start, end, transitions2)
    n, n_labels = em.shape
    em, tr = _constrain(em, tr, allowed, allowed_transitions, allowed_start, allowed_end)
    if n == 0:
        empty = (0.0, np.zeros((0, n_labels)), np.zeros((0, n_labels, n_labels)))
        return empty if t2 is None else (*empty, np.zeros((0, n_labels, n_labels, n_labels)))
    result = _forward_backward.forward_backward_array(em, tr, st, en, t2)
    if not (np.isfinite(result[0]) and all(np.isfinite(r).all() for r in result[1:])):
        raise InputError("scores overflow: log Z or the marginals are not finite "
                         "(finite inputs whose sums exceed the float64 range)")
    return result
