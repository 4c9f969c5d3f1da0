"""The command line on the files people have: plain text, CoNLL-U in and out,
format detection by content, explicit columns, streaming, errors that name the file.

Every test runs ``python -m cseq`` as a subprocess, on real corpora from
``../shared/data`` (``CSEQ_SHARED_DATA`` overrides the place) and on generated files.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import cseq
from cseq.conll import read_conll
from cseq.data import sample_path

from support.memory import skip_under_asan
from support.cli_run import run
from support.shared_data import DATA, SKIP_REASON, needs

EWT_DEV = DATA / "ud_en_ewt" / "en_ewt-ud-dev.conllu"
CONLL2000 = DATA / "conll2000" / "train.txt"
WNUT_DEV = DATA / "wnut17" / "emerging.dev.conll"
needs_data = needs(EWT_DEV, CONLL2000, WNUT_DEV)


def head_sentences(path: Path, n: int, out: Path) -> Path:
    """The first ``n`` blank-line-separated blocks of a real file."""
    blocks = path.read_text(encoding="utf-8").split("\n\n")[:n]
    out.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def pos_model(tmp_path_factory):
    """A POS tagger trained by the CLI on the bundled sample (perceptron, 2 passes)."""
    path = tmp_path_factory.mktemp("models") / "pos.cseq"
    r = run("train", sample_path(), "--template", "pos", "--algorithm", "perceptron",
            "--max-iter", "2", "-o", path, "--quiet")
    assert r.returncode == 0, r.stderr
    return path


@pytest.fixture(scope="module")
def chunk_model(tmp_path_factory):
    """A chunker trained by the CLI on 300 sentences of CoNLL-2000."""
    if not CONLL2000.exists():
        pytest.skip(f"{SKIP_REASON}: {CONLL2000}")
    tmp = tmp_path_factory.mktemp("chunk")
    train = head_sentences(CONLL2000, 300, tmp / "train.txt")
    path = tmp / "chunk.cseq"
    r = run("train", train, "--template", "chunk", "--algorithm", "perceptron",
            "--max-iter", "3", "-o", path, "--quiet")
    assert r.returncode == 0, r.stderr
    return path, train


# ---------------------------------------------------------------------------
# 1. plain text


def test_plain_text_is_tagged_line_by_line(pos_model, tmp_path):
    text = tmp_path / "raw.txt"
    text.write_text("The dog barked at the mailman .\nIt ran home .\n\nA cat sat on the mat\n")
    r = run("tag", pos_model, text)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[2] == "" and lines[4] == ""  # the blank input line is kept; nothing after
    tokens = [[w.rsplit("/", 1) for w in line.split()] for line in lines if line]
    assert [[w for w, _ in s] for s in tokens] == [
        "The dog barked at the mailman .".split(), "It ran home .".split(),
        "A cat sat on the mat".split()]
    assert all(t in cseq.load(pos_model).classes_ for s in tokens for _, t in s)
    assert tokens[0][0][1] == "DET" and tokens[0][-1][1] == "PUNCT"
    # the same labels as the API gives for the same tokens
    api = cseq.load(pos_model).predict([[(w,) for w, _ in s] for s in tokens])
    assert [[t for _, t in s] for s in tokens] == api


def test_single_line_of_text_is_one_sentence(pos_model):
    r = run("tag", pos_model, "-", stdin="The dog barked\n")
    assert r.returncode == 0, r.stderr
    assert [w.split("/")[0] for w in r.stdout.split()] == ["The", "dog", "barked"]


def test_the_documented_text_conll_ambiguity_and_its_option(pos_model, tmp_path):
    # README ("How the format is told"): the pos preset reads one column, so
    # files of two-word or of one-word lines look like CoNLL; --format text
    # reads them as text.
    from cseq.conll import sniff_format

    pairs, singles = ["Thank you", "No way", "Good job"], ["Yes", "No", "Fine"]
    assert sniff_format(pairs, n_columns=1) == "conll"
    assert sniff_format(singles, n_columns=1) == "conll"
    assert sniff_format(pairs + ["Yes", "It ran home ."], n_columns=1) == "text"
    assert sniff_format(["The dog barked", "It ran home"], n_columns=1) == "text"
    assert sniff_format(["The dog barked", "It ran home"]) == "conll"  # no column count
    for lines in (pairs, singles):
        text = tmp_path / "short.txt"
        text.write_text("\n".join(lines) + "\n")
        guessed = run("tag", pos_model, text)
        if lines is pairs:  # the second word looks like a gold label column
            assert guessed.returncode == 1 and "--format text" in guessed.stderr
        else:  # one sentence of three one-word tokens
            assert guessed.returncode == 0, guessed.stderr
            assert len([t for t in guessed.stdout.split("\n") if t]) == 3
            assert guessed.stdout.split("\n")[3] == ""
        told = run("tag", pos_model, text, "--format", "text")
        assert told.returncode == 0, told.stderr
        words = [[w.rsplit("/", 1)[0] for w in line.split()] for line in told.stdout.splitlines()]
        assert words == [line.split() for line in lines]


def test_text_output_as_word_tab_tag(pos_model, tmp_path):
    text = tmp_path / "raw.txt"
    text.write_text("The dog barked .\nIt ran .\n")
    r = run("tag", pos_model, text, "--output-format", "conll")
    assert r.returncode == 0, r.stderr
    rows, labels = read_conll(r.stdout.encode() and _as_file(tmp_path, r.stdout), sep="\t")
    assert rows == [[("The",), ("dog",), ("barked",), (".",)], [("It",), ("ran",), (".",)]]
    assert len(labels[0]) == 4


def _as_file(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "out.txt"
    p.write_text(text, encoding="utf-8")
    return p


# ---------------------------------------------------------------------------
# 2. a label column left in the input


def test_labeled_input_without_labeled_is_refused(chunk_model):
    model, train = chunk_model
    r = run("tag", model, train)
    assert r.returncode == 1
    assert "--labeled" in r.stderr and "train.txt:1" in r.stderr
    assert "trained on 2" in r.stderr
    r = run("tag", model, train, "--labeled")
    assert r.returncode == 0, r.stderr
    first = r.stdout.split("\n")[0].split("\t")
    assert first[:2] == ["Confidence", "NN"] and len(first) == 3


def test_model_file_records_its_input_columns(chunk_model, pos_model):
    assert cseq.load(chunk_model[0]).featurizer_.n_columns_ == 2
    assert cseq.load(pos_model).featurizer_.n_columns_ == 1


# ---------------------------------------------------------------------------
# 3. CoNLL-U detected by content


@needs_data
def test_conllu_not_named_conllu_is_read_as_conllu(tmp_path):
    src = head_sentences(EWT_DEV, 60, tmp_path / "ewt_head.txt")
    model = tmp_path / "m.cseq"
    r = run("train", src, "--template", "pos", "--algorithm", "perceptron", "--max-iter", "1",
            "-o", model, "--quiet")
    assert r.returncode == 0, r.stderr
    est = cseq.load(model)
    assert "NOUN" in est.classes_ and "_" not in est.classes_  # UPOS, not MISC
    assert est.featurizer_.n_columns_ == 1


# ---------------------------------------------------------------------------
# 6. CoNLL-U in, CoNLL-U out; -DOCSTART- kept; JSON lines


def _conllu_with_everything() -> str:
    return ("# sent_id = 1\n# text = Don't go.\n"
            "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
            "1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n"
            "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n"
            "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No\n"
            "3.1\tgone\t_\t_\t_\t_\t_\t_\t3:ref\t_\n"
            "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n")


def _check_conllu_round_trip(src: str, out: str, column: int, classes) -> int:
    """Every line equal except the label column of word lines; returns the words seen."""
    a, b = src.rstrip("\n").split("\n"), out.rstrip("\n").split("\n")
    assert len(a) == len(b)
    words = 0
    for x, y in zip(a, b):
        fx, fy = x.split("\t"), y.split("\t")
        if x.startswith("#") or len(fx) != 10 or not fx[0].isdigit():
            assert x == y
            continue
        words += 1
        assert fx[:column] == fy[:column] and fx[column + 1:] == fy[column + 1:]
        assert fy[column] in classes
    return words


def test_conllu_round_trip_keeps_everything(pos_model, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text(_conllu_with_everything())
    classes = cseq.load(pos_model).classes_
    for flag, col in ((None, 3), ("xpos", 4)):
        extra = ["--label-column", flag] if flag else []
        r = run("tag", pos_model, src, *extra)
        assert r.returncode == 0, r.stderr
        assert _check_conllu_round_trip(src.read_text(), r.stdout, col, classes) == 4
        assert "1-2\tDon't" in r.stdout and "3.1\tgone" in r.stdout
        assert "# text = Don't go." in r.stdout


@needs_data
def test_conllu_round_trip_on_ewt_dev(pos_model, tmp_path):
    out = tmp_path / "dev.tagged.conllu"
    r = run("tag", pos_model, EWT_DEV, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    n = _check_conllu_round_trip(EWT_DEV.read_text(encoding="utf-8"), text, 3,
                                 cseq.load(pos_model).classes_)
    assert n > 20000
    # and it reads back as CoNLL-U, with the API's predictions in UPOS
    X, y = cseq.conll.read_conllu(out)
    assert y[:50] == cseq.load(pos_model).predict(X[:50])


def test_docstart_lines_are_kept(chunk_model, tmp_path):
    model, _ = chunk_model
    src = tmp_path / "doc.txt"
    src.write_text("-DOCSTART- -X-\n\nHe PRP\nran VBD\n\n-DOCSTART- -X-\n\nShe PRP\n")
    r = run("tag", model, src)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0] == "-DOCSTART- -X-" and lines[1] == ""
    assert lines[2].startswith("He\tPRP\t") and lines[5] == "-DOCSTART- -X-"
    assert lines[7].startswith("She\tPRP\t")


def test_jsonl_output_with_confidence(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("The DT B-NP\ndog NN I-NP\nbarks VBZ B-VP\n\nA DT B-NP\ncat NN I-NP\n\n")
    model = tmp_path / "crf.cseq"
    assert run("train", train, "--template", "chunk", "-o", model, "--quiet").returncode == 0
    src = tmp_path / "in.txt"
    src.write_text("The DT\ncat NN\n\n")
    r = run("tag", model, src, "--output-format", "jsonl", "--marginals")
    assert r.returncode == 0, r.stderr
    (record,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert record["tokens"] == ["The", "cat"]
    assert record["labels"] == cseq.load(model).predict([[("The", "DT"), ("cat", "NN")]])[0]
    assert all(0.0 <= c <= 1.0 for c in record["confidence"]) and len(record["confidence"]) == 2
    r = run("tag", model, src, "--output-format", "jsonl")
    assert "confidence" not in json.loads(r.stdout)


# ---------------------------------------------------------------------------
# 7. streaming: standard input and output, constant memory


def test_stdin_and_stdout(pos_model, tmp_path):
    text = "The dog barked .\n"
    a = run("tag", pos_model, "-", "-o", "-", stdin=text)
    src = tmp_path / "a.txt"
    src.write_text(text)
    b = run("tag", pos_model, src)
    assert a.returncode == 0 and a.stdout == b.stdout != ""


_PEAK_RSS = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _peak_rss_kb(*args) -> int:
    r = subprocess.run([sys.executable, "-c", _PEAK_RSS, sys.executable, "-m", "cseq",
                        *map(str, args)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


@pytest.mark.slow
@skip_under_asan
def test_tag_streams_in_constant_memory(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("a DT\ndog NN\n\nthe DT\ncat NN\n\n")
    template = tmp_path / "words.tpl"
    template.write_text("U00:%x[0,0]\nB\n")
    model = tmp_path / "m.cseq"
    r = run("train", train, "--template", template, "--algorithm", "perceptron",
            "-o", model, "--quiet")
    assert r.returncode == 0, r.stderr
    rng = random.Random(0)
    words = ["a", "the", "dog", "cat", "x" * 12, "y"]
    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    small.write_text("a dog\n")
    line = " ".join(rng.choice(words) for _ in range(40)) + "\n"
    with open(big, "w") as f:
        for _ in range(16):
            f.write(line * 10_000)  # 160,000 sentences, 6.4M tokens
    size_kb = big.stat().st_size // 1024
    opts = ("--format", "text", "--batch-tokens", "20000")
    base = _peak_rss_kb("tag", model, small, "-o", tmp_path / "o1", *opts)
    peak = _peak_rss_kb("tag", model, big, "-o", tmp_path / "o2", *opts)
    assert size_kb > 30_000
    # Holding the file, or its tokens as Python strings, would take several times its size.
    assert peak - base < size_kb // 4, (base, peak, size_kb)
    assert (tmp_path / "o2").stat().st_size > big.stat().st_size


# ---------------------------------------------------------------------------
# 8. explicit columns and the preset chosen from the data


def test_label_and_feature_columns(tmp_path):
    # label first, then word and POS
    train = tmp_path / "t.txt"
    train.write_text("B-NP The DT\nI-NP dog NN\nB-VP barks VBZ\n\nB-NP A DT\nI-NP cat NN\n\n")
    model = tmp_path / "m.cseq"
    r = run("train", train, "--label-column", "0", "--template", "chunk", "-o", model,
            "--quiet")
    assert r.returncode == 0, r.stderr
    assert cseq.load(model).classes_ == ["B-NP", "B-VP", "I-NP"]
    # only the word column (index 0 after removing the label)
    model1 = tmp_path / "m1.cseq"
    r = run("train", train, "--label-column", "0", "--columns", "0", "--template", "pos",
            "-o", model1, "--quiet")
    assert r.returncode == 0, r.stderr
    assert cseq.load(model1).featurizer_.n_columns_ == 1


def test_template_chosen_from_data_with_a_message(tmp_path):
    chunky = tmp_path / "chunk.txt"
    chunky.write_text("The DT B-NP\ndog NN I-NP\nbarks VBZ B-VP\n\n")
    r = run("train", chunky, "-o", tmp_path / "a.cseq", "--max-iter", "2")
    assert r.returncode == 0, r.stderr
    assert "'chunk' preset" in r.stderr
    assert cseq.load(tmp_path / "a.cseq").features.templates.n_columns == 2
    ner = tmp_path / "ner.txt"
    ner.write_text("Paris B-LOC\nis O\nnice O\n\n")
    r = run("train", ner, "-o", tmp_path / "b.cseq", "--max-iter", "2")
    assert r.returncode == 0 and "'ner' preset" in r.stderr
    pos = tmp_path / "pos.txt"
    pos.write_text("Paris PROPN\nis AUX\n\n")
    r = run("train", pos, "-o", tmp_path / "c.cseq", "--max-iter", "2")
    assert r.returncode == 0 and "'pos' preset" in r.stderr


def test_train_help_names_the_columns():
    r = run("train", "--help")
    text = " ".join(r.stdout.split())
    assert "label is the last CoNLL column" in text
    assert "'chunk' reads columns 0 (word) and 1 (POS tag)" in text
    assert "--label-column" in text and "--columns" in text


# ---------------------------------------------------------------------------
# 5 and 10. arguments and errors that name the file


@pytest.mark.parametrize("args", [["--max-iter", "0"], ["--max-iter", "-3"], ["--min-freq", "0"],
                                  ["--n-jobs", "0"]])
def test_bad_numbers_are_usage_errors(tmp_path, args):
    r = run("train", tmp_path / "x.txt", *args)
    assert r.returncode == 2 and "must be" in r.stderr


def test_errors_name_the_file(tmp_path, chunk_model):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    r = run("train", empty, "--template", "pos")
    assert r.returncode == 1 and "empty.txt" in r.stderr and "no sentences" in r.stderr
    r = run("train", empty, "--template", "chnk")
    assert r.returncode == 1 and "pos, chunk, ner" in r.stderr
    conllu = tmp_path / "in.conllu"
    conllu.write_text(_conllu_with_everything())
    r = run("tag", chunk_model[0], conllu)
    assert r.returncode == 1 and "in.conllu:4" in r.stderr and "--columns" in r.stderr


def test_learner_option_that_does_not_apply(tmp_path):
    train = tmp_path / "t.txt"
    train.write_text("a DT\n\n")
    r = run("train", train, "--algorithm", "perceptron", "--c2", "0.5")
    assert r.returncode == 1 and "--c2 does not apply" in r.stderr


def test_output_path_checked_before_training(tmp_path):
    train = tmp_path / "t.txt"
    train.write_text("a DT\n\n")
    r = run("train", train, "-o", tmp_path / "no" / "such" / "dir" / "m.cseq")
    assert r.returncode == 1 and "no directory" in r.stderr and "trained" not in r.stdout


def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"cseq {cseq.__version__}"


def test_info_names_the_learner(chunk_model):
    r = run("info", chunk_model[0])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("learner: perceptron (StructuredPerceptron)")
    assert "max_iter=3" in r.stdout and "input columns: 2" in r.stdout
    # Features read as what they test (template text = value),
    # not as attribute ids such as U05:the.
    top = [line for line in r.stdout.splitlines() if line.startswith("top features for")]
    assert top and all("%x[" in line and "=" in line for line in top)
    assert not re.search(r"\bU\d+:", "\n".join(top))


# ---------------------------------------------------------------------------
# 14. modules reachable from `import cseq`


def test_modules_come_with_import_cseq():
    code = ("import cseq, io; X, y = cseq.conll.read_conll(io.StringIO('a B\\n')); "
            "print(cseq.metrics.accuracy(y, y), cseq.templates.PRESETS.keys() >= {'pos'})")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1.0", "True"]


# ---------------------------------------------------------------------------
# 4. eval with labels the model does not know


def test_eval_warns_when_no_gold_label_is_known(chunk_model, tmp_path):
    model, _ = chunk_model
    wrong = tmp_path / "pos_labels.txt"
    wrong.write_text("He PRP B-NP\nran VBD B-VP\n\n")
    r = run("eval", model, wrong, "--label-column", "1")  # the POS column, by mistake
    assert r.returncode == 0
    assert "none of the labels" in r.stderr and "column 1" in r.stderr
    assert "PRP" in r.stderr and "B-ADJP" in r.stderr


# ---------------------------------------------------------------------------
# 12. progress where people train, span F1 for BIO data


def _train_small(tmp_path, *extra):
    train = tmp_path / "t.txt"
    train.write_text("The DT B-NP\ndog NN I-NP\nbarks VBZ B-VP\n\nA DT B-NP\ncat NN I-NP\n\n")
    return run("train", train, "--template", "chunk", "--algorithm", "perceptron",
               "--max-iter", "3", "--dev", train, "-o", tmp_path / "m.cseq", "--seed", "1",
               *extra)


def test_progress_verbose_quiet_and_default(tmp_path):
    verbose = _train_small(tmp_path, "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    lines = [line for line in verbose.stderr.splitlines() if line.startswith("iter ")]
    assert [line.split()[1] for line in lines][:2] == ["1/3", "2/3"]
    assert "\r" not in verbose.stderr and "dev span F1" in lines[0]
    quiet = _train_small(tmp_path, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_progress_lines_in_logs_are_throttled():
    import io

    from cseq.cli.progress import _Progress
    record = {"iteration": 1, "errors": 3}
    every_call, never = io.StringIO(), io.StringIO()
    for stream, every in ((every_call, 0.0), (never, 1e9)):
        p = _Progress(5, stream, every=every)
        for it in (1, 2, 3):
            p({**record, "iteration": it})
        p.close()
    assert every_call.getvalue().count("\n") == 3 and "\r" not in every_call.getvalue()
    assert never.getvalue() == ""


@needs_data
def test_eval_on_bio_reports_span_f1_first(tmp_path):
    model = tmp_path / "ner.cseq"
    train = head_sentences(DATA / "wnut17" / "wnut17train.conll", 800, tmp_path / "w.conll")
    r = run("train", train, "--template", "ner", "--algorithm", "perceptron", "--max-iter",
            "3", "-o", model, "--quiet", "--dev", WNUT_DEV)
    assert r.returncode == 0, r.stderr
    assert "dev span F1" in r.stdout
    r = run("eval", model, WNUT_DEV)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("span F1: ") and "token accuracy" in first
    X, y = cseq.conll.read_conll(WNUT_DEV)
    f1 = cseq.metrics.chunk_f1(y, cseq.load(model).predict(X))
    assert first.split()[2] == f"{100 * f1:.2f}%"


# ---------------------------------------------------------------------------
# Output files never destroy their input


def _same_file_as(src: Path, how: str) -> Path:
    """``src`` by another name: the path itself, a symbolic link or a hard link."""
    if how == "path":
        return src
    other = src.parent / f"{how}-to-{src.name}"
    (os.symlink if how == "symlink" else os.link)(src, other)
    return other


@pytest.mark.parametrize("how", ["path", "symlink", "hardlink"])
def test_tag_refuses_to_write_over_its_input(pos_model, tmp_path, how):
    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\nIt ran .\n")
    before = text.read_bytes()
    r = run("tag", pos_model, text, "-o", _same_file_as(text, how))
    assert r.returncode == 1 and "is the input" in r.stderr, r.stderr
    assert text.read_bytes() == before
    model = pos_model.read_bytes()
    r = run("tag", pos_model, text, "-o", pos_model)  # nor over the model
    assert r.returncode == 1 and "is the input" in r.stderr
    assert pos_model.read_bytes() == model


@pytest.mark.parametrize("how", ["path", "symlink", "hardlink"])
def test_train_refuses_to_write_the_model_over_its_data(tmp_path, how):
    train = tmp_path / "train.txt"
    train.write_text("The DT\ndog NN\n\nA DT\ncat NN\n\n")
    before = train.read_bytes()
    r = run("train", train, "-o", _same_file_as(train, how), "--max-iter", "1", "--quiet")
    assert r.returncode == 1 and "is the input" in r.stderr, r.stderr
    assert train.read_bytes() == before
    dev = tmp_path / "dev.txt"
    dev.write_bytes(before)
    r = run("train", train, "--dev", dev, "-o", dev, "--max-iter", "1", "--quiet")
    assert r.returncode == 1 and dev.read_bytes() == before


def test_eval_refuses_a_report_over_its_input(chunk_model):
    model, train = chunk_model
    before = train.read_bytes()
    r = run("eval", model, train, "--report", train)
    assert r.returncode == 1 and "is the input" in r.stderr
    assert train.read_bytes() == before


def test_failed_tag_leaves_an_existing_output_as_it_was(pos_model, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("the previous output\n")
    # fails before a sentence is tagged (a second column, as if a label) ...
    labeled = tmp_path / "labeled.txt"
    labeled.write_text("The DET\ndog NOUN\n\n")
    r = run("tag", pos_model, labeled, "-o", out)
    assert r.returncode == 1 and "--labeled" in r.stderr
    assert out.read_text() == "the previous output\n"
    # ... and after thousands were (a byte that is not UTF-8 past the first 64 KiB)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"The dog barked .\nIt ran .\n" * 3000 + b"caf\xe9 au lait\n")
    r = run("tag", pos_model, bad, "-o", out, "--format", "text", "--batch-tokens", "1")
    assert r.returncode == 1 and "bad.txt:6001" in r.stderr, r.stderr
    assert out.read_text() == "the previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "labeled.txt", "out.txt"]
    # and a good run replaces it, keeping its permissions
    out.chmod(0o640)
    good = tmp_path / "good.txt"
    good.write_text("The dog barked .\n")
    r = run("tag", pos_model, good, "-o", out)
    assert r.returncode == 0 and out.read_text().startswith("The/DET")
    assert out.stat().st_mode & 0o777 == 0o640


def test_interrupted_tag_leaves_no_truncated_output(pos_model, tmp_path):
    # The input is a FIFO fed by this test: the command has tagged and written
    # the first part when it is interrupted, waiting for more.
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "out.txt"
    out.write_text("the previous output\n")
    cmd = [sys.executable, "-m", "cseq", "tag", str(pos_model), str(fifo), "-o", str(out),
           "--format", "text", "--batch-tokens", "1"]
    # A shell without job control (a CI script run in the background) starts commands
    # with SIGINT ignored, and Python then installs no KeyboardInterrupt handler: give
    # the child the default disposition, as a terminal's Ctrl-C finds it.
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        with open(fifo, "w") as feed:
            feed.write("The dog barked at the mailman .\n" * 3000)  # ~150 KB of output
            feed.flush()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # until a part was written somewhere
                written = [p for p in tmp_path.iterdir()
                           if p.name.startswith(".cseq-") and p.stat().st_size > 0]
                if written or out.read_text() != "the previous output\n":
                    break
                time.sleep(0.05)
            else:
                raise AssertionError("cseq tag wrote nothing in 120 s")
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130 and "interrupted" in err, err
    assert out.read_text() == "the previous output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.fifo", "out.txt"]


def test_tag_still_streams_to_devices_and_standard_output(pos_model, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\n")
    r = run("tag", pos_model, text, "-o", os.devnull)
    assert r.returncode == 0 and r.stdout == "" and os.path.exists(os.devnull)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    r = run("tag", pos_model, text, "-o", "-")
    assert r.returncode == 0 and r.stdout.startswith("The/DET")


# ---------------------------------------------------------------------------
# A FIFO as the model never blocks; as the input it streams


def test_a_fifo_as_the_model_is_refused_at_once(pos_model, tmp_path):
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\n")
    # A regression blocks in open(): the timeout turns it into a failure.
    for args in (("info", fifo), ("tag", fifo, text), ("eval", fifo, text)):
        r = run(*args, timeout=60)
        assert r.returncode == 1 and "not a regular file" in r.stderr, (args, r.stderr)
    code = "import sys, cseq\ntry:\n cseq.load(sys.argv[1])\nexcept cseq.ModelFormatError as e:\n print(e)"
    r = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True,
                       timeout=60)
    assert "not a regular file" in r.stdout, r.stderr


def test_tag_reads_its_input_from_a_fifo(pos_model, tmp_path):
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:
            f.write("The dog barked .\nIt ran home quickly .\n")
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    r = run("tag", pos_model, fifo, timeout=120)
    writer.join(timeout=10)
    assert r.returncode == 0, r.stderr
    assert [w.split("/")[0] for w in r.stdout.split()] == \
        "The dog barked . It ran home quickly .".split()


# ---------------------------------------------------------------------------
# Closed standard streams, an empty separator


def _shell(command: str, *args) -> subprocess.CompletedProcess:
    """``command`` run by sh with $1... = args, cseq as ``$CSEQ``."""
    env = dict(os.environ, CSEQ=f"{sys.executable} -m cseq")
    return subprocess.run(["sh", "-c", command, "sh", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.mark.parametrize("command, message", [
    ('$CSEQ tag "$1" - <&-', "standard input is closed"),
    ('$CSEQ tag "$1" "$2" >&-', "standard output is closed"),
    ('$CSEQ info "$1" >&-', "standard output is closed"),
])
def test_closed_standard_streams_are_one_line_errors(pos_model, tmp_path, command, message):
    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\n")
    r = _shell(command, pos_model, text)
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines() == [r.stderr.strip()] and message in r.stderr, r.stderr


def test_closed_stdout_with_an_output_file_is_fine(pos_model, tmp_path):
    text, out = tmp_path / "in.txt", tmp_path / "out.txt"
    text.write_text("The dog barked .\n")
    r = _shell('$CSEQ tag "$1" "$2" -o "$3" >&-', pos_model, text, out)
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("The/DET")


@pytest.mark.parametrize("sep", ["", "\n"])
def test_bad_separator_is_a_usage_error(pos_model, tmp_path, sep):
    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\n")
    r = run("tag", pos_model, text, "--sep", sep)
    assert r.returncode == 2 and "--sep" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------
# The format guess stops when it is not sure


def test_labeled_conll_given_to_a_one_column_model_is_not_read_as_text(pos_model, tmp_path):
    chunky = tmp_path / "chunk.txt"
    chunky.write_text("Rockwell NNP B-NP\nInternational NNP I-NP\nCorp. NNP I-NP\n's POS B-NP\n"
                      "\nTulsa NNP B-NP\nunit NN I-NP\nsaid VBD B-VP\n\n")
    r = run("tag", pos_model, chunky)
    assert r.returncode == 1 and r.stdout == ""
    assert "cannot tell the format" in r.stderr and "--format conll, conllu or text" in r.stderr
    r = run("tag", pos_model, chunky, "--format", "conll", "--labeled", "--columns", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0].split("\t")[:2] == ["Rockwell", "NNP"]
    # Text with lines of different lengths, or two short lines, is still text.
    for lines in (["The dog barked .", "It ran home ."], ["a b c", "d e f g"]):
        text = tmp_path / "t.txt"
        text.write_text("\n".join(lines) + "\n")
        r = run("tag", pos_model, text)
        assert r.returncode == 0 and len(r.stdout.splitlines()) == 2, r.stderr


@pytest.mark.parametrize("content", [
    '[{"tokens": ["The", "dog"], "labels": ["DET", "NOUN"]}]\n',
    '{"tokens": ["The", "dog"], "labels": ["DET", "NOUN"]}\n{"tokens": ["It"], "labels": '
    '["PRON"]}\n',
    '[\n  {\n    "tokens": ["The"],\n    "labels": ["DET"]\n  }\n]\n',
])
def test_json_given_as_data_is_named(pos_model, tmp_path, content):
    data = tmp_path / "data.json"
    data.write_text(content)
    r = run("train", data, "-o", tmp_path / "m.cseq", "--max-iter", "1")
    assert r.returncode == 1 and "looks like JSON" in r.stderr, r.stderr
    assert "--format conll or conllu" in r.stderr
    assert not (tmp_path / "m.cseq").exists()
    r = run("tag", pos_model, data)
    assert r.returncode == 1 and "looks like JSON" in r.stderr, r.stderr


def test_a_model_file_given_as_data_is_named(pos_model, tmp_path):
    for args in (("train", pos_model, "-o", tmp_path / "m.cseq"), ("tag", pos_model, pos_model),
                 ("eval", pos_model, pos_model), ("train", pos_model, "--format", "conll",
                                                  "-o", tmp_path / "m.cseq")):
        r = run(*args)
        assert r.returncode == 1, r.stderr
        assert f"{pos_model} is a cseq model file, not data" in r.stderr, (args, r.stderr)


def test_degenerate_training_data_needs_allow_degenerate(tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("The X\ndog X\n\nA X\ncat X\n\n")
    model = tmp_path / "m.cseq"
    for extra in ((), ("--algorithm", "perceptron", "--resumable")):
        r = run("train", one, "-o", model, "--max-iter", "1", *extra)
        assert r.returncode == 1 and "one label, 'X'" in r.stderr, r.stderr
        assert "--allow-degenerate" in r.stderr and not model.exists()
    r = run("train", one, "-o", model, "--max-iter", "1", "--allow-degenerate", "--quiet")
    assert r.returncode == 0 and cseq.load(model).classes_ == ["X"]
    # two labels, but --min-freq drops every attribute: refused after training, nothing saved
    two = tmp_path / "two.txt"
    two.write_text("The DT\ndog NN\n\n")
    bare = tmp_path / "bare.cseq"
    r = run("train", two, "-o", bare, "--algorithm", "perceptron", "--max-iter", "1",
            "--min-freq", "5", "--quiet")
    assert r.returncode == 1 and "no attribute" in r.stderr and not bare.exists()
    r = run("train", two, "-o", bare, "--algorithm", "perceptron", "--max-iter", "1",
            "--min-freq", "5", "--quiet", "--allow-degenerate")
    assert r.returncode == 0 and cseq.load(bare).featurizer_.n_attributes == 0
