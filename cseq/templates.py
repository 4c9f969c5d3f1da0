"""Feature templates in CRF++ syntax, token functions, presets and the featurizer.

The documented public path of the template featurizer (``docs/templates.md``
is the full reference); the code lives in :mod:`cseq.features`:

- :mod:`cseq.features.template_language`: the syntax (:class:`Templates`,
  :class:`Template`, :class:`Cell`), its limits, and :func:`expand`, the
  plain-Python reference of what a template set means;
- :mod:`cseq.features.token_functions`: :data:`TOKEN_FUNCTIONS` (``lower``,
  ``suffix3``, ``shape`` ...), the definitions :mod:`cseq.features._tokens` computes in C;
- :mod:`cseq.features.presets`: :data:`PRESETS` (``pos``, ``chunk``, ``ner``);
- :mod:`cseq.features.featurizer`: :class:`TemplateFeaturizer`, the compiled
  path from raw tokens to packed attribute ids, fitted whole or by parts,
  with its model-file state in :mod:`cseq.features.featurizer_state`.

Every name this module offered before keeps working from here.
"""

# Names offered here but not in ``__all__`` (as before the split) are
# re-exported with ``import X as X``, the explicit re-export form.
from cseq.features.featurizer import MAX_BUCKETS as MAX_BUCKETS
from cseq.features.featurizer import TemplateFeaturizer
from cseq.features.featurizer import TransformChunks as TransformChunks
from cseq.features.featurizer_state import HASH_SCHEME as HASH_SCHEME
from cseq.features.featurizer_state import STATE_FORMAT as STATE_FORMAT
from cseq.features.presets import PRESETS
from cseq.features.template_language import MAX_COLUMN as MAX_COLUMN
from cseq.features.template_language import MAX_OFFSET as MAX_OFFSET
from cseq.features.template_language import MAX_TEMPLATE_CHARS as MAX_TEMPLATE_CHARS
from cseq.features.template_language import MAX_TEMPLATES as MAX_TEMPLATES
from cseq.features.template_language import Cell, Template, Templates, expand, preset
from cseq.features.token_functions import TAGS as TAGS
from cseq.features.token_functions import TOKEN_FUNCTIONS

__all__ = [
    "TOKEN_FUNCTIONS",
    "PRESETS",
    "Cell",
    "Template",
    "Templates",
    "TemplateFeaturizer",
    "expand",
    "preset",
]
