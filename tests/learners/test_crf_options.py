"""CRF training options: L1 / elastic net by OWL-QN and sparse model files, SGD, early
stopping on the dev set (every iterative learner), the stopping rule and ConvergenceWarning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.chain import _crf
from cseq.learners import _crf_sgd
from cseq.learners.base import MAX_ITER_REASON
from cseq.learners.objectives import CRFObjective
from cseq.learners.optimize import lbfgs

from support.budget import examples
from support.oracle import brute_expected_counts, naive_crf_objective, path_features
from support.strategies import corpora
from support.packing import pack, random_params, single_sequence

seeds = st.integers(0, 2**32 - 1)

# A small real corpus: chunking, words and POS tags.
TRAIN = [
    [("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN"), ("will", "MD"),
     ("narrow", "VB"), (".", ".")],
    [("The", "DT"), ("new", "JJ"), ("rate", "NN"), ("will", "MD"), ("be", "VB"),
     ("payable", "JJ"), ("Feb.", "NNP"), ("15", "CD"), (".", ".")],
    [("A", "DT"), ("spokesman", "NN"), ("declined", "VBD"), ("to", "TO"), ("comment", "VB"),
     (".", ".")],
    [("Prices", "NNS"), ("rose", "VBD"), ("in", "IN"), ("the", "DT"), ("quarter", "NN"),
     (".", ".")],
]
LABELS = [
    ["B-NP", "B-VP", "B-NP", "I-NP", "B-VP", "I-VP", "O"],
    ["B-NP", "I-NP", "I-NP", "B-VP", "I-VP", "B-ADJP", "B-NP", "I-NP", "O"],
    ["B-NP", "I-NP", "B-VP", "I-VP", "I-VP", "O"],
    ["B-NP", "B-VP", "B-PP", "B-NP", "I-NP", "O"],
]
TEST = [[("The", "DT"), ("deficit", "NN"), ("rose", "VBD"), ("in", "IN"), ("Feb.", "NNP"),
         (".", ".")], [("Prices", "NNS"), ("will", "MD"), ("narrow", "VB"), (".", ".")],
        [("An", "DT"), ("unseen", "JJ"), ("word", "NN")]]
TEMPLATES = "U00:%x[0,0:lower]\nU01:%x[-1,0:lower]\nU02:%x[0,1]\nU03:%x[-1,1]/%x[0,1]\n" \
            "U04:%x[0,0:suffix3]\nU05:%x[1,1]"


# -- L1 / elastic net ------------------------------------------------------------


@examples(25)
@given(data=corpora(max_seqs=4, max_len=4, max_labels=3), c1=st.floats(0.05, 1.0),
       c2=st.sampled_from([0.0, 0.05]))
def test_l1_crf_minimum_matches_a_bound_constrained_reference(data, c1, c2):
    """OWL-QN on the CRF objective against scipy on the split (w = u - v, u, v >= 0) problem."""
    X, y = data
    _, corpus, model = pack(X, y)
    objective = CRFObjective(model, corpus, c2)
    n = len(model.params)

    def split(z):
        f, g = objective(z[:n] - z[n:])
        return f + c1 * z.sum(), np.concatenate([g + c1, -g + c1])
    ref = scipy.optimize.minimize(split, np.zeros(2 * n), jac=True, method="L-BFGS-B",
                                  bounds=[(0, None)] * (2 * n),
                                  options={"gtol": 1e-11, "ftol": 0, "maxiter": 5000})
    ours = lbfgs(objective, np.zeros(n), l1=c1, max_iter=2000, gtol=1e-9)
    assert ours.fun <= ref.fun + 1e-7 * (1 + abs(ref.fun))
    ref_x = ref.x[:n] - ref.x[n:]
    zero = ours.x == 0.0
    # Optimality of our point: |grad| <= c1 where 0, grad = -c1 sign(w) elsewhere.
    g = objective(ours.x)[1]
    assert np.all(np.abs(g[zero]) <= c1 + 1e-6)
    np.testing.assert_allclose(g[~zero], -c1 * np.sign(ours.x[~zero]), atol=1e-5)
    # Where the reference is clearly away from zero, so are we (same signs).
    clear = np.abs(ref_x) > 1e-3
    np.testing.assert_array_equal(np.sign(ours.x[clear]), np.sign(ref_x[clear]))


def test_l1_crf_is_sparse_and_pruning_keeps_every_prediction(monkeypatch):
    features = cseq.TemplateFeaturizer(TEMPLATES)
    sparse = cseq.CRF(c1=0.3, c2=0.0, max_iter=300, tol=0.0, features=features)
    sparse.fit(TRAIN, LABELS)
    assert sparse.stop_reason_ == "gradient norm below tolerance"
    # The same training without the pruning step.
    monkeypatch.setattr(cseq.CRF, "_finish", lambda self, model: model)
    full = cseq.CRF(c1=0.3, c2=0.0, max_iter=300, tol=0.0, features=features)
    full.fit(TRAIN, LABELS)
    w = full.model_.state_weights
    n_zero = int(np.sum(w == 0.0))
    assert n_zero > len(w) // 2  # L1 made most weights exactly zero
    assert sparse.n_pruned_ == n_zero
    assert sparse.model_.n_state == len(w) - n_zero
    assert np.all(sparse.model_.state_weights != 0.0)
    assert sparse.featurizer_.n_attributes < full.featurizer_.n_attributes
    np.testing.assert_array_equal(sparse.model_.params[sparse.model_.n_state:],
                                  full.model_.params[full.model_.n_state:])
    for X in (TRAIN, TEST):
        assert sparse.predict(X) == full.predict(X)
        for a, b in zip(sparse.predict_marginals(X), full.predict_marginals(X)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    # Stored and read back, still the same tagger; the pruned file is smaller.
    loaded = cseq.serialize.loads(sparse.to_bytes())
    assert loaded.predict(TEST) == full.predict(TEST) and loaded.n_pruned_ == n_zero
    assert len(sparse.to_bytes()) < len(full.to_bytes())


@pytest.mark.parametrize("features", [None, "hashing"])
def test_pruning_with_feature_lists_and_hashing(features):
    if features is None:
        X = [[[f"w={w.lower()}", f"p={p}"] for w, p in s] for s in TRAIN]
        T = [[[f"w={w.lower()}", f"p={p}"] for w, p in s] for s in TEST]
        featurizer = None
    else:
        X, T = TRAIN, TEST
        featurizer = cseq.TemplateFeaturizer(TEMPLATES, n_buckets=64)
    est = cseq.CRF(c1=0.3, c2=0.01, max_iter=200, features=featurizer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cseq.ConvergenceWarning)
        est.fit(X, LABELS)
    assert est.n_pruned_ > 0 and np.all(est.model_.state_weights != 0.0)
    if features == "hashing":  # bucket ids cannot be renumbered: every bucket stays
        assert est.model_.n_attributes == 64
    # Put the pruned weights back as zeros: predictions must not change.
    model = est.model_
    assert cseq.serialize.loads(est.to_bytes()).predict(T) == est.predict(T)
    marg = est.predict_marginals(T)
    assert all(np.allclose(m.sum(axis=1), 1.0) for m in marg)
    assert model.n_state + est.n_pruned_ > model.n_state


def test_linear_chain_pruned_scores_like_the_original():
    rng = np.random.default_rng(0)
    X = [[[f"f{rng.integers(12)}" for _ in range(3)] for _ in range(5)] for _ in range(6)]
    y = [[["A", "B", "C"][rng.integers(3)] for _ in range(5)] for _ in range(6)]
    _, corpus, model = pack(X, y, all_states=True)
    params = rng.normal(size=len(model.params))
    params[:model.n_state][rng.random(model.n_state) < 0.6] = 0.0
    params[:model.n_state][model.attr_ptr[3]:model.attr_ptr[4]] = 0.0  # attribute 3 loses all
    model.params = params
    for drop in (False, True):
        pruned, kept = model.pruned(drop_attributes=drop)
        assert pruned.n_state == int(np.sum(params[:model.n_state] != 0.0))
        assert (3 in kept) is not drop
        # Renumber the corpus's attributes as the featurizer would.
        remap = np.full(model.n_attributes, -1, dtype=np.int64)
        remap[kept] = np.arange(len(kept))
        ids = remap[corpus.attr_ids]
        keep = ids >= 0
        tok_ptr = np.zeros_like(corpus.tok_ptr)
        np.cumsum(np.add.reduceat(keep, corpus.tok_ptr[:-1]) * (np.diff(corpus.tok_ptr) > 0),
                  out=tok_ptr[1:])
        renamed = cseq.Sequences(corpus.seq_ptr, tok_ptr, ids[keep].astype(np.int32),
                                 corpus.values[keep], corpus.labels)
        np.testing.assert_allclose(pruned.emissions(renamed, 0, renamed.n_tokens),
                                   model.emissions(corpus, 0, corpus.n_tokens), atol=1e-12)
        np.testing.assert_array_equal(pruned.decode(renamed), model.decode(corpus))


# -- SGD ---------------------------------------------------------------------------


@pytest.mark.parametrize("order", [1, 2])
@examples(35)
@given(data=corpora(max_seqs=3, max_len=4, max_labels=3), seed=seeds,
       scale=st.sampled_from([0.1, 1.0, 3.0]))
def test_sequence_loss_and_gradient_against_brute_force(order, data, seed, scale):
    """The per-sequence update of the CRF's SGD (the trigram block too at order 2)."""
    X, y = data
    _, corpus, model = pack(X, y, order=order)
    params = random_params(model, seed, scale)
    for s in range(corpus.n_sequences):
        one = single_sequence(corpus, s)
        loss, grad = _crf.sequence_loss_and_gradient(
            model.index, params, corpus.view(), s)
        assert loss == pytest.approx(naive_crf_objective(params, model, one, 0.0), abs=1e-9)
        if one.n_tokens == 0:
            assert not grad.any()
            continue
        expected = brute_expected_counts(params, model.attr_ptr, model.attr_labels,
                                         model.n_labels, one)
        gold = path_features(model.attr_ptr, model.attr_labels, model.n_labels, one, 0,
                             one.labels, order=order)
        np.testing.assert_allclose(grad, expected - gold, atol=1e-9)


