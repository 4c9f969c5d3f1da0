"""sklearn-crfsuite's ``CRF`` estimator, trained and applied by cseq's learners.

The constructor takes sklearn-crfsuite's parameters under their names and
with their defaults (``None``: CRFsuite's default for the algorithm); ``fit``
maps them onto a cseq estimator, kept as ``estimator_``:

========== ============================================================
algorithm  cseq estimator
========== ============================================================
lbfgs      ``cseq.CRF(algorithm="lbfgs")``: L-BFGS, OWL-QN when c1 > 0
l2sgd      ``cseq.CRF(algorithm="sgd")``
ap         ``cseq.StructuredPerceptron`` (averaged)
pa         ``cseq.PassiveAggressive`` (``pa_type``, ``c`` as ``C``, ``epsilon`` as ``tol``)
arow       ``cseq.AROW`` (``epsilon`` as ``tol``)
========== ============================================================

The objective is CRFsuite's: ``-sum log p(y | x) + c1 * ||w||_1 + c2 *
||w||^2``, so the same ``c1`` and ``c2`` mean the same model.  A parameter
CRFsuite does not take for the chosen algorithm is refused, as CRFsuite
refuses it; one cseq lacks is accepted when it changes only the speed of
training (``num_memories``, ``linesearch``, ``max_linesearch``,
``keep_tempfiles``) and refused otherwise unless it has its default.  What
differs from sklearn-crfsuite is listed in docs/migrating.md.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from cseq.learners.arow import AROW
from cseq.learners.base import ChainEstimator, check_keywords, check_number, param_names
from cseq.compat.crfsuite_items import CRFsuiteVocabulary, convert
from cseq.compat.crfsuite_model import weight_tables
from cseq.exceptions import ConvergenceWarning, InputError, NotFittedError
from cseq.learners.crf import CRF as _ChainCRF
from cseq.learners.pa import PassiveAggressive
from cseq.learners.perceptron import StructuredPerceptron

__all__ = ["CRF", "TrainingLog"]

#: The largest ``max_iter`` cseq takes: CRFsuite's L-BFGS has no iteration
#: limit by default, and cseq's stopping tests end it long before.
_UNLIMITED = 2**31 - 1

#: CRFsuite's aliases of algorithm names (pycrfsuite.Trainer.select).
_ALIASES = {"averaged-perceptron": "ap", "passive-aggressive": "pa"}

#: The parameters each CRFsuite algorithm takes, with CRFsuite's defaults
#: (``lib/crf/src/train_*.c``); every algorithm also takes the feature
#: parameters in :data:`_FEATURE_DEFAULTS`.
_ALGORITHM_DEFAULTS: dict[str, dict[str, Any]] = {
    "lbfgs": {"c1": 0.0, "c2": 1.0, "max_iterations": _UNLIMITED, "num_memories": 6,
              "epsilon": 1e-5, "period": 10, "delta": 1e-5, "linesearch": "MoreThuente",
              "max_linesearch": 20},
    "l2sgd": {"c2": 1.0, "max_iterations": 1000, "period": 10, "delta": 1e-6,
              "calibration_eta": 0.1, "calibration_rate": 2.0, "calibration_samples": 1000,
              "calibration_candidates": 10, "calibration_max_trials": 20},
    "ap": {"max_iterations": 100, "epsilon": 0.0},
    "pa": {"pa_type": 1, "c": 1.0, "error_sensitive": True, "averaging": True,
           "max_iterations": 100, "epsilon": 0.0},
    "arow": {"variance": 1.0, "gamma": 1.0, "max_iterations": 100, "epsilon": 0.0},
}
_FEATURE_DEFAULTS = {"min_freq": 0.0, "all_possible_states": False,
                     "all_possible_transitions": False}

#: The line searches CRFsuite's L-BFGS offers (``linesearch`` is checked, then ignored).
_LINESEARCHES = ("MoreThuente", "Backtracking", "StrongBacktracking")

#: Parameters cseq has no counterpart for that change the model: only their
#: default is accepted.  The value says what to do instead.
_CALIBRATION = ("cseq.CRF(algorithm='sgd') calibrates its own initial rate; to set it, use "
                "cseq.CRF(algorithm='sgd', eta0=...)")
_DEFAULT_ONLY: dict[str, Any] = {
    "epsilon": {"lbfgs": "cseq's L-BFGS stops when ||g|| <= 1e-5 * max(1, ||w||), CRFsuite's "
                         "default test; use delta and period to stop earlier",
                "ap": "cseq's perceptron runs max_iterations epochs and stops early only "
                      "after an epoch without a mistake"},
    "min_freq": "cseq keeps every (attribute, label) pair seen in training; leave rare "
                "attributes out of the feature dicts instead",
    **dict.fromkeys(("calibration_eta", "calibration_rate", "calibration_samples",
                     "calibration_candidates", "calibration_max_trials"), _CALIBRATION),
}


@dataclass
class TrainingLog:
    """What training reported, in the shape of python-crfsuite's ``TrainLogParser``.

    Attributes
    ----------
    iterations : list of dict
        One dict per iteration (epoch): ``num``, ``time`` (seconds), ``loss``
        for the CRF learners (the regularized objective, as CRFsuite logs
        it), ``item_accuracy_float`` when ``fit`` had a dev set; and cseq's
        own record under its names (``iteration``, ``seconds``, ``errors``,
        ``dev_accuracy``, ...).
    last_iteration : dict or None
        ``iterations[-1]``.
    training_seconds : float
        Wall-clock seconds of the whole ``fit``.
    stop_reason : str
        Why training stopped (cseq's ``stop_reason_``).
    """

    iterations: list[dict] = field(default_factory=list)
    training_seconds: float = 0.0
    stop_reason: str = ""

    @property
    def last_iteration(self) -> dict | None:
        return self.iterations[-1] if self.iterations else None

    @classmethod
    def from_history(cls, history: list[dict], seconds: float, stop_reason: str) -> TrainingLog:
        """The log of a fitted cseq estimator's ``history_``."""
        iterations = []
        for record in history:
            it = {"num": record["iteration"], "time": record["seconds"]}
            if "loss" in record:
                it["loss"] = record["loss"]
            if "dev_accuracy" in record:
                it["item_accuracy_float"] = record["dev_accuracy"]
            iterations.append({**it, **record})
        return cls(iterations, seconds, stop_reason)


class CRF:
    """sklearn-crfsuite's ``CRF``, backed by a cseq estimator.

    ``from cseq.compat import sklearn_crfsuite`` in place of ``import
    sklearn_crfsuite`` runs code written for sklearn-crfsuite: the same
    constructor, ``fit(X, y, X_dev=None, y_dev=None)``, ``predict``,
    ``predict_single``, ``predict_marginals``, ``predict_marginals_single``,
    ``score`` and fitted attributes.  ``X`` is a list of sequences of items
    in python-crfsuite's formats (feature dicts or lists of attribute
    strings: :mod:`cseq.compat.crfsuite_items`).

    Parameters
    ----------
    algorithm : {"lbfgs", "l2sgd", "ap", "pa", "arow"} or None (``"lbfgs"``)
        The table above (``"passive-aggressive"`` and
        ``"averaged-perceptron"`` are CRFsuite's aliases).
    min_freq : float or None
        Only 0 (the default): cseq keeps every (attribute, label) pair seen.
    all_possible_states : bool or None
        ``cseq.CRF(all_states=...)``: a weight for every (attribute, label) pair.
    all_possible_transitions : bool or None
        cseq always gives every label pair a transition weight (and every
        label a start and an end weight), so True and False train the same
        model: what CRFsuite trains with True.
    c1, c2 : float or None (0 and 1)
        L1 and L2 coefficients of ``lbfgs`` (``l2sgd``: ``c2`` only), on
        CRFsuite's scale: ``c1 * ||w||_1 + c2 * ||w||^2``.
    max_iterations : int or None
        ``lbfgs``: unlimited (cseq's stopping tests end it); ``l2sgd``: 1000
        epochs; ``ap``, ``pa``, ``arow``: 100 epochs.
    period, delta : int, float or None (10; ``lbfgs`` 1e-5, ``l2sgd`` 1e-6)
        Stop when the objective improved by less than ``delta`` (relative)
        over the last ``period`` iterations (cseq's ``period`` and ``tol``).
    epsilon : float or None
        ``lbfgs`` and ``ap``: only CRFsuite's default (``lbfgs`` 1e-5,
        cseq's gradient test; ``ap`` 0).  ``pa``, ``arow``: stop after an
        epoch whose mean loss is below (``arow``: at most) ``epsilon``
        (default 0), the learners' ``tol``.
    num_memories, linesearch, max_linesearch : optional
        Validated and ignored: cseq's L-BFGS keeps 6 corrections (CRFsuite's
        default) and has its own line search; they change how fast L-BFGS
        converges, not its optimum.
    calibration_eta, calibration_rate, calibration_samples : optional
        Only their defaults: cseq's SGD calibrates its first rate its own way.
    calibration_candidates, calibration_max_trials : optional
        Only their defaults, likewise.
    pa_type, c, error_sensitive, averaging : optional (1, 1.0, True, True)
        Parameters of ``pa``: :class:`cseq.PassiveAggressive`'s ``pa_type``,
        ``C``, ``error_sensitive`` and ``average``.
    variance, gamma : optional (1.0, 1.0)
        Parameters of ``arow``: :class:`cseq.AROW`'s.
    verbose : bool
        Print one line per iteration.
    model_filename : None
        Reading CRFsuite model files is not supported yet.
    keep_tempfiles : bool
        Ignored: cseq keeps its model in memory, without files.
    trainer_cls : None
        A python-crfsuite trainer class cannot drive cseq.
    n_jobs : int
        cseq's own (sklearn-crfsuite has none): threads for ``lbfgs`` and
        ``l2sgd`` training (:class:`cseq.CRF`'s ``n_jobs``; the model is the
        same up to float rounding).

    Attributes
    ----------
    estimator_ : cseq.CRF, cseq.StructuredPerceptron, cseq.PassiveAggressive or cseq.AROW
        The fitted cseq estimator (``estimator_.save(path)`` writes a cseq
        model file).
    classes_ : list of str
        Labels in order of first appearance in ``y``, as CRFsuite numbers them.
    state_features_ : dict
        ``{(attribute, label): weight}`` for every non-zero state weight.
    transition_features_ : dict
        ``{(label_from, label_to): weight}`` for every non-zero transition weight.
    attributes_ : list of str
        The attributes with a non-zero weight, in order of first appearance.
    num_attributes_ : int
        ``len(attributes_)``.
    size_ : int
        Bytes of the model as a cseq model file.
    training_log_ : TrainingLog
        Each iteration's loss, time and dev accuracy.

    Examples
    --------
    >>> from cseq.compat import sklearn_crfsuite
    >>> X = [[{"w": "the"}, {"w": "dog"}], [{"w": "a"}, {"w": "cat"}]]
    >>> y = [["DET", "NOUN"], ["DET", "NOUN"]]
    >>> crf = sklearn_crfsuite.CRF(c2=0.01, max_iterations=50).fit(X, y)
    >>> crf.predict_single([{"w": "the"}, {"w": "cat"}])
    ['DET', 'NOUN']
    >>> crf.classes_, sorted(crf.attributes_)
    (['DET', 'NOUN'], ['w:a', 'w:cat', 'w:dog', 'w:the'])
    """

    @check_keywords  # an unknown keyword names the nearest parameter, as cseq's own learners do
    def __init__(self, algorithm: str | None = None, min_freq: float | None = None,
                 all_possible_states: bool | None = None,
                 all_possible_transitions: bool | None = None, c1: float | None = None,
                 c2: float | None = None, max_iterations: int | None = None,
                 num_memories: int | None = None, epsilon: float | None = None,
                 period: int | None = None, delta: float | None = None,
                 linesearch: str | None = None, max_linesearch: int | None = None,
                 calibration_eta: float | None = None, calibration_rate: float | None = None,
                 calibration_samples: float | None = None,
                 calibration_candidates: int | None = None,
                 calibration_max_trials: int | None = None, pa_type: int | None = None,
                 c: float | None = None, error_sensitive: bool | None = None,
                 averaging: bool | None = None, variance: float | None = None,
                 gamma: float | None = None, verbose: bool = False,
                 model_filename: str | None = None, keep_tempfiles: bool = False,
                 trainer_cls: Any = None, n_jobs: int = 1) -> None:
        self.algorithm = algorithm
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls
        self.n_jobs = n_jobs
        self.training_log_: TrainingLog | None = None

    # -- parameters: scikit-learn's conventions, by cseq's own estimator methods, which
    # read _param_names (the signature's, as for cseq's own learners) and do not depend on
    # the estimator otherwise.
    _param_names = param_names(__init__)
    get_params = ChainEstimator.get_params
    set_params = ChainEstimator.set_params
    __sklearn_tags__ = ChainEstimator.__sklearn_tags__

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()
                         if v is not None and v is not False and not (k == "n_jobs" and v == 1))
        return f"CRF({args})"

    def __getstate__(self) -> dict[str, Any]:
        # The derived tables are rebuilt on demand; estimator_ pickles as a model file.
        state = self.__dict__.copy()
        state.pop("_info", None)
        return state

    # -- the mapping onto cseq -------------------------------------------------
    def _algorithm(self) -> str:
        name = "lbfgs" if self.algorithm is None else self.algorithm
        if not isinstance(name, str):
            raise InputError(f"algorithm must be a string, got {name!r}")
        name = _ALIASES.get(name.lower(), name.lower())
        if name not in _ALGORITHM_DEFAULTS:
            raise InputError(f"algorithm must be one of {', '.join(map(repr, _ALGORITHM_DEFAULTS))}"
                             f", got {self.algorithm!r}")
        return name

    def _settings(self, algorithm: str) -> dict[str, Any]:
        """Every parameter of ``algorithm``: the given ones, CRFsuite's defaults for the rest.

        Raises InputError for a parameter the algorithm does not take (as
        CRFsuite does), for one cseq cannot honour, and for bad values.
        """
        defaults = {**_FEATURE_DEFAULTS, **_ALGORITHM_DEFAULTS[algorithm]}
        taken = set(chain.from_iterable(_ALGORITHM_DEFAULTS.values()))
        for name in sorted(taken - set(defaults)):
            if getattr(self, name) is not None:
                raise InputError(
                    f"{name} is not a parameter of algorithm {algorithm!r} (CRFsuite's "
                    f"{algorithm} takes {', '.join(_ALGORITHM_DEFAULTS[algorithm])})")
        settings = {name: defaults[name] if getattr(self, name) is None else getattr(self, name)
                    for name in defaults}
        for name in ("c1", "c2", "min_freq", "delta", "epsilon"):
            if name in settings:
                check_number(name, settings[name], low=0.0)
        for name in ("max_iterations", "period", "num_memories", "max_linesearch"):
            if name in settings:
                check_number(name, settings[name], low=1, integer=True)
        for name in ("all_possible_states", "all_possible_transitions", "error_sensitive",
                     "averaging"):
            if name in settings and not isinstance(settings[name], (bool, np.bool_, int)):
                raise InputError(f"{name} must be True or False, got {settings[name]!r}")
        if settings.get("linesearch", "MoreThuente") not in _LINESEARCHES:
            raise InputError(f"linesearch must be one of {', '.join(_LINESEARCHES)}, got "
                             f"{settings['linesearch']!r}")
        for name, why in _DEFAULT_ONLY.items():
            if isinstance(why, dict):
                if algorithm not in why:
                    continue  # a parameter cseq honours for this algorithm
                why = why[algorithm]
            if name in settings and settings[name] != defaults[name]:
                raise InputError(f"{name}={settings[name]!r} has no counterpart in cseq "
                                 f"(only CRFsuite's default {defaults[name]!r} is accepted): "
                                 f"{why}")
        if self.model_filename is not None:
            raise InputError("model_filename: reading CRFsuite model files is not supported "
                             "yet; train with fit, or keep a fitted CRF with pickle or "
                             "estimator_.save()")
        if self.trainer_cls is not None:
            raise InputError("trainer_cls: a python-crfsuite trainer class cannot drive cseq; "
                             "verbose=True prints one line per iteration")
        return settings

    def _new_estimator(self) -> ChainEstimator:
        """The unfitted cseq estimator the parameters describe."""
        algorithm = self._algorithm()
        s = self._settings(algorithm)
        all_states = bool(s["all_possible_states"])
        verbose = bool(self.verbose)
        if algorithm == "ap":
            # CRFsuite shuffles the sequences every epoch with an unseeded rand(),
            # the same order on every run: a fixed seed keeps fit reproducible too.
            return StructuredPerceptron(max_iter=s["max_iterations"], average=True,
                                             shuffle=True, random_state=0,
                                             all_states=all_states, verbose=verbose)
        # pa and arow: CRFsuite's shuffle is seeded the same way as ap's.
        if algorithm == "pa":
            return PassiveAggressive(
                pa_type=s["pa_type"], C=s["c"], error_sensitive=bool(s["error_sensitive"]),
                average=bool(s["averaging"]), max_iter=s["max_iterations"], tol=s["epsilon"],
                random_state=0, all_states=all_states, verbose=verbose)
        if algorithm == "arow":
            return AROW(variance=s["variance"], gamma=s["gamma"],
                             max_iter=s["max_iterations"], tol=s["epsilon"], random_state=0,
                             all_states=all_states, verbose=verbose)
        common = dict(c2=s["c2"], max_iter=s["max_iterations"], tol=s["delta"],
                      period=s["period"], all_states=all_states, verbose=verbose,
                      n_jobs=self.n_jobs)
        if algorithm == "l2sgd":
            return _ChainCRF(algorithm="sgd", random_state=0, **common)
        return _ChainCRF(algorithm="lbfgs", c1=s["c1"], **common)

    # -- training and prediction -----------------------------------------------
    def fit(self, X: Sequence[Any], y: Sequence[Sequence[str]], X_dev: Sequence[Any] | None = None,
            y_dev: Sequence[Sequence[str]] | None = None, *,
            callback: Callable[[dict[str, Any]], object] | None = None) -> CRF:
        """Train on items ``X`` (python-crfsuite formats) and label sequences ``y``.

        ``X_dev`` and ``y_dev`` (both or neither) are scored after every
        iteration (``training_log_``), as CRFsuite's holdout is; they do not
        change the model.

        ``callback`` (cseq's, not sklearn-crfsuite's) is called with each
        iteration's record, as :meth:`cseq.CRF.fit` calls it.

        Reaching ``max_iterations`` is recorded in ``training_log_.stop_reason``
        and not warned about, as in sklearn-crfsuite.
        """
        if (X_dev is None) != (y_dev is None):
            raise InputError("Pass both X_dev and y_dev to use the holdout data")
        estimator = self._new_estimator()
        # The featurizer reads python-crfsuite's items (compiled for the flat ones).
        estimator.features = CRFsuiteVocabulary()
        y = _label_lists(y)
        dev = () if X_dev is None or y_dev is None else (X_dev, _label_lists(y_dev))
        clock = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            estimator.fit(X, y, *dev, callback=callback)
        seconds = time.perf_counter() - clock
        known = set(estimator.classes_)
        self._classes = [label for label in dict.fromkeys(chain.from_iterable(y))
                         if label in known]
        self.estimator_ = estimator
        self.training_log_ = TrainingLog.from_history(estimator.history_, seconds,
                                                      str(estimator.stop_reason_))
        self._info: dict[str, Any] = {}
        return self

    def _fitted(self) -> ChainEstimator:
        estimator = getattr(self, "estimator_", None)
        if estimator is None:
            raise NotFittedError("this CRF is not fitted yet: call fit first")
        return estimator

    @staticmethod
    def _items(estimator: ChainEstimator, X: Sequence[Any]) -> Sequence[Any]:
        """``X`` as ``estimator``'s featurizer reads it.

        A CRF fitted by this version has a :class:`CRFsuiteVocabulary`, which
        reads the items; one pickled by an earlier version has the plain
        vocabulary, which needs them converted.
        """
        return X if isinstance(estimator.featurizer_, CRFsuiteVocabulary) else convert(X)

    def predict(self, X: Sequence[Any]) -> list[list[str]]:
        """The most likely label sequence of each sequence of items (a list of lists)."""
        estimator = self._fitted()
        return estimator.predict(self._items(estimator, X))

    def predict_single(self, xseq: Sequence[Any]) -> list[str]:
        """The most likely label sequence of one sequence of items."""
        return self.predict([xseq])[0]

    def predict_marginals(self, X: Sequence[Any]) -> list[list[dict[str, float]]]:
        """Each token's label probabilities: per sequence, a list of ``{label: p}`` dicts.

        Computed by forward-backward with the model's weights for every
        algorithm, as CRFsuite's tagger does (for ``ap`` the weights are a
        perceptron's, so these are the CRF probabilities those scores define).
        """
        estimator = self._fitted()
        corpus = estimator.featurizer_.transform(self._items(estimator, X))
        marginals = estimator.model_.marginals(corpus)
        # Columns in classes_ order (CRFsuite's label order), rows cut per sequence.
        labels = self._classes
        columns = [estimator.classes_.index(label) for label in labels]
        rows = marginals[:, columns].tolist()
        ptr = corpus.seq_ptr.tolist()
        return [[dict(zip(labels, row)) for row in rows[ptr[s]:ptr[s + 1]]]
                for s in range(len(ptr) - 1)]

    def predict_marginals_single(self, xseq: Sequence[Any]) -> list[dict[str, float]]:
        """:meth:`predict_marginals` of one sequence of items."""
        return self.predict_marginals([xseq])[0]

    def score(self, X: Sequence[Any], y: Sequence[Sequence[str]]) -> float:
        """Token accuracy (``metrics.flat_accuracy_score`` of ``predict(X)``)."""
        estimator = self._fitted()
        return estimator.score(self._items(estimator, X), _label_lists(y))

    # -- the fitted model, as CRFsuite's dump shows it --------------------------
    def _table(self, key: str) -> Any:
        """The named table of the fitted model, computed once per fit (None before fit)."""
        estimator = getattr(self, "estimator_", None)
        if estimator is None:
            return None
        info = self.__dict__.setdefault("_info", {})
        if key not in info:
            info.update({"size": len(estimator.to_bytes())} if key == "size"
                        else weight_tables(estimator))
        return info[key]

    @property
    def classes_(self) -> list[str] | None:
        """The labels in order of first appearance in ``y``, as CRFsuite numbers them."""
        return self._classes if getattr(self, "estimator_", None) is not None else None

    @property
    def state_features_(self) -> dict[tuple[str, str], float] | None:
        """``{(attribute, label): weight}`` for every non-zero state weight."""
        return self._table("state_features")

    @property
    def transition_features_(self) -> dict[tuple[str, str], float] | None:
        """``{(label_from, label_to): weight}`` for every non-zero transition weight."""
        return self._table("transition_features")

    @property
    def attributes_(self) -> list[str] | None:
        """The attributes that have a non-zero weight, in order of first appearance."""
        return self._table("attributes")

    @property
    def num_attributes_(self) -> int | None:
        """Number of attributes with a non-zero weight."""
        attributes = self.attributes_
        return None if attributes is None else len(attributes)

    @property
    def size_(self) -> int | None:
        """Bytes of the fitted model as a cseq model file."""
        return self._table("size")


def _label_lists(y: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """``y`` as lists of labels; a subclass of str (numpy's ``str_``) as a plain str.

    Other labels go on unchanged, for cseq to refuse with their position.
    """
    return [[str(label) if isinstance(label, str) else label for label in yseq] for yseq in y]
