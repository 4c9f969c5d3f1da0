"""The compatibility layers with the inputs real programs send by mistake: None, NaN and
inf, bools, bytes, nested and empty structures, numbers beyond float, non-string keys.

Each is either read as python-crfsuite reads it (bytes are strings; an empty
dict or list is an item without attributes) or refused with cseq's own error
naming the item; never another exception, a crash or a silent wrong answer.
"""

from __future__ import annotations

import math

import pytest

import cseq
from cseq.compat import pycrfsuite as pc
from cseq.compat.sklearn_crfsuite import CRF
from cseq.exceptions import CSeqError

X = [[{"a": "x", "n": 1.0}, {"a": "y"}]] * 3
Y = [["X", "Y"]] * 3

REFUSED = [None, math.nan, math.inf, -math.inf, True, 5, 10 ** 400, "a string", {1: "x"},
           {"a": None}, {"a": [None]}, {"a": {"b": math.nan}}, {"a": math.inf},
           {"a": 10 ** 400}, {"a": complex(1, 2)}, {"a": {"b": {"c": [1]}}}]
#: Read as python-crfsuite reads them: bytes as text, empty structures as no attributes.
READ = [({"a": b"x"}, "X"), ({"a": b"y"}, "Y"), ({"a": {"y": 1.0}}, None), ({}, None),
        ([], None), ({"a": {}}, None), ({"a": []}, None)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    sk = CRF(max_iterations=20).fit(X, Y)
    path = str(tmp_path_factory.mktemp("odd") / "m.crfsuite")
    trainer = pc.Trainer(verbose=False)
    for xs, ys in zip(X, Y):
        trainer.append(xs, ys)
    trainer.train(path)
    tagger = pc.Tagger()
    tagger.open(path)
    return sk, tagger


@pytest.mark.parametrize("item", REFUSED, ids=[repr(v)[:20] for v in REFUSED])
def test_bad_items_get_cseqs_error_naming_the_item(models, item):
    sk, tagger = models
    for call in (lambda: sk.predict([[item]]), lambda: tagger.tag([item]),
                 lambda: sk.predict_marginals([[{"a": "x"}, item]]),
                 lambda: sk.fit([[{"a": "x"}, item]], [["X", "Y"]])):
        with pytest.raises(CSeqError, match=r"X\[0\]\[[01]\]"):
            call()


@pytest.mark.parametrize("item, label", READ, ids=[repr(v)[:20] for v, _ in READ])
def test_bytes_and_empty_structures_are_read_as_python_crfsuite_reads_them(models, item,
                                                                          label):
    sk, tagger = models
    got = tagger.tag([item, {"a": "y"}])
    assert got == sk.predict([[item, {"a": "y"}]])[0] and got[1] == "Y"
    if label is not None:
        assert tagger.tag([item]) == sk.predict([[item]])[0] == [label]


def test_the_nltk_tagger_refuses_tokens_that_are_not_strings(models):
    pytest.importorskip("nltk")
    from cseq.compat.nltk import CseqTagger
    est = cseq.StructuredPerceptron(max_iter=2, features=cseq.TemplateFeaturizer("pos"))
    est.fit([[("the",), ("dog",)]] * 3, [["DET", "NOUN"]] * 3)
    tagger = CseqTagger(est)
    assert [t for _, t in tagger.tag(["the", "dog"])] == ["DET", "NOUN"]
    for bad in ([None], [b"the"], [1.5], [math.nan], ["the", None]):
        with pytest.raises(CSeqError):
            tagger.tag(bad)
    assert tagger.tag([]) == []
