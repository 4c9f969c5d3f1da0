"""Thread counts, hyperparameter types and numeric edges.

Item 5: an ``n_jobs`` far above the machine's CPUs reached OpenMP unchecked
(segfaults, libgomp ending the interpreter); every count now goes through
``cseq._core.threads.resolve_n_jobs``, which clamps it to the usable CPUs.

Item 6: NumPy-scalar hyperparameters trained but could not be saved or
pickled; flags took any object's truth (``average="False"`` trained as True)
and NaN as a flag failed only at save.

Item 12: numeric edges, each now either trained to a defined result or
refused at validation with a stated bound.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cseq
from cseq._core.threads import resolve_n_jobs, usable_cpus

from support.cli_run import TRAIN, run
from support.registered import estimators, reads_words

# Quick fits here stop at max_iter on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

SENTS = [[f"t{int(v)}" for v in np.random.default_rng(s).integers(0, 30, size=s % 9 + 1)]
         for s in range(120)]
TAGS = [[("A", "B", "C")[int(w[1:]) % 3] for w in sent] for sent in SENTS]
FEATS = [[[f"w={w}", f"s={w[-1]}"] for w in sent] for sent in SENTS]

HUGE = 10**5


# -- item 5: n_jobs --------------------------------------------------------------------------

@pytest.mark.parametrize("n_jobs", [HUGE, np.int64(10**18), 2**70])
def test_resolve_n_jobs_clamps_to_the_usable_cpus(n_jobs):
    assert resolve_n_jobs(n_jobs) == usable_cpus() >= 1
    assert resolve_n_jobs(-1) == resolve_n_jobs(None) == usable_cpus()
    assert resolve_n_jobs(1) == 1


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_resolve_n_jobs_refuses_what_is_not_a_count(bad):
    with pytest.raises(cseq.InputError, match="n_jobs"):
        resolve_n_jobs(bad)


@pytest.mark.parametrize("make", [
    lambda n: cseq.CRF(max_iter=10, n_jobs=n),
    lambda n: cseq.MEMM(max_iter=10, n_jobs=n),
], ids=["crf", "memm"])
def test_fit_with_a_huge_n_jobs_trains_the_model_of_few_threads(make):
    few = make(usable_cpus()).fit(FEATS, TAGS)
    many = make(HUGE).fit(FEATS, TAGS)
    np.testing.assert_allclose(many.model_.params, few.model_.params, rtol=1e-9, atol=1e-12)
    assert many.predict(FEATS, n_jobs=HUGE) == few.predict(FEATS)


@pytest.mark.parametrize("features", [None, "pos"])
def test_predict_with_a_huge_n_jobs_gives_the_serial_answers(features):
    X = FEATS if features is None else SENTS
    est = cseq.CRF(max_iter=10, features=features and cseq.TemplateFeaturizer(features))
    est.fit(X, TAGS)
    assert est.predict(X, n_jobs=HUGE) == est.predict(X)
    for a, b in zip(est.predict_marginals(X, n_jobs=HUGE), est.predict_marginals(X)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    one = est.featurizer_.transform(X)
    many = est.featurizer_.transform(X, n_jobs=HUGE)
    np.testing.assert_array_equal(many.attr_ids, one.attr_ids)


def test_cli_tag_with_a_huge_n_jobs(tmp_path):
    train, model = tmp_path / "train.txt", tmp_path / "m.cseq"
    train.write_text(TRAIN, encoding="utf-8")
    assert run("train", train, "--template", "chunk", "-o", model).returncode == 0
    serial = run("tag", model, train, "--labeled")
    many = run("tag", model, train, "--labeled", "--n-jobs", str(HUGE))
    assert many.returncode == 0, many.stderr
    assert many.stdout == serial.stdout != ""


# -- item 6: hyperparameter types -------------------------------------------------------------

FLAGS = [(cls, name) for cls in estimators() for name in cls._param_names
         if name in ("all_states", "average", "early_stopping", "error_sensitive", "shuffle",
                     "verbose")]


def _fit(est):
    return est.fit(SENTS if reads_words(type(est)) else FEATS, TAGS)


@pytest.mark.parametrize("cls", estimators(), ids=lambda cls: cls.__name__)
def test_every_parameter_of_a_registered_learner_has_a_constraint(cls):
    # The parameters are the __init__ signature's, each checked by
    # the constraint its learner (or COMMON_CONSTRAINTS) declares, in one place.
    assert list(cls._constraints) == list(cls._param_names)
    assert "_validate_params" not in vars(cls)


def test_the_package_exports_every_registered_learner():
    # cseq/__init__.py imports each learner (which registers it) and exports it.
    for cls in estimators(lambda cls: cls.__module__.startswith("cseq.")):
        assert getattr(cseq, cls.__name__) is cls and cls.__name__ in cseq.__all__


@pytest.mark.parametrize("est", [
    cseq.CRF(c2=np.float32(0.25), max_iter=np.int64(5), tol=np.float64(1e-4),
             period=np.int32(3), n_jobs=np.int64(2), all_states=np.bool_(True)),
    cseq.CRF(algorithm="sgd", c2=np.float64(0.1), max_iter=np.int16(3), eta0=np.float32(0.5),
             random_state=np.uint8(7)),
    cseq.StructuredPerceptron(max_iter=np.int64(3), average=np.bool_(False),
                              shuffle=np.bool_(True), random_state=np.int64(1)),
    cseq.StructuredSVM(C=np.float16(0.5), max_iter=np.int64(2),
                       cost={"A": {"B": np.float32(2.0)}}),
    cseq.MEMM(c2=np.float64(0.1), max_iter=np.int8(4), early_stopping=np.bool_(False),
              patience=np.int64(2)),
    cseq.HMM(alpha=np.float64(0.1), suffix_length=np.int64(3), rare_threshold=np.int64(2)),
    cseq.GreedyTagger(max_iter=np.int64(2), tag_dict_min_count=np.int64(1),
                      tag_dict_min_share=np.float32(0.5)),
], ids=lambda est: type(est).__name__)
def test_numpy_scalar_hyperparameters_save_pickle_and_load(est, tmp_path):
    given = est.get_params(deep=False)
    _fit(est)
    assert est.get_params(deep=False) == given  # fit keeps the objects the user gave
    est.save(tmp_path / "m.cseq")
    for back in (cseq.load(tmp_path / "m.cseq"), pickle.loads(pickle.dumps(est))):
        params = back.get_params(deep=False)
        assert params == given
        assert not any(isinstance(v, np.generic) for v in params.values())
        X = SENTS[:5] if reads_words(type(est)) else FEATS[:5]
        assert back.predict(X) == est.predict(X)


def test_parallel_grid_search_over_numpy_grids():
    sklearn = pytest.importorskip("sklearn.model_selection")
    grid = sklearn.GridSearchCV(
        cseq.CRF(features=cseq.TemplateFeaturizer("pos")),
        {"c2": np.linspace(0.1, 1.0, 2), "max_iter": np.arange(3, 5),
         "all_states": np.array([False, True]), "features__min_freq": np.arange(1, 3)},
        cv=2, n_jobs=2, error_score="raise")
    grid.fit(SENTS[:40], TAGS[:40])
    best = grid.best_estimator_
    back = pickle.loads(pickle.dumps(best))
    assert cseq.serialize.loads(best.to_bytes()).predict(SENTS) == back.predict(SENTS) \
        == best.predict(SENTS)


@pytest.mark.parametrize("cls,name", FLAGS, ids=[f"{c.__name__}-{n}" for c, n in FLAGS])
@pytest.mark.parametrize("bad", ["False", 0, 1, None, float("nan"), np.float32("nan")],
                         ids=["str", "0", "1", "None", "nan", "nan32"])
def test_flags_take_only_bools(cls, name, bad):
    with pytest.raises(cseq.InputError, match=f"{name} must be True or False"):
        _fit(cls(**{name: bad}))


# -- item 12: numeric edges ---------------------------------------------------------------

def test_crf_with_a_huge_l2_weight_trains_to_about_zero():
    # c2 = 1e100 used to fail its first line search ("largest feature value
    # 1: scale feature values down"): the unit first step overshot the
    # optimum, about 1e-100, by more than 40 shrinks could undo.
    for est in (cseq.CRF(c2=1e100, max_iter=20), cseq.CRF(c1=1.0, c2=1e100, max_iter=20),
                cseq.MEMM(c2=1e100, max_iter=20)):
        _fit(est)
        w = est.model_.params
        assert np.isfinite(w).all() and np.abs(w).max() < 1e-90
        cseq.serialize.loads(est.to_bytes())


@pytest.mark.parametrize("make", [
    lambda: cseq.StructuredSVM(C=1e155),
    lambda: cseq.CRF(c2=1e101),
    lambda: cseq.CRF(c1=1e200),
    lambda: cseq.MEMM(c2=1e300),
    lambda: cseq.CRF(algorithm="sgd", c2=5e-324),
    lambda: cseq.CRF(algorithm="sgd", c2=1e-101),
    lambda: cseq.CRF(algorithm="sgd", eta0=5e-324),
    lambda: cseq.CRF(algorithm="sgd", eta0=1.7e308),
], ids=["ssvm-C", "crf-c2", "crf-c1", "memm-c2", "sgd-c2-denormal", "sgd-c2-tiny",
        "sgd-eta0-denormal", "sgd-eta0-huge"])
def test_regularisation_and_rates_outside_their_stated_bounds_are_refused(make):
    est = make()
    with pytest.raises(cseq.InputError, match="at most 1e\\+100|in \\[1e-100, 1e100\\]"):
        _fit(est)
    with pytest.raises(cseq.InputError):
        est.partial_fit(FEATS, TAGS) if hasattr(est, "partial_fit") else _fit(est)


@pytest.mark.parametrize("make", [
    lambda: cseq.StructuredSVM(C=1e100, max_iter=2),
    lambda: cseq.CRF(algorithm="sgd", c2=1e-100, max_iter=2),
    lambda: cseq.CRF(algorithm="sgd", c2=1e100, eta0=1e100, max_iter=2),
    lambda: cseq.CRF(algorithm="sgd", c2=1e-100, eta0=1e-100, max_iter=2),
], ids=["ssvm-C-max", "sgd-c2-min", "sgd-both-max", "sgd-both-min"])
def test_the_bounds_themselves_train_and_save(make):
    est = _fit(make())
    assert all(np.isfinite(r["loss"]) for r in est.history_)
    assert cseq.serialize.loads(est.to_bytes()).predict(FEATS) == est.predict(FEATS)


def test_n_buckets_has_a_stated_maximum():
    from cseq.templates import MAX_BUCKETS
    assert MAX_BUCKETS == 2**24
    cseq.TemplateFeaturizer("pos", n_buckets=MAX_BUCKETS)
    for bad in (MAX_BUCKETS + 1, 2**31 - 1):
        with pytest.raises(cseq.InputError, match="n_buckets must be in \\[1, 2\\*\\*24\\]"):
            cseq.TemplateFeaturizer("pos", n_buckets=bad)


def test_order2_partial_fit_with_too_many_labels_is_an_input_error_as_in_fit():
    # The 2,000 labels need 64 GB of trigram weights; 20,000 need
    # 64 TB, more than any machine has, so the test cannot start training.
    # fit said so; partial_fit raised a bare MemoryError.
    X = [[[f"w={i}"]] for i in range(20_000)]
    y = [[f"L{i}"] for i in range(20_000)]
    for call in (lambda est: est.fit(X, y), lambda est: est.partial_fit(X, y)):
        est = cseq.StructuredPerceptron(order=2, max_iter=1)
        with pytest.raises(cseq.InputError, match="order 2 with 20000 labels"):
            call(est)
        assert getattr(est, "model_", None) is None
