"""The `cseq` command line, run as a subprocess on small files."""


import pytest

import cseq
from cseq.conll import read_conll
from cseq.data import train_path

from support.cli_run import TRAIN, run


@pytest.fixture()
def files(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(TRAIN)
    return tmp_path, train


@pytest.mark.parametrize("algorithm", ["crf", "perceptron"])
def test_train_tag_eval_info(files, algorithm):
    tmp, train = files
    model = tmp / "m.cseq"
    r = run("train", str(train), "--template", "chunk", "--algorithm", algorithm,
            "--dev", str(train), "-o", str(model), "--max-iter", "20")
    assert r.returncode == 0, r.stderr
    assert "dev span F1" in r.stdout and model.exists()
    est = cseq.load(model)
    assert est.classes_ == ["B-NP", "B-VP", "I-NP", "O"]

    # tag an unlabeled two-column file, and the labeled file with --labeled
    unlabeled = tmp / "in.txt"
    unlabeled.write_text("The DT\ndog NN\nsleeps VBZ\n\n")
    out = tmp / "out.txt"
    r = run("tag", str(model), str(unlabeled), "-o", str(out))
    assert r.returncode == 0, r.stderr
    rows, labels = read_conll(out, sep="\t")
    assert rows == [[("The", "DT"), ("dog", "NN"), ("sleeps", "VBZ")]]
    assert labels == [["B-NP", "I-NP", "B-VP"]]
    r = run("tag", str(model), str(train), "--labeled")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n\n") == 3

    r = run("eval", str(model), str(train), "--scheme", "iob2")
    assert r.returncode == 0, r.stderr
    assert "accuracy" in r.stdout and "NP" in r.stdout

    r = run("info", str(model))
    assert r.returncode == 0, r.stderr
    assert "labels (4)" in r.stdout and "transitions" in r.stdout


def test_tag_marginals_crf_only(files):
    tmp, train = files
    crf, ap = tmp / "crf.cseq", tmp / "ap.cseq"
    assert run("train", str(train), "--template", "chunk", "-o", str(crf)).returncode == 0
    r = run("tag", str(crf), str(train), "--labeled", "--marginals")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0].split("\t")
    assert len(first) == 4 and 0.0 <= float(first[3]) <= 1.0
    assert run("train", str(train), "--template", "chunk", "--algorithm", "perceptron",
               "-o", str(ap)).returncode == 0
    r = run("tag", str(ap), str(train), "--labeled", "--marginals")
    assert r.returncode == 1 and "marginals" in r.stderr


def test_train_with_template_file(files):
    tmp, train = files
    tpl = tmp / "template"
    tpl.write_text("# words and tags\nU00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]/%x[0,1]\n\nB\n")
    r = run("train", str(train), "--template", str(tpl), "-o", str(tmp / "m.cseq"))
    assert r.returncode == 0, r.stderr


def test_conllu_input(tmp_path):
    src = tmp_path / "a.conllu"
    src.write_text("# text = Hi there\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n"
                   "2\tthere\tthere\tADV\tRB\t_\t1\tadvmod\t_\t_\n\n")
    model = tmp_path / "m.cseq"
    r = run("train", str(src), "--template", "pos", "-o", str(model), "--label", "xpos")
    assert r.returncode == 0, r.stderr
    assert cseq.load(model).classes_ == ["RB", "UH"]


def test_demo():
    r = run("demo", "--max-iter", "1", "--sentence", "I like it .")
    assert r.returncode == 0, r.stderr
    assert "held-out accuracy" in r.stdout
    assert "tagged: I/" in r.stdout
    X, _ = read_conll(train_path(), sep="\t")
    assert str(len(X)) in r.stdout


def test_demo_tags_its_showcase_sentence_correctly(tmp_path):
    # The default demo, as the README's first command runs it.
    r = run("demo", "-o", str(tmp_path / "pos.cseq"))
    assert r.returncode == 0, r.stderr
    assert ("tagged: The/DET quick/ADJ brown/ADJ fox/NOUN jumps/VERB over/ADP the/DET "
            "lazy/ADJ dog/NOUN ./PUNCT") in r.stdout
    acc = float(r.stdout.split("held-out accuracy on the other 2509 sentences (42055 tokens): "
                               )[1].split("%")[0])
    assert 94.0 < acc < 96.0
    assert cseq.load(tmp_path / "pos.cseq").classes_[0] == "ADJ"


@pytest.mark.parametrize("args", [[], ["train"], ["frobnicate"], ["train", "x", "--algorithm", "svm"]])
def test_bad_arguments_exit_2(args):
    r = run(*args)
    assert r.returncode == 2
    assert "usage" in r.stderr


