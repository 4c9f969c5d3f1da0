"""Training and tagging on a Dask cluster (optional: ``pip install cseq-labeling[dask]``).

The same estimators, kernels and model files as on one machine, on Dask's
distributed scheduler::

    from dask.distributed import Client, LocalCluster
    import cseq, cseq.distributed as cd
    client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    model = cd.fit(cseq.CRF(c2=1.0), X, y, client=client)
    labels = cd.predict(model, X_new, client=client)

How a fit runs (``docs/scaling.md``):

1. The corpus is split into partitions (lists) or read on the workers
   (``dask.bag.Bag``, e.g. :func:`read_conll`).  Each worker learns the
   attributes and labels of its partitions (``featurizer.fit_part``);
   the driver merges them (``featurizer.merge``: the attribute ids are
   those a single-machine ``fit`` gives) and broadcasts the fitted
   featurizer once.
2. Each partition is packed once, on its worker, into the CSR corpus the
   single-machine code uses (:class:`~cseq.chain.sequences.Sequences`), and stays
   there for the whole fit.  The (attribute, label) pairs each shard has
   are merged into the model's state index, broadcast once.
3. CRF: the project's L-BFGS (OWL-QN with ``c1``) runs on the driver; each
   evaluation broadcasts the weights once, every shard computes its data
   term and gradient with the kernel of ``fit``
   (:meth:`cseq.learners.objectives.CRFObjective.data_term`), the results are summed
   by a tree reduction on the workers and the penalty is added once on the
   driver.  Perceptron and structured SVM: iterative parameter mixing
   (McDonald et al. 2010): every pass, each shard runs one epoch from the
   mixed weights (the SVM's Pegasos epoch with the whole corpus's
   ``lambda``), and the driver mixes the shards' weights.

Only weights, gradients and small statistics cross the network per
iteration.  A worker lost during a fit is replaced by Dask, which recomputes
its shards from their source; the result does not change.  Workers that
keep dying on one task (Dask gives up after ``allowed-failures`` of them)
end the fit, or the tagging, with :class:`~cseq.exceptions.ClusterError`.

``import cseq`` never imports this module (nor Dask).

References
----------
McDonald, R., Hall, K., Mann, G. (2010). Distributed training strategies for
the structured perceptron. NAACL-HLT.
Agarwal, A., Chapelle, O., Dudik, M., Langford, J. (2014). A reliable
effective terascale linear learning system. JMLR 15.
Zinkevich, M., Weimer, M., Smola, A., Li, L. (2010). Parallelized stochastic
gradient descent. NIPS (averaging SGD run on the parts of a corpus).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

try:
    import dask.bag as db
    from distributed import Client, Future, wait
except ImportError as _exc:  # pragma: no cover - tested in a subprocess
    raise ImportError(
        "cseq.distributed needs Dask's distributed scheduler: "
        "pip install 'cseq-labeling[dask]' (or pip install 'dask[distributed]')"
    ) from _exc

from cseq.chain import _labels
from cseq.learners import _ssvm, _perceptron
from cseq.chain import _weights
from cseq import conll
from cseq._cluster import (_gather, _is_bag, _partitions, _placement, _share, _split_bounds,
                           _threads, _worker_loss, check_workers)
from cseq.io._files import refuse_inputs, replacing
from cseq.learners.base import ChainEstimator
from cseq.exceptions import ClusterError, InputError, InputTypeError
from cseq.features import featurizer_from_config, featurizer_from_state
from cseq.learners import frame
from cseq.learners.loops import passes, train_lbfgs
from cseq.chain.model import LinearChain
from cseq.learners.objectives import CRFObjective, l2_penalty
from cseq.chain.sequences import Sequences
from cseq.io.serialize import ESTIMATORS
from cseq._core.vectors import dot

__all__ = ["fit", "predict", "read_conll", "read_conllu", "tag_files", "check_workers",
           "ClusterError"]


# ---------------------------------------------------------------------------
# partitions


def _n_sequences(pair) -> int:
    return len(pair[0])


def _tag_counts_part(pair, config, first: int):
    """Map step of the ``tags`` dictionary: a partition's label counts per word and fold."""
    X_part, y_part = pair
    if not X_part:
        return None
    return featurizer_from_config(config).tag_counts(X_part, y_part, first)


