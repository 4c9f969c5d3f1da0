"""Probabilities of labelings: path and span probabilities, entropies, annotated predictions.

The documented public path; the code lives in :mod:`cseq.chain.probability`.  Every name
this module offered before keeps working from here.
"""

from cseq.chain.probability import (
    SPAN_SCHEMES,
    Tagged,
    annotate,
    chain_entropy,
    path_log_prob,
    predict_confidence,
    predict_spans,
    sequence_entropy,
    sequence_log_prob,
    span_marginals,
    span_probability,
)

__all__ = [
    "path_log_prob",
    "chain_entropy",
    "span_probability",
    "Tagged",
    "annotate",
    "sequence_log_prob",
    "predict_confidence",
    "sequence_entropy",
    "span_marginals",
    "predict_spans",
    "SPAN_SCHEMES",
]