@examples(25)
@given(data=corpora(max_seqs=4, max_len=4, max_labels=3), seed=seeds,
       lam=st.sampled_from([1e-3, 0.1, 0.5]), t0=st.sampled_from([2.0, 10.0, 1000.0]))
def test_sgd_epoch_matches_plain_steps(data, seed, lam, t0):
    """The lazily scaled epoch equals w <- (1 - eta lam) w - eta grad loss_s(w), step by step."""
    X, y = data
    _, corpus, model = pack(X, y)
    start = random_params(model, seed, 0.5)
    order = np.random.default_rng(seed).permutation(corpus.n_sequences).astype(np.int64)
    w = start.copy()
    trainer = _crf_sgd.CRFSGDTrainer(model.index, corpus.view(), w)
    loss, t = trainer.epoch(order, lam, t0, 5)
    ref = start.copy()
    ref_loss = 0.0
    for i, s in enumerate(order):
        eta = 1.0 / (lam * (t0 + 5 + i))
        ref *= 1.0 - eta * lam
        value, grad = _crf.sequence_loss_and_gradient(
            model.index, ref, corpus.view(), int(s))
        ref_loss += value
        ref -= eta * grad
    assert t == 5 + len(order)
    assert loss == pytest.approx(ref_loss, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(w, ref, rtol=1e-9, atol=1e-12)


def test_sgd_loss_goes_down_is_deterministic_and_near_the_lbfgs_optimum():
    features = cseq.TemplateFeaturizer(TEMPLATES)
    kw = dict(algorithm="sgd", c2=0.5, max_iter=60, tol=0.0, random_state=3, features=features)
    with pytest.warns(cseq.ConvergenceWarning):
        a = cseq.CRF(**kw).fit(TRAIN, LABELS)
    with pytest.warns(cseq.ConvergenceWarning):
        b = cseq.CRF(**kw).fit(TRAIN, LABELS)
    assert a.to_bytes() == b.to_bytes()
    losses = [r["loss"] for r in a.history_]
    assert len(losses) == 60 and a.n_iter_ == 60 and a.stop_reason_ == MAX_ITER_REASON
    assert losses[-1] < 0.5 * losses[0]
    # Per-epoch losses are noisy (each is met along the epoch's steps); by windows they fall.
    windows = [np.mean(losses[k:k + 10]) for k in range(0, 60, 10)]
    assert all(x > y for x, y in zip(windows, windows[1:]))
    assert a.eta0_ in (1.0, 0.3, 0.1, 0.03, 0.01)
    exact = cseq.CRF(c2=0.5, max_iter=500, features=features).fit(TRAIN, LABELS)
    objective_at = {}
    for name, est in (("sgd", a), ("lbfgs", exact)):
        model = est.model_
        corpus = est.featurizer_.transform(TRAIN)
        ids = {c: i for i, c in enumerate(est.classes_)}
        labels = np.array([ids[v] for s in LABELS for v in s], dtype=np.int32)
        corpus = cseq.Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values,
                                labels)
        objective_at[name] = CRFObjective(model, corpus, 0.5)(model.params)[0]
    assert objective_at["lbfgs"] <= objective_at["sgd"] <= 1.01 * objective_at["lbfgs"]
    assert a.predict(TRAIN) == exact.predict(TRAIN)
    c = cseq.CRF(**{**kw, "random_state": 4, "max_iter": 5})
    with pytest.warns(cseq.ConvergenceWarning):
        c.fit(TRAIN, LABELS)
    assert c.to_bytes() != a.to_bytes()


