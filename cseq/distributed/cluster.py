"""The Dask cluster under :mod:`cseq.distributed`: worker checks, gathering, sharing, partitions.

Imported only by :mod:`cseq.distributed` (which says what to install when
Dask is missing); ``import cseq`` never imports it.
"""

from __future__ import annotations

import asyncio
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import dask
import dask.bag as db
import numpy as np
from distributed import Client, Future, wait
from distributed.scheduler import KilledWorker

from cseq._version import __version__
from cseq.exceptions import ClusterError, InputError, InputTypeError

__all__ = ["check_workers"]


# ---------------------------------------------------------------------------
# the cluster


_PROBE = '''
def probe():
    try:
        import cseq
    except Exception as exc:
        return "!" + type(exc).__name__ + ": " + str(exc)
    return cseq.__version__
'''


def _version_probe() -> Callable[[], str]:
    # Defined outside any importable module so that it is sent by value: it
    # must run on a worker that has no cseq, or another one.
    namespace: dict[str, Any] = {"__name__": "cseq_version_probe"}
    exec(_PROBE, namespace)
    return namespace["probe"]


def check_workers(client: Client) -> dict[str, str]:
    """Check that every worker imports this version of cseq; returns ``{worker: version}``.

    Raises
    ------
    ClusterError
        Naming each worker without cseq or with another version, and both
        versions; or when the cluster has no worker.
    """
    versions = client.run(_version_probe())
    if not versions:
        raise ClusterError("the Dask cluster has no worker")
    bad = {w: v for w, v in versions.items() if v != __version__}
    if bad:
        lines = "; ".join(f"worker {w} cannot import cseq ({v[1:]})" if v.startswith("!")
                          else f"worker {w} has cseq {v}" for w, v in sorted(bad.items()))
        raise ClusterError(f"the driver has cseq {__version__} but {lines}: install the same "
                           "cseq on every worker")
    return versions


def _identity(obj: Any) -> Any:
    return obj


#: Clients whose workers this process cannot reach (``_gather`` found out).
_INDIRECT: weakref.WeakSet = weakref.WeakSet()


def _gather(client: Client, futures: list) -> list:
    """``client.gather(futures)``, straight from the workers when this process
    can reach them (weights and gradients then skip a hop through the
    scheduler: on a ``LocalCluster`` a CRF evaluation of CoNLL-2000 takes
    about two thirds of the time), through the scheduler otherwise.

    A client made with ``direct_to_workers`` set keeps its setting.  Else
    the first gather that cannot connect to a worker (with every task
    finished, so that a task's own error is never taken for it) makes this
    client gather through the scheduler from then on.
    """
    direct = client.direct_to_workers
    if direct is None:
        direct = client not in _INDIRECT
    if not direct:
        return client.gather(futures)
    wait(futures)  # every task done (or failed) before anything is fetched
    try:
        return client.gather(futures, direct=True)
    except (OSError, TimeoutError, asyncio.TimeoutError):
        if any(f.status != "finished" for f in futures):
            raise
        _INDIRECT.add(client)
        return client.gather(futures)


@contextmanager
def _worker_loss() -> Iterator[None]:
    """Turn Dask giving up on a task whose workers keep dying into a :class:`ClusterError`.

    A worker lost now and then is replaced and its tasks rerun (the result
    does not change); when every worker that ran a task died, more than
    ``distributed.scheduler.allowed-failures`` times, Dask raises
    ``KilledWorker``, which this names in cseq's terms, the original chained.
    """
    try:
        yield
    except KilledWorker as exc:
        last = getattr(exc.last_worker, "address", exc.last_worker)
        raise ClusterError(
            f"the Dask cluster kept losing workers: task {exc.task!r} was started on "
            f"{exc.allowed_failures + 1} workers and every one died while running it (the "
            f"last: {last}; Dask's distributed.scheduler.allowed-failures is "
            f"{exc.allowed_failures}); workers die when they exceed their memory limit or "
            "are killed: see their logs") from exc


def _share(client: Client, obj: Any) -> Future:
    """``obj`` (weights, featurizer, state index, model) as one task: sent once
    from the driver, then copied worker to worker, once per worker, by the
    tasks that need it.

    A task, not a scattered value, so that Dask can recompute it if every
    worker that holds it dies (a scattered value would be lost, and every
    task that needs it cancelled).
    """
    with warnings.catch_warnings():
        # Large weight vectors are the point here, not a mistake in a graph.
        warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph")
        return client.submit(_identity, obj, pure=False)


def _threads(client: Client) -> int:
    return max(1, sum(client.nthreads().values()))


def _placement(client: Client, n: int) -> list[list[str]]:
    """A worker for each of ``n`` shards: the workers' threads in turn (one
    thread of every worker, then a second, ...), so that shards run in
    parallel rather than pile up on whichever worker was free first."""
    nthreads = client.nthreads()
    slots = [w for i in range(max(nthreads.values(), default=0))
             for w in sorted(nthreads) if nthreads[w] > i]
    return [[slots[k % len(slots)]] if slots else [] for k in range(n)]


# ---------------------------------------------------------------------------
# partitions


def _is_bag(obj: Any) -> bool:
    return isinstance(obj, db.Bag)


def _pair(X_part, y_part) -> tuple[list, list | None]:
    X_part = list(X_part)
    y_part = None if y_part is None else list(y_part)
    if y_part is not None and len(X_part) != len(y_part):
        raise InputError(f"a partition has {len(X_part)} sequences in X but {len(y_part)} "
                         "label sequences in y")
    return X_part, y_part


def _split_bounds(n: int, k: int) -> list[int]:
    return np.linspace(0, n, k + 1).round().astype(np.int64).tolist()


def _partitions(client: Client, X, y, npartitions: int | None) -> list:
    """Futures of ``(X_part, y_part)`` for list or Bag input, in corpus order."""
    if _is_bag(X):
        if y is not None and not _is_bag(y):
            raise InputTypeError("X is a dask Bag: y must be a Bag too (with matching partitions)")
        if y is not None and y.npartitions != X.npartitions:
            raise InputError(f"X has {X.npartitions} partitions but y has {y.npartitions}")
        xs = X.to_delayed()
        ys = y.to_delayed() if y is not None else [None] * len(xs)
        return client.compute([dask.delayed(_pair, pure=True)(a, b) for a, b in zip(xs, ys)])
    if y is not None and _is_bag(y):
        raise InputTypeError("y is a dask Bag: X must be a Bag too")
    if not isinstance(X, (list, tuple)) or (y is not None and not isinstance(y, (list, tuple))):
        raise InputTypeError("X and y must be lists (or tuples) of sequences, or dask Bags")
    if y is not None and len(X) != len(y):
        raise InputError(f"X has {len(X)} sequences but y has {len(y)}")
    k = _threads(client) if npartitions is None else npartitions
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"npartitions must be a positive int or None, got {npartitions!r}")
    bounds = _split_bounds(len(X), int(k))
    # The data goes into the tasks (not scatter), so that a lost partition can be recomputed.
    return [client.submit(_pair, X[a:b], None if y is None else y[a:b], pure=False)
            for a, b in zip(bounds[:-1], bounds[1:])]
