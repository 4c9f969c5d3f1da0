"""python-crfsuite's module (``pycrfsuite``) on cseq: ``Trainer``, ``Tagger``, ``ItemSequence``.

``from cseq.compat import pycrfsuite`` in place of ``import pycrfsuite`` runs
a program written for python-crfsuite unchanged:

>>> from cseq.compat import pycrfsuite
>>> trainer = pycrfsuite.Trainer(verbose=False)
>>> trainer.append([{"w": "the"}, {"w": "dog"}], ["DET", "NOUN"])
>>> trainer.append([{"w": "a"}, {"w": "cat"}], ["DET", "NOUN"])
>>> trainer.set_params({"c2": 0.01, "max_iterations": 50})
>>> trainer.train("model.cseq")
>>> tagger = pycrfsuite.Tagger()
>>> with tagger.open("model.cseq"):
...     tagger.tag([{"w": "a"}, {"w": "dog"}])
['DET', 'NOUN']

- :class:`Trainer` takes python-crfsuite's algorithms (``lbfgs``, ``l2sgd``,
  ``ap``, ``pa``, ``arow``) and parameter names (``c1``, ``c2``,
  ``feature.possible_states``, ``type``, ...), and trains the cseq learner
  :mod:`cseq.compat.sklearn_crfsuite` maps them onto (the same table; the
  CRF objective is CRFsuite's, so the same ``c1`` and ``c2`` mean the same
  model).  ``train(path)`` writes a **cseq model file** (the safe format of
  :func:`cseq.save`); :func:`cseq.to_crfsuite` writes CRFsuite's format.
- :class:`Tagger` opens a cseq model file or a CRFsuite model file (told
  apart by their first bytes): models trained by python-crfsuite,
  sklearn-crfsuite or ``crfsuite learn`` tag here with the same labels,
  probabilities and marginals.
- Items are python-crfsuite's formats (:mod:`cseq.compat.crfsuite_items`):
  lists of attribute strings, dicts of ``str`` to ``str``, ``bool`` or a
  number, nested dicts and lists.

What differs (docs/migrating.md): a bare string as an item, which
python-crfsuite reads as one attribute per character, is refused; a
parameter value that is not a number where one is expected raises
``ValueError`` (CRFsuite reads it as 0); the training log is cseq's (the
same events and per-iteration fields, other wording).
"""

from __future__ import annotations

import contextlib
import operator
import os
import struct
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from cseq.compat import crfsuite_model
from cseq.compat.crfsuite_items import CRFsuiteVocabulary, convert
from cseq.compat.sklearn_crfsuite.estimator import CRF as _SklearnCRF, TrainingLog
from cseq.chain.probability import path_log_prob
from cseq.exceptions import InputTypeError, ModelFormatError
from cseq.io.serialize import MAGIC, loads, read_file_bytes, write_atomic
from cseq.learners.base import ChainEstimator, one_call

__all__ = ["BaseTrainer", "CRFSUITE_VERSION", "CRFSuiteError", "ItemSequence", "ParsedDump",
           "Tagger", "Trainer"]

#: The CRFsuite release whose API, parameters and model format this module follows.
CRFSUITE_VERSION = "0.12"


class CRFSuiteError(Exception):
    """An error of training or tagging, as python-crfsuite raises it (with a ``code``)."""

    _messages = {-1: "Unknown error occurred", -2: "Insufficient memory",
                 -3: "Unsupported operation", -4: "Incompatible data",
                 -5: "Internal error", -6: "Overflow", -7: "Not implemented"}

    def __init__(self, code: int, message: str | None = None) -> None:
        self.code = code
        super().__init__(message or self._messages.get(code, "Unexpected error"))


# -- items -------------------------------------------------------------------------------------

