"""One fit frame, and the protocol a learner declares.

``fit`` and ``cseq.distributed.fit`` run the same frame
(:func:`cseq.learners.frame.run`); every registered learner satisfies
:class:`cseq.learners.protocol.Learner`; the shared layers (the frame, the
loops, ``partial_fit``, the Dask layer) ask a learner through that protocol,
never what class it is.
"""

from __future__ import annotations

import pathlib
import re

import pytest

import cseq
from cseq.exceptions import InputError, InputTypeError
from cseq.learners import frame
from cseq.learners.protocol import Learner, PartialLearner, protocol_hooks
from cseq.io.serialize import ESTIMATORS

X = [[[f"w={w}"] for w in s] for s in (["a", "b", "a"], ["b", "c"], ["a", "c", "b", "a"])]
Y = [["N", "V", "N"], ["V", "N"], ["N", "N", "V", "N"]]

LEARNER_CLASSES = sorted(ESTIMATORS.values(), key=lambda cls: cls.__name__)
PACKAGE = pathlib.Path(cseq.__file__).parent


@pytest.mark.parametrize("cls", LEARNER_CLASSES, ids=lambda cls: cls.__name__)
def test_every_registered_learner_declares_the_protocol(cls):
    hooks, partial = protocol_hooks(Learner), protocol_hooks(PartialLearner)
    assert {"_train", "_finish", "_report", "_distributed", "_model_class"} <= hooks < partial
    assert not [name for name in hooks if not hasattr(cls, name)]
    if hasattr(cls, "partial_fit"):
        assert not [name for name in partial if not hasattr(cls, name)]
    est = cls()
    assert est._iterations() == est.get_params().get("max_iter", 1)
    assert est._chain_order() == est.get_params().get("order", 1)


@pytest.mark.parametrize("est", [cls() for cls in LEARNER_CLASSES]
                         + [cseq.CRF(algorithm="sgd", eta0=0.1)],
                         ids=lambda est: repr(est)[:40])
def test_can_partial_fit_says_what_partial_fit_does(est):
    """What the command line asks before ``--resumable`` (instead of hasattr and the
    CRF's algorithm)."""
    if est._can_partial_fit():
        est.partial_fit(X, Y)
        assert est.n_iter_ == 1
    elif hasattr(est, "partial_fit"):
        with pytest.raises(InputError, match="partial_fit needs"):
            est.partial_fit(X, Y)


def _code(path: pathlib.Path) -> str:
    """The file's code without its docstrings and comments (prose may name learners)."""
    text = re.sub(r'"""(?:.|\n)*?"""', "", path.read_text())
    return re.sub(r"#.*", "", text)


@pytest.mark.parametrize("name", ["distributed/__init__.py", "distributed/shards.py",
                                  "distributed/mixing.py", "learners/partial.py", "learners/frame.py",
                                  "learners/loops.py", "learners/protocol.py"])
def test_the_shared_layers_never_ask_a_learners_class(name):
    code = _code(PACKAGE / name)
    learners = "|".join(cls.__name__ for cls in LEARNER_CLASSES)
    modules = "|".join(cls.__module__.rsplit(".", 1)[-1] for cls in LEARNER_CLASSES)
    assert not re.search(rf"isinstance\([^)]*\b({learners})\b", code)
    assert not re.search(rf"^\s*(from|import) cseq\.({modules})\b", code, re.M)
    assert not re.search(r"\b(hasattr|getattr)\((est|self|estimator)\b", code)
    assert "_param_names" not in code


def test_fit_runs_the_frame(monkeypatch):
    class Ran(Exception):
        pass

    def run(est, prepare, train, X_dev, y_dev, callback, **kwargs):
        featurizer, classes, model, corpus = prepare()
        assert classes == ["N", "V"] and corpus.n_sequences == 3
        raise Ran

    monkeypatch.setattr(frame, "run", run)
    with pytest.raises(Ran):
        cseq.StructuredPerceptron().fit(X, Y)


def test_distributed_fit_runs_the_same_frame(monkeypatch):
    """The Dask layer supplies its training function to the one frame (no cluster needed:
    the frame is replaced before anything reaches the client)."""
    pytest.importorskip("distributed")
    from unittest import mock

    from distributed import Client

    import cseq.distributed as cd

    class Ran(Exception):
        pass

    seen = {}

    def run(est, prepare, train, X_dev, y_dev, callback, *, check, context):
        seen["est"] = est
        check()
        raise Ran

    monkeypatch.setattr(frame, "run", run)
    client = mock.create_autospec(Client, instance=True)
    est = cseq.CRF()
    with pytest.raises(Ran):
        cd.fit(est, X, Y, client=client)
    assert seen["est"] is est
    # The learner's own refusal runs inside the frame, after validation.
    with pytest.raises(InputError, match="algorithm='lbfgs' only"):
        cd.fit(cseq.CRF(algorithm="sgd"), X, Y, client=client)


def test_distributed_fit_asks_the_learner_not_its_class():
    """A CRF that declares no Dask strategy is refused, whatever its class (an
    ``isinstance(est, CRF)`` took it)."""
    pytest.importorskip("distributed")
    import cseq.distributed as cd

    class LocalCRF(cseq.CRF):
        _distributed = None

    with pytest.raises(InputTypeError, match="a CRF, a StructuredPerceptron or a "
                                             "StructuredSVM, not LocalCRF"):
        cd.fit(LocalCRF(), X, Y, client=None)
