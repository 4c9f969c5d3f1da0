"""The version of cseq: the one place it is written.

``pyproject.toml`` reads it for the package metadata
(``[tool.setuptools.dynamic]``), ``cseq.__version__`` and ``cseq --version``
import it, and model files record it.  RELEASING.md says when it changes.
"""

__version__ = "0.1.0.dev0"