class ItemSequence:
    """The items of one sequence, converted once (python-crfsuite's ``ItemSequence``).

    Passing an ``ItemSequence`` to :meth:`Trainer.append` or
    :meth:`Tagger.tag` skips reading the items again.

    >>> ItemSequence([["foo"], {"bar": {"baz": 1}}]).items()
    [{'foo': 1.0}, {'bar:baz': 1.0}]
    >>> ItemSequence([{'foo': 1, 'bar': 0}, {'foo': 1.5, 'baz': 2}])
    <ItemSequence of size 2>
    """

    __slots__ = ("_tokens",)

    def __init__(self, pyseq: Iterable[Any]) -> None:
        self._tokens = _tokens(pyseq)

    def items(self) -> list[dict[str, float]]:
        """The attributes of each item as a ``{name: value}`` dict."""
        return [dict.fromkeys(tok, 1.0) if type(tok) is list else dict(tok)
                for tok in self._tokens]

    def __len__(self) -> int:
        return len(self._tokens)

    def __repr__(self) -> str:
        return f"<ItemSequence of size {len(self)}>"


def _tokens(xseq: Any) -> list[Any]:
    """``xseq`` (items, or an :class:`ItemSequence`) as cseq tokens of python-crfsuite's rules."""
    if type(xseq) is ItemSequence:
        return xseq._tokens
    if isinstance(xseq, (str, bytes, dict)):
        raise InputTypeError(f"xseq must be a sequence of items (one per token), got "
                             f"{type(xseq).__name__}")
    if not isinstance(xseq, (list, tuple)):
        xseq = list(xseq)
    return convert([xseq])[0]


# -- training ----------------------------------------------------------------------------------

def _intbool(text: str) -> bool:
    return bool(int(text))


#: Each algorithm's parameters in CRFsuite's order, with CRFsuite's defaults and their
#: names in :class:`cseq.compat.sklearn_crfsuite.CRF`.
_FEATURE_PARAMS = [("feature.minfreq", 0.0, "min_freq"),
                   ("feature.possible_states", False, "all_possible_states"),
                   ("feature.possible_transitions", False, "all_possible_transitions")]
_PARAMS: dict[str, list[tuple[str, Any, str]]] = {
    "lbfgs": [("c1", 0.0, "c1"), ("c2", 1.0, "c2"), ("max_iterations", 2147483647,
                                                     "max_iterations"),
              ("num_memories", 6, "num_memories"), ("epsilon", 1e-5, "epsilon"),
              ("period", 10, "period"), ("delta", 1e-5, "delta"),
              ("linesearch", "MoreThuente", "linesearch"),
              ("max_linesearch", 20, "max_linesearch")],
    "l2sgd": [("c2", 1.0, "c2"), ("max_iterations", 1000, "max_iterations"),
              ("period", 10, "period"), ("delta", 1e-6, "delta"),
              ("calibration.eta", 0.1, "calibration_eta"),
              ("calibration.rate", 2.0, "calibration_rate"),
              ("calibration.samples", 1000.0, "calibration_samples"),
              ("calibration.candidates", 10, "calibration_candidates"),
              ("calibration.max_trials", 20, "calibration_max_trials")],
    "averaged-perceptron": [("max_iterations", 100, "max_iterations"),
                            ("epsilon", 0.0, "epsilon")],
    "passive-aggressive": [("type", 1, "pa_type"), ("c", 1.0, "c"),
                           ("error_sensitive", True, "error_sensitive"),
                           ("averaging", True, "averaging"),
                           ("max_iterations", 100, "max_iterations"), ("epsilon", 0.0, "epsilon")],
    "arow": [("variance", 1.0, "variance"), ("gamma", 1.0, "gamma"),
             ("max_iterations", 100, "max_iterations"), ("epsilon", 0.0, "epsilon")],
}

