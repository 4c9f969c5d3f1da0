"""Training on partially labelled sequences.

A label ``None`` (packed as -1) is not known.  The CRF maximizes the
likelihood of all completions of the known labels (``log Z - log
Z_clamped``, gradient ``E[Phi] - E_clamped[Phi]``); the perceptron and the
SSVM take the best completion under the current weights as their gold path.
Everything is checked against enumeration of the completions, the gradients
against finite differences; fully labelled sequences take the old code paths.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.chain import _clamped, _crf, _chain
from cseq.learners import _crf_sgd, _ssvm
from cseq import registry
from cseq.conll import read_conllu
from cseq.exceptions import InputError, InputTypeError
from cseq.features import FeatureVocabulary
from cseq.chain.model import LinearChain
from cseq.learners.objectives import CRFObjective
from cseq.chain.sequences import Sequences

from support.budget import examples
from support.registered import commands, estimators, quick
from support.oracle import (NaivePerceptron, brute_constrained, brute_loss_augmented, kernel_tie_break,
                    sequence_emissions, split_params, trans2_of)
from support.shared_data import EWT, needs
from support.strategies import corpora

# Bench and tests hide labels the same way.
import importlib.util
from support.paths import ROOT

_spec = importlib.util.spec_from_file_location(
    "bench_partial_labels",
    ROOT / "bench" / "accuracy" / "partial_labels.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@st.composite
def partial_problems(draw, max_seqs=3, max_len=4, values="float"):
    """A small corpus, a model over every (attribute, label) pair, random weights, hidden labels."""
    X, y = draw(corpora(max_seqs=max_seqs, max_len=max_len, values=values))
    order = draw(st.sampled_from([1, 2]))
    fv = FeatureVocabulary()
    c = fv.fit_transform(X)
    names = sorted({lab for seq in y for lab in seq})
    ids = np.array([names.index(lab) for seq in y for lab in seq], dtype=np.int32)
    hide = np.array(draw(st.lists(st.booleans(), min_size=len(ids), max_size=len(ids))),
                    dtype=bool)
    labels = np.where(hide, -1, ids).astype(np.int32)
    corpus = Sequences(c.seq_ptr, c.tok_ptr, c.attr_ids, c.values, labels)
    model = LinearChain.from_corpus(corpus, fv.n_attributes, len(names), True, order=order)
    seed = draw(st.integers(0, 2**32 - 1))
    params = np.random.default_rng(seed).normal(0.0, 1.0, len(model.params))
    return corpus, model, params


def _dense(model, params, corpus, s):
    """Dense (E, T, start, end, T2) of sequence s; ``model`` has attr_ptr, attr_labels, n_state."""
    L = len(params) - model.n_state
    L = next(k for k in range(1, 64) if L in (k * k + 2 * k, k * k + 2 * k + k ** 3))
    E = sequence_emissions(params, model.attr_ptr, model.attr_labels, L, corpus, s)
    _, T, start, end = split_params(params, model.n_state, L)
    return E, T, start, end, trans2_of(params, model.n_state, L)


def _allowed(corpus, s, L):
    """The completions of sequence s's known labels as a per-position allowed mask."""
    lab = corpus.labels[corpus.seq_ptr[s]:corpus.seq_ptr[s + 1]]
    allowed = np.ones((len(lab), L), dtype=bool)
    for t, y in enumerate(lab):
        if y >= 0:
            allowed[t] = False
            allowed[t, y] = True
    return allowed


def _brute_loss(model, params, corpus, s):
    """``log Z - log Z_clamped`` of sequence s by enumeration."""
    E, T, start, end, T2 = _dense(model, params, corpus, s)
    full = brute_constrained(E, T, start, end, T2)
    clamped = brute_constrained(E, T, start, end, T2, allowed=_allowed(corpus, s,
                                                                        model.n_labels))
    return full["log_z"] - clamped["log_z"]


# -- the CRF: the partial-label likelihood and its gradient --------------------------


