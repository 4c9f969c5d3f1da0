"""Where the real corpora are, for the tests that read them.

``../shared/data`` beside the repository, or ``CSEQ_SHARED_DATA``.  A test
that needs a file uses :func:`needs`; its skip reason contains
:data:`SKIP_REASON`, which ``conftest.py`` counts (``CSEQ_REQUIRE_DATA=1``
turns those skips into a failed session).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.paths import SHARED

DATA = Path(os.environ.get("CSEQ_SHARED_DATA",
                           SHARED / "data"))
CONLL2000 = DATA / "conll2000"
EWT = DATA / "ud_en_ewt"
WNUT17 = DATA / "wnut17"

SKIP_REASON = "shared data is absent"


def needs(*paths: Path):
    """Skip the test unless every path exists."""
    missing = [p for p in paths if not p.exists()]
    return pytest.mark.skipif(bool(missing),
                              reason=f"{SKIP_REASON}: {', '.join(map(str, missing))}")
