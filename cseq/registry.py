"""The one registry of learners: each registers once, beside its class.

A learner's registration gives what every place that lists learners reads:
the name model files give it (its class name, the header's ``estimator``),
its command-line names (``cseq train --algorithm``) with the options each one
takes, and a quick configuration for the tests.  So the model file
(:mod:`cseq.io.serialize`), the command line (:mod:`cseq.cli`: ``--algorithm``,
its help and options, ``cseq info``), the docs' learner table (checked by
``tests/package/test_docs.py``) and the tests' learner lists read :data:`LEARNERS`
and :data:`COMMANDS` instead of keeping their own lists.

A new learner is its module and one decorator::

    @register(Command("counts", None, description="weights from label counts"))
    class CountTagger(ChainEstimator):
        ...

This module imports nothing of cseq, so that every layer may read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any, TypeVar

__all__ = ["COMMANDS", "DEFAULT_COMMAND", "EARLY_STOPPING", "ESTIMATORS", "LEARNERS", "Command",
           "Learner", "command_of", "default_command", "register", "registered"]

T = TypeVar("T", bound=type)


@dataclass(frozen=True)
class Command:
    """One ``--algorithm`` of ``cseq train``: a learner under one command-line name.

    Attributes
    ----------
    name : str
        The ``--algorithm`` value (e.g. ``"crf-sgd"``).
    max_iter : int or None
        Iterations when ``--max-iter`` is not given; None for a learner
        without iterations (``--max-iter`` is then refused).
    options : dict of str to str
        Command-line option (its argparse ``dest``, one of the ``cseq train``
        learner options) to hyperparameter name.  Options not listed are
        refused for this learner.
    description : str
        One line for ``--help`` (the options are listed after it).  The
        fields after it are keyword-only.
    defaults : dict of str to Any
        Hyperparameters the command line sets unless an option does (e.g. a
        fixed seed, so that the same command gives the same model).
    templates : bool
        Whether the learner reads feature templates (``features``); False for
        one that reads the word (the first column) alone, as the HMM: in
        Python its ``X`` is then lists of words.
    preset_defaults : dict of str to dict
        Per template preset, hyperparameters that override ``defaults`` when
        that preset is used (options still win).
    default_for : tuple of str
        The template presets for which this command is ``cseq train``'s learner
        when ``--algorithm`` is not given (:func:`default_command`); one command
        at most per preset (:func:`register` refuses a second).
    fixed : dict of str to Any
        Hyperparameters that make this command what it is when several share
        an estimator class (``algorithm="sgd"`` for ``crf-sgd``); no option
        changes them, and :func:`command_of` names a model's command by them.
    quick : dict of str to Any
        Hyperparameters for a fit of a fraction of a second on a toy corpus,
        deterministic (a seed where the learner shuffles): what the tests'
        learner lists build (:meth:`quick_estimator`).
    estimator : type
        The estimator class; :func:`register` sets it (None before).
    """

    name: str
    max_iter: int | None
    options: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    _: KW_ONLY
    defaults: Mapping[str, Any] = field(default_factory=dict)
    templates: bool = True
    preset_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    default_for: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    quick: Mapping[str, Any] = field(default_factory=dict)
    estimator: Any = None

    @property
    def resumable(self) -> bool:
        """Whether it trains one pass at a time by ``partial_fit``, the state kept in the
        model file (``--resumable``, ``--resume``): the learner says, for this command's
        settings (its ``_can_partial_fit``)."""
        return bool(self.estimator(**{**self.defaults, **self.fixed})._can_partial_fit())

    def quick_estimator(self, **params: Any) -> Any:
        """A new estimator of this command with its ``quick`` hyperparameters
        (``params`` override them; ``fixed`` always holds)."""
        return self.estimator(**{**self.quick, **params, **self.fixed})


@dataclass(frozen=True)
class Learner:
    """One registered estimator class, its command-line names and what ``cseq info`` shows.

    ``info`` maps a fitted attribute to what it counts, for ``cseq info``'s
    line of state weights (e.g. the CRF's ``n_pruned_``: "exactly-zero
    weights pruned after training").
    """

    estimator: type
    commands: tuple[Command, ...]
    info: Mapping[str, str] = field(default_factory=dict)


#: The options of a learner that stops early on the dev set (``Command.options``).
EARLY_STOPPING: Mapping[str, str] = {"early_stopping": "early_stopping", "patience": "patience"}

#: The registered learners by the name model files give them, in registration order.
LEARNERS: dict[str, Learner] = {}
#: Every learner's commands by ``--algorithm`` name, in registration order.
COMMANDS: dict[str, Command] = {}


class _Estimators(Mapping[str, type]):
    """The registered estimator classes by the name model files give them: a live,
    read-only view of :data:`LEARNERS` (what :mod:`cseq.io.serialize` looks names up in)."""

    def __getitem__(self, name: str) -> type:
        return LEARNERS[name].estimator

    def __iter__(self) -> Iterator[str]:
        return iter(LEARNERS)

    def __len__(self) -> int:
        return len(LEARNERS)


#: The registered estimator classes by the name model files give them (a view of LEARNERS).
ESTIMATORS: Mapping[str, type] = _Estimators()


def register(*commands: Command, info: Mapping[str, str] | None = None) -> Callable[[T], T]:
    """Class decorator: register an estimator class under ``commands`` (and :attr:`Learner.info`).

    Model files naming the class load through it (its ``_model_state``,
    ``_model_array_names`` and ``_from_model_state``: see
    :mod:`cseq.io.serialize`); each command is one ``cseq train --algorithm``.
    A name already taken by another class raises ValueError: a model file or
    a command line must not silently mean another learner.
    """
    def add(cls: T) -> T:
        name = cls.__name__
        if name in LEARNERS and LEARNERS[name].estimator is not cls:
            raise ValueError(f"a learner named {name!r} is registered already "
                             f"({LEARNERS[name].estimator.__module__})")
        taken = [c.name for c in commands
                 if c.name in COMMANDS and COMMANDS[c.name].estimator is not cls]
        if taken:
            raise ValueError(f"--algorithm {', '.join(taken)} is registered already")
        claimed = [f"{preset!r} (by {other.name})" for c in commands for preset in c.default_for
                   for other in COMMANDS.values()
                   if preset in other.default_for and other.estimator is not cls]
        if claimed:
            raise ValueError(f"the default learner of preset {', '.join(claimed)} is "
                             "registered already")
        bound = tuple(replace(c, estimator=cls) for c in commands)
        LEARNERS[name] = Learner(cls, bound, dict(info or {}))
        COMMANDS.update((c.name, c) for c in bound)
        return cls
    return add


@contextmanager
def registered(cls: type, *commands: Command) -> Iterator[Learner]:
    """Register ``cls`` (as :func:`register`) for the ``with`` block only.

    For a learner defined by a test, which must not stay registered for the
    tests that run after it; ValueError if ``cls`` is registered already.
    """
    if cls.__name__ in LEARNERS:
        raise ValueError(f"a learner named {cls.__name__!r} is registered already")
    register(*commands)(cls)
    try:
        yield LEARNERS[cls.__name__]
    finally:
        del LEARNERS[cls.__name__]
        for c in commands:
            del COMMANDS[c.name]


#: ``cseq train``'s learner when neither ``--algorithm`` nor a preset's own choice
#: (:attr:`Command.default_for`) says: a template file, or a learner without templates.
DEFAULT_COMMAND = "crf"


def default_command(preset: str | None) -> str:
    """The ``--algorithm`` that ``cseq train`` uses with ``preset`` (a preset name, or None
    for a template file) when none is given: the command whose ``default_for`` names
    the preset, else :data:`DEFAULT_COMMAND`."""
    for name, command in COMMANDS.items():
        if preset is not None and preset in command.default_for:
            return name
    return DEFAULT_COMMAND


def command_of(estimator: Any) -> Command | None:
    """The command that trains models like ``estimator`` (its class and fixed parameters)."""
    learner = LEARNERS.get(type(estimator).__name__)
    if learner is None or learner.estimator is not type(estimator):
        return None
    params = estimator.get_params(deep=False)
    for command in learner.commands:
        if all(params.get(k) == v for k, v in command.fixed.items()):
            return command
    return None

