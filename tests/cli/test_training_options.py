"""The command line and the CRF training options: per-preset defaults, ConvergenceWarning
on stderr, and what `cseq info` says about pruned (L1) models."""

import pytest

import cseq
from cseq import cli
from cseq.cli.train import _make_estimator, _templates

from support.cli_run import TRAIN, run


@pytest.mark.parametrize("argv, template, c1, c2, max_iter", [
    (["--algorithm", "crf"], "pos", 0.0, 0.1, 200),      # the pos preset's own defaults
    (["--algorithm", "crf", "--c2", "2.5"], "pos", 0.0, 2.5, 200),  # an option always wins
    (["--algorithm", "crf", "--max-iter", "7"], "pos", 0.0, 0.1, 7),
    # Chunk: elastic net, 200 iterations, and the CRF without --algorithm (ahead of
    # CRFsuite's best setting on the CoNLL-2000 dev split, docs/accuracy.md).
    ([], "chunk", 0.1, 0.1, 200),
    (["--algorithm", "crf", "--c1", "0"], "chunk", 0.0, 0.1, 200),
    (["--algorithm", "crf"], "ner", 0.0, 1.0, 100),      # other presets: the class defaults
])
def test_crf_defaults_are_resolved_per_preset(argv, template, c1, c2, max_iter):
    args = cli._parser().parse_args(["train", "x.txt", "--template", template, *argv])
    est = _make_estimator(args, _templates(template))
    assert isinstance(est, cseq.CRF) and (est.c1, est.c2, est.max_iter) == (c1, c2, max_iter)


@pytest.mark.parametrize("template, argv, order", [
    ("pos", [], 2),                   # second order on the pos preset (docs/templates.md)
    ("pos", ["--order", "1"], 1),     # an option always wins
    ("ner", [], 1),                   # other presets: the class default
])
def test_the_perceptron_defaults_per_preset(template, argv, order):
    args = cli._parser().parse_args(["train", "x.txt", "--template", template, "--algorithm",
                                     "perceptron", *argv])
    est = _make_estimator(args, _templates(template))
    assert (est.max_iter, est.random_state, est.order) == (10, 0, order)


@pytest.mark.parametrize("argv, template, max_iter", [
    ([], "chunk", 40), ([], "ner", 40),   # within 0.3 of the best sibling
    ([], "pos", 20),
    (["--max-iter", "7"], "chunk", 7),    # an option always wins
])
def test_ssvm_passes_are_resolved_per_preset(argv, template, max_iter):
    """The structured SVM's weighted average climbs for longer than the perceptron's: on the
    chunk and ner presets 10 passes ended 0.37 F1 under the CRF (CoNLL-2000) and 2.7 under
    the perceptron (WNUT-17), 40 end within 0.3; on pos 20 passes end 0.05 under the CRF
    (EWT), 10 0.16 under (dev splits, docs/accuracy.md)."""
    args = cli._parser().parse_args(["train", "x.txt", "--template", template,
                                     "--algorithm", "ssvm", *argv])
    est = _make_estimator(args, _templates(template))
    assert type(est) is cseq.StructuredSVM and (est.C, est.max_iter) == (1.0, max_iter)
    assert est.random_state == 0


def test_a_template_file_keeps_the_ssvm_class_passes(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("U00:%x[0,0]\n")
    args = cli._parser().parse_args(["train", "x.txt", "--template", str(path),
                                     "--algorithm", "ssvm"])
    assert _make_estimator(args, _templates(str(path))).max_iter == 10


def test_a_template_file_keeps_the_class_default(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("U00:%x[0,0]\n")
    args = cli._parser().parse_args(["train", "x.txt", "--template", str(path)])
    est = _make_estimator(args, _templates(str(path)))
    assert isinstance(est, cseq.CRF) and est.c2 == 1.0 and args.algorithm == "crf"


@pytest.mark.parametrize("template", ["pos", "ner"])
def test_pos_and_ner_train_the_perceptron_unless_algorithm_says(template):
    """On EWT and WNUT-17 dev the perceptron is as accurate as the CRF or more at a
    fraction of its training time (docs/accuracy.md), so `cseq train --template PRESET`
    trains it; --algorithm still chooses."""
    args = cli._parser().parse_args(["train", "x.txt", "--template", template])
    est = _make_estimator(args, _templates(template))
    assert type(est) is cseq.StructuredPerceptron and args.algorithm == "perceptron"
    assert est.max_iter == 10 and est.random_state == 0
    args = cli._parser().parse_args(["train", "x.txt", "--template", template,
                                     "--algorithm", "crf"])
    assert type(_make_estimator(args, _templates(template))) is cseq.CRF


def test_no_template_trains_the_default_learner_of_the_preset_chosen(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(TRAIN)
    model = tmp_path / "m.cseq"
    r = run("train", str(train), "-o", str(model), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "using the 'chunk' preset" in r.stderr and "trained CRF" in r.stdout
    est = cseq.load(model)
    assert type(est) is cseq.CRF and (est.c1, est.c2) == (0.1, 0.1)
    words = tmp_path / "words.txt"
    words.write_text("".join(line.split()[0] + " " + line.split()[1] + "\n" if line.strip()
                             else "\n" for line in TRAIN.splitlines()))
    r = run("train", str(words), "-o", str(model), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "using the 'pos' preset" in r.stderr and "trained StructuredPerceptron" in r.stdout


def test_a_preset_has_one_default_learner():
    from cseq.registry import Command, registered

    class Other(cseq.StructuredPerceptron):
        pass
    with pytest.raises(ValueError, match="default learner of preset 'pos' .*by perceptron"):
        with registered(Other, Command("other", 1, default_for=("pos",))):
            pass


def test_train_shows_the_convergence_warning(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(TRAIN)
    model = tmp_path / "m.cseq"
    r = run("train", str(train), "--template", "chunk", "--algorithm", "crf", "--max-iter", "2",
            "-o", str(model), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "cseq train: warning: CRF stopped at max_iter=2 before its convergence test" \
        in r.stderr
    r = run("train", str(train), "--template", "chunk", "--algorithm", "perceptron",
            "--max-iter", "2", "-o", str(model), "--quiet")
    assert r.returncode == 0 and "warning" not in r.stderr


def test_info_reports_zero_and_pruned_state_weights(tmp_path):
    X = [[("The", "DT"), ("dog", "NN"), ("barks", "VBZ")], [("A", "DT"), ("cat", "NN")]]
    y = [["B-NP", "I-NP", "B-VP"], ["B-NP", "I-NP"]]
    est = cseq.CRF(c1=0.5, c2=0.0, max_iter=200,
                   features=cseq.TemplateFeaturizer("chunk")).fit(X, y)
    assert est.n_pruned_ > 0
    path = tmp_path / "l1.cseq"
    est.save(path)
    r = run("info", str(path))
    assert r.returncode == 0, r.stderr
    assert (f"state weights: {est.model_.n_state} (0 zero; {est.n_pruned_} exactly-zero "
            "weights pruned after training)") in r.stdout
