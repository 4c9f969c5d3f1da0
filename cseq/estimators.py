"""User-facing estimators: one linear-chain model, several ways to train it.

Every estimator shares the same API (``fit``, ``predict``, ``score``,
``get_params`` / ``set_params``, ``save``, pickling through the model file
format) and differs only in how it sets the parameters of its
:class:`~cseq.model.LinearChain`.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from cseq import _pack, _train
from cseq.exceptions import ConvergenceError, CSeqError, InputError, NotFittedError
from cseq.features import FeatureVocabulary
from cseq.model import LinearChain, resolve_n_jobs
from cseq.objectives import CRFObjective
from cseq.optimize import lbfgs
from cseq.sequences import Sequences

__all__ = ["StructuredPerceptron", "CRF"]

# Blocks of sequences per thread in predict/score: enough that a thread's
# reading of the user's lists overlaps the others' decoding, few enough that
# per-block costs stay small.
_BLOCKS_PER_THREAD = 8


def _check_number(name: str, value: Any, *, low: float, integer: bool = False) -> None:
    """Raise InputError unless ``value`` is a finite number (an int if asked) >= ``low``."""
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise InputError(f"{name} must be {'an int' if integer else 'a number'}, got {value!r}")
    if integer:
        if not low <= value <= 2**31 - 1:
            raise InputError(f"{name} must be between {low} and 2**31 - 1, got {value!r}")
    elif not (math.isfinite(value) and value >= low):
        raise InputError(f"{name} must be finite and >= {low}, got {value!r}")


class _LinearChainEstimator:
    """Shared machinery of the estimators (not public)."""

    _param_names: tuple[str, ...] = ()

    # -- parameters -------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Hyperparameters as a dict (scikit-learn convention)."""
        return {name: getattr(self, name) for name in self._param_names}

    def set_params(self, **params: Any):
        """Set hyperparameters; unknown names raise InputError. Returns self."""
        for name, value in params.items():
            if name not in self._param_names:
                raise InputError(f"{type(self).__name__} has no parameter {name!r}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def _validate_params(self) -> None:
        raise NotImplementedError

    # -- data -------------------------------------------------------------
    def _new_featurizer(self):
        features = getattr(self, "features", None)
        if features is None:
            return FeatureVocabulary()
        if not all(hasattr(features, m) for m in ("fresh", "fit_transform", "transform",
                                                   "get_state", "get_config")):
            raise InputError("features must be None or a featurizer (e.g. TemplateFeaturizer)")
        # A fresh copy: the object the user passed is never fitted or mutated.
        return features.fresh()

    def _pack_training(self, X, y):
        featurizer = self._new_featurizer()
        corpus = featurizer.fit_transform(X)
        if corpus.n_sequences == 0:
            raise InputError("cannot fit on an empty corpus (X has no sequences)")
        if corpus.n_tokens == 0:
            raise InputError("cannot fit on a corpus without tokens (every sequence is empty)")
        label_ids: dict[str, int] = {}
        raw = _pack.pack_labels(y, corpus.seq_ptr, label_ids, True)
        classes = sorted(label_ids)
        remap = np.empty(len(classes), dtype=np.int32)
        for new, name in enumerate(classes):
            remap[label_ids[name]] = new
        labels = remap[raw]
        corpus = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values, labels)
        return featurizer, corpus, classes

    def fit(self, X, y, X_dev=None, y_dev=None, *, callback=None):
        """Train on sequences ``X`` with label sequences ``y``; returns self.

        Parameters
        ----------
        X : list of sequences (see the class docstring for token forms).
        y : list of label-string sequences, one label per token.
        X_dev, y_dev : optional development data, scored after every iteration.
        callback : callable, optional
            Called after every iteration with that iteration's record (the
            dict appended to ``history_``).
        """
        self._validate_params()
        featurizer, corpus, classes = self._pack_training(X, y)
        model = LinearChain.from_corpus(corpus, featurizer.n_attributes, len(classes),
                                        bool(self.all_states))
        model.check_corpus(corpus)
        self.featurizer_, self.classes_, self.model_ = featurizer, classes, None
        self.history_ = []
        self._train(corpus, model, self._dev_scorer(X_dev, y_dev), callback)
        if not np.isfinite(model.params).all():
            raise ConvergenceError(f"{type(self).__name__} weights became non-finite")
        self.model_ = model
        return self

    def _train(self, corpus: Sequences, model: LinearChain, dev, callback) -> None:
        """Set ``model.params`` (and fitted statistics) from a packed labeled corpus."""
        raise NotImplementedError

    def _check_fitted(self) -> None:
        if getattr(self, "model_", None) is None:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def _map_blocks(self, X, n_jobs, work) -> list:
        """``[work(corpus, block), ...]`` over consecutive blocks of sequences of ``X``.

        ``corpus`` is the featurized ``X[block]`` (``block`` a slice), or all
        of ``X`` when ``block`` is None.  With one thread all of ``X`` is one
        block.  With more, the blocks go to ``n_jobs``
        Python threads: featurizing a block holds the GIL only while it reads
        the user's lists and then looks attributes up and decodes without it,
        so one thread's reading overlaps the others' lookups and decoding.
        Results do not depend on the blocks.  An error in a block is raised
        again from one pass over all of ``X``, so its indices refer to ``X``.
        """
        self._check_fitted()
        n_jobs = resolve_n_jobs(n_jobs)
        transform = self.featurizer_.transform
        n_blocks = 1
        if n_jobs > 1 and (type(X) is list or type(X) is tuple):
            n_blocks = min(len(X), _BLOCKS_PER_THREAD * n_jobs)
        if n_blocks <= 1:
            return [work(transform(X), None)]
        bounds = np.linspace(0, len(X), n_blocks + 1).astype(np.int64).tolist()

        def run(k: int):
            block = slice(bounds[k], bounds[k + 1])
            return work(transform(X[block]), block)
        try:
            with ThreadPoolExecutor(min(n_jobs, n_blocks)) as pool:
                return list(pool.map(run, range(n_blocks)))
        except CSeqError:
            return [work(transform(X), None)]

    def _split(self, flat: np.ndarray, corpus: Sequences) -> list:
        bounds = corpus.seq_ptr
        return [flat[bounds[s]:bounds[s + 1]] for s in range(corpus.n_sequences)]

    # -- prediction -------------------------------------------------------
    def predict(self, X, *, n_jobs: int = 1) -> list[list[str]]:
        """Most likely label sequence of each sequence in ``X``.

        Parameters
        ----------
        X : list of sequences, in the form given to :meth:`fit`.
        n_jobs : threads to use (``-1``: all cores).  Attribute lookup and
            decoding run without the GIL; with several threads, reading one
            block of ``X`` overlaps decoding the others.

        Returns
        -------
        list of list of str
        """
        self._check_fitted()
        labels = np.asarray(self.classes_, dtype=object)

        def work(corpus, block):
            names = labels[self.model_.decode(corpus)]
            return [names[a:b].tolist() for a, b in zip(corpus.seq_ptr[:-1], corpus.seq_ptr[1:])]
        return [seq for block in self._map_blocks(X, n_jobs, work) for seq in block]

    def score(self, X, y, *, n_jobs: int = 1) -> float:
        """Token accuracy of :meth:`predict` on ``X`` against ``y``.

        Labels of ``y`` unknown to the model count as errors. Returns 0.0
        when there are no tokens.
        """
        self._check_fitted()
        label_ids = {name: i for i, name in enumerate(self.classes_)}
        if not (isinstance(X, (list, tuple)) and isinstance(y, (list, tuple))
                and len(y) == len(X)):
            n_jobs = 1  # one block: the error will name indices of the whole X

        def work(corpus, block):
            gold = self._gold_ids(y if block is None else y[block], corpus, label_ids)
            return int(np.sum(self.model_.decode(corpus) == gold)), len(gold)
        counts = self._map_blocks(X, n_jobs, work)
        total = sum(n for _, n in counts)
        return sum(c for c, _ in counts) / total if total else 0.0

    @staticmethod
    def _gold_ids(y, corpus: Sequences, label_ids: dict[str, int]) -> np.ndarray:
        """Gold label ids, -1 for labels the model does not know."""
        extended = dict(label_ids)
        ids = _pack.pack_labels(y, corpus.seq_ptr, extended, True)
        ids[ids >= len(label_ids)] = -1
        return ids

    def _dev_scorer(self, X_dev, y_dev):
        if X_dev is None and y_dev is None:
            return None
        if X_dev is None or y_dev is None:
            raise InputError("give both X_dev and y_dev, or neither")
        corpus = self.featurizer_.transform(X_dev)
        label_ids = {name: i for i, name in enumerate(self.classes_)}
        gold = self._gold_ids(y_dev, corpus, label_ids)

        def dev_accuracy(model: LinearChain) -> float:
            return float(np.mean(model.decode(corpus) == gold)) if len(gold) else 0.0
        return dev_accuracy

    def _report(self, record: dict, callback) -> None:
        """Record one iteration: history, verbose line, user callback."""
        self.history_.append(record)
        if self.verbose:
            print(_format_record(record), flush=True)
        if callback is not None:
            callback(record)

    # -- persistence ------------------------------------------------------
    def save(self, path) -> None:
        """Write the model file (see :mod:`cseq.serialize`) atomically."""
        from cseq.serialize import save
        save(self, path)

    def to_bytes(self) -> bytes:
        """The model file's bytes."""
        from cseq.serialize import dumps
        return dumps(self)

    def __reduce__(self):
        from cseq.serialize import loads
        return (loads, (self.to_bytes(),))


