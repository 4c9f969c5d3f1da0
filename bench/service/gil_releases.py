"""How often one sentence per call gives the GIL away: a count under gdb.

    python bench/service/gil_releases.py                 # 20 predict([s]) calls, pos preset
    python bench/service/gil_releases.py --calls 50 --where

Trains a perceptron on 2,000 EWT train sentences with the ``pos`` preset,
tags 50 dev sentences once (warm-up), then runs ``--calls`` more
``predict([s])`` calls under ``gdb`` with a breakpoint on
``PyEval_SaveThread`` (what every GIL release goes through, in cseq's
compiled code and in NumPy's alike) enabled for those calls only, and prints
the count; ``--where`` adds the compiled functions the releases came from.
docs/production.md ("Threads") quotes it: on one short sentence each release
lets another busy thread keep the GIL for up to the switch interval.  Needs
``gdb`` on PATH; a measuring tool, not a test.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = SHARED_DATA / "ud_en_ewt"

# Run inside gdb: the calls counted sit between two getppid() system calls,
# which the gdb script catches (the first switches the breakpoint on; the
# releases after the second are not counted).
CHILD = """
import os, sys
import cseq
from cseq.conll import read_conllu
data, calls = sys.argv[1], int(sys.argv[2])
words, tags = read_conllu(os.path.join(data, "en_ewt-ud-train.conllu"))[:2]
X = [[(row[0],) for row in s] for s in words[:2000]]
model = cseq.StructuredPerceptron(max_iter=1, features=cseq.TemplateFeaturizer("pos"))
model.fit(X, tags[:2000])
dev = [[(row[0],) for row in s] for s in read_conllu(os.path.join(data, "en_ewt-ud-dev.conllu"))[0][:50]]
for s in dev:
    model.predict([s])
os.getppid()
for i in range(calls):
    model.predict([dev[i % len(dev)]])
os.getppid()
"""

GDB = """set pagination off
set breakpoint pending on
set print thread-events off
catch syscall getppid
commands 1
silent
printf "SWITCH\\n"
enable 2
continue
end
break PyEval_SaveThread
commands 2
silent
printf "RELEASE\\n"
bt 12
continue
end
disable 2
run
quit
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--where", action="store_true", help="the compiled callers of the releases")
    args = p.parse_args(argv)
    if shutil.which("gdb") is None:
        raise SystemExit("gdb is not on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        child, script = Path(tmp) / "child.py", Path(tmp) / "count.gdb"
        child.write_text(CHILD)
        script.write_text(GDB)
        out = subprocess.run(["gdb", "-q", "-batch", "-x", str(script), "--args",
                              os.path.realpath(sys.executable), str(child), str(args.data),
                              str(args.calls)], capture_output=True, text=True).stdout
    # the releases between the first and the last stop at a getppid (gdb stops
    # at a caught system call's entry and again at its return)
    parts = out.split("SWITCH\n")
    if len(parts) < 3:
        raise SystemExit("gdb did not reach the counted calls:\n" + out[-2000:])
    counted = "".join(parts[1:-1])
    print(f"{counted.count('RELEASE')} GIL releases in {args.calls} predict([s]) calls "
          "(pos preset, EWT dev sentences)")
    if args.where:
        callers = collections.Counter()
        for trace in counted.split("RELEASE\n")[1:]:
            names = re.findall(r"in (__pyx_\w+|\w+) \(", trace)
            cseq_frames = [n for n in names if "cseq" in n]
            callers[(names[0] if names else "?", cseq_frames[0] if cseq_frames else "-")] += 1
        for (first, ours), n in callers.most_common():
            print(f"  {n:4d}  {first}  <-  {ours}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