@pytest.mark.parametrize("params", [
    {"algorithm": "sgd", "c1": 0.5}, {"algorithm": "sgd", "c2": 0.0}, {"algorithm": "adam"},
    {"eta0": 0.0}, {"eta0": -1.0}, {"c1": -0.1}, {"patience": 0}, {"random_state": -1},
])
def test_bad_crf_options_are_refused(params):
    with pytest.raises(cseq.InputError):
        cseq.CRF(**params).fit(TRAIN, LABELS)


# -- early stopping ------------------------------------------------------------------


DEV_X, DEV_Y = TEST[:2], [["B-NP", "I-NP", "B-VP", "B-PP", "B-NP", "O"],
                          ["B-NP", "B-VP", "I-VP", "O"]]


@pytest.mark.parametrize("make", [
    lambda: cseq.CRF(c2=0.01, max_iter=60, tol=0.0, early_stopping=True, patience=2,
                     features=cseq.TemplateFeaturizer(TEMPLATES)),
    lambda: cseq.CRF(algorithm="sgd", c2=0.01, max_iter=60, tol=0.0, early_stopping=True,
                     patience=2, random_state=0, features=cseq.TemplateFeaturizer(TEMPLATES)),
    lambda: cseq.StructuredPerceptron(max_iter=60, early_stopping=True, patience=2,
                                      random_state=0,
                                      features=cseq.TemplateFeaturizer(TEMPLATES)),
    lambda: cseq.MEMM(c2=0.01, max_iter=60, tol=0.0, early_stopping=True, patience=2,
                      features=cseq.TemplateFeaturizer(TEMPLATES)),
    lambda: cseq.StructuredSVM(C=10.0, max_iter=60, early_stopping=True, patience=2,
                               random_state=0, features=cseq.TemplateFeaturizer(TEMPLATES)),
    lambda: cseq.GreedyTagger(max_iter=60, early_stopping=True, patience=2, random_state=0,
                              features=cseq.TemplateFeaturizer(TEMPLATES)),
], ids=["crf-lbfgs", "crf-sgd", "perceptron", "memm", "ssvm", "greedy"])
def test_early_stopping_keeps_the_best_iteration(make):
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cseq.ConvergenceWarning)
        est.fit(TRAIN, LABELS, DEV_X, DEV_Y)
    scores = [r["dev_accuracy"] for r in est.history_]
    best = int(np.argmax(scores)) + 1  # the first of the best
    assert est.best_iteration_ == best
    assert est.score(DEV_X, DEV_Y) == scores[best - 1]
    if est.stop_reason_.startswith("early stopping"):
        assert est.n_iter_ == best + 2
    else:  # training ended first (converged, or no training errors)
        assert est.n_iter_ - best < 2
    assert est.n_iter_ == len(est.history_)
    loaded = cseq.serialize.loads(est.to_bytes())
    assert loaded.best_iteration_ == best and loaded.stop_reason_ == est.stop_reason_


