"""Evaluation of predicted label sequences: accuracy, chunk (entity) scores, reports, UD scores.

The documented public path; the code lives in :mod:`cseq.evaluation.metrics`.  Every name
this module offered before keeps working from here.
"""

from cseq.evaluation.metrics import (
    SCHEMES,
    UDScore,
    accuracy,
    chunk_f1,
    chunk_scores,
    chunks,
    classification_report,
    confusion_matrix,
    detect_scheme,
    sequence_accuracy,
    ud_scores,
)

__all__ = [
    "SCHEMES",
    "UDScore",
    "ud_scores",
    "accuracy",
    "sequence_accuracy",
    "chunks",
    "chunk_scores",
    "chunk_f1",
    "classification_report",
    "confusion_matrix",
    "detect_scheme",
]
