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

The package: :mod:`~cseq.distributed.cluster` (worker checks, gathering,
sharing, partitions), :mod:`~cseq.distributed.shards` (the corpus learnt and
packed by parts), and one module per learner's strategy, which the learner
names in its ``_distributed``: :mod:`~cseq.distributed.crf` (distributed
L-BFGS), :mod:`~cseq.distributed.perceptron` and :mod:`~cseq.distributed.ssvm`
(iterative parameter mixing, the driver's loop in
:mod:`~cseq.distributed.mixing`).  A learner of one's own can name a module
of its own that offers ``train(est, client, setup, dev, callback,
warm_start)`` and ``WARM_STARTS``.

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

import importlib
import os
from collections.abc import Callable, Sequence
from types import ModuleType
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

from cseq import conll
from cseq.chain.model import LinearChain
from cseq.distributed.cluster import (_gather, _is_bag, _share, _split_bounds, _threads,
                                      _worker_loss, check_workers)
from cseq.distributed.shards import _Setup
from cseq.exceptions import ClusterError, InputError, InputTypeError
from cseq.io._files import refuse_inputs, replacing
from cseq.io.serialize import ESTIMATORS
from cseq.learners import frame
from cseq.learners.base import ChainEstimator

__all__ = ["fit", "predict", "read_conll", "read_conllu", "tag_files", "check_workers",
           "ClusterError"]


# ---------------------------------------------------------------------------
# training


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
    strategy = _strategy(estimator)
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
        if warm_start is not None and warm_start not in strategy.WARM_STARTS:
            raise InputError(f"warm_start={warm_start!r} applies to "
                             f"{_learners(warm_start, 'the')}")

    def prepare():
        setup = _Setup(est, client, X, y, npartitions)
        return setup.featurizer, setup.classes, setup.model, setup

    def train(setup: _Setup, model: LinearChain, dev, callback) -> None:
        strategy.train(est, client, setup, dev, callback, warm_start)
    frame.run(est, prepare, train, X_dev, y_dev, callback, check=check, context=_worker_loss())
    return est


def _strategy(estimator: Any) -> ModuleType | None:
    """The module that trains ``estimator`` on Dask: the one its class names in
    ``_distributed`` (:class:`cseq.learners.protocol.Learner`), or None."""
    if not isinstance(estimator, ChainEstimator) or estimator._distributed is None:
        return None
    return importlib.import_module(estimator._distributed)


def _learners(warm_start: str | None, article: str) -> str:
    """The registered learners that train on Dask (with ``warm_start``, or any), for messages."""
    names = sorted(f"{article} {cls.__name__}" for cls in ESTIMATORS.values()
                   if cls._distributed is not None
                   and (warm_start is None
                        or warm_start in importlib.import_module(cls._distributed).WARM_STARTS))
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
