"""Constrained and n-best prediction for the chain estimators.

The estimators' ``predict(X, constraints=..., fixed=...)``,
``predict_marginals(X, constraints=..., fixed=...)`` and
``predict_nbest(X, k, constraints=..., fixed=...)`` come here.  Constraints
by name become the masks of the kernels (``cseq/chain/_masks.pxd``):

- ``constraints``: ``"bio"`` (the scheme read from the label names: IOB2, or
  BIOES when some label has an ``E-`` or ``S-`` prefix), ``"iob2"``,
  ``"iob1"``, ``"bioes"`` (alias ``"iobes"``): the label transitions, first
  and last labels the scheme allows (:func:`scheme_constraints`); or a
  boolean (L, L) matrix of allowed transitions in ``classes_`` order.
- ``fixed``: one entry per sequence, None or a dict ``{position: label}``
  (a forced label) or ``{position: {label, ...}}`` (the labels allowed
  there).

The model decodes (``model.decode`` with the masks): a CRF, perceptron,
SSVM or HMM with the masked chain kernels, a MEMM with the masked chain of
its log-probabilities (``log P(y | x)`` is a chain score up to a constant,
see ``cseq.learners.memm.LocalChain.dense_chains``); a model that does not maximize a
chain score (``chain_scores`` False: the greedy tagger) refuses.  Without
constraints, :func:`predict`, :func:`predict_marginals` and :func:`score`
are the estimators' plain methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cseq.chain.mapping import gold_ids, map_blocks, map_decoded, split
from cseq.exceptions import InputError, InputTypeError
from cseq.chain.fitted import Fitted
from cseq.chain.inference import as_mask_array, forward_backward, n_best_count, viterbi_nbest
from cseq.evaluation.metrics import SCHEMES, _split_label, detect_scheme
from cseq.chain.model import LinearChain, per_sequence
from cseq.chain.sequences import Sequences, label_lists

__all__ = ["scheme_constraints", "NBest", "predict", "predict_marginals", "predict_nbest",
           "score", "lattice_cells"]

#: The names ``constraints=`` takes.
CONSTRAINT_SCHEMES = ("bio", "iob2", "iob1", "bioes", "iobes")


def scheme_constraints(labels: Sequence[str], scheme: str = "bio"
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transitions, first and last labels a chunk scheme allows, as boolean masks.

    Labels are ``"O"`` or ``PREFIX-TYPE`` (split at the first hyphen, as in
    :mod:`cseq.metrics`).  With ``t(a)`` the type of label ``a``:

    ``"iob2"`` (BIO)
        ``I-X`` only right after ``B-X`` or ``I-X``; no sequence starts
        with ``I-X``.  Everything else is allowed.
    ``"iob1"``
        ``I-X`` opens or continues a chunk; ``B-X`` only separates two
        adjacent chunks of the same type, so it may only follow ``B-X`` or
        ``I-X`` and never starts a sequence.  Everything else is allowed.
    ``"bioes"`` (``"iobes"``)
        Inside a chunk (after ``B-X`` or ``I-X``) only ``I-X`` or ``E-X``;
        outside (at the start, after ``O``, ``E-Y`` or ``S-Y``) only ``O``,
        ``B-Y`` or ``S-Y``; a sequence ends outside a chunk (with ``O``,
        ``E-X`` or ``S-X``).
    ``"bio"``
        ``"bioes"`` when some label has an ``E`` or ``S`` prefix, else
        ``"iob2"`` (IOB1 has the labels of IOB2: ask for it by name).

    Returns
    -------
    allowed_transitions : ndarray of bool, shape (L, L)
        ``[i, j]``: label ``j`` may follow label ``i``.
    allowed_start, allowed_end : ndarray of bool, shape (L,)

    Raises
    ------
    InputError
        For an unknown scheme or a label that is not ``O`` or a prefix of
        the scheme followed by ``-TYPE``.

    Examples
    --------
    >>> trans, first, last = scheme_constraints(["O", "B-PER", "I-PER"])
    >>> trans.astype(int).tolist(), first.tolist()
    ([[1, 1, 0], [1, 1, 1], [1, 1, 1]], [True, True, False])
    """
    if not isinstance(scheme, str) or scheme not in CONSTRAINT_SCHEMES:
        raise InputError(f"constraints must be one of {', '.join(map(repr, CONSTRAINT_SCHEMES))} "
                         f"or a boolean (L, L) matrix, got {scheme!r}")
    labels = list(labels)
    if scheme == "bio":
        detected = detect_scheme(labels)
        if detected is None:
            raise InputError("constraints='bio' needs chunk labels ('O' or B-/I-/E-/S- followed "
                             "by '-TYPE'); these labels are not")
        scheme = detected
    if scheme == "iobes":
        scheme = "bioes"
    parts = [_split_label(lab, SCHEMES[scheme], scheme) for lab in labels]
    L = len(labels)
    trans = np.ones((L, L), dtype=bool)
    start = np.ones(L, dtype=bool)
    end = np.ones(L, dtype=bool)
    for j, (pj, tj) in enumerate(parts):
        for i, (pi, ti) in enumerate(parts):
            if scheme == "iob2":
                ok = pj != "I" or (pi in ("B", "I") and ti == tj)
            elif scheme == "iob1":
                ok = pj != "B" or (pi in ("B", "I") and ti == tj)
            else:
                inside = pi in ("B", "I")
                ok = (pj in ("I", "E") and ti == tj) if inside else pj in ("O", "B", "S")
            trans[i, j] = ok
        if scheme == "iob2":
            start[j] = pj != "I"
        elif scheme == "iob1":
            start[j] = pj != "B"
        else:
            start[j] = pj in ("O", "B", "S")
            end[j] = pj in ("O", "E", "S")
    return trans, start, end