def test_early_stopping_stops_after_patience_iterations_without_improvement():
    # A dev set the model cannot improve on after the first pass: stop at 1 + patience.
    # Contradictory labels: the perceptron never has an error-free pass.
    est = cseq.StructuredPerceptron(max_iter=50, early_stopping=True, patience=3,
                                    random_state=0, features=cseq.TemplateFeaturizer(TEMPLATES))
    est.fit(TRAIN * 2, LABELS + [lab[::-1] for lab in LABELS], [[("zzz", "ZZ")]], [["B-NP"]])
    assert [r["dev_accuracy"] for r in est.history_][0] == max(
        r["dev_accuracy"] for r in est.history_)
    assert est.best_iteration_ == 1 and est.n_iter_ == 4
    assert est.stop_reason_ == "early stopping: no dev improvement in 3 iterations"


def test_early_stopping_needs_a_dev_set():
    for est in (cseq.CRF(early_stopping=True), cseq.StructuredPerceptron(early_stopping=True),
                cseq.MEMM(early_stopping=True), cseq.StructuredSVM(early_stopping=True),
                cseq.GreedyTagger(early_stopping=True),
                cseq.PassiveAggressive(early_stopping=True), cseq.AROW(early_stopping=True)):
        with pytest.raises(cseq.InputError, match="dev set"):
            est.fit(TRAIN, LABELS)
    with pytest.raises(cseq.InputError):
        cseq.CRF(early_stopping="yes").fit(TRAIN, LABELS, DEV_X, DEV_Y)