#: What each parameter means (for :meth:`BaseTrainer.help`).
_HELP = {
    "feature.minfreq": "The minimum frequency of features (only 0: cseq keeps every feature).",
    "feature.possible_states": "Force to generate possible state features.",
    "feature.possible_transitions": "Force to generate possible transition features (cseq "
                                    "always has every transition).",
    "c1": "Coefficient for L1 regularization.",
    "c2": "Coefficient for L2 regularization.",
    "max_iterations": "The maximum number of iterations (epochs).",
    "num_memories": "The number of limited memories for approximating the inverse hessian "
                    "matrix (accepted; cseq's L-BFGS keeps 6).",
    "epsilon": "The stopping criterion: for lbfgs the gradient test (only its default), for "
               "pa and arow the mean loss of an epoch.",
    "period": "The duration of iterations to test the stopping criterion.",
    "delta": "The threshold for the stopping criterion; training stops when the objective "
             "improved by less than delta over the last period iterations.",
    "linesearch": "The line search algorithm (accepted; cseq has its own).",
    "max_linesearch": "The maximum number of trials for the line search (accepted).",
    "calibration.eta": "The initial value of the learning rate (only its default: cseq "
                       "calibrates its own).",
    "calibration.rate": "The rate of increase/decrease of the learning rate for calibration "
                        "(only its default).",
    "calibration.samples": "The number of instances used for calibration (only its default).",
    "calibration.candidates": "The number of candidates of the learning rate (only its "
                              "default).",
    "calibration.max_trials": "The maximum number of trials of learning rates for calibration "
                              "(only its default).",
    "type": "The strategy for updating feature weights: 0 (PA), 1 (PA-I) or 2 (PA-II).",
    "c": "The aggressiveness parameter (PA-I and PA-II).",
    "error_sensitive": "Include the number of incorrect labels in the cost function.",
    "averaging": "Compute the average of feature weights at all updates.",
    "variance": "The initial variance of every feature weight.",
    "gamma": "The tradeoff between loss function and changes of feature weights.",
}

_PARAMETER_TYPES: dict[str, Callable[[str], Any]] = {
    name: (_intbool if isinstance(default, bool) else type(default))
    for params in [_FEATURE_PARAMS, *_PARAMS.values()] for name, default, _ in params}

_ALGORITHM_ALIASES = {"ap": "averaged-perceptron", "pa": "passive-aggressive"}
#: python-crfsuite's algorithm names as :class:`cseq.compat.sklearn_crfsuite.CRF` takes them.
_SKLEARN_NAMES = {"averaged-perceptron": "ap", "passive-aggressive": "pa"}


