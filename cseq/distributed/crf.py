"""The CRF on Dask: distributed L-BFGS (the strategy :class:`cseq.CRF` names).

L-BFGS (OWL-QN with ``c1``) runs on the driver; each evaluation sends the
weights to the shards, every shard computes its data term and gradient with
the kernel of ``fit`` (:meth:`cseq.learners.objectives.CRFObjective.data_term`),
the results are summed on the workers and the L2 penalty is added once on
the driver.  With one shard the weights are those of ``fit``.

References
----------
Agarwal, A., Chapelle, O., Dudik, M., Langford, J. (2014). A reliable
effective terascale linear learning system. JMLR 15 (the warm start).
"""

from __future__ import annotations

import math

import numpy as np
from distributed import Client

from cseq.distributed.cluster import _gather, _share
from cseq.distributed.perceptron import _mixed_average
from cseq.distributed.shards import _add, _Setup, _Shard, _tree_sum
from cseq.learners.base import ChainEstimator
from cseq.learners.loops import train_lbfgs
from cseq.learners.objectives import l2_penalty

#: The warm starts this strategy offers (``cseq.distributed.fit(warm_start=...)``).
WARM_STARTS = ("perceptron",)


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


def train(est: ChainEstimator, client: Client, setup: _Setup, dev, callback,
          warm_start: str | None) -> None:
    """L-BFGS (OWL-QN with ``c1``) on the driver over the shards' CRF data terms
    (reads ``c1``, ``c2``, ``n_jobs``, ``random_state`` for the warm start)."""
    objective = _DistributedObjective(client, setup.shards, est.c2, est.n_jobs)
    x0 = None
    if warm_start == "perceptron":
        seed = int(est.random_state) if est.random_state is not None else 0
        x0 = _warm_start(client, setup, objective, seed)
    train_lbfgs(est, objective, setup.model, dev, callback, l1=float(est.c1), x0=x0)
