"""The CoNLL 2018 shared task's scores of a system CoNLL-U file against a gold one.

The documented public path; the code lives in :mod:`cseq.evaluation.ud_metrics`.  Every name
this module offered before keeps working from here.
"""

from cseq.evaluation.ud_metrics import (
    UDScore,
    ud_scores,
)

__all__ = [
    "UDScore",
    "ud_scores",
]
