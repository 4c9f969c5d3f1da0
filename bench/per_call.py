"""Per-call cost of tagging one sentence at a time: cseq against python-crfsuite, in one process.

    python bench/per_call.py                  # EWT dev and CoNLL-2000, 500 sentences each
    python bench/per_call.py --sentences 200 --repeat 5

What a production tagger does (a web service, a stream processor): one
``predict([sentence])`` per sentence, not one call for the corpus.  Printed,
on the first ``--sentences`` sentences of EWT dev (UPOS labels) and of
CoNLL-2000's last 1,000 sentences (chunk labels):

* plain feature lists (``bench/common/features.py``, the core benchmark's CRF++
  attributes, from the word and its XPOS/POS tag): the averaged perceptron,
  ``predict([s])`` per sentence, against python-crfsuite's ``Tagger.tag``
  with the same lists and an averaged perceptron trained on them;
* from the words with the ``pos`` preset (EWT only): the perceptron (without
  and with the shipped English word classes, ``clusters="en"``) and the
  greedy tagger, per sentence and in one call for all, and per sentence on a
  cold first pass (one pass right after fitting, before the sentences have
  been tagged, so no per-thread cache knows their words: the repeated rows
  flatter the caches);
* ``predict_marginals([s])`` of a CRF (plain lists, EWT);
* the fixed cost of one call on a one-token sentence (plain lists, templates);
* sentence at a time from 2 threads against 1 (the same sentences, split
  in two halves, one per thread);
* short strings (``bench/common/short_strings.py``: address-like and
  name-like strings of 3 to 10 tokens, a dict of about ten values per token
  with nested dicts for the neighbours, as the programs built on
  python-crfsuite featurize them): both libraries trained through
  python-crfsuite's ``Trainer`` API (L-BFGS, ``--short-train`` strings), then
  one ``Tagger.tag`` per string for python-crfsuite, for
  ``cseq.compat.pycrfsuite`` (the drop-in) and cseq's ``predict([x])``; these
  rows give the wall and the CPU time (``time.thread_time``) of each, the
  token accuracy on held-out strings, and the ratio to python-crfsuite.

Every figure is the best of ``--repeat`` runs; per call in µs, throughput in
tokens/s.  ``--clock cpu`` times the one-thread rows by the calling thread's
CPU time (``time.thread_time``) instead of the wall clock: on a machine
shared with other work, time spent waiting for a core is then left out (the
cache misses others cause are not).  The 2-thread rows always use the wall
clock, and are compared with one thread timed by the wall clock too.  The load average is printed before and after.  A measuring tool,
not a test: it asserts nothing about speed.  The targets are those of
issue 32 (see docs/production.md, "Per-call cost").
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import features, short_strings
from common.paths import SHARED_DATA

import cseq
from cseq.conll import read_conll, read_conllu

DATA = SHARED_DATA


#: The clock of the one-thread rows (``--clock``).
CLOCK = time.perf_counter


def best(fn, repeat: int, clock=None) -> float:
    """Fastest of ``repeat`` runs of ``fn()``, in seconds of ``clock`` (default CLOCK)."""
    clock = clock or CLOCK
    out = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return min(out)


def per_sentence(tag, X, repeat: int, clock=None) -> float:
    """Seconds to call ``tag(x)`` once per sentence of ``X`` (best of ``repeat``)."""
    def run():
        for x in X:
            tag(x)
    return best(run, repeat, clock)


def two_threads(tag, X, repeat: int) -> tuple[float, str]:
    """Seconds (wall) for 2 threads to tag the two halves of ``X`` sentence by
    sentence, and the note comparing them with one thread on the same clock."""
    halves = [X[0::2], X[1::2]]

    def run():
        threads = [threading.Thread(target=lambda h=h: [tag(x) for x in h]) for h in halves]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    two = best(run, repeat, time.perf_counter)
    # one thread timed by the wall clock too (whatever --clock is), right after
    one = per_sentence(tag, X, repeat, time.perf_counter)
    return two, f"{one / two:.2f}x 1 thread (wall clock both)"


def crfsuite_model(X, y, path: str, iterations: int):
    import pycrfsuite
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.select("ap")
    trainer.set_params({"max_iterations": iterations})
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    return tagger


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, what: str, seconds: float, n_calls: int, n_tokens: int, note: str = "") -> float:
        us = 1e6 * seconds / n_calls
        self.rows.append((what, f"{us:9.1f}", f"{n_tokens / seconds / 1e3:8.0f}k", note))
        return n_tokens / seconds

    def print(self) -> None:
        print(f"| {'what':58s} | µs/call | tokens/s | note |")
        print(f"|{'-' * 60}|--------:|---------:|------|")
        for what, us, tps, note in self.rows:
            print(f"| {what:58s} | {us} | {tps} | {note} |")


def plain_rows(name, X_train, y_train, X, est, args, table: Table, tmp: str) -> None:
    n_tok = sum(len(x) for x in X)
    est.fit(X_train, y_train)
    tagger = crfsuite_model(X_train, y_train, os.path.join(tmp, f"{name}.crfsuite"), args.iter)
    t_cs = table.add(f"{name}: python-crfsuite Tagger.tag, per sentence",
                     per_sentence(tagger.tag, X, args.repeat), len(X), n_tok)
    t_all = table.add(f"{name}: perceptron, plain lists, one call for all",
                      best(lambda: est.predict(X), args.repeat), 1, n_tok)
    t_one = table.add(f"{name}: perceptron, plain lists, predict([s])",
                      per_sentence(lambda x: est.predict([x]), X, args.repeat), len(X), n_tok)
    table.rows[-1] = table.rows[-1][:3] + (f"{t_one / t_cs:.2f}x crfsuite, "
                                           f"{t_one / t_all:.0%} of one call",)
    seconds, note = two_threads(lambda x: est.predict([x]), X, args.repeat)
    table.add(f"{name}: perceptron, plain lists, predict([s]), 2 threads", seconds, len(X),
              n_tok, note)
    seconds, note = two_threads(_thread_tagger(os.path.join(tmp, f"{name}.crfsuite")), X,
                                args.repeat)
    table.add(f"{name}: python-crfsuite Tagger.tag, 2 threads (own Tagger each)", seconds,
              len(X), n_tok, note)
    one = [X[0][:1]]
    t_cseq = table.add(f"{name}: fixed cost, one-token predict, plain lists",
                       best(lambda: [est.predict(one) for _ in range(args.fixed)], args.repeat),
                       args.fixed, args.fixed)
    t_peer = table.add(f"{name}: fixed cost, one-token Tagger.tag, python-crfsuite",
                       best(lambda: [tagger.tag(one[0]) for _ in range(args.fixed)],
                            args.repeat), args.fixed, args.fixed)
    table.rows[-2] = table.rows[-2][:3] + (f"{t_cseq / t_peer:.2f}x crfsuite's speed",)
    tagger.close()


def both_clocks(fn, repeat: int) -> tuple[float, float]:
    """Best wall and best CPU (this thread's) seconds of ``repeat`` runs of ``fn()``."""
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.thread_time()
        fn()
        cpu.append(time.thread_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(wall), min(cpu)


def short_string_rows(args, table: "Table", tmp: str) -> None:
    """Short strings with nested dicts: train through the Trainer API, tag one string a call."""
    import pycrfsuite
    from cseq.compat import pycrfsuite as drop_in
    words, labels = short_strings.strings(args.short_train, seed=1)
    test_words, test_labels = short_strings.strings(args.short_test, seed=2)
    X = [short_strings.featurize(w) for w in words]
    X_test = [short_strings.featurize(w) for w in test_words]
    n_tok = sum(len(x) for x in X_test)
    params = {"c1": 0.1, "c2": 0.01, "max_iterations": 200,
              "feature.possible_transitions": True}
    taggers, train_times = {}, {}
    for module, threads in ((pycrfsuite, {}), (drop_in, {}), (drop_in, {"n_jobs": 2})):
        path = os.path.join(tmp, f"short.{module.__name__}{threads.get('n_jobs', '')}")
        trainer = module.Trainer(verbose=False, **threads)
        for xseq, yseq in zip(X, labels):
            trainer.append(xseq, yseq)
        trainer.set_params(params)
        w0, c0 = time.perf_counter(), time.process_time()
        trainer.train(path)
        train_times[module, bool(threads)] = (time.perf_counter() - w0,
                                              time.process_time() - c0)
        if not threads:
            taggers[module] = module.Tagger()
            taggers[module].open(path)

    def accuracy(tag) -> float:
        pairs = [(a, b) for xseq, gold in zip(X_test, test_labels)
                 for a, b in zip(tag(xseq), gold)]
        return sum(a == b for a, b in pairs) / len(pairs)
    estimator = cseq.load(os.path.join(tmp, f"short.{drop_in.__name__}"))
    rows = [("python-crfsuite Tagger.tag", taggers[pycrfsuite].tag),
            ("cseq.compat.pycrfsuite Tagger.tag", taggers[drop_in].tag),
            ("cseq predict([x])", lambda x: estimator.predict([x])[0])]
    accuracies = {name: accuracy(tag) for name, tag in rows}
    peer = None
    for name, tag in rows:
        wall, cpu = both_clocks(lambda: [tag(x) for x in X_test], args.repeat)
        peer = peer or (wall, cpu)
        table.add(f"short strings: {name}", wall, len(X_test), n_tok,
                  f"cpu {1e6 * cpu / len(X_test):.1f} µs; {peer[0] / wall:.2f}x crfsuite "
                  f"(cpu {peer[1] / cpu:.2f}x); accuracy {accuracies[name]:.4f}")
    pw, pc = train_times[pycrfsuite, False]
    n_train = sum(len(x) for x in X)
    table.add(f"short strings: Trainer.train, {args.short_train} strings, python-crfsuite",
              pw, 1, n_train, f"cpu {pc:.2f} s")
    for threads in (False, True):
        cw, cc = train_times[drop_in, threads]
        table.add(f"short strings: Trainer.train, cseq drop-in{', n_jobs=2' if threads else ''}",
                  cw, 1, n_train, f"cpu {cc:.2f} s (all threads); {cw / pw:.2f}x crfsuite's "
                                  "time")


def _thread_tagger(path: str):
    """A tag function that gives each thread its own pycrfsuite Tagger (one is not thread-safe)."""
    import pycrfsuite
    local = threading.local()

    def tag(x):
        tagger = getattr(local, "tagger", None)
        if tagger is None:
            tagger = local.tagger = pycrfsuite.Tagger()
            tagger.open(path)
        return tagger.tag(x)
    return tag


def template_rows(words_train, y_train, words, args, table: Table) -> None:
    n_tok = sum(len(x) for x in words)
    one = [words[0][:1]]
    for label, est in (
            ("perceptron", cseq.StructuredPerceptron(
                max_iter=args.iter, random_state=0, features=cseq.TemplateFeaturizer("pos"))),
            ("perceptron + en classes", cseq.StructuredPerceptron(
                max_iter=args.iter, random_state=0,
                features=cseq.TemplateFeaturizer("pos", clusters="en"))),
            ("greedy", cseq.GreedyTagger(max_iter=args.iter, random_state=0,
                                         features=cseq.TemplateFeaturizer("pos")))):
        est.fit(words_train, y_train)
        # First, before anything else is tagged with this fit: one pass over
        # sentences the model has not seen in this thread, so that no
        # per-thread cache (the word rows) holds their words yet.
        cold = per_sentence(lambda x: est.predict([x]), words, 1)
        t_all = table.add(f"EWT: {label}, pos preset, one call for all",
                          best(lambda: est.predict(words), args.repeat), 1, n_tok)
        t_one = table.add(f"EWT: {label}, pos preset, predict([s])",
                          per_sentence(lambda x: est.predict([x]), words, args.repeat),
                          len(words), n_tok)
        table.rows[-1] = table.rows[-1][:3] + (f"{t_one / t_all:.0%} of one call",)
        t_cold = table.add(f"EWT: {label}, pos preset, predict([s]), cold first pass",
                           cold, len(words), n_tok)
        table.rows[-1] = table.rows[-1][:3] + (f"one pass, {t_cold / t_all:.0%} of one call",)
        seconds, note = two_threads(lambda x: est.predict([x]), words, args.repeat)
        table.add(f"EWT: {label}, pos preset, predict([s]), 2 threads", seconds, len(words),
                  n_tok, note)
        table.add(f"EWT: {label}, fixed cost, one-token predict, pos preset",
                  best(lambda: [est.predict(one) for _ in range(args.fixed)], args.repeat),
                  args.fixed, args.fixed)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--sentences", type=int, default=500, help="sentences tagged per corpus")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--iter", type=int, default=5, help="training passes (both systems)")
    p.add_argument("--fixed", type=int, default=2000, help="calls for the one-token cost")
    p.add_argument("--short-train", type=int, default=3000,
                   help="short strings to train on (the short-string rows)")
    p.add_argument("--short-test", type=int, default=2000,
                   help="short strings tagged one per call")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="one-thread rows by the wall clock or by the thread's CPU time")
    args = p.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    import pycrfsuite  # noqa: F401  (fail early when it is missing)
    print(f"cseq {cseq.__version__}, python {sys.version.split()[0]}, "
          f"{len(os.sched_getaffinity(0))} CPUs; best of {args.repeat}, {args.clock} clock; "
          f"load average {os.getloadavg()[0]:.2f}")

    ewt = args.data / "ud_en_ewt"
    rows_tr, y_tr = read_conllu(ewt / "en_ewt-ud-train.conllu", columns=("form", "xpos"))
    rows_dev, y_dev = read_conllu(ewt / "en_ewt-ud-dev.conllu", columns=("form", "xpos"))
    rows_dev = rows_dev[:args.sentences]
    table = Table()
    with tempfile.TemporaryDirectory() as tmp:
        short_string_rows(args, table, tmp)
        plain_rows("EWT", features.featurize(rows_tr), y_tr, features.featurize(rows_dev),
                   cseq.StructuredPerceptron(max_iter=args.iter, random_state=0), args,
                   table, tmp)
        words_tr = [[r[0] for r in s] for s in rows_tr]
        words_dev = [[r[0] for r in s] for s in rows_dev]
        template_rows(words_tr, y_tr, words_dev, args, table)

        X_dev = features.featurize(rows_dev)
        crf = cseq.CRF(max_iter=30).fit(features.featurize(rows_tr[:3000]), y_tr[:3000])
        n_tok = sum(len(x) for x in X_dev)
        t_all = table.add("EWT: CRF (30 it., 3k sent.), predict_marginals, one call",
                          best(lambda: crf.predict_marginals(X_dev), args.repeat), 1, n_tok)
        t_one = table.add("EWT: CRF, predict_marginals([s])",
                          per_sentence(lambda x: crf.predict_marginals([x]), X_dev,
                                       args.repeat), len(X_dev), n_tok)
        table.rows[-1] = table.rows[-1][:3] + (f"{t_one / t_all:.0%} of one call",)

        rows, labels = read_conll(args.data / "conll2000" / "train.txt")
        X = features.featurize(rows)
        plain_rows("CoNLL-2000", X[:-1000], labels[:-1000], X[-1000:][:args.sentences],
                   cseq.StructuredPerceptron(max_iter=args.iter, random_state=0), args,
                   table, tmp)
    table.print()
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
