"""Helpers shared by the tests: oracles, strategies, the registry's learners, paths, budgets.

``tests/`` is on ``sys.path`` (``pythonpath`` in ``pyproject.toml``), so a
test imports them as ``from support.oracle import brute_viterbi``.
"""
