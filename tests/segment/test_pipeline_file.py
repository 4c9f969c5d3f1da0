"""Pipelines of every column from one treebank: lemma rules, ``Pipeline.train``, the one-file
pipeline and its refusals, ``cseq pipeline train`` and the CoNLL-U it makes."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cseq
from cseq.exceptions import InputError, InputTypeError, ModelFormatError
from cseq.io.raw import conllu_raw_text, paragraphs_of
from cseq.io.serialize import pack, unpack
from cseq.metrics import ud_scores
from cseq.pipeline import Pipeline, format_tagged, load_pipeline
from cseq.segment.lemmas import Lemmatizer, apply_rule, lemma_rule, lemma_table

from support.cli_run import run_in_process
from support.treebanks import treebank, word as _word

# ---------------------------------------------------------------- lemma rules

_WORD = st.text(st.sampled_from(list("abcdeéİıSsßΣς")), max_size=9)


@given(_WORD.filter(bool), _WORD.filter(bool))
def test_a_rule_gives_back_the_lemma_it_was_made_from(form, lemma):
    assert apply_rule(form, lemma_rule(form, lemma)) == lemma


@given(_WORD.filter(bool), st.text(max_size=12) | st.sampled_from(["k0|1|", "l1|0|", "="]))
def test_any_rule_on_any_form_gives_a_lemma_and_never_fails(form, rule):
    lemma = apply_rule(form, rule)
    assert isinstance(lemma, str) and lemma


def test_rules_generalize_across_words_and_refuse_what_does_not_apply():
    # the regular inflections share a rule, so an unseen word gets its lemma
    assert lemma_rule("walked", "walk") == lemma_rule("jumped", "jump") == "k0|2|"
    assert apply_rule("talked", lemma_rule("walked", "walk")) == "talk"
    assert lemma_rule("Dogs", "dog") == "l0|1|" and apply_rule("Cats", "l0|1|") == "cat"
    # an irregular lemma is given whole; a prefix is cut (German ge-)
    assert lemma_rule("went", "go") == "=go"
    assert apply_rule("gesagt", lemma_rule("gemacht", "machen")) == "sagen"
    # a rule that cuts more than the form has leaves the form alone
    assert apply_rule("a", "k0|3|") == "a" and apply_rule("ab", "x1|2|") == "ab"


def test_lemma_table_keeps_the_forms_of_one_lemma():
    assert lemma_table([("saw", "see"), ("saw", "saw"), ("cats", "cat"), ("cats", "cat")]) == {
        "cats": "cat"}
    assert lemma_table([("cats", "cat")], min_count=2) == {}


def test_lemmatizer_uses_the_table_first_then_the_rules():
    words = [["The", "dogs", "walked"], ["A", "cat", "jumped"], ["It", "saw", "cats"]] * 3
    lemmas = [["the", "dog", "walk"], ["a", "cat", "jump"], ["it", "see", "cat"]] * 3
    lem = Lemmatizer.fit(cseq.StructuredPerceptron(max_iter=5, features=cseq.TemplateFeaturizer(
        "pos")), words, lemmas)
    assert lem.table["saw"] == "see"
    # a table entry wins even where a rule would give something else
    lem.table["talked"] = "TALK"
    assert lem.predict([["It", "talked"]]) == [["it", "TALK"]]
    with pytest.raises(InputError, match="sentence 0: 2 words but 1 lemmas"):
        Lemmatizer.fit(cseq.StructuredPerceptron(), [["a", "b"]], [["a"]])
    with pytest.raises(InputTypeError):
        Lemmatizer(cseq.StructuredPerceptron(), {})


# ---------------------------------------------------------------- a small treebank

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("tb")
    (d / "train.conllu").write_text(treebank(300), encoding="utf-8")
    (d / "dev.conllu").write_text(treebank(60, seed=1), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def trained(files):
    pipe = Pipeline.train(files / "train.conllu")
    path = files / "tb.cseqp"
    pipe.save(path)
    return pipe, path


def _raw_conllu(pipe, conllu_path) -> str:
    text = "\n\n".join(conllu_raw_text(conllu_path)) + "\n"
    return "".join(format_tagged(pipe.process(paragraphs_of(text))))


def test_train_tags_every_column_and_scores_from_raw_text(trained, files):
    pipe, _ = trained
    assert list(pipe.taggers) == ["upos", "xpos", "feats", "lemma"]
    out = _raw_conllu(pipe, files / "dev.conllu")
    s = {k: 100 * v.f1 for k, v in ud_scores(files / "dev.conllu", io.StringIO(out)).items()}
    # a regular little language: every figure near perfect, the contraction's words from the
    # table learned in training
    assert min(s[k] for k in ("tokens", "words", "sentences", "upos", "xpos", "ufeats",
                              "lemmas")) > 97, s
    assert "\tdu\t" in out and "\tde\tde\tADP\tIN\t" in out


def test_save_load_round_trip_tags_the_same(trained, files):
    pipe, path = trained
    again = load_pipeline(path)
    assert list(again.taggers) == list(pipe.taggers)
    assert again.taggers["lemma"].table == pipe.taggers["lemma"].table
    assert _raw_conllu(again, files / "dev.conllu") == _raw_conllu(pipe, files / "dev.conllu")
    # the bytes are a function of the model: saving what was loaded gives the same file
    path2 = path.with_name("again.cseqp")
    again.save(path2)
    assert path2.read_bytes() == path.read_bytes()


def test_lemma_of_an_unseen_word_comes_from_its_rule(trained):
    lem = trained[0].taggers["lemma"]
    assert "talked" not in lem.table
    # after the UPOS tagger, the lemmatizer reads the word and its UPOS
    rows = [("The", "DET"), ("dog", "NOUN"), ("talked", "VERB")]
    assert lem.predict([rows])[0][2] == "talk"
    assert trained[0]._reads == {"upos": 1, "xpos": 2, "feats": 2, "lemma": 2}


def test_columns_that_are_blank_in_training_are_left_out(files, tmp_path):
    text = (files / "train.conllu").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2] = cols[4] = "_"   # no lemmas, no XPOS
            line = "\t".join(cols)
        rows.append(line)
    (tmp_path / "t.conllu").write_text("\n".join(rows) + "\n", encoding="utf-8")
    pipe = Pipeline.train(tmp_path / "t.conllu", columns=["upos", "xpos", "lemma"])
    assert list(pipe.taggers) == ["upos"]
    with pytest.raises(InputError, match="columns must be a list"):
        Pipeline.train(tmp_path / "t.conllu", columns=["deprel"])


def test_space_share_counts_the_tokens_whitespace_follows(files, tmp_path):
    from cseq.segment.conllu import space_share
    # "The dogs walked." : three of its four tokens are followed by whitespace in the file
    # (all but the verb), "The cat walks du lake." five of six: the share lies between
    share = space_share(files / "train.conllu")
    assert 3 / 4 < share < 5 / 6
    (tmp_path / "empty.conllu").write_text("", encoding="utf-8")
    assert space_share(tmp_path / "empty.conllu") == 1.0


def test_preset_auto_chooses_nospace_for_text_without_spaces(tmp_path):
    sentence = "# text = 我们去了。\n" + "\n".join([
        _word(1, "我们", "我们", "PRON", "PN", "_", "SpaceAfter=No"),
        _word(2, "去", "去", "VERB", "VV", "_", "SpaceAfter=No"),
        _word(3, "了", "了", "AUX", "AS", "_", "SpaceAfter=No"),
        _word(4, "。", "。", "PUNCT", ".", "_", "SpaceAfter=No")]) + "\n"
    rows = [sentence] * 40
    (tmp_path / "zh.conllu").write_text("\n".join(rows) + "\n", encoding="utf-8")
    pipe = Pipeline.train(tmp_path / "zh.conllu", columns=["upos"])
    assert pipe.segmenter.preset == "nospace"
    assert [s.words for s in pipe("我们去了。")] == [["我们", "去", "了", "。"]]


# ---------------------------------------------------------------- the file, refused as it should be


def _parts(path):
    header, arrays = unpack(path.read_bytes())
    return header, {k: v.copy() for k, v in arrays.items()}


def _write(path, header, arrays):
    header = {k: v for k, v in header.items() if k not in ("arrays", "library",
                                                           "library_version")}
    path.write_bytes(pack(header, arrays))
    return path


def test_damaged_pipeline_files_are_refused_naming_the_file(trained, tmp_path):
    _, path = trained
    data = path.read_bytes()
    bad = tmp_path / "bad.cseqp"
    for damaged, message in [
            (data[:len(data) // 2], "checksum|truncated"),
            (data[:100] + bytes([data[100] ^ 1]) + data[101:], "checksum"),
            (b"", "only 0 bytes"),
            (b"\x00" * 200, "bad magic")]:
        bad.write_bytes(damaged)
        with pytest.raises(ModelFormatError, match=message) as exc:
            load_pipeline(bad)
        assert str(bad) in str(exc.value)


@pytest.mark.parametrize("edit, message", [
    (lambda h, a: h["pipeline"].update(format=2), "pipeline format 2 is not supported"),
    (lambda h, a: h["pipeline"].update(columns=["upos", "upos"]), "distinct"),
    (lambda h, a: h["pipeline"].update(columns=["deprel"]), "are not a list"),
    (lambda h, a: a.pop("part:xpos"), "lacks its part 'xpos'"),
    (lambda h, a: a.update({"part:other": np.zeros(3, np.uint8)}), "unknown array"),
    (lambda h, a: h["pipeline"].update(lemma_table=[["a"]]), "lemma table is malformed"),
    (lambda h, a: a.update({"part:upos": np.frombuffer(b"junk" * 20, np.uint8)}),
     "its upos part: .*bad magic"),
    # a segmenter where a tagger belongs: each part is what its name says
    (lambda h, a: a.update({"part:upos": a["part:segmenter"]}), "is a segmenter, not a tagger"),
    (lambda h, a: a.update({"part:segmenter": a["part:upos"]}), "not a segmenter model"),
    (lambda h, a: h.pop("pipeline"), "not a pipeline file"),
])
def test_pipeline_files_that_lie_are_refused(trained, tmp_path, edit, message):
    header, arrays = _parts(trained[1])
    edit(header, arrays)
    with pytest.raises(ModelFormatError, match=message):
        load_pipeline(_write(tmp_path / "lie.cseqp", header, arrays))


def test_one_model_and_a_pipeline_are_not_taken_for_each_other(trained, tmp_path):
    pipe, path = trained
    single = tmp_path / "upos.model"
    pipe.taggers["upos"].save(single)
    with pytest.raises(ModelFormatError, match="single model's file, not a pipeline file"):
        load_pipeline(single)
    with pytest.raises(ModelFormatError, match="a pipeline file .* not one model"):
        cseq.load(path)
    with pytest.raises(InputError, match="no pipeline 'nowhere.cseqp'"):
        load_pipeline("nowhere.cseqp")
    with pytest.raises(InputTypeError):
        load_pipeline(3)


def test_pipeline_refuses_bad_taggers_and_unsaveable_segmenters(trained):
    pipe, _ = trained
    with pytest.raises(InputError, match="unknown column 'deprel'"):
        Pipeline(pipe.segmenter, taggers={"deprel": pipe.taggers["upos"]})
    with pytest.raises(InputTypeError, match="Lemmatizer"):
        Pipeline(pipe.segmenter, taggers={"lemma": pipe.taggers["upos"]})
    with pytest.raises(InputError, match="tagger or taggers, not both"):
        Pipeline(pipe.segmenter, pipe.taggers["upos"], taggers={})

    class Rules:
        def segment(self, text):
            return pipe.segmenter.segment(text)

    with pytest.raises(InputTypeError, match="only a fitted cseq Segmenter"):
        Pipeline(Rules(), taggers=pipe.taggers).save("never-written.cseqp")


def test_a_pipeline_file_of_the_shipped_english_is_the_one_file_format():
    nlp = load_pipeline("en")
    assert list(nlp.taggers) == ["upos"]
    from pathlib import Path
    header, arrays = unpack((Path(cseq.__file__).parent / "data" / "en_ewt.cseqp").read_bytes())
    assert header["pipeline"]["columns"] == ["upos"]
    assert sorted(arrays) == ["part:segmenter", "part:upos"]


# ---------------------------------------------------------------- the command line and its output


def test_cli_pipeline_train_then_tag_raw_text(files, tmp_path):
    out = tmp_path / "p.cseqp"
    r = run_in_process("pipeline", "train", files / "train.conllu", "--dev",
                       files / "dev.conllu", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "raw dev F1: tokens" in r.stdout and "lemmas" in r.stdout
    raw = tmp_path / "raw.txt"
    raw.write_text("The cats jumped du lake. A dog walks.\n", encoding="utf-8")
    r = run_in_process("tag", "--pipeline", out, raw)
    assert r.returncode == 0, r.stderr
    lines = [line.split("\t") for line in r.stdout.splitlines() if line and line[0].isdigit()]
    assert lines[1][:6] == ["2", "cats", "cat", "NOUN", "NNS", "Number=Plur"]
    assert lines[2][:6] == ["3", "jumped", "jump", "VERB", "VBD", "Tense=Past|VerbForm=Fin"]
    assert lines[3][:2] == ["4-5", "du"] and lines[4][:4] == ["4", "de", "de", "ADP"]
    r = run_in_process("tag", "--pipeline", out, raw, "--output-format", "jsonl")
    first = json.loads(r.stdout.splitlines()[0])
    assert first["columns"]["lemma"][:3] == ["the", "cat", "jump"]
    assert first["labels"] == first["columns"]["upos"]


@pytest.mark.parametrize("args, message", [
    (["--columns", "upos,deprel"], "--columns takes"),
    (["--columns", ","], "--columns takes"),
])
def test_cli_pipeline_train_refuses_bad_options(files, tmp_path, args, message):
    r = run_in_process("pipeline", "train", files / "train.conllu", "-o", tmp_path / "x", *args)
    assert r.returncode == 1 and message in r.stderr
    assert not (tmp_path / "x").exists()


def test_cli_pipeline_train_refuses_a_file_that_is_not_conllu(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("not\tconll-u\n", encoding="utf-8")
    r = run_in_process("pipeline", "train", bad, "-o", tmp_path / "x.cseqp")
    assert r.returncode == 1 and "bad.conllu" in r.stderr
    assert not (tmp_path / "x.cseqp").exists()


def test_conllu_writer_puts_each_column_in_its_place():
    from cseq.io.conllu_write import format_segmented
    from cseq.segment import Sentence, Token
    s = Sentence((Token("Dogs", 0, 4, ("Dogs",), True), Token("ran", 5, 8, ("ran",), False)))
    out = format_segmented(s, {"upos": ["NOUN", "VERB"], "lemma": ["dog", "run"],
                               "feats": ["Number=Plur", "Tense=Past"]},
                           paragraph="Dogs ran", fmt="conllu", sent_id=1, paragraph_start=True,
                           paragraph_end=True)
    rows = [line.split("\t") for line in out.splitlines() if line[:1].isdigit()]
    assert rows[0] == ["1", "Dogs", "dog", "NOUN", "_", "Number=Plur", "_", "_", "_", "_"]
    # a lemma may hold a space (CoNLL-U allows it there); a UPOS may not
    format_segmented(s, {"upos": ["NOUN", "VERB"], "lemma": ["dog", "run away"]},
                     paragraph="Dogs ran", fmt="conllu", sent_id=1, paragraph_start=True,
                     paragraph_end=True)
    with pytest.raises(InputError, match="holds whitespace"):
        format_segmented(s, {"upos": ["NO UN", "VERB"]}, paragraph="Dogs ran", fmt="conllu",
                         sent_id=1, paragraph_start=True, paragraph_end=True)
    with pytest.raises(InputError, match="1 labels for the 2 words"):
        format_segmented(s, {"upos": ["NOUN", "VERB"], "lemma": ["dog"]}, paragraph="Dogs ran",
                         fmt="conllu", sent_id=1, paragraph_start=True, paragraph_end=True)


# ---------------------------------------------------------------- UFeats, AllTags, Lemmas


def _conllu(rows):
    return io.StringIO("".join("\t".join([str(i), f, lem, u, x, feats, "0", "root", "_", "_"])
                               + "\n" for i, (f, lem, u, x, feats) in enumerate(rows, 1)) + "\n")


def test_ud_scores_ufeats_compare_universal_features_only_and_lemmas_forgive_gold_blanks():
    gold = [("a", "a", "X", "x", "Case=Nom|Foo=Bar"), ("b", "_", "X", "x", "Number=Sing"),
            ("c", "c", "Y", "y", "_")]
    system = [("a", "A", "X", "x", "Case=Nom"), ("b", "zz", "X", "z", "Number=Plur"),
              ("c", "c", "Y", "y", "Baz=1")]
    s = ud_scores(_conllu(gold), _conllu(system))
    # Foo and Baz are not universal: a and c match, b does not
    assert s["ufeats"].correct == 2
    # a gold "_" matches any lemma; "A" is not "a"
    assert s["lemmas"].correct == 2
    assert s["alltags"].correct == 2  # b's XPOS and features differ