def test_bad_files_exit_1(tmp_path):
    r = run("train", str(tmp_path / "missing.txt"))
    assert r.returncode == 1 and "error" in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("a B\nb C D\n\n")
    r = run("train", str(bad))
    assert r.returncode == 1 and "bad.txt:2" in r.stderr
    junk = tmp_path / "junk.cseq"
    junk.write_bytes(b"not a model at all, just some bytes" * 3)
    for cmd in (["info", str(junk)], ["tag", str(junk), str(bad)]):
        r = run(*cmd)
        assert r.returncode == 1 and "not a cseq model" in r.stderr


@pytest.mark.parametrize("command", ["train", "tag", "eval", "info", "import", "demo"])
def test_help(command):
    r = run(command, "--help")
    assert r.returncode == 0 and "usage: cseq " + command in r.stdout


@pytest.mark.parametrize("algorithm", ["memm", "hmm"])
def test_train_tag_info_memm_and_hmm(files, algorithm):
    tmp, train = files
    model = tmp / f"{algorithm}.cseq"
    # No --template: the MEMM gets a preset chosen from the data (and says
    # so); the HMM reads words and chooses none.
    extra = ["--max-iter", "20", "--c2", "0.1"] if algorithm == "memm" else []
    r = run("train", str(train), "--algorithm", algorithm, "--dev", str(train), "-o",
            str(model), *extra)
    assert r.returncode == 0, r.stderr
    assert "dev span F1" in r.stdout
    est = cseq.load(model)
    assert type(est).__name__ == algorithm.upper()
    assert est.classes_ == ["B-NP", "B-VP", "I-NP", "O"]
    assert ("preset" in r.stderr) == (algorithm == "memm")
    r = run("tag", str(model), str(train), "--labeled", "--marginals")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0].split("\t")
    assert len(first) == 4 and 0.0 <= float(first[3]) <= 1.0
    r = run("info", str(model))
    assert r.returncode == 0, r.stderr
    assert type(est).__name__ in r.stdout and "labels (4)" in r.stdout
    # The HMM has no iterations, templates or L2 strength.
    if algorithm == "hmm":
        for bad in (["--max-iter", "3"], ["--template", "pos"], ["--c2", "1"]):
            r = run("train", str(train), "--algorithm", "hmm", "-o", str(model), *bad)
            assert r.returncode != 0 and "does not apply" in r.stderr, bad


def test_train_tag_info_greedy(files):
    tmp, train = files
    model = tmp / "greedy.cseq"
    r = run("train", str(train), "--algorithm", "greedy", "--dev", str(train), "-o", str(model),
            "--max-iter", "3", "--seed", "1")
    assert r.returncode == 0, r.stderr
    assert "dev span F1" in r.stdout
    est = cseq.load(model)
    assert type(est).__name__ == "GreedyTagger"
    assert est.get_params()["max_iter"] == 3 and est.get_params()["random_state"] == 1
    assert est.classes_ == ["B-NP", "B-VP", "I-NP", "O"]
    r = run("tag", str(model), str(train), "--labeled")
    assert r.returncode == 0, r.stderr
    X, _ = read_conll(train)
    tags = [line.split()[-1] for line in r.stdout.splitlines() if line.strip()]
    assert tags == [t for s in est.predict(X) for t in s]
    r = run("info", str(model))
    assert r.returncode == 0, r.stderr
    assert "GreedyTagger" in r.stdout and "labels (4)" in r.stdout
    r = run("train", str(train), "--algorithm", "greedy", "-o", str(model), "--c2", "1")
    assert r.returncode != 0 and "does not apply" in r.stderr


def test_train_ssvm_with_c_and_seed(files):
    tmp, train = files
    model = tmp / "ssvm.cseq"
    r = run("train", str(train), "--template", "chunk", "--algorithm", "ssvm", "--C", "0.5",
            "--max-iter", "3", "--dev", str(train), "-o", str(model))
    assert r.returncode == 0, r.stderr
    assert "dev span F1" in r.stdout
    est = cseq.load(model)
    assert type(est).__name__ == "StructuredSVM"
    assert (est.C, est.max_iter, est.random_state, est.n_iter_) == (0.5, 3, 0, 3)
    assert all("loss" in record for record in est.history_)
    # The same command gives the same model (the seed defaults to 0).
    again = tmp / "again.cseq"
    r = run("train", str(train), "--template", "chunk", "--algorithm", "ssvm", "--C", "0.5",
            "--max-iter", "3", "--dev", str(train), "-o", str(again))
    assert r.returncode == 0, r.stderr
    assert again.read_bytes() == model.read_bytes()
    r = run("info", str(model))
    assert r.returncode == 0 and "StructuredSVM" in r.stdout, r.stderr
    for args in (["--algorithm", "ssvm", "--c2", "1"], ["--algorithm", "perceptron", "--C", "1"]):
        r = run("train", str(train), "--template", "chunk", "-o", str(tmp / "x.cseq"), *args)
        assert r.returncode != 0 and "does not apply" in r.stderr, args
    r = run("train", str(train), "--template", "chunk", "--algorithm", "ssvm", "--C", "0",
            "-o", str(tmp / "x.cseq"))
    assert r.returncode == 1 and "C must be positive" in r.stderr
