"""Decoding beyond the best path: label constraints from a BIO-family scheme, n-best lists, marginals.

The documented public path; the code lives in :mod:`cseq.chain.decoding`.  Every name
this module offered before keeps working from here.
"""

from cseq.chain.decoding import (
    NBest,
    predict,
    predict_marginals,
    predict_nbest,
    scheme_constraints,
    score,
)

__all__ = [
    "scheme_constraints",
    "NBest",
    "predict",
    "predict_marginals",
    "predict_nbest",
    "score",
]