def lattice_cells(n: int, n_labels: int, order: int = 1, *, nbest: int | None = None,
                  marginals: bool = False) -> int:
    """The decoding-lattice cells one sequence of ``n`` tokens takes: what the
    decoders' memory and time grow with, for bounding a request before it runs.

    ``n`` x the chain's states (``n_labels``, or its square at second order),
    x the n-best lists' length ``min(nbest, L ** n)`` (:func:`viterbi_nbest`
    keeps that many partial paths per state), x 3 with ``marginals`` (the
    forward, backward and marginal tables).

    >>> lattice_cells(10, 17), lattice_cells(10, 17, nbest=5), lattice_cells(1, 17, nbest=100)
    (170, 850, 289)
    >>> lattice_cells(10, 17, order=2), lattice_cells(10, 17, marginals=True)
    (2890, 510)
    """
    states = n_labels * n_labels if order == 2 else n_labels
    width = n_best_count(nbest, n, n_labels) if nbest is not None else 1
    return n * states * width * (3 if marginals else 1)


def _check_chain(est: Any, model: LinearChain) -> None:
    """InputError unless ``model`` decodes a chain score (constraints, n-best lists)."""
    if not model.chain_scores:
        raise InputError(f"{type(est).__name__} does not decode a chain score: constraints and "
                         "n-best lists need a CRF, perceptron, SSVM, HMM or MEMM")


def transition_masks(classes: Sequence[str], constraints: Any) -> dict[str, np.ndarray | None]:
    """``allowed_transitions``, ``allowed_start``, ``allowed_end`` for ``constraints`` (or Nones)
    over the labels ``classes``."""
    L = len(classes)
    if constraints is None:
        return {"allowed_transitions": None, "allowed_start": None, "allowed_end": None}
    if isinstance(constraints, str):
        trans, start, end = scheme_constraints([str(c) for c in classes], constraints)
        return {"allowed_transitions": trans, "allowed_start": start, "allowed_end": end}
    trans = as_mask_array(constraints, "constraints", (L, L)).astype(bool)
    return {"allowed_transitions": trans, "allowed_start": None, "allowed_end": None}


def _label_sets(value: Any, ids: dict, where: str) -> list[int]:
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        values = [value]
    else:
        values = list(value)
        if not values:
            raise InputError(f"{where}: an empty label set allows nothing")
    out = []
    for v in values:
        if v not in ids:
            raise InputError(f"{where}: {v!r} is not a label of the model")
        out.append(ids[v])
    return out


def allowed_rows(classes: Sequence[str], fixed: Any, corpus: Sequences,
                 block: slice | None) -> np.ndarray | None:
    """The (n_tokens, L) allowed-label rows of ``fixed`` for the sequences of ``corpus``
    (labels ``classes``)."""
    if fixed is None:
        return None
    if isinstance(fixed, (str, bytes, dict)) or not hasattr(fixed, "__len__"):
        raise InputTypeError("fixed must be a list with one entry (None or a dict "
                             "{position: label or set of labels}) per sequence")
    part = fixed if block is None else fixed[block]
    if len(part) != corpus.n_sequences:
        raise InputError(f"fixed has {len(fixed)} entries for {corpus.n_sequences} sequences")
    ids = {name: i for i, name in enumerate(classes)}
    rows = np.ones((corpus.n_tokens, len(ids)), dtype=bool)
    first = 0 if block is None else (block.start or 0)
    for s, entry in enumerate(part):
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise InputTypeError(f"fixed[{first + s}] must be None or a dict, got "
                                 f"{type(entry).__name__}")
        a, n = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1] - corpus.seq_ptr[s])
        for pos, value in entry.items():
            if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) \
                    or not 0 <= pos < n:
                raise InputError(f"fixed[{first + s}]: position {pos!r} is not in 0..{n - 1}")
            keep = np.zeros(len(ids), dtype=bool)
            keep[_label_sets(value, ids, f"fixed[{first + s}][{pos}]")] = True
            rows[a + int(pos)] &= keep
    return rows


def threads_for(fixed: Any, X: Any, n_jobs: int) -> int:
    """``n_jobs``, or 1 when ``fixed`` is given and ``X`` is not a list: ``fixed`` is
    sliced by block, and only a list is cut into blocks."""
    return 1 if fixed is not None and not isinstance(X, (list, tuple)) else n_jobs


