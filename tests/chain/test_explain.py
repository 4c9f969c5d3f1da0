"""Explanations: max-marginals against enumeration; explain's
terms against a brute-force search over every labeling that reads the weights
by name (top_features, transitions_); top_features and transitions_ against
the model's arrays; the learners explain refuses."""

from __future__ import annotations

import itertools
import math
import random
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.explain import max_marginals
from cseq.templates import TemplateFeaturizer

from support.budget import examples
from support.oracle import all_path_scores
from support.strategies import chains


@examples(150)
@given(chains(max_n=5, max_labels=3), st.booleans(), st.integers(0, 2**32 - 1))
def test_max_marginals_are_the_best_score_with_each_label_fixed(chain, order2, seed):
    E, T, start, end = chain
    L = E.shape[1]
    st_ = np.zeros(L) if start is None else start
    en = np.zeros(L) if end is None else end
    T2 = np.random.default_rng(seed).normal(size=(L, L, L)) * 3 if order2 else None
    mm = max_marginals(E, T, st_, en, T2)
    paths, scores = all_path_scores(E, T, st_, en, T2)
    for t in range(E.shape[0]):
        for y in range(L):
            want = scores[paths[:, t] == y].max()
            assert mm[t, y] == pytest.approx(want, rel=1e-9, abs=1e-9 * max(1.0, abs(want)))


def _toy(seed: int, n_seq: int = 40):
    """Sequences of feature dicts with real values, labelled by a noisy rule."""
    rng = random.Random(seed)
    words = ["the", "a", "dog", "cat", "runs", "sleeps", "fast", "."]
    rule = {"the": "D", "a": "D", "dog": "N", "cat": "N", "runs": "V", "sleeps": "V",
            "fast": "A", ".": "P"}
    X, y = [], []
    for _ in range(n_seq):
        sent = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        X.append([{f"w={w}": 1.0, "len": len(w) / 3.0, f"first={w[0]}": 0.5} for w in sent])
        y.append([rule[w] if rng.random() > 0.1 else rng.choice("DNVAP") for w in sent])
    return X, y


def _brute_best(est, x):
    """Best labeling and its score, reading the weights only by name."""
    weights = {(name, label): w for label, feats in est.top_features(k=10**9).items()
               for name, w in feats}
    trans = est.transitions_
    classes = [str(c) for c in est.classes_]
    ids = {c: i for i, c in enumerate(classes)}
    t2 = est.model_.trans2
    start = dict(zip(classes, est.model_.start.tolist()))
    end = dict(zip(classes, est.model_.end.tolist()))

    def score(path):
        s = start[path[0]] + end[path[-1]]
        for t, tok in enumerate(x):
            # feature values are stored as float32 (cseq.Sequences.values)
            s += sum(float(np.float32(v)) * weights.get((name, path[t]), 0.0)
                     for name, v in tok.items())
            if t:
                s += trans[path[t - 1]][path[t]]
            if t >= 2 and t2 is not None:
                s += t2[ids[path[t - 2]], ids[path[t - 1]], ids[path[t]]]
        return s
    scored = [(score(p), p) for p in itertools.product(classes, repeat=len(x))]
    return scored


@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
@pytest.mark.parametrize("make", [
    lambda: cseq.StructuredPerceptron(max_iter=5, random_state=0),
    lambda: cseq.CRF(c2=0.1, max_iter=30),
    lambda: cseq.StructuredSVM(C=1.0, max_iter=5, random_state=0),
    lambda: cseq.StructuredPerceptron(max_iter=5, random_state=0, order=2),
    lambda: cseq.CRF(c2=0.1, max_iter=30, order=2),
    lambda: cseq.PassiveAggressive(max_iter=5, random_state=0),
    lambda: cseq.AROW(max_iter=5, random_state=0),
], ids=["perceptron", "crf", "ssvm", "perceptron-order2", "crf-order2", "pa", "arow"])
def test_explain_terms_add_up_to_the_best_score(make):
    X, y = _toy(0)
    est = make().fit(X, y)
    for x in _toy(1, n_seq=8)[0]:
        ex = est.explain(x, k=100)
        scored = _brute_best(est, x)
        best_score, best_path = max(scored)
        assert ex.labels == est.predict([x])[0] == list(best_path)
        assert ex.score == pytest.approx(best_score, rel=1e-9, abs=1e-9)
        assert math.fsum(t.score for t in ex.tokens) == pytest.approx(ex.score, rel=1e-9,
                                                                       abs=1e-9)
        for t, tok in enumerate(ex.tokens):
            # every feature of the token is listed (k=100), and they make up its state score
            assert sorted(f.name for f in tok.features) == sorted(x[t])
            assert math.fsum(f.contribution for f in tok.features) == pytest.approx(
                tok.state, rel=1e-6, abs=1e-6)
            assert tok.features == sorted(tok.features, key=lambda f: -abs(f.contribution))
            assert (tok.start != 0.0) <= (t == 0) and (tok.end != 0.0) <= (t == len(x) - 1)
            assert (tok.transition2 != 0.0) <= (t >= 2 and est.model_.order == 2)
            # the margin: best score minus the best with another label at t
            others = max(s for s, p in scored if p[t] != best_path[t])
            assert tok.margin == pytest.approx(best_score - others, rel=1e-9, abs=1e-9)
            assert tok.margin >= 0.0