def _learn_part(pair, config, tags=None, first: int = 0) -> dict:
    """Map step: a partition's attributes (featurizer part), labels and sizes.

    ``tags``: the whole corpus's tag folds, for templates with ``:tags``
    (the partition starts at sentence ``first``)."""
    X_part, y_part = pair
    featurizer = featurizer_from_config(config)
    part = None
    if X_part:
        part = featurizer.fit_part(X_part, tags, first) if tags is not None else \
            featurizer.fit_part(X_part)
    labels = sorted({lab for seq in y_part for lab in seq if lab is not None})
    meta_arrays = part.get_state() if part is not None else None
    return {"part": meta_arrays, "counts": getattr(part, "counts_", None), "labels": labels,
            "n_sequences": len(X_part)}


def _featurizer_from_part(info: dict):
    meta, arrays = info["part"]
    part = featurizer_from_state(meta, arrays)
    if info["counts"] is not None:
        part.counts_ = info["counts"]
    return part


class _Shard:
    """One packed partition on its worker: its corpus, then its objective."""

    def __init__(self, corpus: Sequences | None) -> None:
        self.corpus = corpus
        self._objective: CRFObjective | None = None
        self._structure = None

    def __sizeof__(self) -> int:
        # What Dask's scheduler weighs when it places the tasks that read a
        # shard: its arrays (object.__sizeof__ alone made a shard look
        # smaller than the weights, and both shards of a fit could follow the
        # weights to one worker and run one after the other).
        c = self.corpus
        arrays = () if c is None else (c.seq_ptr, c.tok_ptr, c.attr_ids, c.values, c.labels)
        return object.__sizeof__(self) + sum(a.nbytes for a in arrays if a is not None)

    def __getstate__(self):
        # Moving a shard moves its arrays; the objective is rebuilt where it lands.
        return {"corpus": self.corpus, "structure": self._structure}

    def __setstate__(self, state) -> None:
        self.corpus, self._structure, self._objective = state["corpus"], state["structure"], None

    def model(self) -> LinearChain:
        return _model_of(self._structure)

    def objective(self, n_jobs: int) -> CRFObjective:
        if self._objective is None:
            self._objective = CRFObjective(self.model(), self.corpus, 0.0, n_jobs)
        return self._objective


def _pack_part(pair, state, classes, unknown: bool, tags=None, first: int = 0) -> _Shard:
    """Pack one partition with the merged featurizer and labels (once, on its worker).

    With ``unknown`` (a learner that trains on partially labelled
    sequences), a None label becomes -1, as in ``fit``.  With ``tags`` (the
    tag folds), the ``:tags`` cells get the jackknifed classes ``fit`` gives
    the partition's sentences (it starts at sentence ``first``).
    """
    X_part, y_part = pair
    if not X_part:
        return _Shard(None)
    featurizer = featurizer_from_state(*state)
    corpus = featurizer.transform_part(X_part, tags[1], first) if tags is not None else \
        featurizer.transform(X_part)
    label_ids = {name: i for i, name in enumerate(classes)}
    labels = _labels.pack_labels(y_part, corpus.seq_ptr, label_ids, False, unknown)
    return _Shard(Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values,
                            labels))


def _state_pairs(shard: _Shard, n_attrs: int, n_labels: int) -> np.ndarray:
    """The shard's (attribute, label) pairs as sorted codes ``attr * L + label``."""
    c = shard.corpus
    if c is None:
        return np.zeros(0, dtype=np.int64)
    ptr, labels = _weights.build_state_index(c.tok_ptr, c.attr_ids, c.labels, n_attrs, n_labels)
    attrs = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    return attrs * n_labels + labels


def _model_of(structure) -> LinearChain:
    n_labels, attr_ptr, attr_labels, order, n_params = structure
    return LinearChain(n_labels, attr_ptr, attr_labels, np.zeros(n_params), order=order)


def _attach(shard: _Shard, structure) -> _Shard:
    out = _Shard(shard.corpus)
    out._structure = structure
    return out


def _shard_sizes(shard: _Shard) -> tuple[int, int]:
    c = shard.corpus
    return (0, 0) if c is None else (c.n_sequences, c.n_tokens)