@given(partial_problems())
@examples(60)
def test_partial_loss_and_gradient_against_enumeration(problem):
    corpus, model, params = problem
    view = corpus.view(partial=True)
    for s in range(corpus.n_sequences):
        if corpus.lengths[s] == 0:
            continue
        loss, grad = _clamped.partial_sequence_loss_and_gradient(model.index, params, view, s)
        assert loss == pytest.approx(_brute_loss(model, params, corpus, s), rel=1e-9, abs=1e-9)
        assert loss >= -1e-9
        # Central differences along a few random directions (the loss is smooth).
        rng = np.random.default_rng(s)
        for _ in range(3):
            d = rng.normal(size=len(params))
            h = 1e-5
            fd = (_brute_loss(model, params + h * d, corpus, s)
                  - _brute_loss(model, params - h * d, corpus, s)) / (2 * h)
            assert float(grad @ d) == pytest.approx(fd, rel=1e-5, abs=1e-6)


@given(partial_problems())
@examples(30)
def test_a_fully_labelled_sequence_gives_the_usual_loss(problem):
    corpus, model, params = problem
    labels = np.where(corpus.labels < 0, 0, corpus.labels).astype(np.int32)
    full = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values, labels)
    view = full.view()
    for s in range(full.n_sequences):
        if full.lengths[s] == 0:
            continue
        a = _clamped.partial_sequence_loss_and_gradient(model.index, params, view, s)
        b = _crf.sequence_loss_and_gradient(model.index, params, view, s)
        assert a[0] == pytest.approx(b[0], rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-8, atol=1e-9)


@given(partial_problems(), st.sampled_from([1, 2]))
@examples(40)
def test_the_crf_objective_adds_the_partial_terms(problem, n_jobs):
    corpus, model, params = problem
    c2 = 0.25
    obj = CRFObjective(model, corpus, c2, n_jobs)
    value, grad = obj(params)
    want = c2 * float(params @ params)
    want_grad = 2 * c2 * params
    view = corpus.view(partial=True)
    for s in range(corpus.n_sequences):
        if corpus.lengths[s]:
            loss, g = _clamped.partial_sequence_loss_and_gradient(model.index, params, view, s)
            want += loss
            want_grad = want_grad + g
    assert value == pytest.approx(want, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-8, atol=1e-9)


def test_an_sgd_step_on_a_partial_sequence():
    """w <- (1 - eta lam) w - eta grad(loss at the decayed weights), loss = log Z - log Z_clamped."""
    X = [[["a", "b"], ["c"], ["a"], ["d"]]]
    fv = FeatureVocabulary()
    c = fv.fit_transform(X)
    corpus = Sequences(c.seq_ptr, c.tok_ptr, c.attr_ids, c.values,
                       np.array([1, -1, 0, -1], dtype=np.int32))
    for order in (1, 2):
        model = LinearChain.from_corpus(corpus, fv.n_attributes, 3, True, order=order)
        w0 = np.random.default_rng(order).normal(size=len(model.params))
        w = w0.copy()
        trainer = _crf_sgd.CRFSGDTrainer(model.index, corpus.view(partial=True), w)
        lam, t0 = 0.5, 3.0
        loss, t = trainer.epoch(np.array([0], dtype=np.int64), lam, t0, 0)
        eta = 1.0 / (lam * t0)
        decayed = (1 - eta * lam) * w0
        want_loss, grad = _clamped.partial_sequence_loss_and_gradient(
            model.index, decayed, corpus.view(partial=True), 0)
        assert t == 1 and loss == pytest.approx(want_loss, rel=1e-12)
        np.testing.assert_allclose(w, decayed - eta * grad, rtol=1e-10, atol=1e-12)


# -- the perceptron and the SSVM: the best completion as the gold path ------------------


class NaiveLatentPerceptron(NaivePerceptron):
    """The naive perceptron whose gold path is the best completion of the known labels."""

    def step(self, s: int) -> int:
        c = self.corpus
        t0, t1 = int(c.seq_ptr[s]), int(c.seq_ptr[s + 1])
        known = c.labels[t0:t1].copy()
        pred = self.decode(s)
        errors = sum(1 for g, p in zip(known, pred) if g >= 0 and g != p)
        if errors and (known < 0).any():
            E, T, start, end, T2 = _dense(self, self.weights, c, s)
            best = brute_constrained(E, T, start, end, T2,
                                     allowed=_allowed(c, s, self.L))["argmax"]
            c.labels[t0:t1] = kernel_tie_break(best)
        if not errors:
            c.labels[t0:t1] = pred  # no update: the prediction agrees with every known label
        try:
            super().step(s)
        finally:
            c.labels[t0:t1] = known
        return errors


def _mutable(corpus):
    return Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values,
                     corpus.labels.copy())


