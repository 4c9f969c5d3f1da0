"""sklearn-crfsuite's API on cseq: ``from cseq.compat import sklearn_crfsuite``.

``sklearn_crfsuite.CRF`` (:class:`~cseq.compat.sklearn_crfsuite.estimator.CRF`)
and ``sklearn_crfsuite.metrics``
(:mod:`cseq.compat.sklearn_crfsuite.metrics`) under the names
sklearn-crfsuite uses, so that code written for it runs with only its import
changed.  docs/migrating.md says what differs.
"""

from cseq.compat.sklearn_crfsuite import metrics
from cseq.compat.sklearn_crfsuite.estimator import CRF, TrainingLog

__all__ = ["CRF", "TrainingLog", "metrics"]
