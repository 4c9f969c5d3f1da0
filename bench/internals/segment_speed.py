"""How fast a segmenter (``cseq.Segmenter``) segments raw text, and how well (issue 29).

    python bench/internals/segment_speed.py SEG.cseq                 # a trained segmenter
    python bench/internals/segment_speed.py --train --learner crf    # train one on EWT train first
    python bench/internals/segment_speed.py SEG.cseq --repeat 7

The text is EWT dev made raw as the issue says (``cseq.segment.conllu.paragraphs``:
the sentences of a paragraph on one line, ten to a paragraph where the file
has no paragraph marks).  Figures, each the best of ``--repeat`` runs over
the whole text, in characters per second on one thread:

* ``featurize``: the compiled character features (``transform``);
* ``decode``: the learner's Viterbi over them;
* ``segment()``: the whole call, from a ``str`` to ``Sentence`` and
  ``Token`` objects (features, decoding, labels to tokens, the objects).

Each is given in wall time and in the process's CPU time: on a machine
shared with other work (the banner gives the load average) the CPU time is
the one-thread figure.  Then the tokens, words and sentences F1 of the quick
offset scorer (``Segmenter.score``; the UD scorer's figures come from the
pipeline bench).  :func:`measure` is the function other benches call.  A
measuring tool: it asserts nothing and never runs in the test suite.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import cseq
from cseq.segment import Segmenter
from cseq.segment.conllu import paragraphs


def measure(segmenter: Segmenter, texts: list[str], repeat: int = 5) -> dict[str, float]:
    """Best-of-``repeat`` characters per second of the three stages over ``texts``
    (keys ``featurize``, ``decode``, ``segment``, each also with ``_cpu``)."""
    fitted, _ = segmenter._fitted()
    n = sum(map(len, texts))
    best: dict[str, float] = {}

    def keep(name: str, wall: float, cpu: float) -> None:
        best[name] = max(best.get(name, 0.0), n / max(wall, 1e-9))
        best[name + "_cpu"] = max(best.get(name + "_cpu", 0.0), n / max(cpu, 1e-9))

    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        corpora = [fitted.featurizer.transform([t]) for t in texts]
        keep("featurize", time.perf_counter() - w, time.process_time() - c)
        w, c = time.perf_counter(), time.process_time()
        for corpus in corpora:
            fitted.model.decode(corpus)
        keep("decode", time.perf_counter() - w, time.process_time() - c)
        w, c = time.perf_counter(), time.process_time()
        for t in texts:
            segmenter.segment(t)
        keep("segment", time.perf_counter() - w, time.process_time() - c)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", nargs="?", help="a segmenter model file, a pipeline file or en (the "
                   "shipped pipeline's segmenter), or --train")
    p.add_argument("--train", action="store_true", help="train one on EWT train first")
    p.add_argument("--learner", default="perceptron", help="with --train (default perceptron)")
    p.add_argument("--max-iter", type=int, default=None, help="with --train")
    p.add_argument("--data", default=str(SHARED_DATA))
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    ewt = Path(args.data) / "ud_en_ewt"
    print(f"cseq {cseq.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, load average {os.getloadavg()[0]:.2f}")
    if args.train:
        t = time.perf_counter()
        seg = Segmenter(args.learner, max_iter=args.max_iter).fit(ewt / "en_ewt-ud-train.conllu")
        print(f"trained ({args.learner}) on EWT train in {time.perf_counter() - t:.1f}s")
    elif args.model:
        from cseq.exceptions import ModelFormatError
        from cseq.pipeline import load_pipeline
        try:
            seg = Segmenter.load(args.model)
        except (ModelFormatError, OSError):
            seg = load_pipeline(args.model).segmenter
    else:
        sys.exit("give a model file or --train")
    dev = ewt / "en_ewt-ud-dev.conllu"
    texts = [para.text for para in paragraphs(dev)]
    speed = measure(seg, texts, args.repeat)
    print(f"EWT dev as raw text: {len(texts)} paragraphs, {sum(map(len, texts))} characters; "
          f"{seg.estimator_.featurizer_.n_attributes} features")
    for stage in ("featurize", "decode", "segment"):
        print(f"  {stage:10s} {speed[stage]:>12,.0f} chars/s wall  "
              f"{speed[stage + '_cpu']:>12,.0f} chars/s CPU")
    scores = seg.score(dev)
    print("  F1 " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
