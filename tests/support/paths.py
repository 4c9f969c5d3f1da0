"""Where things are, seen from the tests: the tests folder, the checkout, the golden files.

The tests run from a checkout, an unpacked sdist or a copy of ``tests/``
(cibuildwheel, ``scripts/check_dist.sh``); ``ROOT`` is the folder that holds
``tests/`` in each, and ``ROOT.parent / "shared"`` the shared corpora beside
the project.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
#: Golden model files and fixtures (``tests/data``).
DATA = TESTS / "data"
#: The shared corpora, when the tests run beside ``../shared``.
SHARED = ROOT.parent / "shared"
