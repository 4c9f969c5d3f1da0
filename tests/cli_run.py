"""Running the ``cseq`` command line in a subprocess, and a tiny training file for it."""

from __future__ import annotations

import os
import subprocess
import sys

#: Three chunked sentences (word, POS, chunk), CoNLL-2000 style.
TRAIN = """\
The DT B-NP
dog NN I-NP
barks VBZ B-VP
. . O

A DT B-NP
cat NN I-NP
sleeps VBZ B-VP
. . O

The DT B-NP
cat NN I-NP
barks VBZ B-VP
. . O
"""


def run(*args, stdin=None, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    """``python -m cseq ARGS`` with UTF-8 output; arguments may be paths.

    ``timeout`` (seconds) makes a hang fail the test (``subprocess.TimeoutExpired``).
    """
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "cseq", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=timeout, input=stdin)