def test_explain_lists_the_top_k_features_and_readable_template_names():
    sents = [["The", "dog", "barked", "."], ["A", "cat", "sat", "."], ["The", "cat", "ran", "."]]
    tags = [["DET", "NOUN", "VERB", "PUNCT"], ["DET", "NOUN", "VERB", "PUNCT"],
            ["DET", "NOUN", "VERB", "PUNCT"]]
    est = cseq.StructuredPerceptron(max_iter=3, random_state=0,
                                    features=TemplateFeaturizer("pos")).fit(sents, tags)
    ex = est.explain(["The", "dog", "sat", "."], k=3)
    assert ex.labels == ["DET", "NOUN", "VERB", "PUNCT"]
    assert all(len(t.features) == 3 for t in ex.tokens)
    names = [f.name for t in ex.tokens for f in t.features]
    names_all = est.featurizer_.feature_names()
    assert all(n in names_all for n in names)
    # readable: the template's text and the words it read, not the attribute ids
    # (the perceptron drops attributes whose weights are all zero, so look at all tokens)
    every = [f.name for t in est.explain(["The", "dog", "sat", "."], k=100).tokens
             for f in t.features]
    assert "%x[1,0:lower]=dog" in every and "%x[0,0:lower]/%x[1,0:lower]=the/dog" in every
    assert not any(re.match(r"U\d+:", n) for n in every)
    assert est.explain([], k=3).tokens == []


def test_top_features_and_transitions_read_the_model_arrays():
    X, y = _toy(2)
    est = cseq.StructuredPerceptron(max_iter=5, random_state=0).fit(X, y)
    model, classes = est.model_, list(est.classes_)
    names = est.featurizer_.attribute_names()
    table = est.transitions_
    assert list(table) == classes and all(list(row) == classes for row in table.values())
    assert np.array_equal([[table[a][b] for b in classes] for a in classes], model.transitions)
    every = est.top_features(k=10**9)
    assert list(every) == classes
    for y_id, label in enumerate(classes):
        # independent: walk the state index by hand
        want = {}
        for a in range(model.n_attributes):
            for k in range(model.attr_ptr[a], model.attr_ptr[a + 1]):
                if model.attr_labels[k] == y_id:
                    want[names[a]] = float(model.state_weights[k])
        got = every[label]
        assert dict(got) == want
        assert [w for _, w in got] == sorted(want.values(), reverse=True)
        assert est.top_features(label, k=2) == got[:2]
    with pytest.raises(cseq.InputError, match="unknown label"):
        est.top_features("NOPE")
    with pytest.raises(cseq.InputError, match="non-negative"):
        est.top_features(k=-1)
    with pytest.raises(cseq.InputError, match="non-negative"):
        est.explain(X[0], k=-1)


@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
@pytest.mark.parametrize("make", [lambda: cseq.MEMM(max_iter=5),
                                  lambda: cseq.GreedyTagger(max_iter=2)],
                         ids=["memm", "greedy"])
def test_explain_refuses_decoders_that_do_not_maximize_the_weights(make):
    X, y = _toy(3)
    est = make().fit(X, y)
    with pytest.raises(cseq.InputError, match="explain reads"):
        est.explain(X[0])
    assert set(est.top_features()) == set(est.classes_)
    assert set(est.transitions_) == set(est.classes_)


def test_unfitted_estimators_say_so():
    est = cseq.CRF()
    with pytest.raises(cseq.NotFittedError):
        est.explain([{"a": 1.0}])
    with pytest.raises(cseq.NotFittedError):
        est.top_features()
    with pytest.raises(cseq.NotFittedError):
        est.transitions_  # noqa: B018
