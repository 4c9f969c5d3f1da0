"""A learner's hyperparameters: read from its ``__init__`` signature, checked by declared constraints.

scikit-learn's conventions: the hyperparameters are the keyword arguments of
the constructor (``BaseEstimator._get_param_names``), stored unchanged as
attributes of the same names (so ``clone`` works), listed by ``get_params``
and set by ``set_params``; each is checked when a fit starts by the
constraint its learner declares (``_parameter_constraints``, as scikit-learn's
estimators declare theirs) or, for the ones every learner means alike, by
:data:`COMMON_CONSTRAINTS`.  :class:`Parameters` is the part of the
estimator base (:class:`cseq.learners.base.ChainEstimator`) that does it; a learner
writes its signature and its constraints, nothing else.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

import numpy as np

from cseq.exceptions import InputError, InputTypeError
from cseq._core.threads import resolve_n_jobs
from cseq.chain.model import check_order

__all__ = ["COMMON_CONSTRAINTS", "Constraint", "MAX_REGULARIZATION", "Number", "OneOf",
           "Parameters", "check_flag", "check_keywords", "check_number", "param_names",
           "plain_params"]


#: Largest regularisation weight (``c1``, ``c2``, the SSVM's ``C``).  Beyond it
#: the objective leaves float64 for ordinary data: the SSVM's loss grows as
#: ``C**2`` (``C = 1e155`` gave an infinite loss), ``2 * c2`` overflows near
#: 1e308.  At 1e100 the optimum is already all but 0 (``c1``, ``c2``) or the
#: hard-margin one (``C``), so nothing is lost.
MAX_REGULARIZATION = 1e100


def check_number(name: str, value: Any, *, low: float, integer: bool = False,
                 high: float | None = None) -> None:
    """Raise InputError unless ``value`` is a finite number (an int if asked) >= ``low``.

    ``high`` is an upper bound for a float (an int's is ``2**31 - 1``).

    NumPy scalars (``np.int64``, ``np.float32``: what ``np.arange`` and
    ``np.linspace`` grids hold) pass; the estimator keeps the object it was
    given (scikit-learn's ``clone`` requires it) and the model file holds
    the Python number it equals (:func:`plain_params`).
    """
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise InputError(f"{name} must be {'an int' if integer else 'a number'}, got {value!r}")
    # Compared as a Python number: a float32 compared with 1e100 would be
    # cast to float32 (NumPy 2's rules) and overflow.
    number = value.item() if isinstance(value, np.generic) else value
    if integer:
        if not low <= number <= 2**31 - 1:
            raise InputError(f"{name} must be between {low} and 2**31 - 1, got {value!r}")
    elif not low <= number <= sys.float_info.max:
        # A chained comparison, not math.isfinite: exact for an int of any
        # size (math.isfinite(10**400) raises OverflowError), false for NaN.
        raise InputError(f"{name} must be finite and >= {low}, got {value!r}")
    elif high is not None and number > high:
        raise InputError(f"{name} must be at most {high:g}, got {value!r}")


def check_flag(name: str, value: Any) -> None:
    """Raise InputError unless ``value`` is a bool or a NumPy bool.

    Not the truth of any object: ``average="False"`` would train as True.
    Not 0 or 1 either, as scikit-learn's ``"boolean"`` constraint: a flag
    spelled as a number is more likely a slip (an ``n_jobs`` or
    ``max_iter`` in the wrong place) than a choice, and ``[False, True]``
    is the grid that means it.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r}")


#: A hyperparameter's constraint: called with the parameter's name and value,
#: it raises InputError (or InputTypeError) naming the parameter when the value
#: is bad.  None: no check here (``features`` is checked when a fit makes the
#: featurizer, :meth:`ChainEstimator._new_featurizer`).
Constraint = Callable[[str, Any], None] | None


@dataclass(frozen=True)
class Number:
    """Constraint: a finite number >= ``low`` (an int if ``integer``), at most ``high``.

    ``positive`` excludes 0 as well (a weight that divides or scales a step);
    ``optional`` lets None through (a default chosen at fit time).  The checks
    are :func:`check_number`'s.
    """

    low: float
    integer: bool = False
    high: float | None = None
    positive: bool = False
    optional: bool = False

    def __call__(self, name: str, value: Any) -> None:
        if value is None and self.optional:
            return
        check_number(name, value, low=self.low, integer=self.integer, high=self.high)
        if self.positive and not value > 0:
            raise InputError(f"{name} must be positive, got {value!r}")


@dataclass(frozen=True)
class OneOf:
    """Constraint: one of the strings ``choices``."""

    choices: tuple[str, ...]

    def __call__(self, name: str, value: Any) -> None:
        if not (isinstance(value, str) and value in self.choices):
            raise InputError(f"{name} must be {' or '.join(map(repr, self.choices))}, "
                             f"got {value!r}")


def _order(name: str, value: Any) -> None:
    check_order(value)


def _n_jobs(name: str, value: Any) -> None:
    resolve_n_jobs(value)


#: The constraints of the hyperparameters that mean the same in every learner
#: that has them; a learner's ``_parameter_constraints`` adds its own (and may
#: override one of these).
COMMON_CONSTRAINTS: dict[str, Constraint] = {
    **dict.fromkeys(("all_states", "average", "early_stopping", "error_sensitive", "shuffle",
                     "verbose"), check_flag),
    "max_iter": Number(1, integer=True),
    "patience": Number(1, integer=True),
    "period": Number(1, integer=True),
    "tol": Number(0.0),
    "random_state": Number(0, integer=True, optional=True),
    "order": _order,
    "n_jobs": _n_jobs,
    "features": None,
}


def param_names(init: Callable[..., None]) -> tuple[str, ...]:
    """The hyperparameters of an estimator whose ``__init__`` is ``init``, in signature order.

    scikit-learn's ``BaseEstimator._get_param_names``: every named parameter
    but ``self`` (``functools.wraps`` makes a wrapper's signature its
    original's).
    """
    return tuple(p.name for p in inspect.signature(init).parameters.values()
                 if p.name != "self" and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                    inspect.Parameter.KEYWORD_ONLY))


