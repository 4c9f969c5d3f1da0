"""Raw text to tokens, sentences and UPOS: cseq's segmenter and tagger against the peers (issue 29).

    python bench/peers/segment.py                       # every system, EWT dev
    python bench/peers/segment.py --repeat 5 --udpipe-epochs 20 --udpipe-iterations 5
    python bench/peers/segment.py --skip udpipe         # the others only

Every system is trained on UD English EWT train (``ud_en_ewt`` in the shared
data) and run on raw EWT dev, made as issue 29 says and as
:func:`cseq.io.raw.conllu_raw_text` makes it: the ``# text`` of the
sentences of a paragraph on one line, joined by a space unless the last
token has ``SpaceAfter=No``, paragraphs (``# newpar`` / ``# newdoc``)
separated by a blank line.  Each system's CoNLL-U is scored against the gold
dev file by :func:`cseq.metrics.ud_scores`, which gives the figures of the
CoNLL 2018 shared task's ``conll18_ud_eval.py`` (tokens, words and
sentences F1 by character alignment, UPOS F1 on aligned words).

The systems:

* **cseq**: the English pipeline of the wheel, trained here with
  ``scripts/build_pipeline.py``'s settings (a :class:`cseq.segment.Segmenter`,
  L1-regularized CRF, ``alphabetic`` preset; a UPOS tagger, averaged
  perceptron, ``pos`` templates, trained on the gold words), through
  :class:`cseq.pipeline.Pipeline`.
* **UDPipe 1** (``ufal.udpipe``): its tokenizer (``--udpipe-epochs``, 20 in
  the issue's table) and tagger (``--udpipe-iterations``, 5), trained here
  once and cached under ``bench/.cache`` (gitignored; training takes tens of
  minutes).  Its tagger predicts UPOS, XPOS and features but no lemma
  unless ``--udpipe-lemmatizer`` lets it provide lemmas too, as UDPipe's
  default (one model for the four columns, ``models=1``) does: UPOS is the
  same model's either way, and tagging runs faster without lemmas, so the
  ratios to UDPipe are the harder ones.
* **spaCy** ``blank("en")`` + ``sentencizer``: rules, nothing trained.
* **NLTK** Punkt trained on the raw train text (made as the dev text) +
  ``TreebankWordTokenizer`` (its spans).

Speeds are characters of raw text per second, the best of ``--repeat`` runs,
one thread (``OMP_NUM_THREADS=1``, ``n_jobs=1``), raw text in and CoNLL-U text
out for every system: segmentation only, and segmentation + tagging for the
taggers; the ratios are to UDPipe's.  The banner gives the load average
before and after: on a shared machine the speeds are noisy.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA, ROOT  # noqa: E402
from common.udpipe import train_udpipe  # noqa: E402

import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
# bench/internals/profile.py would shadow the standard library's profile module, which
# spaCy imports (through cProfile): the script's directory leaves the path.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(
    os.path.abspath(__file__))]

import argparse  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

from cseq.segment import Sentence, Token  # noqa: E402

HERE = ROOT
DATA = SHARED_DATA / "ud_en_ewt"
CACHE = HERE / "bench" / ".cache"


# ---------------------------------------------------------------- shared pieces


# Peers' tokens and sentences are cseq.segment's own Token and Sentence, which
# cseq's CoNLL-U writer reads.


def _tokens(text: str, spans: list[tuple[int, int]]) -> tuple[Token, ...]:
    """Tokens of ``text`` at ``spans`` (empty and whitespace-only spans dropped)."""
    return tuple(Token(text[a:b], a, b, (text[a:b],), b < len(text) and text[b].isspace())
                 for a, b in spans if text[a:b].strip())


def _conllu(paragraphs: list[str], segmented: list[list[Sentence]]) -> str:
    """CoNLL-U of segmented paragraphs, written as ``cseq tag`` writes it."""
    from cseq.io.raw import Paragraph
    from cseq.pipeline import TaggedSentence, format_tagged

    def tagged():
        for text, sents in zip(paragraphs, segmented):
            sents = [s for s in sents if s.tokens]
            for i, s in enumerate(sents):
                yield TaggedSentence(s, Paragraph(text, 0, 1), None, i == 0, i == len(sents) - 1)
    return "".join(format_tagged(tagged()))


def raw_text(conllu: Path) -> str:
    """The raw text of a CoNLL-U file (issue 29's recipe), paragraphs separated by a blank line."""
    from cseq.io.raw import conllu_raw_text
    return "\n\n".join(conllu_raw_text(conllu)) + "\n"


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


@dataclass
class Result:
    name: str
    scores: dict
    seg_s: float
    tag_s: float | None
    note: str = ""


# ---------------------------------------------------------------- the systems


def run_cseq(args, train: Path, text: str) -> Result:
    import importlib.util

    import cseq
    from cseq.io.raw import paragraphs_of
    from cseq.pipeline import Pipeline, format_tagged

    # The models of the English pipeline shipped in the wheel, with its settings,
    # trained here on --data's train file (cached: the same bytes every time).
    spec = importlib.util.spec_from_file_location("build_pipeline",
                                                  HERE / "scripts" / "build_pipeline.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    from cseq.pipeline import load_pipeline
    out = CACHE / f"cseq-{cseq.__version__}"
    path = out / build.PIPELINE_FILE
    if args.fresh or not path.exists():
        path = build.build(train, out)["pipeline"]
    full = load_pipeline(path)
    seg_only = Pipeline(full.segmenter)

    def through(pipe):
        return "".join(format_tagged(pipe.process(paragraphs_of(text))))

    seg_s, _ = _best(lambda: through(seg_only), args.repeat)
    tag_s, conllu = _best(lambda: through(full), args.repeat)
    return Result("cseq (segmenter + UPOS tagger)", _score(conllu), seg_s, tag_s,
                  f"scripts/build_pipeline.py: segmenter {build.SEGMENTER_LEARNER} c1 "
                  f"{build.SEGMENTER_C1} c2 {build.SEGMENTER_C2}, tagger perceptron order {build.TAGGER_ORDER}, {build.TAGGER_EPOCHS} epochs "
                  f"min_freq {build.TAGGER_MIN_FREQ}")


def run_udpipe(args, train: Path, text: str) -> Result:
    from ufal.udpipe import Model, Pipeline as UPipeline, ProcessingError

    # By default the tagger predicts UPOS, XPOS and features, no lemma
    # (--udpipe-lemmatizer: lemmas too, UDPipe's default, slower).
    tagger = f"iterations={args.udpipe_iterations}" + (
        "" if args.udpipe_lemmatizer else ";models=1;provide_lemma=0;use_lemma=0")
    path = CACHE / (f"udpipe-en_ewt-tok{args.udpipe_epochs}-tag{args.udpipe_iterations}"
                    f"{'-lemma' if args.udpipe_lemmatizer else ''}.udpipe")
    if args.fresh or not path.exists():
        t0 = time.perf_counter()
        train_udpipe(train, path, f"epochs={args.udpipe_epochs}", tagger)
        print(f"  UDPipe trained in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    model = Model.load(str(path))
    if model is None:
        raise SystemExit(f"UDPipe cannot load {path}")
    seg = UPipeline(model, "tokenize", UPipeline.NONE, UPipeline.NONE, "conllu")
    full = UPipeline(model, "tokenize", UPipeline.DEFAULT, UPipeline.NONE, "conllu")
    err = ProcessingError()
    seg_s, _ = _best(lambda: seg.process(text, err), args.repeat)
    tag_s, out = _best(lambda: full.process(text, err), args.repeat)
    if err.occurred():
        raise SystemExit(f"UDPipe failed: {err.message}")
    import ufal.udpipe
    version = getattr(ufal.udpipe, "__version__", "1")
    return Result(f"UDPipe {version} (tokenizer + tagger)", _score(out), seg_s, tag_s,
                  f"tokenizer {args.udpipe_epochs} epochs, tagger {args.udpipe_iterations} "
                  f"iterations{', + lemmatizer' if args.udpipe_lemmatizer else ', no lemmatizer'}")


def run_spacy(args, train: Path, text: str) -> Result:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    paragraphs = text.split("\n\n")

    def segment():
        return [[Sentence(_tokens(p, [(t.idx, t.idx + len(t.text)) for t in s]))
                 for s in doc.sents] for p, doc in zip(paragraphs, nlp.pipe(paragraphs))]

    seg_s, segmented = _best(lambda: _conllu(paragraphs, segment()), args.repeat)
    return Result(f"spaCy {spacy.__version__} blank('en') + sentencizer", _score(segmented),
                  seg_s, None, "rules")


def run_nltk(args, train: Path, text: str) -> Result:
    import nltk
    from nltk.tokenize.punkt import PunktSentenceTokenizer, PunktTrainer
    from nltk.tokenize.treebank import TreebankWordTokenizer

    trainer = PunktTrainer()
    trainer.INCLUDE_ALL_COLLOCS = True
    trainer.train(raw_text(train), finalize=True)
    sentences = PunktSentenceTokenizer(trainer.get_params())
    words = TreebankWordTokenizer()
    paragraphs = text.split("\n\n")
    fallbacks = [0]

    def spans(s: str, base: int) -> list[tuple[int, int]]:
        try:
            return [(base + a, base + b) for a, b in words.span_tokenize(s)]
        except ValueError:  # its spans cannot always be aligned (quotes): whitespace tokens
            fallbacks[0] += 1
            return [(base + m.start(), base + m.end()) for m in re.finditer(r"\S+", s)]

    def segment():
        return [[Sentence(_tokens(p, spans(p[a:b], a))) for a, b in sentences.span_tokenize(p)]
                for p in paragraphs]

    seg_s, out = _best(lambda: _conllu(paragraphs, segment()), args.repeat)
    note = "Punkt trained on raw train" + (f"; {fallbacks[0] // args.repeat} sentences split "
                                           "at whitespace (no Treebank spans)"
                                           if fallbacks[0] else "")
    return Result(f"NLTK {nltk.__version__} Punkt + Treebank", _score(out), seg_s, None, note)


def _score(conllu: str) -> dict:
    import io

    from cseq.metrics import ud_scores
    return ud_scores(DATA / "en_ewt-ud-dev.conllu", io.StringIO(conllu))


# ---------------------------------------------------------------- the table


def _table(results: list[Result], n_chars: int) -> str:
    anchor = next((r for r in results if r.name.startswith("UDPipe")), None)
    lines = ["| system | tokens F1 | words F1 | sentences F1 | UPOS F1 | segmentation chars/s "
             "| × UDPipe | seg. + tagging chars/s | × UDPipe | notes |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        f = {k: f"{100 * v.f1:.2f}" for k, v in r.scores.items()}
        upos = f["upos"] if r.tag_s is not None else "—"
        seg = n_chars / r.seg_s
        tag = n_chars / r.tag_s if r.tag_s is not None else None
        x_seg = f"{seg / (n_chars / anchor.seg_s):.2f}" if anchor else "—"
        x_tag = (f"{tag / (n_chars / anchor.tag_s):.2f}" if anchor and tag is not None else "—")
        lines.append(f"| {r.name} | {f['tokens']} | {f['words']} | {f['sentences']} | {upos} "
                     f"| {seg:,.0f} | {x_seg} | {f'{tag:,.0f}' if tag else '—'} | {x_tag} "
                     f"| {r.note} |")
    return "\n".join(lines)


SYSTEMS = {"cseq": run_cseq, "udpipe": run_udpipe, "spacy": run_spacy, "nltk": run_nltk}


def main(argv: list[str] | None = None) -> int:
    global DATA
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="directory of en_ewt-ud-*.conllu")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per figure (best of)")
    p.add_argument("--skip", action="append", default=[], choices=sorted(SYSTEMS),
                   help="leave a system out (repeatable)")
    p.add_argument("--udpipe-epochs", type=int, default=20,
                   help="UDPipe tokenizer epochs (default 20, the issue's table)")
    p.add_argument("--udpipe-iterations", type=int, default=5,
                   help="UDPipe tagger iterations (default 5, the issue's table)")
    p.add_argument("--udpipe-lemmatizer", action="store_true",
                   help="let UDPipe's tagger provide lemmas too (its default; slower, "
                   "the same UPOS)")
    p.add_argument("--fresh", action="store_true", help="retrain the cached models")
    args = p.parse_args(argv)
    DATA = args.data
    CACHE.mkdir(parents=True, exist_ok=True)
    train = DATA / "en_ewt-ud-train.conllu"
    text = raw_text(DATA / "en_ewt-ud-dev.conllu")
    import cseq
    print(f"# bench/peers/segment.py: cseq {cseq.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at start")
    print(f"# EWT dev as raw text: {len(text):,} characters, {text.count(chr(10) * 2) + 1} "
          f"paragraphs; best of {args.repeat} runs, one thread")
    results = []
    for name, fn in SYSTEMS.items():
        if name in args.skip:
            continue
        print(f"running {name}...", file=sys.stderr)
        results.append(fn(args, train, text))
    print(_table(results, len(text)))
    print(f"# load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
