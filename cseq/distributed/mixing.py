"""The driver's loop of iterative parameter mixing, shared by the online learners' strategies.

References
----------
McDonald, R., Hall, K., Mann, G. (2010). Distributed training strategies for
the structured perceptron. NAACL-HLT.
Zinkevich, M., Weimer, M., Smola, A., Li, L. (2010). Parallelized stochastic
gradient descent. NIPS (averaging SGD run on the parts of a corpus).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cseq.distributed.shards import _Setup
from cseq.learners.base import ChainEstimator
from cseq.learners.loops import passes


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
