"""``cseq demo``: train and evaluate a POS tagger on the bundled EWT sample, then tag raw text
with the English pipeline shipped in the wheel (raw text in, CoNLL-U out)."""

from __future__ import annotations

import argparse
import time

from cseq.cli.common import _check_output_path, _int_at_least


def _cmd_demo(args: argparse.Namespace) -> int:
    import cseq
    from cseq.conll import read_conll
    from cseq.data import train_path
    if args.output:
        _check_output_path(args.output, "the model", [str(train_path())])
    from cseq.templates import TemplateFeaturizer
    X, y = read_conll(train_path(), sep="\t")
    n_train = len(X) * 4 // 5
    print(f"cseq {cseq.__version__}: POS tagging demo on the {len(X)} training sentences of "
          f"UD English EWT (CC BY-SA 4.0) shipped with cseq")
    print(f"training an averaged perceptron ('pos' templates and the English word classes, "
          f"{args.max_iter} passes) on the first {n_train} sentences "
          f"({sum(map(len, X[:n_train]))} tokens)...")
    t = time.perf_counter()
    est = cseq.StructuredPerceptron(max_iter=args.max_iter, random_state=0,
                                    features=TemplateFeaturizer("pos", clusters="en"))
    est.fit(X[:n_train], y[:n_train])
    print(f"trained in {time.perf_counter() - t:.2f}s")
    acc = est.score(X[n_train:], y[n_train:])
    print(f"held-out accuracy on the other {len(X) - n_train} sentences "
          f"({sum(map(len, X[n_train:]))} tokens): {100 * acc:.2f}%")
    sentence = args.sentence.split()
    tags = est.predict([[(w,) for w in sentence]])[0]
    print("tagged: " + " ".join(f"{w}/{t}" for w, t in zip(sentence, tags)))
    if args.output:
        est.save(args.output)
        print(f"model written to {args.output} (tag your text: cseq tag {args.output} FILE)")
    _raw_demo(args.text)
    return 0


def _raw_demo(text: str) -> None:
    """Raw text through the shipped English pipeline, printed as CoNLL-U."""
    from cseq.exceptions import InputError
    from cseq.pipeline import format_tagged, load_pipeline
    try:
        nlp = load_pipeline("en")
    except InputError as exc:
        print(f"(no raw-text demo: {exc})")
        return
    print(f"\nraw text in, through the English pipeline shipped with cseq "
          f"(cseq tag --pipeline en FILE --output-format conllu):\n  {text}\n")
    print("".join(format_tagged(nlp(text))), end="")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``demo`` command and its options."""
    d = sub.add_parser("demo", help="train and evaluate a POS tagger on the bundled EWT data")
    d.add_argument("--max-iter", type=_int_at_least(1), default=5,
                   help="perceptron iterations (5)")
    d.add_argument("--sentence", default="The quick brown fox jumps over the lazy dog .",
                   help="sentence to tag at the end")
    d.add_argument("--text", default="The fox didn't jump. It was 3:30pm!",
                   help="raw text for the English pipeline at the end")
    d.add_argument("-o", "--output", help="also save the demo's tagger to this model file")
    d.set_defaults(func=_cmd_demo)
