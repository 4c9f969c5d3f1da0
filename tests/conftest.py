"""Suite-wide test configuration: one Hypothesis profile, and the shared-data guard.

Hypothesis
    Every property test runs under the profile named by
    ``CSEQ_HYPOTHESIS_PROFILE``: ``ci`` (the default, and what ``.ci/run``
    uses) draws the same examples on every run (``derandomize``, no example
    database), so a failure is reproducible and a pass is not luck;
    ``nightly`` draws fresh random examples, ten times as many (a long run
    that looks for new failures).  Tests state only their example budget, as
    ``@examples(n)`` (``n`` is scaled by the profile); nothing else is set per
    test.

Shared data
    Tests that read ``../shared/data`` (or ``CSEQ_SHARED_DATA``) skip when it
    is absent.  With ``CSEQ_REQUIRE_DATA=1`` (set by ``.ci/run``) such a skip
    makes the session fail instead, so CI cannot pass without running them.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from support.shared_data import SKIP_REASON

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "nightly",
    derandomize=False,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("CSEQ_HYPOTHESIS_PROFILE", "ci"))

_missing_data: list[str] = []


def pytest_runtest_logreport(report):
    if report.skipped and SKIP_REASON in str(report.longrepr):
        _missing_data.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _missing_data and os.environ.get("CSEQ_REQUIRE_DATA") == "1":
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _missing_data and os.environ.get("CSEQ_REQUIRE_DATA") == "1":
        terminalreporter.write_line(
            f"CSEQ_REQUIRE_DATA=1 but {len(_missing_data)} tests skipped for want of the "
            f"shared data, e.g. {_missing_data[0]}", red=True)


def pytest_make_parametrize_id(config, val, argname):
    """A class parameter's id is its name (``CRF``, not ``cls0``): a learner's tests can be
    selected by it (``-k``), as ``tests/learners/test_new_learner.py`` does."""
    return val.__name__ if isinstance(val, type) else None
