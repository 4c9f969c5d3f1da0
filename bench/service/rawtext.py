"""The raw-text path with the ``pos`` preset: this checkout against another, in one run.

    python bench/service/rawtext.py --against /path/to/other/checkout     # e.g. the code before a change
    python bench/service/rawtext.py                                       # this checkout alone
    python bench/service/rawtext.py --repeat 7 --rounds 2
    python bench/service/rawtext.py --against /path/to/before --templates pos-no-tags   # equal work

Each checkout (with its compiled modules built in place, for the same Python)
is measured in its own subprocess, ``PYTHONPATH`` pointing at it; the rounds
alternate between them (other, this, other, this, ...), and every figure is
the best of ``--repeat`` runs in a round, then the best over rounds.  On
UD English EWT (``ud_en_ewt`` in the shared data):

* featurization for training: ``TemplateFeaturizer("pos").fit_transform`` of
  the training file's words (204,577 tokens), in microseconds per token;
* tagging raw tokens end to end, ``predict(X)`` from lists of words to lists
  of tags, with ``n_jobs`` 1 and 2, on the dev file (25,150 tokens) and on
  the training file, in tokens per second; the model is an averaged
  perceptron on the ``pos`` preset (3 epochs on the training file), trained
  once by this checkout and loaded by both;
* ``cseq tag`` on a CoNLL file of the training file's words (one per line,
  blank lines between sentences): the wall time of the whole command
  (start-up, loading, reading, tagging, writing) per token, against the
  API's ``predict`` on the same words; and the same minus the time of
  ``cseq tag`` on a two-token file (start-up and model loading), i.e. the
  streaming rate;
* the API doing what ``cseq tag`` does, in the measuring process:
  ``read_conll`` of that file, ``predict``, and the lines written (to
  ``os.devnull``), in tokens per second.

``--templates pos-no-tags`` runs both checkouts on the same templates: this
checkout's ``pos`` preset without its ``:tags`` lines, which is the ``pos``
preset of the code before the tags templates (issue 13), so the two do equal
work.  The default, ``pos``, runs each checkout's own preset (the user's
default, but a different amount of work when the presets differ).

The banner gives the load average before and after: the machine may be
shared, and ``n_jobs=2`` figures in particular mean little when it is busy.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA, ROOT  # noqa: E402

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = ROOT
DATA = SHARED_DATA / "ud_en_ewt"


def _words(path: Path) -> list[list[str]]:
    from cseq.conll import read_conllu

    return [[r[0] for r in sent] for sent in read_conllu(path)[0]]


def _tags(path: Path) -> list[list[str]]:
    from cseq.conll import read_conllu

    return read_conllu(path)[1]


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _featurizer(templates: str):
    """The measured featurizer: the ``pos`` preset, or the template text in file ``templates``."""
    from cseq.templates import TemplateFeaturizer

    if templates == "pos":
        return TemplateFeaturizer("pos")
    return TemplateFeaturizer(Path(templates).read_text(encoding="utf-8"))


def worker(model: str, conll: str, repeat: int, data: Path, templates: str) -> dict:
    """Measure the cseq found first on sys.path; return the figures as a dict."""
    import cseq

    train, dev = _words(data / "en_ewt-ud-train.conllu"), _words(data / "en_ewt-ud-dev.conllu")
    n_train, n_dev = sum(map(len, train)), sum(map(len, dev))
    out = {"cseq": str(Path(cseq.__file__).parent), "n_train": n_train, "n_dev": n_dev}
    feat = _featurizer(templates)
    # Since the pos preset's ':tags' templates, fitting learns from the labels.
    labels = (_tags(data / "en_ewt-ud-train.conllu"),) if getattr(feat, "needs_labels",
                                                                  False) else ()
    out["fit_us"] = _best(lambda: feat.fit_transform(train, *labels), repeat) / n_train * 1e6
    est = cseq.load(model)
    pred = est.predict(dev)
    for name, X, n in (("dev", dev, n_dev), ("train", train, n_train)):
        for jobs in (1, 2):
            out[f"tag_{name}_{jobs}"] = n / _best(lambda: est.predict(X, n_jobs=jobs), repeat)
    out["labels"] = sum(map(len, pred))
    out["dev_tags"] = hashlib.sha256("\n".join(t for s in pred for t in s).encode()).hexdigest()

    def api_file():
        # What a user of the API writes to tag the same file: read it, tag, write.
        from cseq.conll import read_conll

        rows = read_conll(conll, label_column=None)[0]
        tagged = est.predict(rows)
        with open(os.devnull, "w", encoding="utf-8") as f:
            f.write("".join("".join([f"{r[0]}\t{t}\n" for r, t in zip(s, ts)]) + "\n"
                            for s, ts in zip(rows, tagged)))
    out["api_file"] = n_train / _best(api_file, repeat)

    def cli(path=conll):
        subprocess.run([sys.executable, "-m", "cseq", "tag", model, path],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    one = str(Path(conll).with_name("one.conll"))
    Path(one).write_text("The\ndog\n\n", encoding="utf-8")
    try:
        t_all = _best(cli, max(1, repeat // 2))
        t_one = _best(lambda: cli(one), max(1, repeat // 2))
        out["cli_train"] = n_train / t_all
        out["cli_start_s"] = t_one
        out["cli_stream"] = n_train / max(t_all - t_one, 1e-9)
    except subprocess.CalledProcessError as exc:  # an older CLI may not read the file
        out["cli_train"] = out["cli_stream"] = out["cli_start_s"] = float("nan")
        out["cli_error"] = exc.stderr.decode(errors="replace").strip()[-200:]
    return out


def train_model(path: str, epochs: int, data: Path, templates: str) -> None:
    """Train the measured model with the cseq found first on sys.path and save it."""
    import cseq
    from cseq.conll import read_conllu

    sents, tags = read_conllu(data / "en_ewt-ud-train.conllu")[:2]
    X = [[r[0] for r in s] for s in sents]
    cseq.StructuredPerceptron(max_iter=epochs, random_state=0,
                              features=_featurizer(templates)).fit(X, tags).save(path)


def _in(checkout: Path, cmd: list[str]) -> subprocess.CompletedProcess:
    """Run ``cmd`` with ``checkout`` first on the path (stderr shown if it fails)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="2")
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"{checkout}: {' '.join(cmd[1:3])} failed")
    return res


