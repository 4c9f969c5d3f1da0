"""What the benchmark scripts share: the CoNLL-2000 chunking attributes, timing, paths, tasks.

A script under ``bench/<kind>/`` puts ``bench/`` on ``sys.path`` first (two
lines at its top) and imports these as ``from common import features``;
``bench/run.py`` and ``bench/per_call.py`` sit in ``bench/`` itself.
"""