class StructuredPerceptron(_LinearChainEstimator):
    """Averaged structured perceptron for linear chains (Collins 2002).

    Parameters
    ----------
    max_iter : int, default 10
        Passes over the training data.
    average : bool, default True
        Return the average of the weights after every example (lazily
        maintained) instead of the final weights.
    shuffle : bool, default True
        Visit sequences in a new random order each pass.
    random_state : int or None
        Seed of the shuffling (numpy's PCG64, identical on every platform).
    all_states : bool, default False
        Give every (attribute, label) pair a weight, not only pairs seen in training.
    features : featurizer or None
        How ``X`` is turned into attributes; None means per-token feature
        lists or dicts (:class:`~cseq.features.FeatureVocabulary`).
    verbose : bool
        Print one line per iteration: errors, seconds, dev accuracy.

    Attributes
    ----------
    classes_ : list of str
        Labels, sorted; column order of scores.
    model_ : LinearChain
    featurizer_ : the fitted featurizer
    n_iter_ : int
    history_ : list of dict, one per iteration

    References
    ----------
    Collins, M. (2002). Discriminative training methods for hidden Markov
    models: theory and experiments with perceptron algorithms. EMNLP.
    """

    _param_names = ("max_iter", "average", "shuffle", "random_state", "all_states",
                    "features", "verbose")

    def __init__(self, *, max_iter: int = 10, average: bool = True, shuffle: bool = True,
                 random_state: int | None = None, all_states: bool = False, features=None,
                 verbose: bool = False) -> None:
        self.max_iter = max_iter
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state
        self.all_states = all_states
        self.features = features
        self.verbose = verbose

    def _validate_params(self) -> None:
        _check_number("max_iter", self.max_iter, low=1, integer=True)
        if self.random_state is not None:
            _check_number("random_state", self.random_state, low=0, integer=True)

    def _train(self, corpus, model, dev, callback):
        trainer = _train.PerceptronTrainer(
            model.attr_ptr, model.attr_labels, model.n_labels, corpus.seq_ptr, corpus.tok_ptr,
            corpus.attr_ids, corpus.values, corpus.labels)
        rng = np.random.default_rng(self.random_state)
        order = np.arange(corpus.n_sequences, dtype=np.int64)
        for it in range(1, self.max_iter + 1):
            t = time.perf_counter()
            if self.shuffle:
                rng.shuffle(order)
            errors = trainer.train_epoch(order)
            record = {"iteration": it, "errors": int(errors),
                      "error_rate": errors / corpus.n_tokens,
                      "seconds": time.perf_counter() - t}
            if dev is not None:
                model.params = trainer.averaged() if self.average else trainer.weights
                record["dev_accuracy"] = dev(model)
            self._report(record, callback)
            if errors == 0:
                break
        model.params = trainer.averaged() if self.average else trainer.weights
        self.n_iter_ = len(self.history_)


