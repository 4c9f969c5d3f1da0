"""The Python API in a new user's first hour: scikit-learn model selection,
interrupted and unfitted estimators, model-file permissions, span F1 on BIO dev sets,
and type annotations that ``mypy --strict`` accepts in a user's script."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cseq
from cseq.exceptions import NotFittedError, TrainingInterrupted
from cseq.templates import TemplateFeaturizer

from support.registered import estimators
from support.paths import ROOT

# Quick fits here stop at max_iter on purpose; ConvergenceWarning itself is tested in
# test_crf_options.py.
pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

README = ROOT / "README.md"

TRAIN = [
    (["The", "dog", "barks", "."], ["B-NP", "I-NP", "B-VP", "O"]),
    (["A", "cat", "sleeps", "."], ["B-NP", "I-NP", "B-VP", "O"]),
    (["The", "cat", "barks", "loudly"], ["B-NP", "I-NP", "B-VP", "B-ADVP"]),
    (["Dogs", "sleep", "."], ["B-NP", "B-VP", "O"]),
    (["A", "dog", "sleeps"], ["B-NP", "I-NP", "B-VP"]),
    (["The", "dogs", "bark", "."], ["B-NP", "I-NP", "B-VP", "O"]),
]
X = [[(w,) for w in words] for words, _ in TRAIN]
Y = [labels for _, labels in TRAIN]


def _features():
    return TemplateFeaturizer("U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[0,0:suffix2]\nB")


# ---------------------------------------------------------------------------
# 13. scikit-learn: clone, GridSearchCV, cross_val_score, nested parameters, tags


sklearn = pytest.importorskip("sklearn")


@pytest.mark.parametrize("make", [
    lambda: cseq.CRF(c2=0.5, max_iter=20, features=_features()),
    lambda: cseq.StructuredPerceptron(max_iter=3, random_state=0, features=_features()),
])
def test_sklearn_clone_and_nested_params(make):
    from sklearn.base import clone
    est = make()
    params = est.get_params()
    assert params["features__min_freq"] == 1 and params["features__n_buckets"] is None
    assert "features__min_freq" not in est.get_params(deep=False)
    copy = clone(est)
    assert type(copy) is type(est) and copy is not est
    assert copy.features is not est.features
    assert copy.features.templates == est.features.templates
    copy.set_params(features__min_freq=2, max_iter=4)
    assert copy.features.min_freq == 2 and copy.max_iter == 4
    assert est.features.min_freq == 1 and est.max_iter != 4  # the original is untouched
    with pytest.raises(cseq.InputError, match="no parameter"):
        copy.set_params(features__min_frequency=2)
    with pytest.raises(cseq.InputError, match="no parameters to set"):
        cseq.CRF().set_params(features__min_freq=2)  # features is None


@pytest.mark.parametrize("cls", estimators())
def test_sklearn_clone_keeps_every_parameter_object(cls):
    # The constructor stores each argument as it is (the base does it from
    # the signature); clone checks that every parameter is the object it passed.
    from sklearn.base import clone
    given = cls().get_params(deep=False)
    est = cls(**given)
    copy = clone(est)
    assert copy.get_params(deep=False) == est.get_params(deep=False)
    assert vars(copy).keys() >= set(cls._param_names)


def test_sklearn_tags():
    import sklearn.utils
    get_tags = getattr(sklearn.utils, "get_tags", None)
    if get_tags is None:
        pytest.skip(f"scikit-learn {sklearn.__version__} has no tags API (added in 1.6)")
    tags = get_tags(cseq.CRF())
    assert tags.estimator_type is None and tags.target_tags.required


def test_sklearn_check_is_fitted():
    """The fitted attributes live in one snapshot (cseq.fitted), not in ``vars(est)``:
    scikit-learn asks ``__sklearn_is_fitted__``."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted
    est = cseq.StructuredPerceptron(max_iter=2, random_state=0)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    check_is_fitted(est.fit(X, Y))


def test_grid_search_and_cross_val_score():
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
    est = cseq.StructuredPerceptron(max_iter=2, random_state=0, features=_features())
    cv = KFold(n_splits=3)
    scores = cross_val_score(est, X, Y, cv=cv)
    assert scores.shape == (3,)
    # the same scores by hand: fit on two folds, score on the third
    for k, (tr, te) in enumerate(cv.split(X)):
        fitted = cseq.StructuredPerceptron(max_iter=2, random_state=0, features=_features())
        fitted.fit([X[i] for i in tr], [Y[i] for i in tr])
        assert scores[k] == fitted.score([X[i] for i in te], [Y[i] for i in te])
    grid = GridSearchCV(est, {"max_iter": [1, 3], "features__min_freq": [1, 2]}, cv=cv)
    grid.fit(X, Y)
    assert set(grid.best_params_) == {"max_iter", "features__min_freq"}
    assert len(grid.cv_results_["mean_test_score"]) == 4
    assert grid.best_estimator_.predict(X[:1])[0][0] in grid.best_estimator_.classes_