def predict(est: Any, fitted: Fitted, X: Sequence[Any], constraints: Any, fixed: Any,
            n_jobs: int) -> list[list[str]]:
    """``est.predict`` by the snapshot ``fitted``, with constraints (see the module
    docstring) or without."""
    model, classes = fitted.model, fitted.classes
    labels = fitted.label_names
    if constraints is None and fixed is None:
        def plain(corpus: Sequences, block: slice | None, ids: np.ndarray) -> list[list[str]]:
            return label_lists(labels, ids, corpus.seq_ptr)
        return [seq for part in map_decoded(fitted, X, n_jobs, plain) for seq in part]
    _check_chain(est, model)
    masks = transition_masks(classes, constraints)

    def work(corpus: Sequences, block: slice | None) -> list[list[str]]:
        rows = allowed_rows(classes, fixed, corpus, block)
        return label_lists(labels, model.decode(corpus, allowed=rows, **masks), corpus.seq_ptr)
    return [seq for part in map_blocks(fitted, X, threads_for(fixed, X, n_jobs), work)
            for seq in part]


def predict_marginals(est: Any, fitted: Fitted, X: Sequence[Any], constraints: Any, fixed: Any,
                      n_jobs: int) -> list[np.ndarray]:
    """``est.predict_marginals``: the marginals of ``P(y | x)`` by the model, with
    constraints those of the distribution restricted to the allowed labelings
    (disallowed labels get exactly 0)."""
    model, classes = fitted.model, fitted.classes
    if constraints is None and fixed is None:
        def plain(corpus: Sequences, block: slice | None) -> list[np.ndarray]:
            return split(model.marginals(corpus), corpus)
        return [m for part in map_blocks(fitted, X, n_jobs, plain) for m in part]
    _check_chain(est, model)
    masks = transition_masks(classes, constraints)

    def work(corpus: Sequences, block: slice | None) -> list[np.ndarray]:
        rows = allowed_rows(classes, fixed, corpus, block)
        return split(model.marginals(corpus, allowed=rows, **masks), corpus)
    return [m for part in map_blocks(fitted, X, threads_for(fixed, X, n_jobs), work)
            for m in part]


def score(fitted: Fitted, X: Sequence[Any], y: Sequence[Sequence[str]], n_jobs: int) -> float:
    """``est.score``: the token accuracy of the model's labels on ``X`` against ``y``
    (labels the model does not know count as errors; 0.0 without tokens)."""
    label_ids = {name: i for i, name in enumerate(fitted.classes)}
    if not (isinstance(X, (list, tuple)) and isinstance(y, (list, tuple))
            and len(y) == len(X)):
        n_jobs = 1  # one block: the error will name indices of the whole X

    def work(corpus: Sequences, block: slice | None, ids: np.ndarray) -> tuple[int, int]:
        gold = gold_ids(y if block is None else y[block], corpus, label_ids)
        return int(np.sum(ids == gold)), len(gold)
    counts = map_decoded(fitted, X, n_jobs, work)
    total = sum(n for _, n in counts)
    return sum(c for c, _ in counts) / total if total else 0.0


@dataclass
class NBest:
    """The n-best labelings of one sequence, best first.

    Attributes
    ----------
    labels : list of list of str
        ``k'`` labelings (``k' = min(k, L ** n)``, or fewer if constraints
        allow fewer); ties as :func:`cseq.viterbi_nbest` breaks them.
    scores : ndarray of float64, shape (k',)
        The score each one gets from the model (what ``predict`` maximizes).
    log_probs : ndarray of float64, shape (k',), or None
        ``log P(y | x)`` under the model (unconstrained: not renormalized
        over the allowed labelings), for a CRF, HMM or MEMM; None for the
        perceptron and the SSVM, which define no probabilities.
    """

    labels: list[list[str]]
    scores: np.ndarray
    log_probs: np.ndarray | None


def predict_nbest(est: Any, fitted: Fitted, X: Sequence[Any], k: int, constraints: Any,
                  fixed: Any, n_jobs: int) -> list[NBest]:
    """``est.predict_nbest``: the ``k`` best labelings of each sequence, exactly."""
    model, classes = fitted.model, fitted.classes
    _check_chain(est, model)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a positive int, got {k!r}")
    masks = transition_masks(classes, constraints)
    labels = fitted.label_names
    probabilistic = model.probabilistic

    def one(chain, kw) -> NBest:
        paths, scores = viterbi_nbest(chain[0], chain[1], k, *chain[2:4], transitions2=chain[4],
                                      **kw)
        log_probs = None
        if probabilistic:
            log_z = forward_backward(*chain[:4], transitions2=chain[4])[0]
            log_probs = np.minimum(scores - log_z, 0.0)
        return NBest([labels[p].tolist() for p in paths], scores, log_probs)

    def work(corpus: Sequences, block: slice | None) -> list[NBest]:
        rows = allowed_rows(classes, fixed, corpus, block)
        found = per_sequence(model.dense_chains(corpus), rows, corpus, masks, one)
        empty = NBest([[]], np.zeros(1), np.zeros(1) if probabilistic else None)
        return [empty if r is None else r for r in found]
    return [r for part in map_blocks(fitted, X, threads_for(fixed, X, n_jobs), work)
            for r in part]
