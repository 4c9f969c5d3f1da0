"""Layers that let code written for other sequence-labeling libraries run on cseq.

Each sub-package mirrors one library's API on top of cseq's public estimators
(:class:`cseq.CRF`, :class:`cseq.StructuredPerceptron`, ...), so that porting
means changing an import:

- :mod:`cseq.compat.sklearn_crfsuite`: sklearn-crfsuite's ``CRF`` and its
  ``metrics`` (docs/migrating.md).
- :mod:`cseq.compat.pycrfsuite`: python-crfsuite's module (``Trainer``,
  ``Tagger``, ``ItemSequence``).
- :mod:`cseq.compat.nltk`: an NLTK ``TaggerI`` over a cseq model (needs the
  ``nltk`` extra).
- :mod:`cseq.compat.spacy`: the spaCy pipeline component ``"cseq"`` (needs
  the ``spacy`` extra; registered by an entry point).

Neither NLTK nor spaCy is imported by ``import cseq``; :mod:`cseq.compat._tagger`
holds what those two adapters share.

:mod:`cseq.compat.crfsuite_items` reads python-crfsuite's per-token feature
formats, which every CRFsuite-style layer shares.

Models trained by other libraries become fitted :class:`cseq.CRF` estimators:
:mod:`cseq.compat.crfsuite_model` (:func:`cseq.from_crfsuite`, CRFsuite's
binary model files, and back: :func:`cseq.to_crfsuite`) and
:mod:`cseq.compat.crfpp_model` (:func:`cseq.from_crfpp`, CRF++'s text models
with their templates).
"""
