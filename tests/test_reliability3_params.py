"""Issue 27, items 5, 6 and 12: thread counts, hyperparameter types and numeric edges.

Item 5: an ``n_jobs`` far above the machine's CPUs reached OpenMP unchecked
(segfaults, libgomp ending the interpreter); every count now goes through
``cseq.model.resolve_n_jobs``, which clamps it to the usable CPUs.
"""

from __future__ import annotations

import numpy as np
import pytest

import cseq
from cseq.model import resolve_n_jobs, usable_cpus

from cli_run import TRAIN, run

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
