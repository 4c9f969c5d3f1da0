"""Cseq models tagging through NLTK's TaggerI and spaCy's pipeline.

NLTK and spaCy are optional extras: each half of this file skips when its
library is absent.  Nothing is downloaded (no ``nltk.download``, no spaCy
model): NLTK's own ``TaggerI`` methods and ``spacy.blank("en")``.

spaCy's ``"cseq"`` factory is registered two ways: by the entry point in
pyproject.toml, which spaCy reads from an *installed* cseq's metadata, and by
importing :mod:`cseq.compat.spacy` (its ``@Language.factory``).  The tests
import the module, so they do not depend on how (or whether) this checkout
is installed; one test checks the entry point resolves to that factory, and
another that spaCy finds it by the entry point alone when the installed
metadata has it.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib

import pytest

import cseq
from cseq.exceptions import InputError, InputTypeError, NotFittedError
from support.paths import ROOT

pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")


WORDS = [["Ann", "Lee", "went", "to", "Paris"], ["Bob", "saw", "New", "York"],
         ["Ann", "saw", "Rome"], ["Lee", "went", "to", "New", "York"]]
NER = [["B-PER", "I-PER", "O", "O", "B-LOC"], ["B-PER", "O", "B-LOC", "I-LOC"],
       ["B-PER", "O", "B-LOC"], ["B-PER", "O", "O", "B-LOC", "I-LOC"]]
POS = [["PROPN", "PROPN", "VERB", "ADP", "PROPN"], ["PROPN", "VERB", "PROPN", "PROPN"],
       ["PROPN", "VERB", "PROPN"], ["PROPN", "VERB", "ADP", "PROPN", "PROPN"]]
TEMPLATES = "U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[1,0]"


def _fit(y, **kw):
    return cseq.StructuredPerceptron(max_iter=10, random_state=0,
                                     features=cseq.TemplateFeaturizer(TEMPLATES), **kw).fit(WORDS, y)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Paths of three saved models: entities (BIO), UPOS tags, entities in BIOES."""
    d = tmp_path_factory.mktemp("models")
    bioes = [[{"I-PER": "E-PER"}.get(lab, lab) for lab in s] for s in NER]
    bioes[1][0] = bioes[2][0] = bioes[3][0] = "S-PER"
    bioes[0][4] = bioes[2][2] = "S-LOC"
    bioes[1][3] = bioes[3][4] = "E-LOC"
    paths = {}
    for name, y in (("ner", NER), ("pos", POS), ("bioes", bioes)):
        paths[name] = d / f"{name}.cseq"
        _fit(y).save(paths[name])
    return paths


# -- NLTK -------------------------------------------------------------------------------------

def test_nltk_tagger_is_a_taggeri_and_tags_like_predict(models):
    pytest.importorskip("nltk")
    from nltk.tag.api import TaggerI

    from cseq.compat.nltk import CseqTagger
    est = cseq.load(models["pos"])
    for tagger in (CseqTagger(models["pos"]), CseqTagger(str(models["pos"])), CseqTagger(est)):
        assert isinstance(tagger, TaggerI)
        assert tagger.tag(WORDS[0]) == list(zip(WORDS[0], est.predict([WORDS[0]])[0]))
        assert tagger.tag_sents(iter(WORDS)) == [list(zip(w, p))
                                                 for w, p in zip(WORDS, est.predict(WORDS))]
        assert tagger.tag([]) == []
    gold = [list(zip(w, t)) for w, t in zip(WORDS, POS)]
    pred = est.predict(WORDS)
    want = cseq.metrics.accuracy(POS, pred)
    assert tagger.accuracy(gold) == pytest.approx(want)
    # NLTK's own methods on top of tag_sents work unchanged
    assert tagger.confusion(gold)["PROPN", "PROPN"] >= 1
    assert set(tagger.recall(gold)) == {t for s in POS for t in s}


def test_nltk_tag_sents_makes_one_predict_call(models, monkeypatch):
    pytest.importorskip("nltk")
    from cseq.compat.nltk import CseqTagger
    tagger = CseqTagger(models["pos"])
    calls = []
    predict = tagger.estimator.predict
    monkeypatch.setattr(tagger.estimator, "predict", lambda X: calls.append(len(X)) or predict(X))
    tagger.accuracy([list(zip(w, t)) for w, t in zip(WORDS, POS)])
    assert calls == [len(WORDS)]


