"""Data files shipped with cseq.

The package holds the Universal Dependencies English Web Treebank training
file reduced to two TAB-separated columns, FORM and UPOS: whole and gzipped
in ``ewt_train.tsv.gz`` (``cseq demo`` trains a part-of-speech tagger on it),
and its first 2,500 sentences in ``ewt_sample.tsv`` (small, for tests and
examples).  CC BY-SA 4.0; see ``README.md`` and ``LICENSE.txt`` in this
package for attribution and the changes made.
"""

from __future__ import annotations

import pathlib
from importlib import resources

__all__ = ["SAMPLE_SENTENCES", "SAMPLE_TOKENS", "sample_path", "TRAIN_SENTENCES",
           "TRAIN_TOKENS", "train_path"]

#: Number of sentences in ``ewt_sample.tsv``.
SAMPLE_SENTENCES = 2500
#: Number of tokens (syntactic words) in ``ewt_sample.tsv``.
SAMPLE_TOKENS = 45506
#: Number of sentences in ``ewt_train.tsv.gz`` (the whole EWT training file).
TRAIN_SENTENCES = 12544
#: Number of tokens (syntactic words) in ``ewt_train.tsv.gz``.
TRAIN_TOKENS = 204577


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


def train_path() -> pathlib.Path:
    """Path of the bundled EWT training set ``ewt_train.tsv.gz`` (gzipped).

    The same layout as :func:`sample_path`, for all 12,544 sentences of
    ``en_ewt-ud-train.conllu``; the readers decompress ``.gz`` paths:
    ``cseq.conll.read_conll(train_path(), sep="\\t")``.

    Examples
    --------
    >>> train_path().name
    'ewt_train.tsv.gz'
    """
    return pathlib.Path(str(resources.files(__name__).joinpath("ewt_train.tsv.gz")))