class BaseTrainer:
    """python-crfsuite's trainer: a data set, an algorithm and its parameters.

    Parameters
    ----------
    algorithm : {"lbfgs", "l2sgd", "ap", "pa", "arow"}, optional
        See :meth:`select` (default ``"lbfgs"``).
    params : dict, optional
        Parameters by python-crfsuite's names (:meth:`set_params`).
    verbose : bool
        Print the training log (:meth:`message`).
    n_jobs : int
        cseq's own (python-crfsuite has none): threads for ``lbfgs`` and
        ``l2sgd`` training (:class:`cseq.CRF`'s; the model is the same up to
        float rounding).
    """

    _PARAMETER_TYPES = _PARAMETER_TYPES
    _ALGORITHM_ALIASES = _ALGORITHM_ALIASES

    def __init__(self, algorithm: str | None = None, params: dict[str, Any] | None = None,
                 verbose: bool = True, *, n_jobs: int = 1) -> None:
        self._data: list[tuple[list[Any], list[str], int]] = []
        self.n_jobs = n_jobs
        self.select("lbfgs" if algorithm is None else algorithm)
        if params is not None:
            self.set_params(params)
        self.verbose = verbose

    # -- messages ----------------------------------------------------------------------------
    def message(self, message: str) -> None:
        """Receive one message of the training log; prints it when ``verbose``.

        Override it to send the log elsewhere.
        """
        if self.verbose:
            print(message, end="")

    def _emit(self, event: str, text: str, info: dict | None = None) -> None:
        self.message(text)

    # -- data --------------------------------------------------------------------------------
    def append(self, xseq: Any, yseq: Sequence[str], group: int = 0) -> None:
        """Add one instance: items ``xseq`` (or an :class:`ItemSequence`), labels ``yseq``.

        ``group`` numbers the instance for :meth:`train`'s ``holdout``.
        """
        try:
            group = operator.index(group)
        except TypeError:
            raise TypeError(f"group must be an int, got {type(group).__name__}") from None
        tokens = _tokens(xseq)
        if isinstance(yseq, (str, bytes)):
            raise InputTypeError("yseq must be a sequence of label strings, got a string")
        labels = [str(y) if isinstance(y, str) else y for y in yseq]
        if len(labels) != len(tokens):
            raise ValueError(f"The numbers of items and labels differ: |x| = {len(tokens)}, "
                             f"|y| = {len(labels)}")
        for t, label in enumerate(labels):
            if not isinstance(label, str):
                raise InputTypeError(f"yseq[{t}]: a label must be a string, got "
                                     f"{type(label).__name__}")
        self._data.append((tokens, labels, group))

    def clear(self) -> None:
        """Remove every instance."""
        self._data = []

    # -- algorithm and parameters ---------------------------------------------------------------
    def select(self, algorithm: str, type: str = "crf1d") -> None:
        """Choose the algorithm (``lbfgs``, ``l2sgd``, ``ap``, ``pa``, ``arow``); resets
        the parameters to its defaults.  ``type`` is the graphical model: only ``crf1d``."""
        name = str(algorithm).lower() if isinstance(algorithm, str) else algorithm
        name = self._ALGORITHM_ALIASES.get(name, name)
        if name not in _PARAMS or type != "crf1d":
            raise ValueError(f"Bad arguments: algorithm={name!r}, type={type!r}")
        self._algorithm = name
        self._values = {param: default for param, default, _ in _FEATURE_PARAMS + _PARAMS[name]}

    def params(self) -> list[str]:
        """The names of the selected algorithm's parameters."""
        return list(self._values)

    def set(self, name: str, value: Any) -> None:
        """Set one parameter (a value, or its text as CRFsuite reads it)."""
        if name not in self._values:
            raise ValueError(f"Parameter not found: {name} = {value}")
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        try:
            self._values[name] = self._PARAMETER_TYPES[name](str(value))
        except ValueError:
            raise ValueError(f"Bad value for parameter {name}: {value!r}") from None

    def get(self, name: str) -> Any:
        """The value of one parameter."""
        if name not in self._values:
            raise ValueError(f"Parameter not found: {name} = ")
        return self._values[name]

    def set_params(self, params: dict[str, Any]) -> None:
        """Set several parameters (``{name: value}``)."""
        for name, value in params.items():
            self.set(name, value)

    def get_params(self) -> dict[str, Any]:
        """Every parameter of the selected algorithm, ``{name: value}``."""
        return dict(self._values)

    def help(self, name: str) -> str:
        """What a parameter of the selected algorithm means."""
        if name not in self._values:
            raise ValueError(f"Parameter not found: {name}")
        return _HELP[name]

    # -- training ----------------------------------------------------------------------------
    def _crf(self) -> _SklearnCRF:
        """The sklearn-crfsuite layer's CRF the algorithm and parameters describe."""
        names = {param: kw for param, _, kw in _FEATURE_PARAMS + _PARAMS[self._algorithm]}
        return _SklearnCRF(algorithm=_SKLEARN_NAMES.get(self._algorithm, self._algorithm),
                           n_jobs=self.n_jobs, **{names[p]: v for p, v in self._values.items()})

    def train(self, model: str | os.PathLike[str], holdout: int = -1) -> None:
        """Train on the instances and write the model to the file ``model``.

        ``model`` is written as a cseq model file (atomically; ``""`` writes
        none), which :meth:`Tagger.open` and :func:`cseq.load` read.  The
        instances of group ``holdout`` are left out of training and scored
        after each iteration (``logparser``'s ``item_accuracy_float``).
        """
        self._before_train()
        train = [(x, y) for x, y, g in self._data if g != holdout]
        dev = [(x, y) for x, y, g in self._data if g == holdout]
        if not train:
            raise CRFSuiteError(-4, "no training instances (append some, outside the "
                                    "holdout group)")
        crf = self._crf()
        clock = time.perf_counter()
        self._emit("start", f"Training with {self._algorithm} on {len(train)} instances"
                            f"{f', {len(dev)} held out' if dev else ''}\n")

        def iteration(record: dict) -> None:
            info = TrainingLog.from_history([record], 0.0, "").iterations[0]
            text = " ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in record.items())
            self._emit("iteration", f"Iteration {record['iteration']}: {text}\n", info)
        X, y = [x for x, _ in train], [y for _, y in train]
        crf.fit(X, y, *(([x for x, _ in dev], [y for _, y in dev]) if dev else ()),
                callback=iteration)
        estimator = crf.estimator_
        seconds = time.perf_counter() - clock
        self._emit("optimization_end", f"Stopped: {estimator.stop_reason_}\n")
        if os.fspath(model):
            write_atomic(estimator.to_bytes(), model)
        self._emit("end", f"Total seconds required for training: {seconds:.3f}\n",
                   {"training_seconds": seconds})

    def _before_train(self) -> None:
        pass


