"""Readers and writers for CoNLL column files and CoNLL-U treebanks.

The documented public path of cseq's corpus input and output; the code lives
in :mod:`cseq.io`:

- :mod:`cseq.io.conll_read`: :class:`Sentence`, the CoNLL, CoNLL-U and
  plain-text readers (the ``iter_*`` functions stream one sentence at a
  time; the ``read_*`` functions return whole lists);
- :mod:`cseq.io.formats`: :func:`detect_format` and :func:`sniff_format`;
- :mod:`cseq.io.conll_write`: :func:`write_conll`;
- :mod:`cseq.io.sources`: how a path or a file is opened and decoded (every
  error names the file and the line).

Every name this module offered before keeps working from here.
"""

from cseq.io.conll_read import (
    CONLLU_COLUMNS,
    ConlluBlock,
    Sentence,
    conll_events,
    conllu_blocks,
    iter_conll,
    iter_conllu,
    iter_text,
    read_conll,
    read_conllu,
    read_text,
    text_lines,
)
from cseq.io.conll_write import write_conll
from cseq.io.formats import FORMATS, detect_format, sniff_format

__all__ = [
    "Sentence",
    "CONLLU_COLUMNS",
    "iter_conll",
    "read_conll",
    "iter_conllu",
    "read_conllu",
    "write_conll",
    "iter_text",
    "read_text",
    "FORMATS",
    "detect_format",
    "sniff_format",
    "conll_events",
    "conllu_blocks",
    "ConlluBlock",
    "text_lines",
]
