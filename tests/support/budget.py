"""The example budget of a property test, scaled by the Hypothesis profile (see conftest.py)."""

from __future__ import annotations

import os

from hypothesis import settings

#: Examples per property test are multiplied by this in the ``nightly`` profile.
SCALE = 10 if os.environ.get("CSEQ_HYPOTHESIS_PROFILE") == "nightly" else 1


def examples(n: int) -> settings:
    """``n`` examples under the ``ci`` profile, ``10 n`` under ``nightly``; every
    other setting comes from the profile loaded in ``conftest.py``."""
    return settings(max_examples=n * SCALE)