def _run(checkout: Path, args, model: str, conll: str) -> dict:
    cmd = [sys.executable, __file__, "--worker", model, conll, "--repeat", str(args.repeat),
           "--data", str(args.data), "--templates", args.templates]
    res = _in(checkout, cmd)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    if Path(out["cseq"]).resolve() != (checkout / "cseq").resolve():
        raise SystemExit(f"{checkout}: the worker imported cseq from {out['cseq']}")
    return out


def _merge(a: dict | None, b: dict) -> dict:
    if a is None:
        return b
    m = dict(a)
    for k, v in b.items():
        if k in ("fit_us", "cli_start_s"):
            m[k] = min(a[k], v)
        elif k.startswith(("tag_", "cli_", "api_")) and k != "cli_error":
            m[k] = max(a[k], v)
    return m


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", type=Path, help="another checkout to measure (e.g. before)")
    p.add_argument("--repeat", type=int, default=5, help="best of this many runs per round")
    p.add_argument("--rounds", type=int, default=2, help="rounds alternating the checkouts")
    p.add_argument("--epochs", type=int, default=3, help="perceptron epochs of the model")
    p.add_argument("--data", type=Path, default=DATA, help="the ud_en_ewt directory")
    p.add_argument("--templates", default="pos",
                   help="'pos' (each checkout's own preset, the default) or 'pos-no-tags' "
                        "(this checkout's pos preset without ':tags' lines, for both: equal work)")
    p.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--train-model", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker, args.repeat, args.data, args.templates)))
        return
    if args.train_model:
        train_model(args.train_model, args.epochs, args.data, args.templates)
        return

    sys.path.insert(0, str(HERE))
    import cseq

    load0 = os.getloadavg()
    print(f"cseq {cseq.__version__} ({HERE}), Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    X = _words(args.data / "en_ewt-ud-train.conllu")
    with tempfile.TemporaryDirectory() as tmp:
        conll = str(Path(tmp) / "train.conll")
        if args.templates == "pos-no-tags":
            from cseq.templates import PRESETS

            text = "".join(line for line in PRESETS["pos"].splitlines(keepends=True)
                           if ":tags]" not in line)
            args.templates = str(Path(tmp) / "pos-no-tags.txt")
            Path(args.templates).write_text(text, encoding="utf-8")
        elif args.templates != "pos":
            raise SystemExit("--templates is 'pos' or 'pos-no-tags'")
        with open(conll, "w", encoding="utf-8") as f:
            for sent in X:
                f.write("\n".join(sent) + "\n\n")
        checkouts = {"this": HERE}
        if args.against is not None:
            checkouts = {"other": args.against.resolve(), "this": HERE}
        # Each checkout trains its own copy of the same model (same data, epochs and seed):
        # an older checkout may not read a newer file.  The dev tags are compared below.
        models = {name: str(Path(tmp) / f"pos-{name}.cseq") for name in checkouts}
        for name, path in checkouts.items():
            _in(path, [sys.executable, __file__, "--train-model", models[name],
                       "--epochs", str(args.epochs), "--data", str(args.data),
                       "--templates", args.templates])
        results: dict[str, dict | None] = {k: None for k in checkouts}
        for _ in range(args.rounds):
            for name, path in checkouts.items():
                results[name] = _merge(results[name], _run(path, args, models[name], conll))
    load1 = os.getloadavg()
    this = results["this"]
    other = results.get("other")
    if other is not None and other["dev_tags"] != this["dev_tags"]:
        print("WARNING: the two checkouts tag the dev set differently")
    which = "pos preset" if args.templates == "pos" else "pos preset without :tags, both"
    print(f"\nEWT, {which}; train {this['n_train']:,} tokens, dev {this['n_dev']:,}; "
          f"best of {args.repeat} x {args.rounds} rounds")
    rows = [
        ("featurize for training, fit_transform [us/token]", "fit_us", "{:.2f}"),
        ("tag dev, predict n_jobs=1 [tokens/s]", "tag_dev_1", "{:,.0f}"),
        ("tag dev, predict n_jobs=2 [tokens/s]", "tag_dev_2", "{:,.0f}"),
        ("tag train, predict n_jobs=1 [tokens/s]", "tag_train_1", "{:,.0f}"),
        ("tag train, predict n_jobs=2 [tokens/s]", "tag_train_2", "{:,.0f}"),
        ("cseq tag, CoNLL file of train, whole command [tokens/s]", "cli_train", "{:,.0f}"),
        ("cseq tag on a 2-token file (start-up, model load) [s]", "cli_start_s", "{:.2f}"),
        ("cseq tag, train minus start-up [tokens/s]", "cli_stream", "{:,.0f}"),
        ("API, same file: read_conll, predict, write [tokens/s]", "api_file", "{:,.0f}"),
    ]
    head = f"  {'measure':<58}" + (f"{'other':>12}" if other else "") + f"{'this':>12}"
    print(head + ("    this/other" if other else ""))
    for label, key, fmt in rows:
        line = f"  {label:<58}"
        if other:
            line += f"{fmt.format(other[key]):>12}"
        line += f"{fmt.format(this[key]):>12}"
        if other:
            lower = key in ("fit_us", "cli_start_s")
            ratio = other[key] / this[key] if lower else this[key] / other[key]
            line += f"    {ratio:.2f}x" + (" faster" if lower else "")
        print(line)
    for name, r in results.items():
        print(f"  {name}: n_jobs=2 / n_jobs=1, dev {r['tag_dev_2'] / r['tag_dev_1']:.2f}x, "
              f"train {r['tag_train_2'] / r['tag_train_1']:.2f}x; "
              f"cseq tag / predict (train, 1 thread) {r['cli_train'] / r['tag_train_1']:.2f}x "
              f"(without start-up {r['cli_stream'] / r['tag_train_1']:.2f}x); "
              f"cseq tag / API reading, tagging and writing the file "
              f"{r['cli_train'] / r['api_file']:.2f}x "
              f"(without start-up {r['cli_stream'] / r['api_file']:.2f}x)")
    print(f"load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if other:
        print(f"other = {checkouts['other']}")


if __name__ == "__main__":
    main()