class _Setup:
    """What every distributed fit prepares: featurizer, labels, shards, model."""

    def __init__(self, est: ChainEstimator, client: Client, X, y, npartitions) -> None:
        check_workers(client)
        featurizer = est._new_featurizer()
        if not (hasattr(featurizer, "fit_part") and hasattr(featurizer, "merge")):
            raise InputError(f"{type(featurizer).__name__} has no fit_part and merge: "
                             "cseq.distributed needs them to learn the attributes by parts")
        pairs = _partitions(client, X, y, npartitions)
        config = featurizer.get_config()
        tags, firsts = None, [0] * len(pairs)
        if getattr(featurizer, "needs_labels", False):
            # Templates with ':tags': the tag dictionary and the jackknifed
            # classes by a map-reduce of label counts per word and fold (a
            # sentence's fold is its index in the whole corpus mod FOLDS).
            sizes = client.gather([client.submit(_n_sequences, p, pure=False) for p in pairs])
            firsts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
            counts = client.gather([client.submit(_tag_counts_part, p, config, a, pure=False)
                                    for p, a in zip(pairs, firsts)])
            tags = _share(client, featurizer.tag_folds([c for c in counts if c is not None]))
        infos = client.gather([client.submit(_learn_part, p, config, tags, a, pure=False)
                               for p, a in zip(pairs, firsts)])
        n_sequences = sum(i["n_sequences"] for i in infos)
        if n_sequences == 0:
            raise InputError("cannot fit on an empty corpus (X has no sequences)")
        parts = [_featurizer_from_part(i) for i in infos if i["part"] is not None]
        self.featurizer = featurizer.merge(parts)
        self.classes = sorted(set().union(*(i["labels"] for i in infos)))
        if not self.classes:
            raise InputError("cannot fit on a corpus without tokens (every sequence is empty)")
        state = _share(client, self.featurizer.get_state())
        unknown = bool(est._partial_labels)
        # Each shard is packed on its own worker thread (another one if that
        # worker is gone) and stays there.
        shards = [client.submit(_pack_part, p, state, self.classes, unknown, tags, a,
                                pure=False, workers=where or None, allow_other_workers=True)
                  for p, a, where in zip(pairs, firsts, _placement(client, len(pairs)))]
        del pairs  # the raw partitions go; each shard keeps its lineage to its source
        L, n_attrs = len(self.classes), self.featurizer.n_attributes
        order = est._chain_order()
        if est.all_states:
            attr_ptr = np.arange(n_attrs + 1, dtype=np.int64) * L
            attr_labels = np.tile(np.arange(L, dtype=np.int32), n_attrs)
        else:
            codes = client.gather([client.submit(_state_pairs, s, n_attrs, L, pure=False)
                                   for s in shards])
            codes = np.unique(np.concatenate(codes)) if codes else np.zeros(0, np.int64)
            attr_ptr = np.searchsorted(codes // L, np.arange(n_attrs + 1)).astype(np.int64)
            attr_labels = (codes % L).astype(np.int32)
        chain = est._model_class  # the learner's model class reads the weights
        model = chain(L, attr_ptr, attr_labels,
                      np.zeros(chain._layout_of(len(attr_labels), L, order)["n_params"]),
                      order=order)
        self.model = model
        structure = _share(client, (L, attr_ptr, attr_labels, order, len(model.params)))
        self.shards = [client.submit(_attach, s, structure, pure=False) for s in shards]
        sizes = client.gather([client.submit(_shard_sizes, s, pure=False) for s in self.shards])
        self.n_sequences = sum(s for s, _ in sizes)
        self.n_tokens = sum(t for _, t in sizes)
        if self.n_tokens == 0:
            raise InputError("cannot fit on a corpus without tokens (every sequence is empty)")


# ---------------------------------------------------------------------------
# tree reduction


def _add(a, b):
    """Sum two ``(value, gradient-or-None, ...)`` results (a None gradient is zero)."""
    if a[1] is None:
        return b
    if b[1] is None:
        return a
    grad = a[1]
    grad += b[1]
    return (a[0] + b[0], grad) + tuple(x + y for x, y in zip(a[2:], b[2:]))


def _tree_sum(client: Client, futures: list):
    """The sum of the results of ``futures`` by pairwise tasks on the workers, gathered."""
    level = list(futures)
    while len(level) > 1:
        nxt = [client.submit(_add, level[i], level[i + 1], pure=False)
               for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return _gather(client, [level[0]])[0]


# ---------------------------------------------------------------------------
# CRF: distributed L-BFGS


def _data_term(shard: _Shard, theta: np.ndarray, n_jobs: int):
    if shard.corpus is None:
        return 0.0, None
    value, grad = shard.objective(n_jobs).data_term(theta)
    return value, grad


#: Up to this many shards, a CRF evaluation sends the weights with each
#: task and gathers the results on the driver; beyond, it broadcasts the
#: weights once and sums the results by a tree on the workers.
_DIRECT_SHARDS = 4


class _DistributedObjective:
    """``f(theta)`` = the shards' data terms, summed on the workers, plus the L2 penalty."""

    def __init__(self, client: Client, shards: list, c2: float, n_jobs: int) -> None:
        self.client, self.shards, self.c2, self.n_jobs = client, shards, float(c2), n_jobs
        self.n_evaluations = 0

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if len(self.shards) <= _DIRECT_SHARDS:
            # Few shards: the weights go with each task (one message for
            # all) and the results come straight back, no more bytes than a
            # broadcast and a tree move, and two task round trips fewer.
            k = len(self.shards)
            parts = _gather(self.client, self.client.map(
                _data_term, self.shards, [theta] * k, [self.n_jobs] * k, pure=False))
            value, grad = parts[0]
            for part in parts[1:]:
                value, grad = _add((value, grad), part)
        else:
            # One broadcast of the weights, a tree reduction of the results.
            weights = _share(self.client, theta)
            parts = [self.client.submit(_data_term, s, weights, self.n_jobs, pure=False)
                     for s in self.shards]
            value, grad = _tree_sum(self.client, parts)
        self.n_evaluations += 1
        if grad is None:
            grad = np.zeros_like(theta)
        penalty, pgrad = l2_penalty(theta, self.c2)
        grad += pgrad
        return value + penalty, grad


#: Scales of the perceptron's weights tried as the CRF's starting point.
_WARM_SCALES = (1.0, 0.5, 0.25, 0.125)


def _warm_start(client: Client, setup: _Setup, objective, seed: int) -> np.ndarray:
    """The hybrid start (Agarwal et al. 2014): one parameter-mixed averaged
    perceptron pass, scaled by whichever of :data:`_WARM_SCALES` (or 0) gives
    the lowest objective."""
    w = _mixed_average(client, setup, np.zeros_like(setup.model.params), seed, 1, True)[2]
    best, best_value = np.zeros_like(w), objective(np.zeros_like(w))[0]
    for scale in _WARM_SCALES:
        value = objective(scale * w)[0]
        if math.isfinite(value) and value < best_value:
            best, best_value = scale * w, value
    return best


def _fit_lbfgs(est: ChainEstimator, client: Client, setup: _Setup, dev, callback,
               warm_start: str | None) -> None:
    """Strategy ``"lbfgs"``: L-BFGS (OWL-QN with ``c1``) on the driver over the shards'
    CRF data terms (``c1``, ``c2``, ``n_jobs``, ``random_state`` for the warm start)."""
    objective = _DistributedObjective(client, setup.shards, est.c2, est.n_jobs)
    x0 = None
    if warm_start == "perceptron":
        seed = int(est.random_state) if est.random_state is not None else 0
        x0 = _warm_start(client, setup, objective, seed)
    train_lbfgs(est, objective, setup.model, dev, callback, l1=float(est.c1), x0=x0)


# ---------------------------------------------------------------------------
# perceptron: iterative parameter mixing


def _perceptron_epoch(shard: _Shard, w: np.ndarray, seed, epoch: int, shard_index: int,
                      shuffle: bool):
    """One epoch on one shard from the mixed weights ``w``.

    Returns ``(errors, weights after the epoch, sum of the weight vectors
    held after each example, examples)`` (None, None for an empty shard);
    the driver mixes and averages them.
    """
    c = shard.corpus
    if c is None or c.n_sequences == 0:
        return 0, None, None, 0
    params = _weights.AveragedParams(w.copy())
    trainer = _perceptron.PerceptronTrainer(shard.model().index, c.view(partial=True), params)
    order = np.arange(c.n_sequences, dtype=np.int64)
    if shuffle:
        np.random.default_rng([seed, epoch, shard_index]).shuffle(order)
    errors = trainer.train_epoch(order)
    n = params.n_examples
    # The sum of the weight vectors held after each example (Daume's accumulator).
    total = params.scale_sum * params.w - params.u
    return int(errors), params.w.copy(), total, n


def _mixed_pass(client: Client, setup: _Setup, w: np.ndarray, seed: int, epoch: int,
                shuffle: bool):
    """One pass of iterative parameter mixing from ``w``.

    Returns ``(errors, mixed weights, sum of the weight vectors held after
    each example, examples)``.
    """
    weights = _share(client, w)
    results = _gather(client, [
        client.submit(_perceptron_epoch, s, weights, seed, epoch, k, shuffle, pure=False)
        for k, s in enumerate(setup.shards)])
    errors = sum(r[0] for r in results)
    # Mixing weighted by each shard's mistakes (McDonald et al. 2010, "IPM
    # with weights mu_i proportional to the number of updates").
    if errors:
        w = np.zeros_like(w)
        for err, w_k, _, _ in results:
            if w_k is not None and err:
                w += (err / errors) * w_k
    total = np.zeros_like(w)
    n = 0
    for _, _, t, n_k in results:
        if t is not None:
            total += t
            n += n_k
    return errors, w, total, n


def _mixed_average(client: Client, setup: _Setup, w: np.ndarray, seed: int, epoch: int,
                   shuffle: bool):
    """One mixing pass; ``(errors, mixed weights, averaged weights of the pass)``."""
    errors, w, total, n = _mixed_pass(client, setup, w, seed, epoch, shuffle)
    return errors, w, total / n if n else w.copy()


def _seed(est: ChainEstimator) -> int:
    return (int(est.random_state) if est.random_state is not None
            else int(np.random.default_rng().integers(2**31)))


def _fit_mixed(est: ChainEstimator, setup: _Setup, dev, callback,
               one_pass: Callable[[np.ndarray, int], tuple[int, np.ndarray, np.ndarray, float]],
               record_of: Callable[[int, np.ndarray], tuple[dict[str, Any], str | None]]
               ) -> None:
    """The driver's loop of iterative parameter mixing, for every online learner.

    ``one_pass(w, iteration)`` runs one epoch on every shard from the mixed
    weights ``w`` and returns ``(mistakes, mixed weights, weighted sum of the
    weight vectors held during the pass, sum of their weights)``;
    ``record_of(mistakes, weights)`` gives the record's fields and a stop
    reason (None: go on).  The weights kept are the average over every pass
    (``average``) or the last mixed ones.  The passes are those of an
    in-process fit (:func:`cseq.learners.loops.passes`).
    """
    model = setup.model
    w = np.zeros_like(model.params)
    avg_sum = np.zeros_like(model.params)
    weight = 0.0

    def current() -> np.ndarray:
        return avg_sum / weight if (est.average and weight > 0) else w.copy()

    def run_pass(it: int) -> tuple[dict[str, Any], str | None]:
        nonlocal w, weight
        mistakes, w, total, wt = one_pass(w, it)
        avg_sum[:] += total
        weight += wt
        return record_of(mistakes, current())
    passes(est, run_pass, current, model, dev, callback)


def _fit_perceptron(est: ChainEstimator, client: Client, setup: _Setup, dev, callback,
                    warm_start: None) -> None:
    """Strategy ``"perceptron-mixing"`` (reads ``max_iter``, ``shuffle``, ``average``,
    ``random_state``)."""
    seed = _seed(est)

    def one_pass(w, it):
        return _mixed_pass(client, setup, w, seed, it, bool(est.shuffle))

    def record_of(errors, w):
        return ({"errors": int(errors), "error_rate": errors / setup.n_tokens},
                "no training errors in a pass" if errors == 0 else None)
    _fit_mixed(est, setup, dev, callback, one_pass, record_of)


# ---------------------------------------------------------------------------
# structured SVM: iterative parameter mixing of Pegasos epochs


def _ssvm_epoch(shard: _Shard, w: np.ndarray, seed, epoch: int, shard_index: int,
                shuffle: bool, C: float, cost, n_total: int):
    """One Pegasos epoch on one shard from the mixed weights ``w``.

    The step number continues the shard's own count (``(epoch - 1) *
    n_shard``) and ``lambda = 1 / (C * n_total)`` is the whole corpus's, so
    each shard minimises the SVM objective with its sequences standing for
    the corpus.  Returns ``(violations, weights after the epoch, weighted sum
    of the weights held during it, sum of those weights, sequences)``
    (None, None for an empty shard).
    """
    c = shard.corpus
    if c is None or c.n_sequences == 0:
        return 0, None, None, 0.0, 0
    n = c.n_sequences
    params = _weights.AveragedParams(w.copy(), n_examples=(epoch - 1) * n, scale_sum=0.0,
                                     weight_sum=0.0)
    trainer = _ssvm.SSVMTrainer(shard.model().index, c.view(partial=True), params, C, cost,
                                n_sequences=n_total)
    order = np.arange(n, dtype=np.int64)
    if shuffle:
        np.random.default_rng([seed, epoch, shard_index]).shuffle(order)
    violations, _ = trainer.train_epoch(order)
    total = params.scale_sum * params.w - params.u
    return int(violations), params.weights(), total, params.weight_sum, n


def _ssvm_hinge(shard: _Shard, w: np.ndarray, cost) -> float:
    c = shard.corpus
    if c is None or c.n_sequences == 0:
        return 0.0
    return _ssvm.structured_hinge(shard.model().index, w, c.view(partial=True), cost)[0]


def _fit_ssvm(est: ChainEstimator, client: Client, setup: _Setup, dev, callback,
              warm_start: None) -> None:
    """Strategy ``"pegasos-mixing"``: the perceptron's parameters, ``C`` and ``cost_matrix``."""
    seed = _seed(est)
    cost = est.cost_matrix(setup.classes)
    n_total = setup.n_sequences

    def one_pass(w, it):
        weights = _share(client, w)
        results = _gather(client, [
            client.submit(_ssvm_epoch, s, weights, seed, it, k, bool(est.shuffle),
                          float(est.C), cost, n_total, pure=False)
            for k, s in enumerate(setup.shards)])
        # Mixed in proportion to the shards' sequences: each shard's epoch
        # stands for the whole corpus, weighted by how much of it it holds.
        w = np.zeros_like(w)
        total = np.zeros_like(w)
        weight = 0.0
        for _, w_k, t_k, wt_k, n_k in results:
            if w_k is not None:
                w += (n_k / n_total) * w_k
                total += t_k
                weight += wt_k
        return sum(r[0] for r in results), w, total, weight

    def record_of(violations, w):
        shared = _share(client, w)
        hinge = sum(_gather(client, [client.submit(_ssvm_hinge, s, shared, cost, pure=False)
                                   for s in setup.shards]))
        return ({"loss": 0.5 * dot(w, w) + float(est.C) * hinge, "hinge": hinge,
                 "violations": int(violations)}, None)
    _fit_mixed(est, setup, dev, callback, one_pass, record_of)


# ---------------------------------------------------------------------------
# the API


def fit(estimator: ChainEstimator, X, y, *, client: Client, npartitions: int | None = None,
        X_dev: Sequence[Any] | None = None, y_dev: Sequence[Sequence[str]] | None = None,
        callback: Callable[[dict[str, Any]], object] | None = None,
        warm_start: str | None = None) -> ChainEstimator:
    """Fit ``estimator`` on a Dask cluster; returns it, fitted (the same model file as ``fit``).

    Parameters
    ----------
    estimator : CRF, StructuredPerceptron or StructuredSVM
        Its hyperparameters are used as by ``estimator.fit``.  The CRF
        (``algorithm="lbfgs"``, L2 or L1 through OWL-QN) is trained by
        distributed L-BFGS: with ``npartitions=1`` the weights are those of
        ``estimator.fit(X, y)``; with more, the same optimum up to float
        rounding.  The perceptron is trained by iterative parameter mixing
        (McDonald et al. 2010): every pass, each shard runs one epoch from
        the mixed weights, which are then mixed again, weighted by each
        shard's mistakes; the average of all the weight vectors comes out at
        the end.  Deterministic for a ``random_state``.  The structured SVM
        is mixed the same way, from Pegasos epochs on the shards (each with
        the whole corpus's ``lambda = 1 / (C n)`` and its own step count),
        weighted by the shards' sizes; its loss is computed on the shards
        after every pass, as ``fit`` computes it.
    X, y : lists of sequences, or ``dask.bag.Bag`` s with matching partitions
        Lists are split into ``npartitions`` contiguous shards; bags are read
        on the workers (e.g. :func:`read_conll`), partition by partition.
    client : distributed.Client
    npartitions : int or None
        For list input: shards (None: one per worker thread).  Ignored for bags.
    X_dev, y_dev : optional development data, scored on the driver after
        every iteration (as in ``fit``; early stopping works as there).
    callback : callable, optional
        Called after every iteration with its record.
    warm_start : None or "perceptron"
        CRF only: start L-BFGS from one parameter-mixed averaged perceptron
        pass (the hybrid of Agarwal et al. 2014), scaled by 1, 1/2, 1/4 or
        1/8, whichever gives the lowest objective (or from zero if none
        is lower).  The pass's visiting order is seeded by ``random_state``.

    Raises
    ------
    ClusterError
        If a worker lacks cseq or has another version (before any work), or
        Dask gives up on a task because the workers running it keep dying.
    InputError
        As ``fit``; a malformed file read on a worker names the file and line.
    """
    strategy = _STRATEGIES.get(estimator._distributed) \
        if isinstance(estimator, ChainEstimator) else None
    if strategy is None:
        raise InputTypeError(f"cseq.distributed.fit trains {_learners(None, 'a')}, not "
                             f"{type(estimator).__name__}")
    if not isinstance(client, Client):
        raise InputTypeError(f"client must be a distributed.Client, got {type(client).__name__}")
    est = estimator

    def check() -> None:
        est._check_distributed(warm_start)
        if warm_start not in (None, "perceptron"):
            raise InputError(f"warm_start must be None or 'perceptron', got {warm_start!r}")
        if warm_start is not None and est._distributed != "lbfgs":
            raise InputError(f"warm_start='perceptron' applies to {_learners('lbfgs', 'the')}")

    def prepare():
        setup = _Setup(est, client, X, y, npartitions)
        return setup.featurizer, setup.classes, setup.model, setup

    def train(setup: _Setup, model: LinearChain, dev, callback) -> None:
        strategy(est, client, setup, dev, callback, warm_start)
    frame.run(est, prepare, train, X_dev, y_dev, callback, check=check, context=_worker_loss())
    return est


#: The training functions, by the strategy a learner names (``_distributed``,
#: :class:`cseq.learners.protocol.Learner`).
_STRATEGIES: dict[str, Callable[..., None]] = {
    "lbfgs": _fit_lbfgs, "perceptron-mixing": _fit_perceptron, "pegasos-mixing": _fit_ssvm}


def _learners(strategy: str | None, article: str) -> str:
    """The registered learners that train on Dask (by ``strategy``, or any), for messages."""
    names = sorted(f"{article} {cls.__name__}" for cls in ESTIMATORS.values()
                   if cls._distributed is not None
                   and (strategy is None or cls._distributed == strategy))
    return " or ".join(filter(None, [", ".join(names[:-1]), names[-1]]))


def _predict_part(model: ChainEstimator, X_part) -> list:
    X_part = list(X_part)
    return model.predict(X_part) if X_part else []


def _predictor(model: ChainEstimator, client: Client) -> Callable[[list], list]:
    """``X -> labels`` on the cluster, the model sent once for every call (``cseq tag``)."""
    model._check_fitted()
    check_workers(client)
    shared = _share(client, model)
    k = _threads(client)

    def predict(X: list) -> list:
        return _predict_list(client, shared, X, k)
    return predict


def _predict_list(client: Client, shared: Future, X, k: int) -> list:
    """Labels of the list ``X`` by ``k`` tasks of contiguous sequences, in order."""
    bounds = _split_bounds(len(X), k)
    futures = [client.submit(_predict_part, shared, X[a:b], pure=False)
               for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    with _worker_loss():
        return [seq for part in _gather(client, futures) for seq in part]


def _predict_partition(X_part, model: ChainEstimator) -> list:
    return _predict_part(model, X_part)


def predict(model: ChainEstimator, X, *, client: Client,
            npartitions: int | None = None) -> list[list[str]] | db.Bag:
    """Label sequences of ``X`` predicted on the workers, in order.

    The model leaves the driver once and reaches each worker once (it is
    one task's result, which the tasks of a worker share); each task decodes
    its partition with the GIL released inside the kernels.

    Parameters
    ----------
    model : a fitted estimator
    X : list of sequences, or a ``dask.bag.Bag``
    client : distributed.Client
    npartitions : int or None
        For a list: the number of tasks (None: one per worker thread).

    Returns
    -------
    list of list of str for a list (order kept), a ``dask.bag.Bag`` (lazy,
    same partitions) for a Bag.

    Raises
    ------
    ClusterError
        For a list, if Dask gives up on a task because the workers running it
        keep dying (a Bag raises Dask's own error when it is computed).
    """
    if not isinstance(model, ChainEstimator):
        raise InputTypeError(f"model must be a cseq estimator, got {type(model).__name__}")
    model._check_fitted()
    check_workers(client)
    shared = _share(client, model)
    if _is_bag(X):
        return X.map_partitions(_predict_partition, shared)
    if not isinstance(X, (list, tuple)):
        raise InputTypeError("X must be a list (or tuple) of sequences, or a dask Bag")
    k = _threads(client) if npartitions is None else npartitions
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"npartitions must be a positive int or None, got {npartitions!r}")
    return _predict_list(client, shared, X, int(k))


# ---------------------------------------------------------------------------
# files on the workers


def _paths(paths) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = [os.fspath(p) for p in paths]
    if not out:
        raise InputError("no input files")
    return out


def _read_conll_file(path: str, kwargs: dict):
    return conll.read_conll(path, **kwargs)


def _read_conllu_file(path: str, kwargs: dict):
    return conll.read_conllu(path, **kwargs)


def _column(files, k: int) -> list:
    """The sentences (k=0) or label sequences (k=1) of a partition of read files."""
    return [s for f in files for s in f[k]]


def _bags(reader, paths, kwargs) -> tuple[db.Bag, db.Bag | None]:
    paths = _paths(paths)
    files = db.from_sequence(paths, npartitions=len(paths)).map(reader, kwargs)
    X = files.map_partitions(_column, 0)
    labeled = kwargs.get("label_column", -1) is not None and kwargs.get("label", "upos") is not None
    return X, files.map_partitions(_column, 1) if labeled else None


def read_conll(paths, **kwargs: Any) -> tuple[db.Bag, db.Bag | None]:
    """Bags ``(X, y)`` of the sentences of CoNLL files, read on the workers, one partition a file.

    ``kwargs`` are those of :func:`cseq.conll.read_conll` (``sep``,
    ``label_column``, ``encoding``, ``docstart``); ``y`` is None when
    ``label_column`` is None.  A malformed file raises
    :class:`~cseq.InputError` naming the file and line when the bags are
    computed (e.g. by :func:`fit`).  Paths must be readable by the workers.
    """
    return _bags(_read_conll_file, paths, kwargs)


def read_conllu(paths, **kwargs: Any) -> tuple[db.Bag, db.Bag | None]:
    """Bags ``(X, y)`` of CoNLL-U files, read on the workers (options of :func:`cseq.conll.read_conllu`)."""
    return _bags(_read_conllu_file, paths, kwargs)


def _tag_file(model: ChainEstimator, path: str, out: str, kwargs: dict) -> str:
    # Checked again here: the workers' file system is the one that counts.
    refuse_inputs(out, [path], "the output")
    X, _ = conll.read_conll(path, label_column=None, **kwargs)
    labels = model.predict(X) if X else []
    with replacing(out) as f:
        conll.write_conll(f, X, labels)
    return out


def tag_files(model: ChainEstimator, inputs, output_dir: str | os.PathLike[str], *,
              client: Client, **kwargs: Any) -> list[str]:
    """Tag CoNLL column files on the workers: one output file per input, same base name.

    Each input is read with :func:`cseq.conll.read_conll` (``label_column=None``:
    every column is an input column; ``kwargs`` as there) and written to
    ``output_dir`` (created if needed) with the predicted label as a last column
    (:func:`cseq.conll.write_conll`).  The model is sent to each worker
    once.  Returns the output paths, in the order of ``inputs``.

    Each output is written to a temporary file beside it and renamed when
    complete (a failed or interrupted run leaves no partial file).  An output
    that is one of the inputs (the same file by another path, a symbolic link
    to the input directory, a hard link) is refused before anything is
    written.

    Raises
    ------
    InputError
        If two inputs share a base name, or an output would be an input.
    ClusterError
        If Dask gives up on a task whose workers keep dying.
    """
    model._check_fitted()
    check_workers(client)
    paths = _paths(inputs)
    outdir = os.fspath(output_dir)
    outs = [os.path.join(outdir, os.path.basename(p)) for p in paths]
    if len(set(outs)) != len(outs):
        raise InputError("two inputs have the same base name: their outputs would collide")
    for out in outs:
        refuse_inputs(out, paths, "the output")
    os.makedirs(outdir, exist_ok=True)
    shared = _share(client, model)
    futures = [client.submit(_tag_file, shared, p, o, kwargs, pure=False)
               for p, o in zip(paths, outs)]
    with _worker_loss():
        wait(futures)
        return client.gather(futures)
