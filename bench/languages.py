"""Raw text to CoNLL-U in many languages: `cseq pipeline train` against UDPipe 1, treebank by treebank.

    python bench/languages.py --ud DIR                     # every treebank of DIR, and EWT
    python bench/languages.py --ud DIR --treebanks UD_Greek-GDT,UD_Thai-TUD --repeat 3
    python bench/languages.py --ud DIR --scorer conll18_ud_eval.py   # cross-check the scores
    python bench/languages.py --ud DIR --split dev --segmenter-grid 0.1:0.1,0.02:0.1,0.1:0.3,0.05:0.03
                                                           # the segmenter's c1:c2, on every dev file

``DIR`` holds UD treebank folders as the UD repositories lay them out
(``UD_Greek-GDT/el_gdt-ud-train.conllu`` and its dev or test file); UD
English EWT from the shared data (``ud_en_ewt``) is added when present.
Nothing is downloaded: fetch the treebanks first (docs/languages.md says
which, at which commits).

For each treebank both systems train on its training file with their
defaults, nothing tuned per treebank:

* **cseq**: :meth:`cseq.pipeline.Pipeline.train`, which ``cseq pipeline
  train`` runs: a segmenter and a tagger per column (UPOS, XPOS, FEATS,
  LEMMA), one file.
* **UDPipe 1** (``ufal.udpipe``): its tokenizer (``--udpipe-epochs``; UDPipe's
  default is 100) and its tagger (``--udpipe-iterations``; default 20), one
  model that predicts UPOS, XPOS, FEATS and the lemma, as UDPipe trains by
  default (``models=1``), no parser.

Both models are cached under ``bench/.cache/languages`` (gitignored), keyed by
the treebank, its training file's SHA-256 and the settings; ``--fresh``
retrains.  The evaluation text is the test file's (``--split dev``: the dev
file's; the other where a treebank has only one: the shared data hold EWT's
dev file only) made as users have it
(:func:`cseq.io.raw.conllu_raw_text`: a paragraph per line, its sentences
joined, never a sentence per line).  Each system reads it raw and writes
CoNLL-U, one thread, in this process; the speed is characters per second,
the best of ``--repeat`` runs, with the CPU time beside it.  Both outputs are
scored by :func:`cseq.metrics.ud_scores` (the CoNLL 2018 scorer's rules);
``--scorer`` also runs the shared task's own ``conll18_ud_eval.py`` on both
(HEAD filled in as a chain, which no figure here reads) and stops if any
figure differs.
"""

from __future__ import annotations

import sys
from pathlib import Path as _Path

sys.path.insert(0, str(_Path(__file__).resolve().parent))  # bench/, for `common`
from common.paths import ROOT, SHARED_DATA  # noqa: E402

import os  # noqa: E402

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "languages"
#: The figures of the table, as ud_scores names them, and their headings.
FIGURES = {"tokens": "Tokens", "words": "Words", "sentences": "Sentences", "upos": "UPOS",
           "xpos": "XPOS", "ufeats": "UFeats", "lemmas": "Lemmas"}
#: The shared task's names of the same figures (conll18_ud_eval.py --verbose).
SCORER_NAMES = {"tokens": "Tokens", "words": "Words", "sentences": "Sentences", "upos": "UPOS",
                "xpos": "XPOS", "ufeats": "UFeats", "lemmas": "Lemmas"}


@dataclass
class Treebank:
    name: str
    train: Path
    eval: Path

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.train.read_bytes()).hexdigest()[:12]


@dataclass
class Run:
    system: str
    scores: dict[str, float]
    chars_per_s: float
    cpu_s: float
    train_s: float
    train_cpu_s: float
    extra: dict = field(default_factory=dict)


