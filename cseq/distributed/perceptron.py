"""The structured perceptron on Dask: iterative parameter mixing (the strategy
:class:`cseq.StructuredPerceptron` names).

Every pass, each shard runs one epoch from the mixed weights and the driver
mixes the shards' weights, weighted by each shard's mistakes.

References
----------
McDonald, R., Hall, K., Mann, G. (2010). Distributed training strategies for
the structured perceptron. NAACL-HLT.
"""

from __future__ import annotations

import numpy as np
from distributed import Client

from cseq.chain import _chain
from cseq.distributed.cluster import _gather, _share
from cseq.distributed.mixing import _fit_mixed, _seed
from cseq.distributed.shards import _Setup, _Shard
from cseq.learners import _perceptron
from cseq.learners.base import ChainEstimator

#: The warm starts this strategy offers: none.
WARM_STARTS = ()


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
    params = _chain.AveragedParams(w.copy())
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


def train(est: ChainEstimator, client: Client, setup: _Setup, dev, callback,
          warm_start: None) -> None:
    """Iterative parameter mixing of perceptron epochs (reads ``max_iter``, ``shuffle``,
    ``average``, ``random_state``)."""
    seed = _seed(est)

    def one_pass(w, it):
        return _mixed_pass(client, setup, w, seed, it, bool(est.shuffle))

    def record_of(errors, w):
        return ({"errors": int(errors), "error_rate": errors / setup.n_tokens},
                "no training errors in a pass" if errors == 0 else None)
    _fit_mixed(est, setup, dev, callback, one_pass, record_of)
