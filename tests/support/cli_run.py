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


def run_in_process(*args) -> subprocess.CompletedProcess:
    """:func:`cseq.cli.main` on ``ARGS`` in this process, its output captured as :func:`run`'s.

    For what a subprocess cannot see: the learners registered in this process
    only (tests/learners/test_new_learner.py registers one that only the test defines).
    """
    import contextlib
    import io

    from cseq import cli
    out, err = io.StringIO(), io.StringIO()
    argv = [str(a) for a in args]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse: --help, usage errors
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["cseq", *argv], code, out.getvalue(), err.getvalue())