# ---------------------------------------------------------------------------
# 11. unfitted and interrupted estimators cannot be saved; files follow the umask


def test_unfitted_estimator_cannot_be_saved(tmp_path):
    path = tmp_path / "m.cseq"
    with pytest.raises(NotFittedError, match="not fitted"):
        cseq.CRF().save(path)
    assert not path.exists() and list(tmp_path.iterdir()) == []
    # pickling (and to_bytes) of unfitted estimators still works: joblib needs it
    import pickle
    assert pickle.loads(pickle.dumps(cseq.CRF(c2=3.0))).c2 == 3.0


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_model_files_follow_the_umask(tmp_path, umask):
    est = cseq.StructuredPerceptron(max_iter=1, features=_features()).fit(X, Y)
    old = os.umask(umask)
    try:
        est.save(tmp_path / "new.cseq")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.cseq").stat().st_mode) == 0o666 & ~umask
    # replacing a file keeps its permissions
    existing = tmp_path / "old.cseq"
    existing.write_bytes(b"x")
    existing.chmod(0o640)
    est.save(existing)
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640
    assert cseq.load(existing).classes_ == est.classes_


class _StopAt:
    def __init__(self, iteration):
        self.iteration = iteration

    def __call__(self, record):
        if record["iteration"] == self.iteration:
            raise KeyboardInterrupt


@pytest.mark.parametrize("make", [
    lambda n: cseq.CRF(c2=0.5, max_iter=n, tol=0.0, features=_features()),
    lambda n: cseq.StructuredPerceptron(max_iter=n, random_state=0, features=_features()),
    lambda n: cseq.MEMM(c2=0.5, max_iter=n, tol=0.0, features=_features()),
])
def test_interrupted_fit_offers_the_last_completed_iteration(make, tmp_path):
    est = make(30)
    with pytest.raises(TrainingInterrupted) as info:
        est.fit(X, Y, callback=_StopAt(2))
    assert isinstance(info.value, KeyboardInterrupt)
    with pytest.raises(NotFittedError):
        est.save(tmp_path / "m.cseq")  # the estimator itself stays unfitted
    partial = info.value.estimator
    assert partial.n_iter_ == 2 and len(partial.history_) == 2
    two = make(2).fit(X, Y)  # exactly two iterations
    np.testing.assert_array_equal(partial.model_.params, two.model_.params)
    partial.save(tmp_path / "p.cseq")
    assert cseq.load(tmp_path / "p.cseq").predict(X) == two.predict(X)


def test_interrupt_in_the_first_callback_keeps_that_iteration():
    with pytest.raises(TrainingInterrupted) as info:
        cseq.StructuredPerceptron(max_iter=3, features=_features()).fit(
            X, Y, callback=_raise_at_once)
    # the first record was appended before the callback ran: one iteration is complete
    assert info.value.estimator is not None and info.value.estimator.n_iter_ == 1


def _raise_at_once(record):
    raise KeyboardInterrupt


# ---------------------------------------------------------------------------
# 12. span F1 on BIO dev sets


@pytest.mark.parametrize("make", [
    lambda: cseq.CRF(c2=0.5, max_iter=5, features=_features()),
    lambda: cseq.StructuredPerceptron(max_iter=3, random_state=0, features=_features()),
])
def test_dev_f1_recorded_for_bio_labels(make):
    est = make().fit(X[:4], Y[:4], X[4:], Y[4:])
    assert all("dev_f1" in rec and "dev_accuracy" in rec for rec in est.history_)
    last = est.history_[-1]
    assert last["dev_f1"] == cseq.metrics.chunk_f1(Y[4:], est.predict(X[4:]))
    pos = make().fit(X[:4], [["T" + str(len(w)) for w in s] for s in Y[:4]], X[4:],
                     [["T" + str(len(w)) for w in s] for s in Y[4:]])
    assert all("dev_f1" not in rec for rec in pos.history_)


def test_detect_scheme():
    d = cseq.metrics.detect_scheme
    assert d(["O", "B-NP", "I-NP"]) == "iob2"
    assert d(["O", "S-PER", "B-LOC", "E-LOC"]) == "bioes"
    assert d(["NOUN", "VERB"]) is None and d(["O"]) is None and d(["B-NP", "X"]) is None


