"""Raw text through cseq: the paragraph reader, raw text made from CoNLL-U,
the pipeline (segmenter + tagger), ``cseq tag --segmenter`` and its outputs."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
from pathlib import Path

import pytest

import cseq
from cseq.conll import read_conll, read_conllu
from cseq.data import sample_path
from cseq.exceptions import CSeqError, InputError, InputTypeError
from cseq.io.raw import Paragraph, conllu_raw_text, iter_paragraphs, paragraphs_of
from cseq.metrics import ud_scores
from cseq.pipeline import Pipeline

from support.cli_run import run_in_process
from support.paths import ROOT, SHARED

DATA = SHARED / "data" / "ud_en_ewt"


def _row(i: str, form: str, misc: str = "_") -> str:
    return "\t".join([i, form, "_", "X", "_", "_", "0", "root", "_", misc])


def _sentence(text: str | None, rows: list[str], marks: tuple[str, ...] = ()) -> str:
    head = [f"# {m}" for m in marks] + ([f"# text = {text}"] if text is not None else [])
    return "\n".join(head + rows) + "\n\n"


# ---------------------------------------------------------------- reader


def test_paragraphs_and_their_offsets_in_the_file(tmp_path):
    text = "\n  \nFirst line\nsecond line.\n\n\n\tThird  para.\r\nstill third\n\nlast"
    path = tmp_path / "raw.txt"
    path.write_bytes(text.encode("utf-8"))
    paras = list(iter_paragraphs(path))
    as_read = path.read_text(encoding="utf-8")
    assert [p.text for p in paras] == ["First line\nsecond line.", "\tThird  para.\nstill third",
                                       "last"]
    assert [p.line for p in paras] == [3, 7, 10]
    assert all(as_read[p.offset:p.offset + len(p.text)] == p.text for p in paras)


def test_paragraphs_stream_from_a_gzip_and_a_text_stream(tmp_path):
    path = tmp_path / "raw.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("a b\n\nc\n")
    assert list(iter_paragraphs(path)) == [Paragraph("a b", 0, 1), Paragraph("c", 5, 3)]
    assert [p.text for p in iter_paragraphs(io.StringIO("x\n\n\ny"))] == ["x", "y"]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n\t\n"])
def test_empty_and_whitespace_only_files_have_no_paragraph(tmp_path, content):
    path = tmp_path / "raw.txt"
    path.write_bytes(content)
    assert list(iter_paragraphs(path)) == []


def test_binary_file_is_refused(tmp_path):
    path = tmp_path / "raw.bin"
    path.write_bytes(b"abc\x00\x01\x02\n")
    with pytest.raises(InputError, match=r"raw.bin:1: a NUL character: this is a binary file"):
        list(iter_paragraphs(path))
    path.write_bytes(b"abc\n\xff\xfe\n")
    with pytest.raises(InputError, match=r"raw.bin:2: cannot decode"):
        list(iter_paragraphs(path))


# ---------------------------------------------------------------- raw text from CoNLL-U


def test_raw_text_joins_sentences_of_a_paragraph_by_their_space_after():
    conllu = (
        _sentence("Hi there.", [_row("1", "Hi"), _row("2", "there", "SpaceAfter=No"),
                                _row("3", ".", "SpaceAfter=No")], ("newdoc id = d1",))
        + _sentence("Bye", [_row("1", "Bye")])
        + _sentence("New one", [_row("1", "New"), _row("2", "one")], ("newpar",))
        + _sentence(None, [_row("1-2", "don't", "SpaceAfter=No"), _row("1", "do"), _row("2", "n't"),
                           _row("3", "!", "SpaceAfter=No")])
    )
    assert list(conllu_raw_text(io.StringIO(conllu))) == ["Hi there.Bye", "New one don't!"]


def test_raw_text_without_marks_has_a_paragraph_per_n_sentences():
    conllu = "".join(_sentence(f"S{i}.", [_row("1", f"S{i}.")]) for i in range(5))
    assert list(conllu_raw_text(io.StringIO(conllu), sentences_per_paragraph=2)) == [
        "S0. S1.", "S2. S3.", "S4."]
    with pytest.raises(CSeqError, match="sentences_per_paragraph must be a positive integer"):
        list(conllu_raw_text(io.StringIO(conllu), sentences_per_paragraph=0))


@pytest.mark.skipif(not (DATA / "en_ewt-ud-dev.conllu").exists(), reason="EWT not available")
def test_raw_ewt_dev_spells_the_treebank():
    from cseq.evaluation.ud_metrics import _Treebank
    paras = list(conllu_raw_text(DATA / "en_ewt-ud-dev.conllu"))
    assert len(paras) == 750            # the # newpar and # newdoc marks of EWT dev
    assert all(p and "\n" not in p and p == p.strip() for p in paras)
    chars = _Treebank(DATA / "en_ewt-ud-dev.conllu", "utf-8").chars
    assert "".join("".join(paras).split()) == "".join("".join(chars).split())


# ---------------------------------------------------------------- the pipeline and cseq tag
#
# A rule-based stand-in for cseq.segment.Segmenter (the interface of
# cseq.segment: form, start, end, words, space_after; sentences with words()), so
# that the pipeline, the writers and the CLI are tested on their own.

from cseq.segment import Sentence as _Sentence, Token as _Token  # noqa: E402


class RuleSegmenter:
    """Words and punctuation; "n't" split off as a multiword token; . ! ? end a sentence."""

    def segment(self, text: str) -> list[_Sentence]:
        sentences, tokens = [], []
        for m in re.finditer(r"\w+n't|\w+|[^\w\s]", text):
            form = m.group()
            words = (form[:-3], "n't") if form.endswith("n't") and len(form) > 3 else (form,)
            tokens.append(_Token(form, m.start(), m.end(), words,
                                 m.end() < len(text) and text[m.end()].isspace()))
            if form in ".!?":
                sentences.append(_Sentence(tuple(tokens)))
                tokens = []
        if tokens:
            sentences.append(_Sentence(tuple(tokens)))
        return sentences

    @classmethod
    def load(cls, path):
        if Path(path).read_bytes() != b"rule segmenter":
            raise InputError(f"{path} is not a segmenter")
        return cls()


@pytest.fixture(scope="module")
def tagger(tmp_path_factory):
    X, y = read_conll(sample_path(), sep="\t")
    est = cseq.StructuredPerceptron(max_iter=2, random_state=0,
                                    features=cseq.TemplateFeaturizer("pos")).fit(X[:800], y[:800])
    path = tmp_path_factory.mktemp("tagger") / "upos.cseq"
    est.save(path)
    return est, path


@pytest.fixture
def rule_segmenter(monkeypatch, tmp_path):
    import cseq.pipeline
    monkeypatch.setattr(cseq.pipeline, "load_segmenter", RuleSegmenter.load)
    path = tmp_path / "rule.seg"
    path.write_text("rule segmenter", encoding="utf-8")
    return path


RAW = "The dog didn't bark.  It ran\nhome!\n\n\nA new paragraph, here."


def test_pipeline_offsets_map_back_onto_the_string(tagger):
    nlp = Pipeline(RuleSegmenter(), tagger[0])
    out = nlp(RAW)
    assert [len(s.words) for s in out] == [6, 4, 6]
    assert [(s.first, s.last) for s in out] == [(True, False), (False, True), (True, True)]
    for s in out:
        assert len(s.labels) == len(s.words)
        for tok in s.sentence.tokens:
            assert RAW[s.paragraph.offset + tok.start:s.paragraph.offset + tok.end] == tok.form
    assert Pipeline(RuleSegmenter())(RAW)[0].labels is None


def test_pipeline_refuses_what_is_not_a_segmenter_or_a_one_column_tagger(tagger):
    with pytest.raises(InputTypeError, match="segmenter must be a cseq Segmenter"):
        Pipeline(tagger[0], tagger[0])
    with pytest.raises(InputTypeError, match="the upos tagger must be a fitted cseq tagger"):
        Pipeline(RuleSegmenter(), RuleSegmenter())
    X, y = read_conll(sample_path(), sep="\t")
    two = cseq.StructuredPerceptron(max_iter=1, features=cseq.TemplateFeaturizer("pos")).fit(
        [[(w, w.lower()) for (w,) in s] for s in X[:50]], y[:50])
    with pytest.raises(InputError, match="reads 2 columns per token; raw text gives it the word"):
        Pipeline(RuleSegmenter(), two)


def test_cli_raw_to_conllu_scores_against_gold(tagger, rule_segmenter, tmp_path):
    gold = _sentence("The dog didn't bark.", [
        _row("1", "The"), _row("2", "dog"), _row("3-4", "didn't"), _row("3", "did"),
        _row("4", "n't"), _row("5", "bark", "SpaceAfter=No"), _row("6", ".")], ("newpar",))
    gold += _sentence("It ran home!", [_row("1", "It"), _row("2", "ran"),
                                       _row("3", "home", "SpaceAfter=No"), _row("4", "!")])
    (tmp_path / "gold.conllu").write_text(gold, encoding="utf-8")
    raw = tmp_path / "raw.txt"
    raw.write_text("\n\n".join(conllu_raw_text(tmp_path / "gold.conllu")) + "\n",
                   encoding="utf-8")
    out = tmp_path / "out.conllu"
    r = run_in_process("tag", tagger[1], raw, "--segmenter", rule_segmenter,
                       "--output-format", "conllu", "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# newpar\n# sent_id = 1\n# text = The dog didn't bark.\n"
                           "1\tThe\t_\t")
    assert "\n3-4\tdidn't\t_\t_\t_\t_\t_\t_\t_\t_\n3\tdid\t_\t" in text
    assert "\n5\tbark\t_\t" in text and "\t_\t_\t_\t_\t_\tSpaceAfter=No\n6\t.\t" in text
    # read back by cseq's own reader: the words and, in UPOS, the tagger's labels
    sents, labels = read_conllu(out)[:2]
    assert [[r[0] for r in s] for s in sents] == [
        ["The", "dog", "did", "n't", "bark", "."], ["It", "ran", "home", "!"]]
    assert labels == tagger[0].predict([[(w,) for w in s] for s in
                                        [["The", "dog", "did", "n't", "bark", "."],
                                         ["It", "ran", "home", "!"]]])
    scores = ud_scores(tmp_path / "gold.conllu", out)
    assert scores["tokens"].f1 == scores["words"].f1 == scores["sentences"].f1 == 1.0


def test_cli_raw_text_and_jsonl_outputs(tagger, rule_segmenter, tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW, encoding="utf-8")
    r = run_in_process("tag", tagger[1], raw, "--segmenter", rule_segmenter,
                       "--output-format", "jsonl")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert [rec["sent_id"] for rec in records] == [1, 2, 3]
    assert records[1]["text"] == "It ran home!"           # the line break made a space
    for rec in records:
        assert RAW[rec["start"]:rec["end"]].replace("\n", " ") == rec["text"]
        assert all(RAW[t["start"]:t["end"]] == t["form"] for t in rec["tokens"])
        assert len(rec["labels"]) == len(rec["words"])
    r = run_in_process("tag", tagger[1], raw, "--segmenter", rule_segmenter,
                       "--output-format", "text")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("The/") and " n't/" in r.stdout
    assert len(r.stdout.splitlines()) == 3


@pytest.mark.parametrize("content", ["", "  \n\n\t\n"])
def test_cli_empty_and_whitespace_only_raw_input(tagger, rule_segmenter, tmp_path, content):
    raw = tmp_path / "raw.txt"
    raw.write_text(content, encoding="utf-8")
    out = tmp_path / "out.conllu"
    r = run_in_process("tag", tagger[1], raw, "--segmenter", rule_segmenter, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text(encoding="utf-8") == ""


@pytest.mark.parametrize("args, message", [
    (["--format", "raw"], "--format raw needs a segmenter"),
    (["--segmenter", "SEG", "--format", "text"], "--format text input is already segmented"),
    (["--segmenter", "SEG", "--output-format", "conll"], "not conll"),
    (["--segmenter", "SEG", "--nbest", "2"], "--nbest: not with raw text"),
    (["--segmenter", "SEG", "--pipeline", "en"], "drop --segmenter"),
])
def test_cli_raw_options_that_do_not_combine(tagger, rule_segmenter, tmp_path, args, message):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW, encoding="utf-8")
    args = [rule_segmenter if a == "SEG" else a for a in args]
    r = run_in_process("tag", tagger[1], raw, *args)
    assert r.returncode != 0 and message in r.stderr, r.stderr


def test_cli_raw_refuses_conllu_binary_and_a_tagger_as_segmenter(tagger, rule_segmenter,
                                                                   tmp_path):
    conllu = tmp_path / "in.conllu.txt"
    conllu.write_text(_sentence("Hi", [_row("1", "Hi")]), encoding="utf-8")
    r = run_in_process("tag", tagger[1], conllu, "--segmenter", rule_segmenter)
    assert r.returncode != 0 and "is CoNLL-U, already split into sentences" in r.stderr
    binary = tmp_path / "in.bin"
    binary.write_bytes(b"\x00\x01\x02abc")
    r = run_in_process("tag", tagger[1], binary, "--segmenter", rule_segmenter)
    assert r.returncode != 0 and "a NUL character: this is a binary file" in r.stderr
    r = run_in_process("tag", tagger[1], conllu, "--segmenter", tagger[1])
    assert r.returncode != 0 and "is not a segmenter" in r.stderr
    r = run_in_process("tag", rule_segmenter, conllu, "--segmenter", rule_segmenter)
    assert r.returncode != 0 and "rule.seg is not a tagger's model file" in r.stderr


# ---------------------------------------------------------------- with cseq's own segmenter

EWT = DATA / "en_ewt-ud-train.conllu"
needs_ewt = pytest.mark.skipif(not EWT.exists(), reason="EWT not available")


def _first_sentences(path: Path, n: int) -> str:
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    return "\n\n".join(blocks[:n]) + "\n\n"


@pytest.fixture(scope="module")
def segmenter_file(tmp_path_factory):
    from cseq.segment import Segmenter
    lines = _first_sentences(EWT, 600).splitlines()
    path = tmp_path_factory.mktemp("seg") / "en.seg"
    Segmenter(max_iter=3, random_state=0).fit(lines).save(path)
    return path


@needs_ewt
def test_cli_with_cseq_segmenter_conllu_reads_back_and_scores(tagger, segmenter_file, tmp_path):
    gold = tmp_path / "gold.conllu"
    gold.write_text(_first_sentences(DATA / "en_ewt-ud-dev.conllu", 80), encoding="utf-8")
    raw = tmp_path / "raw.txt"
    raw.write_text("\n\n".join(conllu_raw_text(gold)) + "\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    r = run_in_process("tag", tagger[1], raw, "--segmenter", segmenter_file,
                       "--output-format", "conllu", "-o", out)
    assert r.returncode == 0, r.stderr
    sents, labels = read_conllu(out)[:2]
    text = out.read_text(encoding="utf-8")
    assert text.count("# sent_id = ") == text.count("# text = ") == len(sents) > 40
    assert all(lab in tagger[0].classes_ for s in labels for lab in s)
    scores = ud_scores(gold, out)     # aligned: the same characters, whatever the segmentation
    assert scores["tokens"].f1 > 0.9 and scores["words"].f1 > 0.9
    assert scores["upos"].f1 > 0.7


@needs_ewt
def test_cli_segmenter_and_tagger_swapped_are_named(tagger, segmenter_file, tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text(RAW, encoding="utf-8")
    r = run_in_process("tag", tagger[1], raw, "--segmenter", tagger[1])
    assert r.returncode != 0 and "upos.cseq is not a segmenter" in r.stderr, r.stderr
    r = run_in_process("tag", segmenter_file, raw, "--segmenter", segmenter_file)
    assert r.returncode != 0 and "en.seg is a segmenter, not a tagger" in r.stderr, r.stderr
    text = tmp_path / "text.txt"
    text.write_text("The dog barks .\n", encoding="utf-8")
    r = run_in_process("tag", segmenter_file, text)
    assert r.returncode != 0 and "en.seg is a segmenter, not a tagger" in r.stderr, r.stderr


# ---------------------------------------------------------------- the English pipeline in the wheel

REPO = ROOT


def test_load_pipeline_en_tags_raw_text():
    nlp = cseq.load_pipeline("en")
    out = nlp("The fox didn't jump. It was 3:30pm!")
    assert [s.words for s in out] == [["The", "fox", "did", "n't", "jump", "."],
                                      ["It", "was", "3:30", "pm", "!"]]
    assert out[0].labels == ("DET", "NOUN", "AUX", "PART", "VERB", "PUNCT")
    with pytest.raises(InputError, match="no pipeline 'xx': neither a shipped one \\(en\\) nor a file"):
        cseq.load_pipeline("xx")


def test_cli_pipeline_en_and_demo(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("The fox didn't jump.\n", encoding="utf-8")
    r = run_in_process("tag", "--pipeline", "en", raw, "--output-format", "conllu")
    assert r.returncode == 0, r.stderr
    assert "3-4\tdidn't\t_" in r.stdout and "\n4\tn't\t_\tPART\t" in r.stdout
    r = run_in_process("tag", "--pipeline", "en", raw, raw)
    assert r.returncode != 0 and "give the input file only" in r.stderr
    r = run_in_process("demo", "--max-iter", "1", "--text", "It works.")
    assert r.returncode == 0, r.stderr
    assert "# text = It works.\n1\tIt\t_\tPRON\t" in r.stdout


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CSEQ_DEBUG_BUILD") == "1",
                    reason="a whole retraining of the pipeline at -O0 with bounds checks (over 15 "
                    "minutes); .ci/run runs it on the optimized build")
@needs_ewt
def test_the_shipped_pipeline_rebuilds_bit_for_bit(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("build_pipeline",
                                                  REPO / "scripts" / "build_pipeline.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    built = build.build(EWT, tmp_path, verbose=False)
    shipped = Path(cseq.__file__).parent / "data"
    for path in built.values():
        assert path.read_bytes() == (shipped / path.name).read_bytes(), path.name


# ---------------------------------------------------------------- offsets, for any input

from hypothesis import given, strategies as st  # noqa: E402

_TEXT = st.text(st.sampled_from(list("ab \t\n\r.é\u2028\u3000")) | st.characters(),
                max_size=60).filter(lambda t: "\0" not in t)


@given(_TEXT)
def test_paragraph_offsets_index_the_input_for_any_text(text):
    paras = list(paragraphs_of(text))
    for p in paras:
        assert text[p.offset:p.offset + len(p.text)] == p.text and p.text.strip()
    # every line that is not blank is in one paragraph: nothing is lost
    kept = "".join(p.text for p in paras)
    assert sorted("".join(kept.split())) == sorted(
        "".join("".join(line for line in text.split("\n") if line.strip()).split()))
    # a file of the same text (no CR, which a file's line ends drop; no byte-order
    # mark, which a file's start drops) gives the same paragraphs and offsets
    if "\r" not in text and not text.startswith("\ufeff"):
        assert list(iter_paragraphs(io.BytesIO(text.encode("utf-8")))) == paras


@pytest.fixture(scope="module")
def english():
    return cseq.load_pipeline("en")


@given(text=_TEXT)
def test_pipeline_tokens_index_the_input_for_any_text(english, text):
    for s in english(text):
        assert len(s.labels) == len(s.words) > 0
        for tok in s.sentence.tokens:
            assert text[s.paragraph.offset + tok.start:s.paragraph.offset + tok.end] == tok.form


# ---------------------------------------------------------------- the writer itself

def _one_sentence():
    return RuleSegmenter().segment("We didn't go")[0]


def test_conllu_writer_columns_and_refusals():
    from cseq.io.conllu_write import format_segmented
    s = _one_sentence()
    common = dict(paragraph="We didn't go", sent_id=7, paragraph_start=False, paragraph_end=True)
    out = format_segmented(s, ["P", "A", "N", "V"], fmt="conllu", column="xpos", **common)
    assert out.endswith("\n\n")
    lines = out[:-2].split("\n")
    assert lines[:2] == ["# sent_id = 7", "# text = We didn't go"]
    assert all(len(line.split("\t")) == 10 for line in lines[2:])
    assert lines[3] == "2-3\tdidn't\t_\t_\t_\t_\t_\t_\t_\t_"
    assert lines[4] == "2\tdid\t_\t_\tA\t_\t_\t_\t_\t_"
    assert lines[-1] == "4\tgo\t_\t_\tV\t_\t_\t_\t_\t_"      # end of paragraph: no SpaceAfter=No
    assert format_segmented(s, None, fmt="conllu", **common).splitlines()[2] == \
        "1\tWe\t_\t_\t_\t_\t_\t_\t_\t_"
    with pytest.raises(InputError, match="3 labels for the 4 words of sentence 7"):
        format_segmented(s, ["P", "A", "N"], fmt="conllu", **common)
    with pytest.raises(InputError, match="label 'A B' cannot be written as conllu"):
        format_segmented(s, ["P", "A B", "N", "V"], fmt="conllu", **common)
    with pytest.raises(InputError, match="cannot go in the CoNLL-U column 'misc'"):
        format_segmented(s, None, fmt="conllu", column="misc", **common)
    with pytest.raises(InputError, match="unknown output format 'conll'"):
        format_segmented(s, None, fmt="conll", **common)


def test_cli_raw_refuses_json_unless_told(rule_segmenter, tagger, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text('{"text": "Hi."}\n', encoding="utf-8")
    r = run_in_process("tag", tagger[1], path, "--segmenter", rule_segmenter)
    assert r.returncode != 0 and "it looks like JSON" in r.stderr and "--format raw" in r.stderr
    r = run_in_process("tag", tagger[1], path, "--segmenter", rule_segmenter, "--format", "raw",
                       "--output-format", "text")
    assert r.returncode == 0 and r.stdout.startswith("{/"), r.stderr


def test_cli_pipeline_reads_standard_input():
    from support.cli_run import run
    r = run("tag", "--pipeline", "en", "-", "--output-format", "text",
            stdin="Hello there. Bye!\n\nNew paragraph.\n")
    assert r.returncode == 0, r.stderr
    words = [[t.rsplit("/", 1)[0] for t in line.split()] for line in r.stdout.splitlines()]
    assert words == [["Hello", "there", "."], ["Bye", "!"], ["New", "paragraph", "."]]


@needs_ewt
def test_shipped_pipeline_on_raw_ewt_dev_aligns_and_scores_as_documented(english, tmp_path):
    # The whole of EWT dev as raw text, through cseq tag's writer: the output
    # aligns with the gold file character for character (ud_scores would
    # refuse it otherwise), with the figures of cseq/data/README.md.
    from cseq.io.raw import paragraphs_of
    from cseq.pipeline import format_tagged
    dev = DATA / "en_ewt-ud-dev.conllu"
    text = "\n\n".join(conllu_raw_text(dev)) + "\n"
    out = "".join(format_tagged(english.process(paragraphs_of(text))))
    s = {k: round(100 * v.f1, 2) for k, v in ud_scores(dev, io.StringIO(out)).items()}
    assert s["tokens"] >= 99.28 and s["words"] >= 99.0 and s["sentences"] >= 87.9, s
    assert s["upos"] >= 94.45, s