class TrainLogParser:
    """What :class:`Trainer` records of a training run (python-crfsuite's ``logparser``).

    Attributes
    ----------
    iterations : list of dict
        One per iteration: ``num``, ``time``, ``loss`` (CRF algorithms),
        ``item_accuracy_float`` (with a holdout group) and cseq's own fields.
    last_iteration : dict or None
    training_seconds : float or None
    log : list of str
        Every message.
    events : list of str
        The event of each message (``start``, ``iteration``,
        ``optimization_end``, ``end``).
    """

    def __init__(self) -> None:
        self.iterations: list[dict] = []
        self.last_iteration: dict | None = None
        self.training_seconds: float | None = None
        self.log: list[str] = []
        self.events: list[str] = []
        self._pending: tuple[str, dict | None] | None = None

    @property
    def last_log(self) -> str:
        return self.log[-1] if self.log else ""

    def feed(self, line: str) -> str | None:
        """Record one message; returns its event (None for a message of no event)."""
        self.log.append(line)
        if self._pending is None:
            return None
        event, info = self._pending
        self._pending = None
        self.events.append(event)
        if event == "iteration" and info is not None:
            self.iterations.append(info)
            self.last_iteration = info
        elif event == "end" and info is not None:
            self.training_seconds = info["training_seconds"]
        return event


class Trainer(BaseTrainer):
    """:class:`BaseTrainer` with python-crfsuite's ``logparser`` and ``on_*`` hooks.

    With ``verbose``, each event of the log calls its hook (``on_start``,
    ``on_iteration(log, info)``, ``on_optimization_end``, ``on_end``), which
    prints the message; override them to act on training as it runs.
    """

    logparser: TrainLogParser | None = None

    def _before_train(self) -> None:
        self.logparser = TrainLogParser()

    def _emit(self, event: str, text: str, info: dict | None = None) -> None:
        if self.logparser is not None:
            self.logparser._pending = (event, info)
        self.message(text)

    def message(self, message: str) -> None:
        event = self.logparser.feed(message) if self.logparser is not None else None
        if not self.verbose or event is None:
            return
        log = self.logparser.last_log
        if event == "iteration":
            self.on_iteration(log, self.logparser.last_iteration)
        else:
            getattr(self, f"on_{event}")(log)

    def on_start(self, log: str) -> None:
        print(log, end="")

    def on_featgen_progress(self, log: str, percent: float) -> None:
        print(log, end="")

    def on_featgen_end(self, log: str) -> None:
        print(log, end="")

    def on_prepared(self, log: str) -> None:
        print(log, end="")

    def on_prepare_error(self, log: str) -> None:
        print(log, end="")

    def on_iteration(self, log: str, info: dict | None) -> None:
        print(log, end="")

    def on_optimization_end(self, log: str) -> None:
        print(log, end="")

    def on_end(self, log: str) -> None:
        print(log, end="")


# -- tagging -----------------------------------------------------------------------------------

class ParsedDump:
    """A model's tables by name (python-crfsuite's ``Tagger.info()``).

    Attributes
    ----------
    header : dict of str
        The CRFsuite file header's fields (as text), or a cseq model's size
        and counts.
    labels, attributes : dict
        ``{name: id}`` (ids as text, as python-crfsuite gives them).
    transitions : dict
        ``{(label_from, label_to): weight}``, zeros left out.
    state_features : dict
        ``{(attribute, label): weight}``, zeros left out.
    """

    def __init__(self) -> None:
        self.header: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.attributes: dict[str, str] = {}
        self.transitions: dict[tuple[str, str], float] = {}
        self.state_features: dict[tuple[str, str], float] = {}


_CRFSUITE_HEADER = ("magic", "size", "type", "version", "num_features", "num_labels",
                    "num_attrs", "off_features", "off_labels", "off_attrs", "off_labelrefs",
                    "off_attrrefs")