def test_nltk_features_map_a_sentence_to_the_models_input():
    pytest.importorskip("nltk")
    from cseq.compat.nltk import CseqTagger
    est = cseq.CRF(max_iter=20).fit([[[f"w={w}"] for w in s] for s in WORDS], POS)
    tagger = CseqTagger(est, features=lambda sent: [[f"w={w}"] for w in sent])
    assert [t for _, t in tagger.tag(WORDS[1])] == est.predict([[[f"w={w}"] for w in WORDS[1]]])[0]


def test_nltk_bad_input_gets_cseq_errors(models, tmp_path):
    pytest.importorskip("nltk")
    from cseq.compat.nltk import CseqTagger
    tagger = CseqTagger(models["pos"])
    with pytest.raises(InputTypeError, match="sentence 0 must be a list of tokens, got str"):
        tagger.tag("Ann saw Rome")
    with pytest.raises(NotFittedError):
        CseqTagger(cseq.CRF())
    with pytest.raises(InputTypeError, match="fitted cseq estimator or the path"):
        CseqTagger(42)
    with pytest.raises(InputTypeError, match="features must be a callable"):
        CseqTagger(models["pos"], features="w=")
    with pytest.raises(FileNotFoundError):
        CseqTagger(tmp_path / "missing.cseq")


def test_without_the_library_the_adapters_name_the_extra(monkeypatch):
    for module, lib in (("cseq.compat.nltk", "nltk"), ("cseq.compat.spacy", "spacy")):
        for name in [m for m in sys.modules if m.partition(".")[0] == lib] + [lib]:
            monkeypatch.setitem(sys.modules, name, None)  # "import name" raises ImportError
        monkeypatch.delitem(sys.modules, module, raising=False)
        with pytest.raises(ImportError, match=rf"pip install 'cseq\[{lib}\]'"):
            importlib.import_module(module)
        monkeypatch.delitem(sys.modules, module, raising=False)


# -- spaCy ------------------------------------------------------------------------------------

@pytest.fixture
def nlp():
    spacy = pytest.importorskip("spacy")
    importlib.import_module("cseq.compat.spacy")  # registers the "cseq" factory
    return spacy.blank("en")


def test_spacy_ents_from_bio_and_bioes_labels(nlp, models):
    est = cseq.load(models["ner"])
    nlp.add_pipe("cseq", config={"model": str(models["ner"]), "attr": "ents"})
    doc = nlp("Bob saw New York")
    assert [t.text for t in doc] == WORDS[1]
    want = cseq.metrics.chunks(est.predict([WORDS[1]])[0], "iob2")
    assert [(e.label_, e.start, e.end) for e in doc.ents] == want
    assert [(e.text, e.label_) for e in doc.ents] == [("Bob", "PER"), ("New York", "LOC")]
    bioes = nlp.__class__()  # a fresh blank pipeline of the same language
    bioes.add_pipe("cseq", config={"model": str(models["bioes"]), "attr": "ents"})
    assert [(e.text, e.label_) for e in bioes("Lee went to New York").ents] == [
        ("Lee", "PER"), ("New York", "LOC")]


def test_spacy_iob1_is_read_when_named(nlp, models):
    # The same labels read as IOB1: an I- after O starts a chunk, a B- only
    # splits two chunks of one type, so "B-PER" alone still starts one.
    nlp.add_pipe("cseq", config={"model": str(models["ner"]), "attr": "ents", "scheme": "iob1"})
    assert [(e.text, e.label_) for e in nlp("Ann Lee went to Paris").ents] == [
        ("Ann Lee", "PER"), ("Paris", "LOC")]


def test_spacy_pos_and_tag(nlp, models):
    est = cseq.load(models["pos"])
    nlp.add_pipe("cseq", name="upos", config={"model": str(models["pos"]), "attr": "pos"})
    nlp.add_pipe("cseq", name="tagger", config={"model": str(models["ner"]), "attr": "tag"})
    doc = nlp("Ann saw Rome")
    assert [t.pos_ for t in doc] == est.predict([WORDS[2]])[0]
    assert [t.tag_ for t in doc] == cseq.load(models["ner"]).predict([WORDS[2]])[0]
    assert nlp("").text == ""  # an empty Doc


def test_spacy_pipe_makes_one_predict_call_per_batch(nlp, models, monkeypatch):
    component = nlp.add_pipe("cseq", config={"model": str(models["ner"]), "attr": "ents"})
    calls = []
    predict = component.estimator.predict
    monkeypatch.setattr(component.estimator, "predict",
                        lambda X: calls.append(len(X)) or predict(X))
    texts = [" ".join(w) for w in WORDS] * 3
    docs = list(nlp.pipe(texts, batch_size=5))
    assert calls == [5, 5, 2]
    assert [[(e.label_, e.start, e.end) for e in d.ents] for d in docs] == [
        cseq.metrics.chunks(p, "iob2") for p in predict(WORDS * 3)]


