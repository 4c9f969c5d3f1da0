"""Hypothesis fuzz targets for the parsers of untrusted bytes: model files (cseq's, CRFsuite's
and CRF++'s) and CoNLL.

Each target takes generated input, calls the parser, and treats any exception
other than a cseq exception (``CSeqError``) or an ``OSError`` as a failure.
Whatever parses must also be usable: a loaded model predicts, a read corpus
has one label per token.

* :func:`fuzz_model_loads` -- mutations of valid model files of every kind
  (truncation, bit flips, byte insertion, deletion and overwriting), with the
  SHA-256 recomputed most of the time so that the damage reaches the parser.
* :func:`fuzz_model_header` -- edits of the JSON header (values replaced by
  random JSON, keys deleted or added) with a recomputed checksum.
* :func:`fuzz_crfsuite_model` -- mutations of a real CRFsuite model file
  (``tests/data/crfsuite_small.model``, written by python-crfsuite): bit
  flips, truncation, overwritten bytes, and every offset, size and count
  field of its header, feature table and string databases set to 0, huge,
  "negative" (``0x80000000`` and up) or just past the end, for
  :func:`cseq.from_crfsuite`.
* :func:`fuzz_crfpp_model` -- line and character edits of a real CRF++ text
  model (``tests/data/crfpp_small.model.txt``, written by ``crf_learn -t``):
  lines deleted, repeated or swapped, numbers replaced by huge, negative or
  non-numbers, characters flipped, the text cut, for :func:`cseq.from_crfpp`.
* :func:`fuzz_conll` -- random text for ``read_conll`` and ``read_conllu``
  built from tabs, spaces, blank lines, ``-DOCSTART-``, ``#``, IDs, BOMs,
  CRs, NULs and invalid UTF-8, read as bytes and as text.

``tests/test_fuzz.py`` runs each briefly.  For a long run::

    python tests/fuzz_targets.py --minutes 10

prints the number of inputs tried and every crash (with its shrunk input).
``CSEQ_FUZZ_EXAMPLES`` sets the examples per target for ``test_fuzz.py``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import json
import re
import struct
import sys
import time
import warnings
import traceback
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

import cseq
from cseq import conll, serialize
from cseq.compat.crfpp_model import crfpp_from_bytes
from cseq.compat.crfsuite_model import crfsuite_from_bytes
from cseq.exceptions import CSeqError

#: Inputs tried per target, in this process.
COUNTS: Counter = Counter()

DIGEST = 32


# ---------------------------------------------------------------------------
# Seed models


@functools.lru_cache(maxsize=None)
def seed_models() -> dict[str, bytes]:
    """Valid model files of every kind the format stores (small, deterministic)."""
    X = [[["w=a", "p=S"], {"w": "b", "v": 2.5}], [["w=c"]], [["w=a"], ["w=b"], ["w=c"]]]
    y = [["A", "B"], ["C"], ["A", "B", "C"]]
    sents = [["The", "cat", "sat", "."], ["A", "dog", "ran"]]
    tags = [["D", "N", "V", "P"], ["D", "N", "V"]]
    tmpl = "U00:%x[0,0]\nU01:%x[-1,0:lower]/%x[0,0:shape]\nU02:%x[1,0:suffix2]\nB"
    with warnings.catch_warnings():  # quick fits: no convergence
        warnings.simplefilter("ignore", cseq.ConvergenceWarning)
        ests = _seed_estimators(X, y, sents, tags, tmpl)
    return {name: est.to_bytes() for name, est in ests.items()}


def _seed_estimators(X, y, sents, tags, tmpl):
    return {
        "crf": cseq.CRF(max_iter=5).fit(X, y),
        "perceptron": cseq.StructuredPerceptron(max_iter=3, random_state=0).fit(X, y),
        "crf-templates": cseq.CRF(max_iter=5, features=cseq.TemplateFeaturizer(tmpl))
        .fit(sents, tags),
        "perceptron-hashing": cseq.StructuredPerceptron(
            max_iter=3, random_state=0, features=cseq.TemplateFeaturizer(tmpl, n_buckets=32))
        .fit(sents, tags),
        "unfitted": cseq.CRF(c2=0.5, features=cseq.TemplateFeaturizer(tmpl)),
    }


def split(data: bytes):
    _, _, head_len = serialize._PREFIX.unpack_from(data)
    start = serialize._PREFIX.size
    return json.loads(data[start:start + head_len]), data[start + head_len:-DIGEST]


def join(header, arrays: bytes, version: int = serialize.FORMAT_VERSION) -> bytes:
    head = json.dumps(header, sort_keys=True).encode("ascii")
    body = serialize._PREFIX.pack(serialize.MAGIC, version, len(head)) + head + arrays
    return body + hashlib.sha256(body).digest()


def use_model(est, X=None) -> None:
    """A model that loaded must work: predict and marginals on ``X`` (by default, on input
    of the kind its featurizer reads)."""
    featurizer = getattr(est, "featurizer_", None)
    if featurizer is None:
        assert est.model_ is None
        return
    if X is not None:
        pass
    elif isinstance(featurizer, cseq.TemplateFeaturizer):
        X = [["The", "dog"], [], ["unseen", "words", "here"]]
    else:
        X = [[["w=a"], {"w": "b", "v": -3.0}], [], [["p=S", "w=c"]]]
    try:
        pred = est.predict(X)
    except CSeqError:
        return  # e.g. the templates now read a column the input does not have
    assert [len(s) for s in pred] == [len(s) for s in X]
    assert all(lab in est.classes_ for s in pred for lab in s)
    if hasattr(est, "predict_marginals"):
        for m, s in zip(est.predict_marginals(X), X):
            assert m.shape == (len(s), len(est.classes_))
            assert np.isfinite(m).all()


def check_loads(data: bytes) -> None:
    try:
        est = serialize.loads(data)
    except CSeqError:
        return
    use_model(est)


# ---------------------------------------------------------------------------
# Model files: byte mutations


@st.composite
def mutated_model(draw) -> bytes:
    data = seed_models()[draw(st.sampled_from(sorted(seed_models())))]
    resign = draw(st.integers(0, 9)) > 0  # recompute the checksum 90% of the time
    buf = bytearray(data[:-DIGEST] if resign else data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "overwrite",
                                   "zero-run"]))
        if not buf:
            break
        k = draw(st.integers(0, len(buf) - 1))
        if op == "truncate":
            del buf[k:]
        elif op == "flip":
            buf[k] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            buf[k:k] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del buf[k:k + draw(st.integers(1, 16))]
        elif op == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=8))
            buf[k:k + len(chunk)] = chunk
        else:
            n = draw(st.integers(1, 64))
            buf[k:k + n] = bytes(len(buf[k:k + n])) if draw(st.booleans()) \
                else b"\xff" * len(buf[k:k + n])
    if resign:
        buf += hashlib.sha256(bytes(buf)).digest()
    return bytes(buf)


def fuzz_model_loads(data: bytes) -> None:
    COUNTS["model_loads"] += 1
    check_loads(data)


# ---------------------------------------------------------------------------
# Model files: header edits

SPECIAL_INTS = [0, 1, -1, 2, 7, 8, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**62, 2**63 - 1, 2**63,
                2**64, -(2**63), 10**30]

json_leaf = st.one_of(
    st.none(), st.booleans(), st.sampled_from(SPECIAL_INTS),
    st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["<f8", "<i4", "<i8", "|u1", "<u8", ">f8", "|O", "templates", "vocabulary",
                     "CRF", "StructuredPerceptron", "cseq", "U00:%x[0,0]", "U00:%x[-1000,5]"]),
)
json_value = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.text(max_size=6), children, max_size=4),
    max_leaves=8,
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


@st.composite
def edited_header(draw) -> bytes:
    data = seed_models()[draw(st.sampled_from(sorted(seed_models())))]
    header, arrays = split(data)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(header) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = header
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "replace", "delete", "add", "nudge"]))
        last = path[-1]
        if op == "replace":
            parent[last] = draw(json_value)
        elif op == "delete":
            del parent[last]
        elif op == "add":
            target = parent[last]
            if isinstance(target, dict):
                target[draw(st.text(max_size=8))] = draw(json_value)
            elif isinstance(target, list):
                target.append(draw(json_value))
            else:
                parent[last] = [target, draw(json_value)]
        else:  # nudge a number: off-by-one and friends
            value = parent[last]
            if isinstance(value, int) and not isinstance(value, bool):
                parent[last] = value + draw(st.sampled_from([-8, -1, 1, 8, 2**32, -(2**32)]))
            else:
                parent[last] = draw(json_leaf)
    version = draw(st.sampled_from([serialize.FORMAT_VERSION] * 9 + [0, 2]))
    arrays = arrays if draw(st.integers(0, 4)) else arrays[:draw(st.integers(0, len(arrays)))]
    return join(header, arrays, version)


def fuzz_model_header(data: bytes) -> None:
    COUNTS["model_header"] += 1
    check_loads(data)


# ---------------------------------------------------------------------------
# CoNLL and CoNLL-U readers

ROW10 = b"1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_"
PIECES = [
    b"\t", b" ", b"  ", b"\n", b"\n", b"\n\n", b"\r\n", b"\r", b"\x0b", b"\x0c", b"\x1c",
    b"\xc2\x85", b"\xe2\x80\xa8",  # NEL, LINE SEPARATOR
    b"-DOCSTART-", b"-DOCSTART- -X- O O", b"#", b"# text = x", b"1", b"2", b"10", b"1-2",
    b"3.1", b"0", b"-1", b"_", b"word", b"B-NP", b"O", b"\xc3\xa9", "\U0001F600".encode(),
    b"\xef\xbb\xbf", b"\x00", b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80",
    "\u00b2".encode(), ROW10, ROW10 + b"\n", b"1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    b"5.1\tx\t_\t_\t_\t_\t_\t_\t_\t_",
]

conll_bytes = st.lists(
    st.one_of(st.sampled_from(PIECES), st.binary(max_size=4)), max_size=60).map(b"".join)


def fuzz_conll(data: bytes, sep, label_column, docstart, label, as_text) -> None:
    COUNTS["conll"] += 1

    def source():
        if as_text:
            # Text streams are not decoded by cseq; lone surrogates reach it.
            return io.StringIO(data.decode("utf-8", "surrogateescape"), newline="")
        return io.BytesIO(data)

    try:
        X, y = conll.read_conll(source(), sep=sep, label_column=label_column, docstart=docstart)
    except (CSeqError, OSError):
        pass
    else:
        assert all(len(s) > 0 for s in X)
        if y is not None:
            assert [len(s) for s in X] == [len(s) for s in y]
        width = {len(tok) for s in X for tok in s}
        assert len(width) <= 1
    try:
        X, y = conll.read_conllu(source(), label=label, columns=("form", "lemma"))
    except (CSeqError, OSError):
        pass
    else:
        assert all(len(s) > 0 and all(len(tok) == 2 for tok in s) for s in X)
        if y is not None:
            assert [len(s) for s in X] == [len(s) for s in y]


#: name -> (the function, the strategies of its arguments).
# ---------------------------------------------------------------------------
# Other libraries' model files

DATA = Path(__file__).resolve().parent / "data"


@functools.lru_cache(maxsize=None)
def crfsuite_seed() -> tuple[bytes, tuple[int, ...]]:
    """The CRFsuite seed model and the positions of its uint32 offset, size and count fields."""
    data = (DATA / "crfsuite_small.model").read_bytes()
    header = struct.unpack_from("<4sI4s9I", data)
    fields = [4, *range(16, 48, 4)]                          # file size; counts and offsets
    off_features, off_labels, off_attrs = header[7], header[8], header[9]
    fields += [off_features + 4, off_features + 8]             # FEAT size and count
    for db in (off_labels, off_attrs):                         # CQDB size, bwd_size, bwd_offset
        bwd_offset = struct.unpack_from("<I", data, db + 20)[0]
        fields += [db + 4, db + 16, db + 20, db + 24, db + bwd_offset, db + bwd_offset + 4]
    for k in range(3):                                         # the first features' src and dst
        fields += [off_features + 12 + 20 * k + 4, off_features + 12 + 20 * k + 8]
    return data, tuple(fields)


def use_imported(est) -> None:
    """An imported model must work: predict and marginals on the kind of input it reads."""
    if isinstance(est.featurizer_, cseq.TemplateFeaturizer):
        X = [[("The", "DT"), ("cat", "NN")], [], [("a/b", "SYM")]]
    else:
        X = [[{"w": "the", "len": 3.0}, ["w:cat", "bias"]], [], [{"w": "zzz"}]]
    use_model(est, X)


@st.composite
def mutated_crfsuite(draw) -> bytes:
    data, fields = crfsuite_seed()
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["field", "field", "flip", "truncate", "overwrite"]))
        if not buf:
            break
        if op == "field":
            k = draw(st.sampled_from(fields))
            value = draw(st.sampled_from([0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, len(buf),
                                          len(buf) - 1, len(buf) + 8]) | st.integers(0, 2**32 - 1))
            if k + 4 <= len(buf):
                struct.pack_into("<I", buf, k, value)
        elif op == "flip":
            buf[draw(st.sampled_from(range(len(buf))))] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del buf[draw(st.sampled_from(range(len(buf)))):]
        else:
            k = draw(st.sampled_from(range(len(buf))))
            chunk = draw(st.binary(min_size=1, max_size=8))
            buf[k:k + len(chunk)] = chunk
    return bytes(buf)


def fuzz_crfsuite_model(data: bytes) -> None:
    COUNTS["crfsuite_model"] += 1
    try:
        est = crfsuite_from_bytes(data)
    except CSeqError:
        return
    use_imported(est)


_NUMBERS = ["0", "-1", "-4294967296", "4294967295", "99999999999999999999", "1e309", "nan",
            "-inf", "0x10", "", " ", "1 2", "%x[9,0]", "%x[0,99]", "B01:%x[0,0]", "U"]


@st.composite
def mutated_crfpp(draw) -> bytes:
    lines = (DATA / "crfpp_small.model.txt").read_text(encoding="utf-8").split("\n")
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        op = draw(st.sampled_from(["delete", "repeat", "swap", "number", "char", "cut", "blank"]))
        k = draw(st.sampled_from(range(len(lines))))
        if op == "delete":
            del lines[k]
        elif op == "repeat":
            lines.insert(k, lines[k])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[k], lines[j] = lines[j], lines[k]
        elif op == "number":
            lines[k] = re.sub(r"-?\d+(\.\d+)?", lambda m: draw(st.sampled_from(_NUMBERS)),
                              lines[k], count=1) if re.search(r"\d", lines[k]) \
                else draw(st.sampled_from(_NUMBERS))
        elif op == "char" and lines[k]:
            i = draw(st.integers(0, len(lines[k]) - 1))
            lines[k] = lines[k][:i] + draw(st.sampled_from("%[]:,- \tUBx\x00\u00e9")) \
                + lines[k][i + 1:]
        elif op == "cut":
            del lines[k:]
        else:
            lines.insert(k, "")
    text = "\n".join(lines).encode("utf-8")
    return text + draw(st.binary(max_size=4)) if draw(st.integers(0, 3)) == 0 else text


def fuzz_crfpp_model(data: bytes) -> None:
    COUNTS["crfpp_model"] += 1
    try:
        est = crfpp_from_bytes(data)
    except CSeqError:
        return
    use_imported(est)


TARGETS = {
    "model_loads": (fuzz_model_loads, (mutated_model(),)),
    "model_header": (fuzz_model_header, (edited_header(),)),
    "crfsuite_model": (fuzz_crfsuite_model, (mutated_crfsuite(),)),
    "crfpp_model": (fuzz_crfpp_model, (mutated_crfpp(),)),
    "conll": (fuzz_conll, (conll_bytes, st.sampled_from([None, "\t", " ", "  ", "\x00"]),
                           st.sampled_from([-1, 0, 1, 2, -3, None]), st.booleans(),
                           st.sampled_from(["upos", "xpos", "form", None]), st.booleans())),
}


def run(target, max_examples: int, seed: int | None = None) -> None:
    """Run one target for ``max_examples`` inputs (raises on the first failure, shrunk).

    ``target`` is a ``(function, strategies)`` pair of :data:`TARGETS`; without
    ``seed`` the run is derandomized (the same inputs every time).
    """
    body, strategies = target
    fn = settings(max_examples=max_examples, deadline=None, database=None,
                  derandomize=seed is None, suppress_health_check=list(HealthCheck),
                  print_blob=True)(given(*strategies)(body))
    if seed is not None:
        fn = hypothesis_seed(seed)(fn)
    fn()


def crash_sites(report: str) -> set[tuple[str, str]]:
    """(last cseq frame, exception type) of every failure in a Hypothesis report."""
    sites, frame = set(), "?"
    for line in report.splitlines():
        m = re.search(r'File "([^"]*/cseq/[^"]+)", line (\d+)', line)
        if m:
            frame = f"{m.group(1).rsplit('/', 2)[-2]}/{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}"
        m = re.match(r"^[\s|]*(\w+(?:Error|Exception|Exit|Interrupt))\b", line)
        if m and "Group" not in m.group(1) and "Traceback" not in line:
            sites.add((frame, m.group(1)))
            frame = "?"
    return sites


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0,
                        help="total wall time over all targets (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="first seed of the rounds")
    parser.add_argument("--chunk", type=int, default=2000, help="examples per round")
    parser.add_argument("--targets", nargs="*", default=list(TARGETS), choices=list(TARGETS))
    args = parser.parse_args(argv)
    seed_models()
    deadline = time.monotonic() + 60 * args.minutes
    crashes: list[tuple[str, int, str]] = []
    sites: set[tuple[str, str]] = set()
    rounds = 0
    start = time.monotonic()
    while time.monotonic() < deadline:
        for name in args.targets:
            if time.monotonic() >= deadline:
                break
            seed = args.seed + rounds
            try:
                run(TARGETS[name], args.chunk, seed)
            except Exception:  # a crash: record it and go on with the next seed
                report = traceback.format_exc()
                crashes.append((name, seed, report))
                new = crash_sites(report) - sites
                sites |= new
                if new:
                    print(f"CRASH in {name} (seed {seed}):\n{report}", flush=True)
                else:
                    print(f"crash in {name} (seed {seed}) at a known site", flush=True)
        rounds += 1
        print(f"{time.monotonic() - start:7.0f}s  inputs tried: "
              + ", ".join(f"{k} {COUNTS[k]}" for k in args.targets)
              + f"  crashes: {len(crashes)}", flush=True)
    total = sum(COUNTS[k] for k in args.targets)
    print(f"done in {(time.monotonic() - start) / 60:.1f} min: {total} inputs "
          f"({', '.join(f'{k} {COUNTS[k]}' for k in args.targets)}), {len(crashes)} crashing "
          f"rounds at {len(sites)} distinct sites")
    for frame, exc in sorted(sites):
        print(f"  {exc} at {frame}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