@given(partial_problems(values="dyadic"))
@examples(40)
def test_the_perceptron_trains_on_the_best_completion(problem):
    corpus, model, _ = problem
    params = _chain.AveragedParams(np.zeros(len(model.params)))
    trainer = cseq.learners._perceptron.PerceptronTrainer(model.index, corpus.view(partial=True), params)
    naive = NaiveLatentPerceptron(model.attr_ptr, model.attr_labels, model.n_labels,
                                  _mutable(corpus), order=model.order)
    order = np.arange(corpus.n_sequences, dtype=np.int64)
    for _ in range(2):
        errors = trainer.train_epoch(order)
        assert errors == sum(naive.step(s) for s in order)
        np.testing.assert_array_equal(params.w, naive.weights)
    np.testing.assert_allclose(params.averaged(), naive.averaged(), rtol=1e-12, atol=1e-12)


@given(partial_problems())
@examples(40)
def test_the_structured_hinge_of_a_partial_sequence(problem):
    """max_y [Hamming(h, y) + score(y)] - score(h), h the best completion."""
    corpus, model, params = problem
    total, violated = _ssvm.structured_hinge(model.index, params, corpus.view(partial=True))
    want, want_violated = 0.0, 0
    for s in range(corpus.n_sequences):
        if corpus.lengths[s] == 0:
            continue
        E, T, start, end, T2 = _dense(model, params, corpus, s)
        comp = brute_constrained(E, T, start, end, T2,
                                 allowed=_allowed(corpus, s, model.n_labels))
        h = kernel_tie_break(comp["argmax"])
        best, argmax = brute_loss_augmented(E, T, start, end, h, None, T2)
        want += max(0.0, best - comp["best"])
        want_violated += kernel_tie_break(argmax) != h
    assert total == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert violated == want_violated


# -- the estimators ----------------------------------------------------------------------

X = [[["w=a"], ["w=b"], ["w=c"]], [["w=a"], ["w=c"]], [["w=b"], ["w=b"]], [["w=c"]]]
Y = [["A", "B", "C"], ["A", "C"], ["B", "B"], ["C"]]
Y_PART = [["A", None, "C"], ["A", "C"], [None, "B"], [None]]

#: Settings that learn every known label back, per command; a command not named here is
#: tried with its quick settings (registered.quick).
_SETTINGS = {
    "crf": {"c2": 0.01, "max_iter": 50},
    "crf-sgd": {"c2": 0.01, "max_iter": 20, "random_state": 0},
    "perceptron": {"random_state": 0, "max_iter": 10},
    "ssvm": {"C": 10.0, "random_state": 0, "max_iter": 10},
}
#: Every registered learner that trains on partially labelled sequences, at each order it has.
PARTIAL_LEARNERS = [(name, order) for name in commands(lambda c: c.estimator._partial_labels)
                    for order in (1, 2)
                    if order == 1 or "order" in registry.COMMANDS[name].estimator._param_names]


