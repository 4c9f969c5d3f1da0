"""Where the benchmarks find the checkout and the shared corpora."""

from __future__ import annotations

from pathlib import Path

#: The checkout (or unpacked sdist) that holds ``bench/``.
ROOT = Path(__file__).resolve().parents[2]
#: The shared corpora beside the project (``../shared/data``); ``--data`` overrides.
SHARED_DATA = ROOT.parent / "shared" / "data"