def treebanks(ud: Path | None, only: list[str] | None, split: str) -> list[Treebank]:
    """The treebanks of ``ud`` (and EWT from the shared data), in name order, each with its
    ``split`` file to score on (the other one where it lacks that split)."""
    found = []
    dirs = sorted(p for p in ud.iterdir() if p.is_dir()) if ud is not None else []
    ewt = SHARED_DATA / "ud_en_ewt"
    if ewt.is_dir():
        dirs.append(ewt)
    for d in dirs:
        name = "UD_English-EWT" if d == ewt else d.name
        if only and name not in only:
            continue
        train = sorted(d.glob("*-ud-train.conllu"))
        held = (sorted(d.glob("*-ud-test.conllu")) or sorted(d.glob("*-ud-dev.conllu"))
                if split == "test" else
                sorted(d.glob("*-ud-dev.conllu")) or sorted(d.glob("*-ud-test.conllu")))
        if train and held:
            found.append(Treebank(name, train[0], held[0]))
    if only:
        missing = set(only) - {t.name for t in found}
        if missing:
            raise SystemExit(f"no treebank {', '.join(sorted(missing))} in {ud}")
    return found


def raw_text(conllu: Path) -> str:
    from cseq.io.raw import conllu_raw_text
    return "\n\n".join(conllu_raw_text(conllu)) + "\n"


def _cached(path: Path, train) -> tuple[float, float]:
    """Train with ``train(path)`` unless ``path`` exists; its (wall, CPU) training seconds."""
    meta = path.with_suffix(path.suffix + ".json")
    if path.exists() and meta.exists():
        m = json.loads(meta.read_text())
        return m["wall"], m["cpu"]
    path.parent.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    train(path)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    meta.write_text(json.dumps({"wall": wall, "cpu": cpu}))
    return wall, cpu


def _timed(fn, repeat: int):
    """The best wall time of ``repeat`` calls, the CPU time of that call, and its result."""
    best = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if best is None or wall < best[0]:
            best = (wall, cpu, out)
    return best


def _scores(gold: Path, conllu: str) -> dict[str, float]:
    from cseq.metrics import ud_scores
    return {k: 100 * v.f1 for k, v in ud_scores(gold, io.StringIO(conllu)).items()}


def cseq_version() -> str:
    import cseq
    return cseq.__version__


def run_cseq(tb: Treebank, text: str, args) -> Run:
    from cseq.pipeline import Pipeline, format_tagged, load_pipeline
    from cseq.io.raw import paragraphs_of
    from cseq.pipeline import PIPELINE_DEFAULTS
    settings = hashlib.sha256(json.dumps([cseq_version(), PIPELINE_DEFAULTS],
                                         sort_keys=True).encode()).hexdigest()[:8]
    path = CACHE / f"{tb.name}-{tb.digest}-cseq-{settings}.cseqp"
    if args.fresh:
        path.unlink(missing_ok=True)
    train_s, train_cpu = _cached(path, lambda p: Pipeline.train(tb.train, verbose=True).save(p))
    pipe = load_pipeline(path)
    wall, cpu, out = _timed(lambda: "".join(format_tagged(pipe.process(paragraphs_of(text)))),
                            args.repeat)
    return Run("cseq", _scores(tb.eval, out), len(text) / wall, cpu, train_s, train_cpu,
               {"output": out, "columns": list(pipe.taggers)})


def run_udpipe(tb: Treebank, text: str, args) -> Run:
    from ufal.udpipe import Model, Pipeline as UPipeline, ProcessingError
    path = CACHE / (f"{tb.name}-{tb.digest}-udpipe-tok{args.udpipe_epochs}"
                    f"-tag{args.udpipe_iterations}.udpipe")
    if args.fresh:
        path.unlink(missing_ok=True)
    from common.udpipe import train_udpipe
    train_s, train_cpu = _cached(path, lambda p: train_udpipe(
        tb.train, p, f"epochs={args.udpipe_epochs}", f"iterations={args.udpipe_iterations}"))
    model = Model.load(str(path))
    if model is None:
        raise SystemExit(f"UDPipe cannot load {path}")
    pipe = UPipeline(model, "tokenize", UPipeline.DEFAULT, UPipeline.NONE, "conllu")
    err = ProcessingError()
    wall, cpu, out = _timed(lambda: pipe.process(text, err), args.repeat)
    if err.occurred():
        raise SystemExit(f"UDPipe failed on {tb.name}: {err.message}")
    return Run("UDPipe 1", _scores(tb.eval, out), len(text) / wall, cpu, train_s, train_cpu,
               {"output": out})


