"""Why a linear model chose its labels: per-feature contributions, top features, transition tables.

The documented public path; the code lives in :mod:`cseq.chain.explain`.  Every name
this module offered before keeps working from here.
"""

from cseq.chain.explain import (
    Explanation,
    FeatureContribution,
    TokenExplanation,
    explain,
    feature_names,
    max_marginals,
    top_features,
    transition_table,
)

__all__ = [
    "FeatureContribution",
    "TokenExplanation",
    "Explanation",
    "explain",
    "feature_names",
    "max_marginals",
    "top_features",
    "transition_table",
]
