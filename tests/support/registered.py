"""The learners the tests parametrize over, read from :mod:`cseq.registry` at collection time.

So a learner registered in one line beside its class is in every learner-parametrized
test with no test file changed (``tests/learners/test_new_learner.py`` proves it with a learner
that only the test defines).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cseq  # noqa: F401  (registers the built-in learners)
from cseq import registry


def commands(have: Callable[[registry.Command], bool] = lambda command: True) -> list[str]:
    """The ``--algorithm`` names of the registered commands that ``have``, in registration order."""
    return [name for name, command in registry.COMMANDS.items() if have(command)]


def estimators(have: Callable[[type], bool] = lambda cls: True) -> list[type]:
    """The registered estimator classes that ``have``, in registration order."""
    return [learner.estimator for learner in registry.LEARNERS.values()
            if have(learner.estimator)]


def takes(*names: str) -> Callable[[type], bool]:
    """A test of an estimator class: whether it has every hyperparameter of ``names``."""
    return lambda cls: set(names) <= set(cls._param_names)


def quick(name: str, **params: Any) -> Any:
    """A new estimator of command ``name`` with its quick hyperparameters and ``params``
    (those of ``params`` that it takes: e.g. ``random_state`` where it shuffles)."""
    command = registry.COMMANDS[name]
    return command.quick_estimator(**{k: v for k, v in params.items()
                                      if k in command.estimator._param_names})


def reads_words(cls: type) -> bool:
    """Whether the estimator class reads words (``X``: lists of str), not feature lists:
    its commands read no templates (the HMM)."""
    return not all(command.templates for command in registry.LEARNERS[cls.__name__].commands)
