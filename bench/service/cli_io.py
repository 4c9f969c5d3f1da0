"""What ``cseq tag`` spends reading and writing text, apart from tagging.

    python bench/service/cli_io.py                  # EWT train words, best of 5
    PYTHONPATH=/path/to/other/checkout python bench/service/cli_io.py   # another build

Writes the training file's words as a CoNLL file (one word per line, a
blank line after each sentence) to a temporary directory, then times, best
of ``--repeat``: the lines as the readers give them (``cseq.io.sources._lines``),
the items as ``cseq tag`` reads them (``cseq.io._streams.open_reader``), and
writing those items with one label per token as ``cseq tag`` writes CoNLL
(``cseq.io._streams.write_items``, into memory).  A measuring tool: it
asserts nothing.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import io
import os
import tempfile
from pathlib import Path

import cseq
from cseq.io._streams import open_reader, write_items
from cseq.conll import read_conllu
from cseq.io.sources import open_lines
from common.timing import best_of

DATA = SHARED_DATA / "ud_en_ewt"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA, help="the ud_en_ewt directory")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    sents = read_conllu(args.data / "en_ewt-ud-train.conllu")[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "words.conll")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join("".join(r[0] + "\n" for r in s) + "\n" for s in sents))

        def lines():
            with open_lines(path, "utf-8") as it:
                for _ in it:
                    pass

        def items():
            with open_reader(path, "auto", sep=None, n_columns=1) as r:
                return list(r.items(label=None, columns=None, drop_label=True))

        got = items()
        labels = [["NOUN"] * len(it.x) for it in got if it.x is not None]
        n = sum(map(len, labels))
        figures = {
            "lines": best_of(lines, args.repeat),
            "items (cseq tag's reading)": best_of(items, args.repeat),
            "write_items, CoNLL": best_of(
                lambda: write_items(io.StringIO(), got, labels, None, "conll", None),
                args.repeat),
        }
    print(f"cseq {cseq.__version__} ({Path(cseq.__file__).parent}), load "
          f"{os.getloadavg()[0]:.2f}; EWT train words, {n:,} tokens; best of {args.repeat}")
    for name, secs in figures.items():
        print(f"  {name:<28} {secs * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
