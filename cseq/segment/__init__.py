"""Raw text to sentences, tokens and words: the trainable segmenter.

- :mod:`cseq.segment.segmenter`: :class:`~cseq.segment.segmenter.Segmenter`
  and what it returns, :class:`~cseq.segment.segmenter.Sentence` and
  :class:`~cseq.segment.segmenter.Token`;
- :mod:`cseq.segment.conllu`: CoNLL-U as running text with character labels
  (the training data);
- :mod:`cseq.segment.features` with its kernel :mod:`cseq.segment._chars`:
  the character features and the labels-to-tokens pass.

As the other sub-packages' ``__init__``, this one imports no module of the
package; its three public names load when first asked for (PEP 562).
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ loads them when asked for
    from cseq.segment.segmenter import Segmenter as Segmenter
    from cseq.segment.segmenter import Sentence as Sentence
    from cseq.segment.segmenter import Token as Token

__all__ = ["Segmenter", "Sentence", "Token"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module("cseq.segment.segmenter"), name)
    raise AttributeError(f"module 'cseq.segment' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
