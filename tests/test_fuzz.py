"""A short run of every fuzz target in tests/fuzz_targets.py (derandomized).

``CSEQ_FUZZ_EXAMPLES`` overrides the number of examples per target; the long
run is ``python tests/fuzz_targets.py --minutes 10`` (see docs/reliability.md).
"""

from __future__ import annotations

import os

import pytest

import fuzz_targets

EXAMPLES = int(os.environ.get("CSEQ_FUZZ_EXAMPLES", "300"))


@pytest.mark.parametrize("name", list(fuzz_targets.TARGETS))
def test_fuzz_target(name):
    before = fuzz_targets.COUNTS[name]
    fuzz_targets.run(fuzz_targets.TARGETS[name], EXAMPLES)
    assert fuzz_targets.COUNTS[name] - before >= EXAMPLES // 2


def test_fuzz_harness_reports_a_crash():
    # The harness must be able to fail: a parser that raises a non-cseq
    # exception is reported.
    from hypothesis import strategies as st

    def bad(data):
        raise KeyError("not a cseq exception")

    with pytest.raises(KeyError):
        fuzz_targets.run((bad, (st.binary(min_size=1),)), 5)
