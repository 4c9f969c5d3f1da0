"""The declared featurizer interface (cseq.features.protocol): who implements it, and its check."""

from __future__ import annotations

import pytest

import cseq
from cseq.features.protocol import (FEATURIZERS, Featurizer, GrowingFeaturizer, PartsFeaturizer,
                                    implements)


def test_every_registered_featurizer_declares_the_interface():
    import cseq.compat.crfsuite_items  # noqa: F401 - registers CRFsuiteVocabulary
    import cseq.segment.features  # noqa: F401 - registers CharFeatures

    assert {"vocabulary", "templates"} <= set(FEATURIZERS)
    for kind, cls in FEATURIZERS.items():
        assert Featurizer in cls.__mro__, kind  # the class says it implements it
        assert cls.kind == kind
        assert implements(cls.__new__(cls), Featurizer), kind


@pytest.mark.parametrize("featurizer", [cseq.FeatureVocabulary(), cseq.TemplateFeaturizer("pos")],
                         ids=["vocabulary", "templates"])
def test_the_growing_and_by_parts_capabilities(featurizer):
    assert implements(featurizer, GrowingFeaturizer)
    assert implements(featurizer, PartsFeaturizer)


def test_the_check_reads_the_class_and_runs_no_property():
    # An unfitted template featurizer's n_attributes raises; isinstance against
    # a runtime protocol would run it (before Python 3.12).
    featurizer = cseq.TemplateFeaturizer("pos")
    with pytest.raises(cseq.NotFittedError):
        _ = featurizer.n_attributes
    assert implements(featurizer, Featurizer)


class _Half:
    """Fits and packs like a featurizer, but has no model-file state."""

    kind = "half"

    def __init__(self):
        self.inner = cseq.FeatureVocabulary()

    def fresh(self):
        return _Half()

    def get_config(self):
        return {"kind": "half"}

    def fit_transform(self, X):
        return self.inner.fit_transform(X)

    def transform(self, X, *, n_jobs=1):
        return self.inner.transform(X, n_jobs=n_jobs)


def test_fit_refuses_an_object_without_the_members():
    assert not implements(_Half(), Featurizer)
    with pytest.raises(cseq.InputError, match="cseq.features.protocol.Featurizer"):
        cseq.StructuredPerceptron(features=_Half(), max_iter=1).fit([[["a"]]], [["N"]])


def test_partial_fit_refuses_a_featurizer_that_cannot_grow():
    from cseq.learners.hmm import WordLexicon

    assert implements(WordLexicon(), Featurizer)
    assert not implements(WordLexicon(), GrowingFeaturizer)