def plain_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each NumPy scalar replaced by the Python bool, int or float it equals.

    What a model file's JSON header can hold; validation has checked the
    values, so the conversion is exact (a float32 widens to the float64 it
    equals, the value training used).
    """
    return {k: v.item() if isinstance(v, np.generic) else v for k, v in params.items()}


#: sklearn-crfsuite's parameter names that cseq spells otherwise, and what to
#: write instead (None: cseq has no such option because it always does it).
#: The most common stumbling block of people porting from it.
_SKLEARN_CRFSUITE_NAMES: dict[str, str | None] = {
    "max_iterations": "max_iter",
    "all_possible_states": "all_states",
    "all_possible_transitions": None,
    "delta": "tol",
}


def _param_hint(name: str, known: Sequence[str]) -> str:
    """What to say after "no parameter ``name``": the nearest known name, or the list.

    sklearn-crfsuite's spellings get their cseq equivalent (when ``known``
    has it) and a pointer to :mod:`cseq.compat.sklearn_crfsuite`; any other
    name gets its closest match (:func:`difflib.get_close_matches`).
    """
    if name in _SKLEARN_CRFSUITE_NAMES:
        target = _SKLEARN_CRFSUITE_NAMES[name]
        compat = ("or use cseq.compat.sklearn_crfsuite.CRF, which takes sklearn-crfsuite's "
                  "parameters as they are")
        if target is None:
            return f": cseq always learns every transition, so leave {name} out ({compat})"
        if target in known:
            return (f"; did you mean {target!r}? (cseq's name for sklearn-crfsuite's {name}; "
                    f"{compat})")
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; the parameters are {', '.join(known)}"


def check_keywords(init: Callable[..., None], *, store: bool = False) -> Callable[..., None]:
    """``init`` (an estimator's ``__init__``), refusing an unknown keyword with a hint.

    Python's own error for ``CRF(max_iterations=100)`` is a bare TypeError;
    this one is an :class:`~cseq.exceptions.InputTypeError` (still a
    TypeError) naming the nearest parameter (:func:`_param_hint`).
    ``functools.wraps`` keeps the signature visible to :func:`inspect.signature`
    (scikit-learn's ``clone`` and parameter listing read it).  With ``store``,
    every parameter is set as the attribute of its name, the object given
    (scikit-learn's convention), before ``init`` runs: a learner's
    ``__init__`` is then its signature alone.  An ``init`` that takes
    ``**kwargs`` is returned as it is.
    """
    signature = inspect.signature(init)
    if getattr(init, "_checks_keywords", False) or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return init
    known = param_names(init)
    accepted = frozenset(known)

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        for name in kwargs:
            if name not in accepted:
                raise InputTypeError(f"{type(self).__name__}() got an unexpected keyword "
                                     f"argument {name!r}{_param_hint(name, known)}")
        if store:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            for name in known:
                setattr(self, name, bound.arguments[name])
        init(self, *args, **kwargs)

    checked._checks_keywords = True  # type: ignore[attr-defined]
    return checked


class Parameters:
    """The hyperparameters of an estimator (the base of :class:`~cseq.learners.base.ChainEstimator`).

    A subclass names its hyperparameters in its ``__init__`` signature
    (keyword-only; its body may be empty: the arguments are stored as the
    attributes of their names) and declares a constraint for each one not in
    :data:`COMMON_CONSTRAINTS` in ``_parameter_constraints``; values valid
    alone but not together are refused by :meth:`_check_params_together`.
    """

    #: The hyperparameters, in signature order: read from ``__init__`` when
    #: the class is made (:meth:`__init_subclass__`), never written by hand.
    _param_names: tuple[str, ...] = ()
    #: The learner's own hyperparameter constraints (see :data:`Constraint`),
    #: beside :data:`COMMON_CONSTRAINTS`; those of its base classes hold too.
    _parameter_constraints: dict[str, Constraint] = {}
    #: The hyperparameters' constraints, merged when the class is made.
    _constraints: MappingProxyType[str, Constraint] = MappingProxyType({})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every learner's constructor names the nearest parameter for an
        # unknown keyword and stores its arguments (check_keywords), and its
        # parameters are read from the signature, each with its constraint,
        # without each learner asking.
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = check_keywords(  # type: ignore[method-assign]
                cls.__dict__["__init__"], store=True)
        names = param_names(cls.__init__)
        if any(p.kind is inspect.Parameter.VAR_KEYWORD
               for p in inspect.signature(cls.__init__).parameters.values()):
            # A subclass's ``**kwargs`` passes its base class's parameters on.
            names += tuple(n for n in super(cls, cls)._param_names if n not in names)
        cls._param_names = names
        declared: dict[str, Constraint] = dict(COMMON_CONSTRAINTS)
        for klass in reversed(cls.__mro__):
            declared.update(klass.__dict__.get("_parameter_constraints", {}))
        # A parameter without a constraint is not checked (tests/learners/test_params.py
        # holds every registered learner to a constraint for each of its parameters).
        cls._constraints = MappingProxyType({name: declared[name] for name in names
                                             if name in declared})

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Hyperparameters as a dict (scikit-learn convention).

        With ``deep``, the parameters of a featurizer that has
        ``get_params`` come too, as ``features__<name>`` (e.g.
        ``features__min_freq``), so that ``GridSearchCV`` can tune them.
        """
        params = {name: getattr(self, name) for name in self._param_names}
        if deep:
            for name, value in list(params.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    params.update((f"{name}__{k}", v) for k, v in value.get_params().items())
        return params

    def set_params(self, **params: Any) -> Self:
        """Set hyperparameters, ``features__<name>`` for the featurizer's; returns self.

        Unknown names raise InputError naming the nearest parameter.
        """
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, nest, sub = key.partition("__")
            if name not in self._param_names:
                raise InputError(f"{type(self).__name__} has no parameter {name!r}"
                                 f"{_param_hint(name, self._param_names)}")
            if nest:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub in nested.items():
            target = getattr(self, name)
            if not hasattr(target, "set_params"):
                raise InputError(f"{type(self).__name__}.{name} is {target!r}, which has no "
                                 f"parameters to set ({', '.join(name + '__' + k for k in sub)})")
            target.set_params(**sub)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({args})"

    def _validate_params(self) -> None:
        """Raise InputError for a bad hyperparameter: each one's constraint, in
        signature order, then :meth:`_check_params_together`."""
        for name, constraint in self._constraints.items():
            if constraint is not None:
                constraint(name, getattr(self, name))
        self._check_params_together()

    def _check_params_together(self) -> None:
        """Raise InputError for values that are valid alone but not together
        (e.g. the CRF's SGD with L1); called after every parameter passed its
        own constraint."""
