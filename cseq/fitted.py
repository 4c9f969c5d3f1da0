"""A fitted estimator's state (featurizer, labels, model, fitted attributes) as one immutable snapshot.

The documented public path; the code lives in :mod:`cseq.chain.fitted`.  Every name
this module offered before keeps working from here.
"""

from cseq.chain.fitted import (
    Fitted,
)

__all__ = [
    "Fitted",
]
