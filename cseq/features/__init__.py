"""From tokens to attribute ids: the featurizers.

- :mod:`cseq.features.protocol`: the featurizer interface
  (:class:`~cseq.features.protocol.Featurizer` and its optional
  capabilities) and the registry of featurizer kinds model files name;
- :mod:`cseq.features.vocabulary`:
  :class:`~cseq.features.vocabulary.FeatureVocabulary` (user-made feature
  lists and dicts), and the string-table encoding model files use;
- the template featurizer, from the language to the compiled path:
  :mod:`~cseq.features.template_language` (the syntax and
  :func:`~cseq.features.template_language.expand`, its plain-Python
  reference), :mod:`~cseq.features.token_functions`,
  :mod:`~cseq.features.presets`, :mod:`~cseq.features.featurizer` (the
  class: checking the user's sentences, fitting whole or by parts) with
  :mod:`~cseq.features.featurizer_state` (its model-file state, as functions).
  :mod:`cseq.templates` is their public path.

This ``__init__`` imports no module of the package: importing one module of
it must not import the others.  The names of :mod:`cseq.features.vocabulary`
and :mod:`cseq.features.protocol` stay reachable as ``cseq.features.X`` (the
path they had when this package was the module ``cseq/features.py``),
loaded when first asked for (PEP 562).
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ loads them when asked for
    from cseq.features.protocol import FEATURIZERS as FEATURIZERS
    from cseq.features.protocol import Featurizer as Featurizer
    from cseq.features.protocol import featurizer_from_config as featurizer_from_config
    from cseq.features.protocol import featurizer_from_state as featurizer_from_state
    from cseq.features.protocol import featurizer_state_arrays as featurizer_state_arrays
    from cseq.features.protocol import register_featurizer as register_featurizer
    from cseq.features.vocabulary import FeatureVocabulary as FeatureVocabulary
    from cseq.features.vocabulary import check_strings as check_strings
    from cseq.features.vocabulary import decode_strings as decode_strings
    from cseq.features.vocabulary import encode_strings as encode_strings

#: The names ``cseq.features`` offers, by the module that defines them.
_NAMES = {
    **dict.fromkeys(("FeatureVocabulary", "check_strings", "decode_strings", "encode_strings"),
                    "cseq.features.vocabulary"),
    **dict.fromkeys(("FEATURIZERS", "Featurizer", "featurizer_from_config",
                     "featurizer_from_state", "featurizer_state_arrays", "register_featurizer"),
                    "cseq.features.protocol"),
}

__all__ = ["Featurizer", "FeatureVocabulary", "encode_strings", "decode_strings",
           "register_featurizer", "featurizer_from_config", "featurizer_from_state"]


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'cseq.features' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES})