# ---------------------------------------------------------------------------
# 9 and 5. the CLI: Ctrl-C with --save-on-interrupt, warnings shown


def _start_training(tmp_path, *extra):
    # Enough tokens that L-BFGS needs seconds to converge after the second
    # iteration: the signal must arrive first (6,000 tokens converge in 0.2 s).
    train = tmp_path / "train.txt"
    rows = "".join(f"w{i % 97} T{i % 5} {'B-X' if i % 3 == 0 else 'I-X'}\n" +
                   ("\n" if i % 7 == 6 else "") for i in range(200_000))
    train.write_text(rows)
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
    # A shell without job control starts background commands with SIGINT
    # ignored, and Python then installs no KeyboardInterrupt handler: give
    # the child the default disposition, as a terminal's Ctrl-C finds it.
    return subprocess.Popen(
        [sys.executable, "-m", "cseq", "train", str(train), "--template", "chunk",
         "--max-iter", "100000", "--verbose", "-o", str(tmp_path / "m.cseq"),
         "--c2", "0.0001", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _interrupt_after_two_lines(proc):
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if sum(x.startswith("iter ") for x in lines) >= 2:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    return "".join(lines) + err


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_saves_only_when_asked(tmp_path):
    proc = _start_training(tmp_path)
    err = _interrupt_after_two_lines(proc)
    assert proc.returncode == 130
    assert "nothing saved" in err and "--save-on-interrupt" in err
    assert not (tmp_path / "m.cseq").exists()
    proc = _start_training(tmp_path, "--save-on-interrupt")
    err = _interrupt_after_two_lines(proc)
    assert proc.returncode == 130, err
    n = int(re.search(r"the model after iteration (\d+) written", err).group(1))
    est = cseq.load(tmp_path / "m.cseq")
    assert est.n_iter_ == n >= 2 and est.stop_reason_.startswith("interrupted")


def test_cli_shows_training_warnings(tmp_path, monkeypatch, capsys):
    import warnings

    from cseq import cli

    fit = cseq.StructuredPerceptron.fit

    def warning_fit(self, *args, **kwargs):
        warnings.warn("did not converge in 1 iteration", RuntimeWarning, stacklevel=2)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(cseq.StructuredPerceptron, "fit", warning_fit)
    train = tmp_path / "t.txt"
    train.write_text("a DT\nb NN\n\n")
    code = cli.main(["train", str(train), "--algorithm", "perceptron", "--template", "pos",
                     "-o", str(tmp_path / "m.cseq"), "--quiet"])
    assert code == 0
    err = capsys.readouterr().err
    assert "cseq train: warning: did not converge in 1 iteration (RuntimeWarning)" in err


# ---------------------------------------------------------------------------
# 15. mypy --strict on a user's script that uses the README's API


_USER_SCRIPT = '''
import cseq
from cseq.templates import TemplateFeaturizer

X, y = cseq.conll.read_conll("train.txt")
assert y is not None
est = cseq.StructuredPerceptron(max_iter=5, features=TemplateFeaturizer("pos", min_freq=2))
est.fit(X, y, X[:10], y[:10])
pred: list[list[str]] = est.predict(X)
print(cseq.metrics.accuracy(y, pred), est.score(X, y))
print(cseq.metrics.chunk_f1(y, pred), cseq.metrics.classification_report(y, pred))
est.save("m.cseq")
print(cseq.load("m.cseq").predict(cseq.conll.read_text("raw.txt")))
for sent in cseq.conll.iter_conllu("a.conllu"):
    print(sent.rows, sent.line)
crf = cseq.CRF(c2=0.5).set_params(max_iter=3, features__min_freq=1)
'''


def test_mypy_strict_on_readme_api(tmp_path):
    pytest.importorskip("mypy")
    files = ["user_script.py"]
    (tmp_path / "user_script.py").write_text(_USER_SCRIPT)
    if README.exists():  # a checkout (cibuildwheel's test sources hold no README)
        text = README.read_text(encoding="utf-8")
        start = text.index("## Ten lines of API")
        body = text.index("```python\n", start) + 10
        (tmp_path / "readme_api.py").write_text(text[body:text.index("```", body)])
        files.append("readme_api.py")
    env = dict(os.environ)
    repo = Path(cseq.__file__).resolve().parents[1]
    if (repo / "pyproject.toml").exists():  # a checkout, not site-packages
        env["MYPYPATH"] = str(repo)
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                        "--no-incremental", *files],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success" in r.stdout
