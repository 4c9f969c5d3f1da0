"""The ``cluster`` token functions: bit-string prefixes of a word's Brown cluster.

``%x[row,col:clusterN]`` reads the first ``N`` bits of the cluster path of
the cell's string (the whole path when it is shorter), ``%x[row,col:cluster]``
the whole path, and :data:`UNKNOWN` for a string the table lacks (its
lowercase form is tried too).  Prefixes of several lengths give clusters of
several grains (Koo et al. 2008 use 4 and 6 bits and the whole path; Turian
et al. 2010 use 4, 6, 10 and 20).  The table is a
:class:`cseq.features.clusters.Clusters` given to the featurizer
(``TemplateFeaturizer(..., clusters=...)``, ``cseq train --clusters FILE``);
a fitted featurizer keeps it in the model file, so tagging reads no
cluster file.

References
----------
.. [1] T. Koo, X. Carreras, M. Collins, "Simple semi-supervised dependency
   parsing", ACL 2008.
.. [2] J. Turian, L. Ratinov, Y. Bengio, "Word representations: a simple and
   general method for semi-supervised learning", ACL 2010.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["CLUSTER", "MAX_BITS", "UNKNOWN", "cluster_bits", "cluster_value"]

#: The name of the function (``cluster``, or ``cluster`` and a bit count).
CLUSTER = "cluster"
#: The longest prefix a ``clusterN`` function may name.
MAX_BITS = 64
#: The value of a string with no cluster.
UNKNOWN = "_UNK_"

_NAME = re.compile(r"cluster([1-9][0-9]?)?\Z")


def cluster_bits(func: str | None) -> int | None:
    """The prefix length ``func`` names (0: the whole path), or None if it is no cluster function."""
    m = _NAME.match(func or "")
    if m is None:
        return None
    bits = int(m.group(1) or 0)
    return bits if bits <= MAX_BITS else None


def cluster_value(path_of: Callable[[str], str | None], word: str, bits: int) -> str:
    """The value of ``%x[.,.:clusterN]`` (``bits`` = N, 0 for ``cluster``) on ``word``,
    by ``path_of`` (:meth:`cseq.features.clusters.Clusters.path`)."""
    path = path_of(word)
    if path is None:
        return UNKNOWN
    return path[:bits] if bits else path