def with_heads(conllu: str) -> str:
    """``conllu`` with HEAD and DEPREL filled as a chain (word 1 the root), which the
    shared task's script requires and no figure of this table reads."""
    out = []
    for line in conllu.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6], cols[7] = ("0", "root") if cols[0] == "1" else ("1", "dep")
            line = "\t".join(cols)
        out.append(line)
    return "\n".join(out) + "\n"


def official(scorer: Path, gold: Path, conllu: str) -> dict[str, float]:
    """The shared task script's F1 of each figure (its --verbose table), in percent."""
    with tempfile.TemporaryDirectory() as tmp:
        g, s = Path(tmp) / "gold.conllu", Path(tmp) / "system.conllu"
        g.write_text(with_heads(gold.read_text(encoding="utf-8")), encoding="utf-8")
        s.write_text(with_heads(conllu), encoding="utf-8")
        res = subprocess.run([sys.executable, str(scorer), "--verbose", str(g), str(s)],
                             capture_output=True, text=True, check=True).stdout
    found = {}
    for line in res.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 4 and parts[0] in SCORER_NAMES.values():
            found[parts[0]] = float(parts[3])
    return {k: found[v] for k, v in SCORER_NAMES.items() if v in found}


def _row(tb: str, run: Run, ratio: float | None) -> str:
    figs = " | ".join(f"{run.scores[k]:.2f}" for k in FIGURES)
    r = "" if ratio is None else f"{ratio:.1f}x"
    return (f"| {tb} | {run.system} | {figs} | {run.chars_per_s:,.0f} | {r} | "
            f"{run.train_s:.0f} / {run.train_cpu_s:.0f} |")