class CRF(_LinearChainEstimator):
    """Linear-chain conditional random field trained with L-BFGS.

    Minimises ``-sum log p(y | x) + c2 * ||w||^2`` with L-BFGS
    (:func:`cseq.optimize.lbfgs`);
    objective and gradient come from one GIL-free pass over the corpus,
    parallel over sequences when ``n_jobs > 1``.

    Parameters
    ----------
    c2 : float, default 1.0
        L2 regularisation strength (CRFsuite's ``c2``).
    max_iter : int, default 100
        Maximum L-BFGS iterations.
    tol : float, default 1e-5
        Stop when the objective improved by less than ``tol`` (relative) over
        the last ``period`` iterations (CRFsuite's ``delta`` test).
    period : int, default 10
        Window of that test.
    n_jobs : int, default 1
        Threads for the objective (``-1``: all cores). Results depend on
        ``n_jobs`` only through float rounding.
    all_states : bool, default False
        Give every (attribute, label) pair a weight.
    features : featurizer or None
        As for :class:`StructuredPerceptron`.
    verbose : bool
        Print one line per iteration: loss, seconds, dev accuracy.

    Attributes
    ----------
    classes_, model_, featurizer_, n_iter_, history_
        As for :class:`StructuredPerceptron`; ``history_`` records the loss.
    n_evaluations_ : int
        Objective and gradient evaluations (line searches may take several
        per iteration).
    stop_reason_ : str

    References
    ----------
    Lafferty, J., McCallum, A., Pereira, F. (2001). Conditional random fields:
    probabilistic models for segmenting and labeling sequence data. ICML.
    Sha, F., Pereira, F. (2003). Shallow parsing with conditional random
    fields. HLT-NAACL.
    """

    _param_names = ("c2", "max_iter", "tol", "period", "n_jobs", "all_states", "features",
                    "verbose")

    def __init__(self, *, c2: float = 1.0, max_iter: int = 100, tol: float = 1e-5,
                 period: int = 10, n_jobs: int = 1, all_states: bool = False, features=None,
                 verbose: bool = False) -> None:
        self.c2 = c2
        self.max_iter = max_iter
        self.tol = tol
        self.period = period
        self.n_jobs = n_jobs
        self.all_states = all_states
        self.features = features
        self.verbose = verbose

    def _validate_params(self) -> None:
        _check_number("c2", self.c2, low=0.0)
        _check_number("max_iter", self.max_iter, low=1, integer=True)
        _check_number("tol", self.tol, low=0.0)
        _check_number("period", self.period, low=1, integer=True)
        resolve_n_jobs(self.n_jobs)

    def _train(self, corpus, model, dev, callback):
        objective = CRFObjective(model, corpus, self.c2, self.n_jobs)
        losses: list[float] = []
        clock = [time.perf_counter()]

        def evaluate(theta):
            try:
                value, grad = objective(theta)
            except FloatingPointError as exc:
                raise ConvergenceError(f"CRF objective became non-finite: {exc}") from None
            if not (math.isfinite(value) and np.isfinite(grad).all()):
                raise ConvergenceError(
                    "CRF objective or gradient is not finite (feature values too large?)")
            return value, grad

        def on_iteration(iteration, theta, value):
            now = time.perf_counter()
            record = {"iteration": iteration, "loss": value, "seconds": now - clock[0]}
            losses.append(value)
            if dev is not None:
                model.params = theta
                record["dev_accuracy"] = dev(model)
            self._report(record, callback)
            clock[0] = time.perf_counter()
            k = self.period
            return len(losses) > k and \
                (losses[-k - 1] - value) <= self.tol * max(abs(value), 1.0)

        result = lbfgs(evaluate, np.zeros_like(model.params), max_iter=int(self.max_iter),
                       callback=on_iteration)
        if result.nit == 0 and "line search failed" in result.message:
            biggest = float(np.abs(corpus.values).max()) if len(corpus.values) else 0.0
            raise ConvergenceError(
                "L-BFGS could not decrease the CRF objective from its starting point "
                f"(largest feature value {biggest:.3g}: scale feature values down)")
        params = np.ascontiguousarray(result.x, dtype=np.float64)
        if not np.isfinite(params).all():
            raise ConvergenceError(f"L-BFGS returned non-finite weights ({result.message})")
        model.params = params
        self.n_iter_ = len(losses)
        self.n_evaluations_ = objective.n_evaluations
        self.stop_reason_ = str(result.message)

    def predict_marginals(self, X, *, n_jobs: int = 1) -> list[np.ndarray]:
        """Label marginals of each token: a list of (n_i, L) arrays, columns in ``classes_`` order."""
        def work(corpus, block):
            return self._split(self.model_.marginals(corpus), corpus)
        return [m for block in self._map_blocks(X, n_jobs, work) for m in block]


def _format_record(record: dict) -> str:
    parts = [f"iter {record['iteration']:4d}"]
    if "loss" in record:
        parts.append(f"loss {record['loss']:.6g}")
    if "errors" in record:
        parts.append(f"errors {record['errors']} ({100 * record['error_rate']:.2f}%)")
    parts.append(f"{record['seconds']:.3f}s")
    if "dev_accuracy" in record:
        parts.append(f"dev acc {100 * record['dev_accuracy']:.2f}%")
    return "  ".join(parts)
