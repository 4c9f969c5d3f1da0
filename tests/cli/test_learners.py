"""`cseq train` for every learner of the one registry (cseq.registry.COMMANDS): --c1,
crf-sgd, --early-stopping / --patience, options a learner does not take, and what `cseq
info` says, run as a subprocess (in this process where every registered learner is
parametrized, so that one registered here only is seen) on generated files and on slices
of the real corpora."""

import re

import numpy as np
import pytest

import cseq
from cseq import registry
from cseq.cli.train import _LEARNER_OPTIONS
from cseq.conll import read_conll, read_conllu

from support.cli_run import TRAIN, run, run_in_process
from support.registered import commands
from support.shared_data import CONLL2000, EWT, needs


EWT_TRAIN = EWT / "en_ewt-ud-train.conllu"
EWT_DEV = EWT / "en_ewt-ud-dev.conllu"
CONLL_TRAIN = CONLL2000 / "train.txt"


@pytest.fixture()
def train(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(TRAIN)
    return path


def head_conllu(src, dst, n):
    """The first ``n`` sentences of a CoNLL-U file, written to ``dst``."""
    out, count = [], 0
    with open(src, encoding="utf-8") as f:
        for line in f:
            out.append(line)
            if not line.strip():
                count += 1
                if count == n:
                    break
    dst.write_text("".join(out), encoding="utf-8")
    return dst


def head_conll(src, dst, n):
    return head_conllu(src, dst, n)  # the same: sentences end with a blank line


@pytest.mark.parametrize("name", commands())
def test_every_learner_trains_and_info_names_it_with_its_parameters(name, train, tmp_path):
    learner = registry.COMMANDS[name]
    model = tmp_path / f"{name}.cseq"
    args = ["train", train, "--algorithm", name, "-o", model, "--quiet"]
    if learner.templates:
        args += ["--template", "chunk"]
    if learner.max_iter is not None:
        args += ["--max-iter", "2"]
    r = run_in_process(*args)
    assert r.returncode == 0, r.stderr
    est = cseq.load(model)
    assert type(est) is learner.estimator
    for key, value in learner.fixed.items():
        assert getattr(est, key) == value
    r = run_in_process("info", model)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"learner: {name} ({learner.estimator.__name__})"
    shown = dict(re.findall(r"(\w+)=((?:'[^']*'|[^,]+))", lines[1].removeprefix("parameters: ")))
    params = est.get_params(deep=False)
    params.pop("features", None)
    assert set(shown) == set(params)
    for key, value in params.items():
        assert shown[key] == repr(value), key
    if learner.max_iter is not None:
        assert shown["max_iter"] == "2"


@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")  # short fits on purpose
def test_info_names_the_learner_of_a_model_trained_in_python(tmp_path):
    X = [[("The", "DT"), ("dog", "NN")], [("A", "DT"), ("cat", "NN")]]
    y = [["B-NP", "I-NP"], ["B-NP", "I-NP"]]
    for est, name in [(cseq.CRF(algorithm="sgd", c2=0.5, max_iter=40, random_state=3), "crf-sgd"),
                      (cseq.CRF(c1=0.1, max_iter=200), "crf"),
                      (cseq.StructuredPerceptron(max_iter=3), "perceptron")]:
        est.fit(X, y)
        path = tmp_path / f"{name}.cseq"
        est.save(path)
        r = run("info", path)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0] == f"learner: {name} ({type(est).__name__})"
        # Only the CRF counts its pruned weights (its registry info); the perceptron is
        # not said to prune none.
        assert ("exactly-zero weights pruned" in r.stdout) == (type(est) is cseq.CRF)


def test_crf_sgd_and_c1_reach_the_estimator(train, tmp_path):
    model = tmp_path / "sgd.cseq"
    r = run("train", train, "--template", "chunk", "--algorithm", "crf-sgd", "--c2", "0.5",
            "--seed", "4", "--max-iter", "3", "-o", model, "--quiet")
    assert r.returncode == 0, r.stderr
    est = cseq.load(model)
    assert (est.algorithm, est.c2, est.random_state, est.max_iter, est.n_iter_) == \
        ("sgd", 0.5, 4, 3, 3)
    # The seed defaults to 0: the same command twice gives the same file.
    again = tmp_path / "again.cseq"
    for path in (model, again):
        r = run("train", train, "--template", "chunk", "--algorithm", "crf-sgd",
                "--max-iter", "3", "-o", path, "--quiet")
        assert r.returncode == 0, r.stderr
    assert model.read_bytes() == again.read_bytes() and cseq.load(model).random_state == 0

    l1 = tmp_path / "l1.cseq"
    r = run("train", train, "--template", "chunk", "--algorithm", "crf", "--c1", "0.5",
            "--c2", "0", "--max-iter", "200", "-o", l1, "--quiet")
    assert r.returncode == 0, r.stderr
    est = cseq.load(l1)
    assert (est.algorithm, est.c1, est.c2) == ("lbfgs", 0.5, 0.0) and est.n_pruned_ > 0
    r = run("info", l1)
    assert r.returncode == 0 and f"{est.n_pruned_} exactly-zero weights pruned" in r.stdout


