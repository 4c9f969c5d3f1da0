"""Data files shipped with cseq.

The package holds one small real corpus, ``ewt_sample.tsv``: the first 2,500
sentences of the Universal Dependencies English Web Treebank training file,
reduced to two TAB-separated columns, FORM and UPOS (CC BY-SA 4.0; see
``README.md`` and ``LICENSE.txt`` in this package for attribution and the
changes made).  ``cseq demo`` trains a part-of-speech tagger on it.
"""

from __future__ import annotations

import pathlib
from importlib import resources

__all__ = ["SAMPLE_SENTENCES", "SAMPLE_TOKENS", "sample_path"]

#: Number of sentences in ``ewt_sample.tsv``.
SAMPLE_SENTENCES = 2500
#: Number of tokens (syntactic words) in ``ewt_sample.tsv``.
SAMPLE_TOKENS = 45506


def sample_path() -> pathlib.Path:
    """Path of the bundled POS-tagging sample ``ewt_sample.tsv``.

    The file has one token per line as ``FORM<TAB>UPOS`` and a blank line
    after each sentence; read it with
    ``cseq.conll.read_conll(sample_path(), sep="\\t")``.

    Returns
    -------
    pathlib.Path
        A path on the file system.  cseq is installed as plain files (never
        run from a zip archive), so the path stays valid after the call.

    Examples
    --------
    >>> sample_path().name
    'ewt_sample.tsv'
    """
    return pathlib.Path(str(resources.files(__name__).joinpath("ewt_sample.tsv")))
