"""A new learner is its class and one registration line.

:class:`CountTagger` is defined here alone: a subclass of the estimator base
with a trivial trainer (weights from counts), registered in one line
(:func:`cseq.registry.register`).  With nothing else changed it trains and
tags from the command line (in this process: :func:`cseq.cli.main`), saves,
loads and pickles, gives n-best lists and explanations, is listed by ``cseq
train --help``, and is picked up by every learner-parametrized test: those
read :mod:`cseq.registry` when they are collected (``tests/support/registered.py``),
and :func:`test_every_learner_parametrized_test_picks_it_up` runs them again
in a pytest subprocess where this file is a plugin (``-p test_new_learner``)
whose :func:`pytest_configure` registers the learner first.

Here it is registered for each test only (:func:`cseq.registry.registered`),
so that the tests that run after this file see the built-in learners alone.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cseq
from cseq import registry
from cseq.io import serialize
from cseq.learners.base import ChainEstimator, Number
from cseq.registry import Command

from support.paths import TESTS
from support.cli_run import TRAIN, run_in_process

HERE = Path(__file__).resolve().parent


class CountTagger(ChainEstimator):
    """Weights from counts: the relative frequency of each label given each
    attribute, and the log relative frequency of each label given the previous
    label, at the start and at the end (smoothed by ``alpha``).  Each iteration counts again (the same result): it
    exists so that the iterative learners' tests (``verbose``, ``max_iter``)
    apply to it too."""

    _parameter_constraints = {"alpha": Number(0.0, positive=True, high=1e6)}

    def __init__(self, *, alpha: float = 0.1, max_iter: int = 1, all_states: bool = False,
                 features: Any = None, verbose: bool = False) -> None:
        """Store the hyperparameters (the base does)."""

    def _train(self, corpus, model, dev, callback):
        L, a = model.n_labels, float(self.alpha)
        for iteration in range(1, int(self.max_iter) + 1):
            clock = time.perf_counter()
            labels = corpus.labels.astype(np.int64)
            tokens = np.repeat(np.arange(len(labels)), np.diff(corpus.tok_ptr))
            keys = corpus.attr_ids.astype(np.int64) * L + labels[tokens]
            state_keys = np.repeat(np.arange(model.n_attributes), np.diff(model.attr_ptr)) * L \
                + model.attr_labels
            pair = np.zeros(model.n_state)
            np.add.at(pair, np.searchsorted(state_keys, keys), 1.0)
            attr_of_state = state_keys // L
            per_attr = np.bincount(attr_of_state, weights=pair, minlength=model.n_attributes)
            # Relative frequencies, not their logarithms: the pairs the model leaves
            # out (all_states=False) weigh 0, less than every pair it keeps.
            model.state_weights[:] = pair / np.maximum(per_attr[attr_of_state], 1.0)
            starts, ends = corpus.seq_ptr[:-1], corpus.seq_ptr[1:]
            firsts, lasts = starts[ends > starts], ends[ends > starts] - 1
            inner = np.ones(len(labels), dtype=bool)
            inner[lasts] = False
            pos = np.flatnonzero(inner)
            bigram = np.bincount(labels[pos] * L + labels[pos + 1], minlength=L * L)
            bigram = bigram.reshape(L, L).astype(float)
            model.transitions[:] = np.log((bigram + a) / (bigram.sum(1, keepdims=True) + a * L))
            model.start[:] = np.log((np.bincount(labels[firsts], minlength=L) + a)
                                    / (len(firsts) + a * L))
            model.end[:] = np.log((np.bincount(labels[lasts], minlength=L) + a)
                                  / (len(lasts) + a * L))
            record = {"iteration": iteration, "seconds": time.perf_counter() - clock}
            if dev is not None:
                record["dev_accuracy"] = dev(model)
            self.n_iter_ = iteration
            if self._report(record, callback):
                break


COUNTS = Command("counts", 1, description="weights from counts (a learner the tests define)",
                 quick={"max_iter": 2})


def pytest_configure(config):
    """As a plugin (``-p test_new_learner``): register the learner before collection."""
    registry.register(COUNTS)(CountTagger)


@pytest.fixture()
def counts():
    with registry.registered(CountTagger, COUNTS) as learner:
        yield learner


X = [[["w=the"], ["w=dog"], ["w=barks"]], [["w=a"], ["w=cat"]], [["w=the"], ["w=cat"]]]
Y = [["D", "N", "V"], ["D", "N"], ["D", "N"]]


def test_it_trains_and_tags_from_the_command_line(counts, tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(TRAIN, encoding="utf-8")
    model, out = tmp_path / "m.cseq", tmp_path / "out.txt"
    r = run_in_process("train", train, "--algorithm", "counts", "--template", "chunk",
                       "--max-iter", "2", "-o", model, "--quiet")
    assert r.returncode == 0, r.stderr
    assert "trained CountTagger" in r.stdout
    r = run_in_process("tag", model, train, "--labeled", "-o", out)
    assert r.returncode == 0, r.stderr
    tagged = [line.split()[-1] for line in out.read_text().splitlines() if line]
    gold = [line.split()[-1] for line in TRAIN.splitlines() if line]
    assert tagged == gold
    r = run_in_process("info", model)
    assert r.returncode == 0 and r.stdout.startswith("learner: counts (CountTagger)\n")
    r = run_in_process("train", train, "--algorithm", "counts", "--seed", "1", "-o", model)
    assert r.returncode == 1 and "--seed does not apply to --algorithm counts" in r.stderr


def test_it_appears_in_train_help(counts):
    r = run_in_process("train", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "counts: weights from counts (a learner the tests define)" in text
    assert "1 for counts" in text  # its default iterations


def test_it_saves_loads_pickles_and_explains(counts, tmp_path):
    est = CountTagger().fit(X, Y)
    assert est.predict(X) == Y
    est.save(tmp_path / "m.cseq")
    for back in (cseq.load(tmp_path / "m.cseq"), pickle.loads(pickle.dumps(est))):
        assert type(back) is CountTagger and back.get_params() == est.get_params()
        np.testing.assert_array_equal(back.model_.params, est.model_.params)
        assert back.predict(X) == Y
    nbest = est.predict_nbest(X[:1], k=3)[0]
    assert len(nbest.labels) == 3 and nbest.labels[0] == Y[0]
    assert nbest.scores[0] >= nbest.scores[1] >= nbest.scores[2]
    explanation = est.explain(X[0])
    assert explanation.labels == Y[0]
    # Its decoder maximizes the sum of its weights: the tokens' scores add up to the best.
    assert explanation.score == pytest.approx(nbest.scores[0])


def test_its_parameters_are_its_signatures_and_checked(counts):
    assert CountTagger._param_names == ("alpha", "max_iter", "all_states", "features", "verbose")
    assert CountTagger(alpha=0.5).get_params(deep=False)["alpha"] == 0.5
    with pytest.raises(cseq.InputError, match="alpha must be positive"):
        CountTagger(alpha=0.0).fit(X, Y)
    with pytest.raises(cseq.InputError, match="max_iter must be between 1"):
        CountTagger(max_iter=0).fit(X, Y)
    with pytest.raises(cseq.InputTypeError, match="did you mean 'alpha'"):
        CountTagger(alpah=1.0)


def test_it_is_registered_for_the_block_only():
    assert "counts" not in registry.COMMANDS and "CountTagger" not in registry.LEARNERS
    with registry.registered(CountTagger, COUNTS):
        assert registry.COMMANDS["counts"].estimator is CountTagger
        assert serialize.ESTIMATORS["CountTagger"] is CountTagger  # model files read it
        with pytest.raises(ValueError, match="registered already"):
            registry.register(Command("counts", 1))(type("Other", (CountTagger,), {}))
    assert "counts" not in registry.COMMANDS and "CountTagger" not in serialize.ESTIMATORS
    est = CountTagger().fit(X, Y)  # trains without being registered, but has no file format
    with pytest.raises(TypeError, match="cannot serialise CountTagger"):
        est.to_bytes()


#: The test files whose tests are parametrized by the registry's learners (and
#: take the learner's name into their ids), and the tests that go over every
#: registered learner inside one test, by file.
_PARAMETRIZED = ["learners/test_estimators", "learners/test_params", "cli/test_learners",
                 "chain/test_decoding", "learners/test_determinism", "apps/test_report",
                 "chain/test_sentence_at_a_time"]
_OVER_EVERY_LEARNER = {
    "package/test_fuzz": "test_every_learner_and_training_state_is_seeded",
    "learners/test_partial_labels": "test_partial_labels_are_refused_where_not_supported",
    "learners/test_partial_fit": "test_errors_are_clear",
}


@pytest.mark.slow
def test_every_learner_parametrized_test_picks_it_up(tmp_path):
    report = tmp_path / "report.xml"
    selected = " or ".join(["counts", "CountTagger", *_OVER_EVERY_LEARNER.values()])
    files = [str(TESTS / f"{name}.py") for name in [*_PARAMETRIZED, *_OVER_EVERY_LEARNER]]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(TESTS), str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])]))
    # Not from the checkout's root: `python -m pytest` puts its working directory
    # first on sys.path, and an unpacked sdist's `cseq/` (no compiled modules)
    # would then shadow the installed package.
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "test_new_learner",
                        "-p", "no:cacheprovider", "-q", "-k", selected,
                        f"--junit-xml={report}", *files],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    ran: dict[str, list[str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        assert case.find("failure") is None and case.find("error") is None, case.get("name")
        if case.find("skipped") is None:
            ran.setdefault(case.get("classname").rsplit(".", 1)[-1], []).append(case.get("name"))
    # Each parametrized file ran the new learner under its own id (the lean test
    # only where its corpus is); each test over every learner ran and passed.
    for path in _PARAMETRIZED:
        module = path.rsplit("/", 1)[-1]
        if module == "test_sentence_at_a_time" and module not in ran:
            continue
        assert any("counts" in n or "CountTagger" in n for n in ran.get(module, [])), path
    for path, test in _OVER_EVERY_LEARNER.items():
        assert test in ran.get(path.rsplit("/", 1)[-1], []), path
    assert sum(len(names) for names in ran.values()) >= 40
