"""The evaluation report on CoNLL-2000, made with the command line (the figures of docs/report.md).

The bench's split of CoNLL-2000 (``train.txt`` minus its last 1,000
sentences -> those 1,000, as ``bench/accuracy/learners.py``), a CRF with the
``chunk`` templates and ``cseq train``'s defaults, then ``cseq eval
--report``; with Chromium installed, a full-page screenshot too.  It runs
exactly these commands (printed as it goes) in ``--out``::

    cseq train fit.txt --template chunk --algorithm crf --dev held.txt -o chunk.cseq
    cseq eval chunk.cseq held.txt --report report.html
    chromium --headless --screenshot=report.png --window-size=1200,9000 report.html

It is a measuring tool: it asserts nothing and never runs in the test suite.
It needs matplotlib (``pip install -e ".[report]"``).

Usage::

    python bench/accuracy/report.py --data ../shared/data --out /tmp/report
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

DEFAULT_DATA = str(SHARED_DATA)


def _run(cmd: list[str], cwd: str, quiet: bool = False) -> None:
    words = ["cseq"] + cmd[3:] if cmd[:3] == [sys.executable, "-m", "cseq"] else cmd
    print("$ " + " ".join(words), flush=True)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stderr=subprocess.DEVNULL if quiet else None)
    print(f"  ({time.perf_counter() - start:.1f} s)", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA, help="folder holding conll2000/train.txt")
    ap.add_argument("--out", default=".", help="folder for the files (default: here)")
    ap.add_argument("--window", default="1200,9000", help="screenshot size (default 1200,9000)")
    args = ap.parse_args(argv)
    src = os.path.join(args.data, "conll2000", "train.txt")
    if not os.path.exists(src):
        print(f"no {src}: give --data", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    with open(src, encoding="utf-8") as f:
        sentences = re.split(r"\n\s*\n", f.read().strip())
    for name, part in (("fit.txt", sentences[:-1000]), ("held.txt", sentences[-1000:])):
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write("\n\n".join(part) + "\n\n")
    print(f"{len(sentences) - 1000} training and 1000 held-out sentences in {args.out}")
    print("load average at the start: " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    cseq = [sys.executable, "-m", "cseq"]
    _run(cseq + ["train", "fit.txt", "--template", "chunk", "--algorithm", "crf", "--dev",
                 "held.txt", "-o", "chunk.cseq", "--quiet"], args.out)
    _run(cseq + ["eval", "chunk.cseq", "held.txt", "--report", "report.html"], args.out)
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(b)), None)
    if browser is None:
        print("no Chromium: no screenshot")
        return 0
    page = "file://" + os.path.abspath(os.path.join(args.out, "report.html"))
    # (Chromium's stderr is dropped: headless, it complains about the missing D-Bus.)
    _run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--screenshot=report.png",
          f"--window-size={args.window}", page], args.out, quiet=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