@pytest.mark.parametrize("name", commands(lambda command: "early_stopping" in command.options))
def test_early_stopping_keeps_the_best_iteration(name, train, tmp_path):
    model = tmp_path / "m.cseq"
    dev = tmp_path / "dev.txt"
    # A dev set that disagrees with the training labels: the dev score peaks
    # early and then falls, so training stops after --patience iterations.
    dev.write_text(TRAIN.replace("B-VP", "I-NP"))
    r = run_in_process("train", train, "--template", "chunk", "--algorithm", name, "--dev", dev,
            "--early-stopping", "--patience", "2", "--max-iter", "40", "-o", model, "--quiet")
    assert r.returncode == 0, r.stderr
    est = cseq.load(model)
    assert est.early_stopping is True and est.patience == 2
    scores = [rec["dev_accuracy"] for rec in est.history_]
    best = int(np.argmax(scores)) + 1
    assert est.best_iteration_ == best
    assert f"({est.n_iter_} iterations, the best dev score's iteration {best} kept" in r.stdout
    X, y = read_conll(dev)
    assert est.score(X, y) == scores[best - 1]
    assert f"dev accuracy {100 * scores[best - 1]:.2f}%" in r.stdout or \
        f"token accuracy {100 * scores[best - 1]:.2f}%" in r.stdout
    if est.stop_reason_ == "early stopping: no dev improvement in 2 iterations":
        assert est.n_iter_ == best + 2
    else:  # a mistake-driven learner's pass without training errors ended training first
        assert est.n_iter_ < best + 2 and est.history_[-1]["errors"] == 0
    # The weights kept are those of a run that stops at the best iteration.
    short = tmp_path / "short.cseq"
    r = run_in_process("train", train, "--template", "chunk", "--algorithm", name, "--max-iter", best,
            "-o", short, "--quiet")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(cseq.load(short).model_.params, est.model_.params)


@pytest.mark.parametrize("argv, message", [
    (["--algorithm", "perceptron", "--c1", "1"],
     "--c1 does not apply to --algorithm perceptron (it takes --seed, --order, "
     "--early-stopping, --patience)"),
    (["--algorithm", "crf-sgd", "--c1", "1"], "--c1 does not apply to --algorithm crf-sgd"),
    (["--algorithm", "crf-sgd", "--n-jobs", "2"], "--n-jobs does not apply to --algorithm crf-sgd"),
    (["--algorithm", "crf", "--seed", "1"], "--seed does not apply to --algorithm crf"),
    (["--algorithm", "greedy", "--c2", "1"],
     "--c2 does not apply to --algorithm greedy (it takes --seed, --early-stopping, "
     "--patience)"),
    (["--algorithm", "hmm", "--early-stopping", "--dev", "{train}"],
     "--early-stopping does not apply to --algorithm hmm (it takes no learner option)"),
    (["--algorithm", "crf", "--early-stopping"],
     "--early-stopping needs --dev FILE"),
    (["--algorithm", "crf", "--patience", "3", "--dev", "{train}"],
     "--patience applies only with --early-stopping"),
    (["--algorithm", "crf", "--c1", "-1"], "c1 must be finite and >= 0.0, got -1.0"),
])
def test_options_a_learner_does_not_take_are_refused(argv, message, train, tmp_path):
    argv = [a.replace("{train}", str(train)) for a in argv]
    r = run("train", train, "-o", tmp_path / "x.cseq", "--quiet", *argv)
    assert r.returncode == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "x.cseq").exists()


