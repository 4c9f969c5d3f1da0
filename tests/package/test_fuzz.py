"""A short run of every fuzz target in tests/support/fuzz_targets.py (derandomized).

``CSEQ_FUZZ_EXAMPLES`` overrides the number of examples per target; the long
run is ``python tests/support/fuzz_targets.py --minutes 10`` (see docs/reliability.md).
"""

from __future__ import annotations

import os

import pytest

import cseq
from support import fuzz_targets
from cseq import registry
from cseq.io import serialize

EXAMPLES = int(os.environ.get("CSEQ_FUZZ_EXAMPLES", "300"))


@pytest.mark.parametrize("name", list(fuzz_targets.TARGETS))
def test_fuzz_target(name):
    before = fuzz_targets.COUNTS[name]
    fuzz_targets.run(fuzz_targets.TARGETS[name], EXAMPLES)
    assert fuzz_targets.COUNTS[name] - before >= EXAMPLES // 2


def test_every_learner_and_training_state_is_seeded():
    # The seeds cover every registered estimator, partial_fit state, order 2,
    # ':tags' templates, L1 and SGD; each unedited seed goes through every use.
    kinds = {serialize.loads(data).__class__ for data in fuzz_targets.seed_models().values()}
    assert kinds == {learner.estimator for learner in registry.LEARNERS.values()}
    for name, data in fuzz_targets.seed_models().items():
        before = fuzz_targets.COUNTS.copy()
        fuzz_targets.check_loads(data, report=name == "crf-early")
        done = fuzz_targets.COUNTS - before
        assert done["load: ok"] == 1
        if name != "unfitted":
            assert done["predict: ok"] == done["refit: ok"] == 1, name
            # MEMM and greedy do not decode by a sum of weights: explain refuses.
            linear = serialize.loads(data).model_.linear_scores
            assert done["explain: ok" if linear else "explain: InputError"] == 1, name
        assert done["save: ok"] >= 1, name
        if "partial" in name:
            assert done["partial_fit: ok"] == 1, name
    headers = [fuzz_targets.split(d)[0] for d in fuzz_targets.seed_models().values()]
    assert any(h.get("order") == 2 for h in headers)
    assert any(":tags" in str(h.get("features")) for h in headers)
    assert any(h["params"].get("c1", 0) > 0 for h in headers)


def test_fuzz_harness_reports_a_crash():
    # The harness must be able to fail: a parser that raises a non-cseq
    # exception is reported.
    from hypothesis import strategies as st

    def bad(data):
        raise KeyError("not a cseq exception")

    with pytest.raises(KeyError):
        fuzz_targets.run((bad, (st.binary(min_size=1),)), 5)


def test_fuzz_harness_reports_a_crash_after_loading(monkeypatch):
    # ... and so is a loaded model whose later use (here save) raises one.
    def broken(self):
        raise AttributeError("not a cseq exception")

    monkeypatch.setattr(cseq.CRF, "to_bytes", broken)
    with pytest.raises(AttributeError):
        fuzz_targets.check_loads(fuzz_targets.seed_models()["crf"])
