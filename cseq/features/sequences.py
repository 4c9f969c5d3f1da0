"""The path :class:`~cseq.chain.sequences.Sequences` had before it moved beside the chain that reads it.

A ``Sequences`` pickled by an earlier version names this module; it loads
through this name.
"""

from cseq.chain.sequences import Sequences

__all__ = ["Sequences"]