# -- the stopping rule and ConvergenceWarning --------------------------------------


def test_tol_and_period_stop_training_at_the_expected_iteration():
    features = cseq.TemplateFeaturizer(TEMPLATES)
    # tol = 100: any decrease smaller than 100 |loss| stops as soon as `period` + 1
    # iterations exist.
    for period in (1, 2, 5):
        for algorithm in ("lbfgs", "sgd"):
            est = cseq.CRF(algorithm=algorithm, tol=100.0, period=period, random_state=0,
                           features=features).fit(TRAIN, LABELS)
            assert est.n_iter_ == period + 1
            assert est.stop_reason_ == "stopped by the convergence test"
    # The loss after the stop is what the rule saw: relative decrease below tol.
    est = cseq.CRF(c2=1.0, tol=1e-3, period=3, features=features).fit(TRAIN, LABELS)
    losses = [r["loss"] for r in est.history_]
    k = est.n_iter_
    assert est.stop_reason_ == "stopped by the convergence test" and k < 100
    assert losses[k - 4] - losses[k - 1] <= 1e-3 * abs(losses[k - 1])
    assert all(losses[j - 3] - losses[j] > 1e-3 * abs(losses[j]) for j in range(3, k - 1))


def test_max_iter_without_convergence_warns():
    with pytest.warns(cseq.ConvergenceWarning, match="max_iter=3 .*raise max_iter"):
        est = cseq.CRF(max_iter=3, tol=0.0).fit(TRAIN, LABELS)
    assert est.n_iter_ == 3 and est.stop_reason_ == MAX_ITER_REASON
    assert issubclass(cseq.ConvergenceWarning, UserWarning)
    # A perceptron that runs its max_iter passes has no convergence test: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = cseq.StructuredPerceptron(max_iter=2, random_state=0).fit(TRAIN, LABELS)
    assert p.stop_reason_ == "2 passes done"


def test_a_fit_capped_by_max_iter_warns_only_while_its_loss_still_improves():
    """A default CRF that ran out of max_iter with a settled loss (the predictions
    no longer move) printed a ConvergenceWarning with nothing to do; only a loss still
    improving by more than loops.SETTLED over the last `period` iterations warns, and the
    warning says by how much and what to raise."""
    from cseq.learners.loops import SETTLED
    features = cseq.TemplateFeaturizer(TEMPLATES)
    # tol=0: the convergence test never stops the fit; 9 iterations are too few for the
    # gradient test on this corpus, so max_iter stops it, with a settled loss.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        settled = cseq.CRF(c2=1.0, max_iter=9, period=3, tol=0.0,
                           features=features).fit(TRAIN, LABELS)
    losses = [r["loss"] for r in settled.history_]
    assert settled.stop_reason_ == MAX_ITER_REASON
    assert 0 < losses[-4] - losses[-1] <= SETTLED * abs(losses[-1])
    with pytest.warns(cseq.ConvergenceWarning, match=r"max_iter=12 .*its loss still fell by "
                      r"[0-9.e+-]+% over the last 10 iterations; .*raise max_iter "
                      r"\(cseq train --max-iter\), e\.g\. to 24"):
        moving = cseq.CRF(c2=1e-3, max_iter=12, tol=0.0, features=features).fit(TRAIN, LABELS)
    losses = [r["loss"] for r in moving.history_]
    assert losses[-11] - losses[-1] > SETTLED * abs(losses[-1])
