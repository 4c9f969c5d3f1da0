"""For the tests that measure a process's memory (RSS)."""

from __future__ import annotations

import os

import pytest

#: AddressSanitizer's quarantine keeps freed memory resident, so RSS says
#: nothing about leaks or streaming under the sanitizer build
#: (docs/reliability.md, "AddressSanitizer").
skip_under_asan = pytest.mark.skipif(
    "asan" in os.environ.get("LD_PRELOAD", ""),
    reason="AddressSanitizer's quarantine keeps freed memory resident")