@pytest.mark.parametrize("learner,order", PARTIAL_LEARNERS)
def test_learners_fit_partial_labels(learner, order):
    est = quick(learner, order=order, **_SETTINGS.get(learner, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cseq.ConvergenceWarning)
        est.fit(X, Y_PART)
    assert est.classes_ == ["A", "B", "C"]
    # Every known training label is predicted back.
    pred = est.predict(X)
    assert all(p == k for ps, ks in zip(pred, Y_PART) for p, k in zip(ps, ks) if k is not None)
    # The state index holds only pairs seen with a known label.
    names = est.featurizer_.attribute_names()
    pairs = {(names[a], est.classes_[est.model_.attr_labels[k]])
             for a in range(len(names))
             for k in range(est.model_.attr_ptr[a], est.model_.attr_ptr[a + 1])}
    assert ("w=b", "B") in pairs and ("w=c", "C") in pairs and ("w=b", "A") not in pairs
    # partial_fit takes them too (the online learners).
    if registry.COMMANDS[learner].resumable:
        est2 = quick(learner, order=order, **_SETTINGS.get(learner, {}))
        est2.partial_fit(X, Y_PART)
        assert est2.classes_ == ["A", "B", "C"]


def test_partial_labels_are_refused_where_not_supported():
    for cls in estimators(lambda cls: not cls._partial_labels):
        with pytest.raises(InputTypeError, match="is None"):
            cls().fit(X, Y_PART)
    est = cseq.StructuredPerceptron().fit(X, Y)
    with pytest.raises(InputTypeError, match="is None"):
        est.score(X, Y_PART)
    with pytest.raises(InputTypeError, match="is None"):
        cseq.StructuredPerceptron().fit(X, Y, X_dev=X, y_dev=Y_PART)
    with pytest.raises(InputError, match="every label is None"):
        cseq.CRF().fit(X, [[None] * len(x) for x in X])


def test_the_corpus_view_refuses_unknown_labels_unless_asked():
    c = FeatureVocabulary().fit_transform([[["a"], ["b"]]])
    part = Sequences(c.seq_ptr, c.tok_ptr, c.attr_ids, c.values, np.array([0, -1], np.int32))
    assert part.partially_labeled
    np.testing.assert_array_equal(part.unknown_sequences(), [0])
    with pytest.raises(ValueError, match="unknown labels"):
        part.view()
    part.view(partial=True)
    part.view(labels=False)
    with pytest.raises(InputError, match="-1 for an unknown"):
        Sequences(c.seq_ptr, c.tok_ptr, c.attr_ids, c.values, np.array([0, -2], np.int32))


def test_state_index_skips_unknown_tokens():
    c = FeatureVocabulary().fit_transform([[["a", "b"], ["b", "c"], ["c"]]])
    labels = np.array([1, -1, 0], np.int32)
    ptr, lab = _chain.build_state_index(c.tok_ptr, c.attr_ids, labels, 3, 2)
    np.testing.assert_array_equal(ptr, [0, 1, 2, 3])
    np.testing.assert_array_equal(lab, [1, 1, 0])


# -- EWT: hiding labels costs less than dropping the sentences ---------------------------


@pytest.mark.slow
@needs(EWT / "en_ewt-ud-train.conllu", EWT / "en_ewt-ud-dev.conllu")
@pytest.mark.parametrize("learner", ["perceptron", "crf-sgd"])
def test_ewt_hiding_30_percent_of_the_labels_beats_dropping_the_sentences(learner):
    """The acceptance test (first 1,000 training sentences, the first 500 dev sentences).

    ``dropped`` drops every sentence that had a hidden label (the others
    stay whole).  ``python bench/accuracy/partial_labels.py`` prints the figures on
    more data.
    """
    X_tr, y_tr = read_conllu(EWT / "en_ewt-ud-train.conllu")
    X_dev, y_dev = read_conllu(EWT / "en_ewt-ud-dev.conllu")
    make = {"perceptron": lambda: cseq.StructuredPerceptron(
                max_iter=5, random_state=0, features=cseq.templates.TemplateFeaturizer("pos")),
            "crf-sgd": lambda: cseq.CRF(
                algorithm="sgd", c2=0.1, max_iter=5, random_state=0,
                features=cseq.templates.TemplateFeaturizer("pos"))}[learner]
    r = bench.compare(make, X_tr[:1000], y_tr[:1000], X_dev[:500], y_dev[:500], 0.3, 0)
    assert 0.27 < r["hidden_tokens"] / r["tokens"] < 0.33
    assert r["partial"] > r["dropped"] + 0.2
    assert r["partial"] > r["full"] - 0.03


# -- the command line ---------------------------------------------------------------------


def test_cseq_train_unknown_label(tmp_path):
    from support.cli_run import TRAIN, run
    text = TRAIN.replace("cat NN I-NP", "cat NN _", 1).replace("barks VBZ B-VP\n. . O\n\nA",
                                                              "barks VBZ _\n. . O\n\nA", 1)
    assert text.count(" _\n") == 2
    (tmp_path / "train.txt").write_text(text)
    out = run("train", tmp_path / "train.txt", "--algorithm", "perceptron", "--template",
              "chunk", "--unknown-label", "_", "-o", tmp_path / "m.cseq", "--quiet")
    assert out.returncode == 0, out.stderr
    est = cseq.load(tmp_path / "m.cseq")
    assert "_" not in est.classes_ and est.classes_ == ["B-NP", "B-VP", "I-NP", "O"]
    # Without the option "_" is a label; the HMM refuses unknown labels.
    out = run("train", tmp_path / "train.txt", "--algorithm", "hmm", "--unknown-label", "_",
              "-o", tmp_path / "h.cseq")
    assert out.returncode != 0 and "is None" in out.stderr