def segmenter_grid(tbs: list[Treebank], grid: str) -> int:
    """Tokens, words and sentences F1 of the segmenter for each ``c1:c2`` of ``grid`` on every
    treebank, and each setting's mean difference to the first (with its spread)."""
    import warnings

    from cseq.pipeline import PIPELINE_DEFAULTS
    from cseq.segment import Segmenter
    from cseq.segment.conllu import space_share
    settings = [tuple(float(v) for v in item.split(":")) for item in grid.split(",")]
    found: dict[str, list[dict[str, float]]] = {}
    for tb in tbs:
        preset = "nospace" if space_share(tb.train) < 0.2 else "alphabetic"
        for c1, c2 in settings:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                seg = Segmenter(PIPELINE_DEFAULTS["segmenter_learner"], preset,
                                max_iter=PIPELINE_DEFAULTS["segmenter_max_iter"], random_state=0,
                                c1=c1, c2=c2, n_jobs=1).fit(tb.train)
            scores = seg.score(tb.eval)
            found.setdefault(tb.name, []).append(scores)
            print(f"{tb.name} c1 {c1} c2 {c2}: " + ", ".join(
                f"{k} {v:.2f}" for k, v in scores.items()), flush=True)
    for i, (c1, c2) in enumerate(settings[1:], 1):
        parts = []
        for k in ("tokens", "words", "sentences"):
            d = [runs[i][k] - runs[0][k] for runs in found.values()]
            parts.append(f"{k} {statistics.fmean(d):+.3f} (sd {statistics.pstdev(d):.3f})")
        print(f"c1 {c1} c2 {c2} against c1 {settings[0][0]} c2 {settings[0][1]}, mean over "
              f"{len(found)} treebanks: " + ", ".join(parts))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ud", type=Path, default=None,
                   help="a folder of UD treebank folders (UD_Greek-GDT/...-ud-train.conllu)")
    p.add_argument("--treebanks", default=None, help="comma-separated folder names (all)")
    p.add_argument("--split", choices=("test", "dev"), default="test",
                   help="the file scored: test (default; dev where a treebank has no test "
                   "file, as EWT in the shared data), or dev (where the defaults were chosen)")
    p.add_argument("--repeat", type=int, default=3, help="runs per system, the best kept (3)")
    p.add_argument("--udpipe-epochs", type=int, default=10, help="UDPipe tokenizer epochs (10)")
    p.add_argument("--udpipe-iterations", type=int, default=10,
                   help="UDPipe tagger and lemmatizer iterations (10)")
    p.add_argument("--skip", default="", help="comma-separated systems to skip (udpipe)")
    p.add_argument("--scorer", type=Path, default=None,
                   help="conll18_ud_eval.py: also score both outputs with it and compare")
    p.add_argument("--fresh", action="store_true", help="retrain every cached model")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    p.add_argument("--segmenter-grid", default=None, metavar="C1:C2,...",
                   help="only score the segmenter for each L1:L2 setting on every treebank, and "
                   "each setting's mean difference to the first")
    args = p.parse_args(argv)
    only = args.treebanks.split(",") if args.treebanks else None
    tbs = treebanks(args.ud, only, args.split)
    if not tbs:
        p.error("no treebank found: give --ud DIR (folders of UD treebanks)")
    if args.segmenter_grid:
        return segmenter_grid(tbs, args.segmenter_grid)
    skip = set(filter(None, args.skip.split(",")))
    import cseq
    load0 = os.getloadavg()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, cseq {cseq.__version__}, load average {load0[0]:.2f} at the "
          f"start; UDPipe tokenizer {args.udpipe_epochs} epochs, tagger and lemmatizer "
          f"{args.udpipe_iterations} iterations; best of {args.repeat}, one thread",
          flush=True)
    heads = " | ".join(FIGURES.values())
    lines = [f"| treebank | system | {heads} | chars/s | × UDPipe | train s (wall / CPU) |",
             "|---|---|" + "---:|" * (len(FIGURES) + 3)]
    record = []
    for tb in tbs:
        text = raw_text(tb.eval)
        print(f"{tb.name}: {len(text):,} characters of raw {tb.eval.name}", file=sys.stderr,
              flush=True)
        runs = [run_cseq(tb, text, args)]
        if "udpipe" not in skip:
            runs.append(run_udpipe(tb, text, args))
        if args.scorer is not None:
            for run in runs:
                theirs = official(args.scorer, tb.eval, run.extra["output"])
                # the script prints percentages to two decimals
                diff = {k: (run.scores[k], v) for k, v in theirs.items()
                        if abs(run.scores[k] - v) > 0.0051}
                if diff:
                    raise SystemExit(f"{tb.name} {run.system}: ud_scores and the scorer "
                                     f"differ: {diff}")
        peer = runs[1].chars_per_s if len(runs) > 1 else None
        for run in runs:
            line = _row(tb.name, run, None if peer is None else run.chars_per_s / peer)
            lines.append(line)
            print(line, flush=True)
        record.append({"treebank": tb.name, "eval": tb.eval.name, "chars": len(text),
                       "runs": [{k: v for k, v in run.__dict__.items() if k != "extra"}
                                | {"columns": run.extra.get("columns")} for run in runs]})
    if "udpipe" not in skip:
        from cseq.segment.conllu import space_share
        spaced = [r for r, tb in zip(record, tbs) if space_share(tb.train) >= 0.2]
        for label, rows in (("", record), (", scripts with spaces", spaced)):
            if not rows or (label and len(rows) == len(record)):
                continue
            mean = {k: statistics.fmean(r["runs"][0]["scores"][k] - r["runs"][1]["scores"][k]
                                        for r in rows) for k in FIGURES}
            ratio = statistics.fmean(r["runs"][0]["chars_per_s"] / r["runs"][1]["chars_per_s"]
                                     for r in rows)
            lines.append(f"| **mean, cseq − UDPipe{label}** ({len(rows)}) | | " + " | ".join(
                f"{v:+.2f}" for v in mean.values()) + f" | | {ratio:.1f}x | |")
        wins = {k: sum(r["runs"][0]["scores"][k] >= r["runs"][1]["scores"][k] for r in record)
                for k in ("tokens", "words")}
        lines.append(f"| **treebanks where cseq ≥ UDPipe** | | {wins['tokens']} of {len(record)}"
                     f" | {wins['words']} of {len(record)} | | | | | | | | |")
    load1 = os.getloadavg()
    print("\n".join(["", *lines, "", f"load average {load0[0]:.2f} at the start, "
                     f"{load1[0]:.2f} at the end"]))
    if args.json is not None:
        args.json.write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
