"""Layers that let code written for other sequence-labeling libraries run on cseq.

Each sub-package mirrors one library's API on top of cseq's public estimators
(:class:`cseq.CRF`, :class:`cseq.StructuredPerceptron`, ...), so that porting
means changing an import:

- :mod:`cseq.compat.sklearn_crfsuite`: sklearn-crfsuite's ``CRF`` and its
  ``metrics`` (docs/migrating.md).

:mod:`cseq.compat.crfsuite_items` reads python-crfsuite's per-token feature
formats, which every CRFsuite-style layer shares.
"""