class Tagger:
    """Labels item sequences with a model (python-crfsuite's ``Tagger``).

    ``open`` a model file (cseq's or CRFsuite's) or ``open_inmemory`` its
    bytes; then ``tag(xseq)``, or ``set(xseq)`` followed by ``tag()``,
    ``probability(yseq)`` and ``marginal(y, pos)`` on that sequence.  One
    ``Tagger`` serves one thread at a time, as python-crfsuite's does (the
    current sequence is its state); the model it holds is never changed.
    """

    def __init__(self) -> None:
        self._estimator: ChainEstimator | None = None
        self._data: bytes = b""
        self._tokens: Any = None
        self._corpus: Any = None
        self._marginals: np.ndarray | None = None

    # -- opening ------------------------------------------------------------------------------
    def open(self, name: str | os.PathLike[str]) -> contextlib.closing:
        """Open the model file ``name``; returns a context manager that closes the tagger."""
        data = read_file_bytes(name)
        if not (data.startswith(b"lCRF") or data.startswith(MAGIC)):
            raise ValueError(f"Invalid model file {os.fsdecode(name)!r}: neither a cseq nor a "
                             "CRFsuite model")
        return self._open(data, f"imported from the CRFsuite model {os.fsdecode(name)}")

    def open_inmemory(self, value: bytes) -> contextlib.closing:
        """Open a model from its bytes (a cseq or CRFsuite model file's content)."""
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"value must be bytes, got {type(value).__name__}")
        data = bytes(value)
        if not (data.startswith(b"lCRF") or data.startswith(MAGIC)):
            raise ValueError("Invalid model")
        return self._open(data, "imported from a CRFsuite model")

    def _open(self, data: bytes, source: str) -> contextlib.closing:
        estimator = (crfsuite_model.crfsuite_from_bytes(data, source) if data.startswith(b"lCRF")
                     else loads(data))
        if not isinstance(estimator, ChainEstimator):
            raise ModelFormatError(f"the model is a {type(estimator).__name__}, not a sequence "
                                   "labeler")
        fitted = estimator._check_fitted()
        self._estimator, self._data = estimator, data
        self._fitted = fitted
        self._one_call = one_call(fitted)
        self._ids = {name: i for i, name in enumerate(fitted.classes)}
        self._crfsuite_items = isinstance(fitted.featurizer, CRFsuiteVocabulary)
        self._tokens, self._corpus, self._marginals = None, None, None
        return contextlib.closing(self)

    def close(self) -> None:
        """Close the model."""
        self._estimator, self._data = None, b""
        self._tokens, self._corpus, self._marginals = None, None, None

    def __enter__(self) -> Tagger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _model(self) -> ChainEstimator:
        if self._estimator is None:
            raise ValueError("The tagger is not opened")
        return self._estimator

    # -- reading the model ----------------------------------------------------------------------
    def labels(self) -> list[str]:
        """The model's labels, in its label-id order."""
        return list(self._model().classes_)

    def info(self) -> ParsedDump:
        """The model's header, labels, attributes and weights (:class:`ParsedDump`)."""
        estimator = self._model()
        dump = ParsedDump()
        if self._data.startswith(b"lCRF"):
            fields = struct.unpack_from("<4sI4s9I", self._data)
            dump.header = {name: (value.decode("ascii") if isinstance(value, bytes)
                                  else f"0x{value:X}" if name.startswith("off_") else str(value))
                           for name, value in zip(_CRFSUITE_HEADER, fields)}
        else:
            dump.header = {"magic": MAGIC.rstrip(b"\0").decode("ascii"),
                           "size": str(len(self._data)),
                           "num_labels": str(len(estimator.classes_)),
                           "num_attrs": str(estimator.model_.n_attributes)}
        names = estimator.featurizer_.attribute_names()
        dump.labels = {label: str(i) for i, label in enumerate(estimator.classes_)}
        dump.attributes = {name: str(i) for i, name in enumerate(names)}
        tables = crfsuite_model.weight_tables(estimator)
        dump.transitions = tables["transition_features"]
        dump.state_features = tables["state_features"]
        return dump

    def dump(self, filename: str | os.PathLike[str] | None = None) -> None:
        """Write the model as CRFsuite's plain-text dump to ``filename`` (default stdout)."""
        info = self.info()
        lines = ["FILEHEADER = {", *(f"  {k}: {v}" for k, v in info.header.items()), "}", "",
                 "LABELS = {", *(f"  {i:>5}: {name}" for name, i in info.labels.items()), "}",
                 "", "ATTRIBUTES = {",
                 *(f"  {i:>5}: {name}" for name, i in info.attributes.items()), "}", "",
                 "TRANSITIONS = {",
                 *(f"  (1) {a} --> {b}: {w:f}" for (a, b), w in info.transitions.items()),
                 "}", "", "STATE_FEATURES = {",
                 *(f"  (0) {a} --> {b}: {w:f}" for (a, b), w in info.state_features.items()),
                 "}", "", ""]
        text = "\n".join(lines)
        if filename is None:
            sys.stdout.write(text)
        else:
            write_atomic(text.encode("utf-8"), filename)

    # -- tagging ------------------------------------------------------------------------------
    def set(self, xseq: Any) -> None:
        """Make ``xseq`` (items or an :class:`ItemSequence`) the current sequence."""
        self._model()
        if type(xseq) is ItemSequence:
            tokens: Any = xseq._tokens
        elif not self._crfsuite_items:
            tokens = xseq  # the model's own featurizer reads its own inputs
        elif isinstance(xseq, (str, bytes, dict)):
            raise InputTypeError(f"xseq must be a sequence of items (one per token), got "
                                 f"{type(xseq).__name__}")
        else:
            tokens = xseq if type(xseq) is list else list(xseq)
        self._tokens, self._corpus, self._marginals = tokens, None, None

    def _current(self) -> Any:
        """The current sequence, packed (once per :meth:`set`)."""
        self._model()
        if self._tokens is None:
            raise ValueError("no sequence is set: call tag(xseq) or set(xseq) first")
        if self._corpus is None:
            self._corpus = self._fitted.featurizer.transform([self._tokens])
        return self._corpus

    @property
    def _n(self) -> int:
        return self._current().n_tokens

    def tag(self, xseq: Any = None) -> list[str]:
        """The most likely labels of ``xseq`` (default: the current sequence)."""
        if xseq is not None:
            self.set(xseq)
        elif self._tokens is None:
            self._current()  # the error: no model, or no sequence
        if self._one_call is not None:
            labels = self._one_call.predict([self._tokens])
            if labels is not None:
                return labels[0]
        fitted = self._fitted
        return fitted.label_names[fitted.model.decode(self._current())].tolist()

    def probability(self, yseq: Sequence[str]) -> float:
        """``P(yseq | x)`` of the current sequence.

        For a model without probabilities of its own (a perceptron's, say),
        the CRF probability its scores define, as CRFsuite's tagger gives it.
        """
        corpus = self._current()
        if isinstance(yseq, (str, bytes)):
            raise InputTypeError("yseq must be a sequence of labels, got a string")
        yseq = list(yseq)
        if len(yseq) != self._n:
            raise ValueError(f"The numbers of items and labels differ: |x| = {self._n}, "
                             f"|y| = {len(yseq)}")
        ids = self._ids
        for y in yseq:
            if y not in ids:
                raise RuntimeError(f"Failed to convert into label identifier: {y}")
        chain = self._fitted.model.dense_chains(corpus)[0]
        if chain is None:
            return 1.0
        em, trans, start, end, trans2 = chain
        return float(np.exp(path_log_prob(em, trans, [ids[y] for y in yseq], start, end,
                                          transitions2=trans2)))

    def marginal(self, y: str, pos: int) -> float:
        """``P(y_pos = y | x)`` of the current sequence."""
        corpus = self._current()
        ids = self._ids
        if y not in ids:
            raise RuntimeError(f"Failed to convert into label identifier: {y}")
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) \
                or not 0 <= pos < self._n:
            raise ValueError(f"The position, {pos} is out of range of {self._n}")
        if self._marginals is None:
            self._marginals = self._fitted.model.marginals(corpus)
        return float(self._marginals[pos, ids[y]])