def test_help_lists_every_learner_with_its_options():
    r = run_in_process("train", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert f"--algorithm {{{','.join(registry.COMMANDS)}}}" in text
    for name, learner in registry.COMMANDS.items():
        assert f"{name}: " in text
        for dest in learner.options:
            assert _LEARNER_OPTIONS[dest] in text


# -- on the real corpora -------------------------------------------------------------


@pytest.mark.slow
@needs(EWT_TRAIN, EWT_DEV)
def test_early_stopping_crf_sgd_on_ewt_slices(tmp_path):
    train = head_conllu(EWT_TRAIN, tmp_path / "train.conllu", 400)
    dev = head_conllu(EWT_DEV, tmp_path / "dev.conllu", 150)
    model = tmp_path / "pos.cseq"
    r = run("train", train, "--template", "pos", "--algorithm", "crf-sgd", "--dev", dev,
            "--early-stopping", "--patience", "2", "-o", model, "--quiet")
    assert r.returncode == 0, r.stderr
    est = cseq.load(model)
    # The pos preset's c2 for the CRF, SGD's 30 epochs, the seed 0.
    assert (est.algorithm, est.c2, est.max_iter, est.random_state) == ("sgd", 0.1, 30, 0)
    scores = [rec["dev_accuracy"] for rec in est.history_]
    assert est.best_iteration_ == int(np.argmax(scores)) + 1
    X, y = read_conllu(dev)
    acc = est.score(X, y)
    assert acc == max(scores) and acc > 0.8
    assert f"dev accuracy {100 * acc:.2f}%" in r.stdout
    r = run("info", model)
    assert r.returncode == 0 and r.stdout.startswith("learner: crf-sgd (CRF)\n")
    assert "early_stopping=True, patience=2" in r.stdout


@pytest.mark.slow
@needs(CONLL_TRAIN)
def test_l1_crf_on_a_conll2000_slice_is_sparse(tmp_path):
    train = head_conll(CONLL_TRAIN, tmp_path / "train.txt", 300)
    model = tmp_path / "l1.cseq"
    r = run("train", train, "--template", "chunk", "--algorithm", "crf", "--c1", "1",
            "--c2", "0", "--max-iter", "50", "-o", model, "--quiet")
    assert r.returncode == 0, r.stderr
    est = cseq.load(model)
    assert (est.c1, est.c2) == (1.0, 0.0)
    total = est.model_.n_state + est.n_pruned_
    assert est.n_pruned_ > 0.5 * total
    r = run("info", model)
    assert r.returncode == 0, r.stderr
    assert f"state weights: {est.model_.n_state} (0 zero; {est.n_pruned_} exactly-zero" \
        in r.stdout
    r = run("eval", model, train)
    assert r.returncode == 0 and "span F1" in r.stdout


def test_resumable_training_and_resume_continue_as_partial_fit(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(TRAIN, encoding="utf-8")
    first = tmp_path / "first.cseq"
    r = run("train", train, "--template", "chunk", "--algorithm", "perceptron", "--resumable",
            "--max-iter", "2", "-o", first)
    assert r.returncode == 0, r.stderr
    assert "--resume" in r.stdout
    more = tmp_path / "more.cseq"
    r = run("train", train, "--resume", first, "--max-iter", "1", "-o", more)
    assert r.returncode == 0, r.stderr
    # The same three passes through the API.
    X, y = read_conll(train)
    est = cseq.StructuredPerceptron(random_state=0, features=cseq.TemplateFeaturizer("chunk"))
    for _ in range(3):
        est.partial_fit(X, y)
    got = cseq.load(more)
    assert got.classes_ == est.classes_
    np.testing.assert_array_equal(got.model_.params, est.model_.params)
    # What cannot resume, or be resumable, says so.
    fitted = tmp_path / "fitted.cseq"
    assert run("train", train, "--template", "chunk", "--algorithm", "perceptron",
               "-o", fitted).returncode == 0
    r = run("train", train, "--resume", fitted, "-o", more)
    assert r.returncode != 0 and "training state" in r.stderr, r.stderr
    # --algorithm crf: the chunk preset's default learner (the perceptron) is resumable.
    r = run("train", train, "--template", "chunk", "--algorithm", "crf", "--resumable",
            "-o", more)
    resumable = ", ".join(commands(lambda command: command.resumable))
    assert resumable == "crf-sgd, perceptron, ssvm"
    assert r.returncode != 0 and f"--algorithm {resumable}, not crf" in r.stderr
    # A model of a command that is not resumable (registry.Command.resumable) says so,
    # also when its estimator class has partial_fit (the CRF trained by L-BFGS).
    lbfgs = tmp_path / "lbfgs.cseq"
    assert run("train", train, "--template", "chunk", "--algorithm", "crf", "--max-iter", "2",
               "-o", lbfgs, "--quiet").returncode == 0
    r = run("train", train, "--resume", lbfgs, "-o", more)
    assert r.returncode != 0 and (f"holds a CRF (--algorithm crf), which cannot continue "
                                  f"training ({resumable} models can)") in r.stderr, r.stderr
    r = run("train", train, "--resume", first, "--c2", "0.5", "-o", more)
    assert r.returncode != 0 and "--c2 cannot change" in r.stderr
