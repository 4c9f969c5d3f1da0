"""Scoring predicted labels against gold ones.

- :mod:`~cseq.evaluation.metrics`: accuracy, chunk (entity) precision,
  recall and F1 under the BIO family of schemes, confusion matrices and
  classification reports; the schemes themselves (``SCHEMES``,
  ``detect_scheme``, ``chunks``), which decoding's constraints read too;
- :mod:`~cseq.evaluation.ud_metrics`: the CoNLL 2018 shared task's scores
  of a CoNLL-U system file against a gold one (tokens, words, sentences,
  UPOS, ...), aligned on characters.

:mod:`cseq.metrics` and :mod:`cseq.ud_metrics` are their public paths.  This
layer reads only :mod:`cseq.io` and the leaves: the chain, the learners' dev
scoring and the applications all use it.
"""
