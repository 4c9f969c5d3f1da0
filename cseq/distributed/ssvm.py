"""The structured SVM on Dask: iterative parameter mixing of Pegasos epochs (the strategy
:class:`cseq.StructuredSVM` names).

Each shard runs a Pegasos epoch with the whole corpus's ``lambda = 1 / (C n)``
and its own step count; the driver mixes the weights in proportion to the
shards' sizes and computes the loss on the shards after every pass, as
``fit`` computes it.
"""

from __future__ import annotations

import numpy as np
from distributed import Client

from cseq._core.vectors import dot
from cseq.chain import _chain
from cseq.distributed.cluster import _gather, _share
from cseq.distributed.mixing import _fit_mixed, _seed
from cseq.distributed.shards import _Setup, _Shard
from cseq.learners import _ssvm
from cseq.learners.base import ChainEstimator

#: The warm starts this strategy offers: none.
WARM_STARTS = ()


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
    params = _chain.AveragedParams(w.copy(), n_examples=(epoch - 1) * n, scale_sum=0.0,
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


def train(est: ChainEstimator, client: Client, setup: _Setup, dev, callback,
          warm_start: None) -> None:
    """Iterative parameter mixing of Pegasos epochs (the perceptron's parameters, ``C``
    and ``cost_matrix``)."""
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