def test_spacy_bad_config_is_refused_at_init_naming_the_problem(nlp, models):
    with pytest.raises(InputError, match=r"UPOS labels; the model has \['B-LOC', 'B-PER', "):
        nlp.add_pipe("cseq", config={"model": str(models["ner"]), "attr": "pos"})
    with pytest.raises(InputError, match="attr must be one of 'pos', 'tag', 'ents', got 'lemma'"):
        nlp.add_pipe("cseq", config={"model": str(models["ner"]), "attr": "lemma"})
    with pytest.raises(InputError, match="needs labels in a chunk scheme"):
        nlp.add_pipe("cseq", config={"model": str(models["pos"]), "attr": "ents"})
    with pytest.raises(InputError, match="scheme must be None or one of"):
        nlp.add_pipe("cseq", config={"model": str(models["ner"]), "attr": "ents",
                                     "scheme": "bilou"})
    with pytest.raises(InputError, match="not valid|not allowed|scheme"):
        nlp.add_pipe("cseq", config={"model": str(models["bioes"]), "attr": "ents",
                                     "scheme": "iob2"})
    with pytest.raises(InputError, match="columns must name Token attributes"):
        nlp.add_pipe("cseq", config={"model": str(models["ner"]), "columns": ["txet"]})
    assert nlp.pipe_names == []


def test_spacy_columns_make_tuples_for_multi_column_models(nlp, tmp_path):
    X = [[(w, t) for w, t in zip(ws, ts)] for ws, ts in zip(WORDS, POS)]
    est = cseq.StructuredPerceptron(max_iter=10, random_state=0, features=cseq.TemplateFeaturizer(
        "U00:%x[0,0]\nU01:%x[0,1]")).fit(X, NER)
    est.save(tmp_path / "two.cseq")
    with pytest.raises(InputError, match="reads 2 input columns, but columns gives 1"):
        nlp.add_pipe("cseq", config={"model": str(tmp_path / "two.cseq"), "attr": "ents"})
    # the POS column comes from a component earlier in the pipeline
    pos = cseq.StructuredPerceptron(max_iter=10, random_state=0,
                                    features=cseq.TemplateFeaturizer(TEMPLATES)).fit(WORDS, POS)
    pos.save(tmp_path / "pos.cseq")
    nlp.add_pipe("cseq", name="upos", config={"model": str(tmp_path / "pos.cseq"), "attr": "pos"})
    nlp.add_pipe("cseq", name="ner", config={"model": str(tmp_path / "two.cseq"),
                                             "attr": "ents", "columns": ["text", "pos_"]})
    doc = nlp("Bob saw New York")
    tags = pos.predict([WORDS[1]])[0]
    want = cseq.metrics.chunks(est.predict([list(zip(WORDS[1], tags))])[0], "iob2")
    assert [(e.label_, e.start, e.end) for e in doc.ents] == want


def test_spacy_entry_point_names_the_factory():
    pytest.importorskip("spacy")
    from cseq.compat import spacy as cs
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    target = project["entry-points"]["spacy_factories"]["cseq"]
    module, _, attr = target.partition(":")
    assert getattr(importlib.import_module(module), attr) is cs.make_component
    assert "nltk" in project["optional-dependencies"] and "spacy" in project[
        "optional-dependencies"]


def test_spacy_finds_the_factory_by_entry_point_alone(models, tmp_path):
    """A fresh interpreter that never imports cseq.compat.spacy: spaCy loads it by the
    entry point.  pyproject.toml's entry point is put in a distribution's metadata
    on the path (what ``pip install`` writes), so the test does not depend on how
    this checkout is installed."""
    pytest.importorskip("spacy")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    target = project["entry-points"]["spacy_factories"]["cseq"]
    info = tmp_path / "cseq_entry_point_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cseq-entry-point-probe\n"
                                   "Version: 0\n")
    (info / "entry_points.txt").write_text(f"[spacy_factories]\ncseq = {target}\n")
    code = ("import sys, spacy; nlp = spacy.blank('en'); "
            "nlp.add_pipe('cseq', config={'model': sys.argv[1], 'attr': 'ents'}); "
            "print([(e.text, e.label_) for e in nlp('Bob saw New York').ents])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    r = subprocess.run([sys.executable, "-c", code, str(models["ner"])], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[('Bob', 'PER'), ('New York', 'LOC')]"
