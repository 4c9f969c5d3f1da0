"""Hypothesis fuzz targets for the parsers of untrusted bytes: model files (cseq's, CRFsuite's
and CRF++'s), the segmenter file, cluster files, template text, CoNLL and the service's
request bodies.

Each target takes generated input, calls the parser, and treats any exception
other than a cseq exception (``CSeqError``) or an ``OSError`` as a failure.
Whatever parses must also be usable.

* :func:`fuzz_model_loads` -- mutations of valid model files (truncation,
  bit flips, byte insertion, deletion and overwriting), with the SHA-256
  recomputed most of the time so that the damage reaches the parser.
* :func:`fuzz_model_header` -- edits of the JSON header with a recomputed
  checksum: a section is chosen (those read after loading most often), then a
  value in it, replaced by type (edge numbers such as ``1e400``, ``5e-324``,
  ``2**63``; other JSON types; a list with an element dropped or repeated; an
  object without one of its keys), by random JSON, deleted or added to.
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
* :func:`fuzz_pipeline_file` -- byte edits of a whole pipeline file (a
  container of model files) of a small treebank, then raw text through it;
* :func:`fuzz_segmenter_file` -- byte edits of the shipped English segmenter
  (the checksum recomputed), loaded by ``load_segmenter`` and segmenting.
* :func:`fuzz_cluster_file`, :func:`fuzz_vector_file`, :func:`fuzz_templates`,
  :func:`fuzz_http_body` -- byte and line edits (lines repeated, swapped,
  numbers replaced, lines made 70,000 characters long) of a cluster file
  (read, then used by a template featurizer that is fitted and predicts), of
  word-vector files in text and binary (read, clustered, the classes used to
  train and tag), of the template presets
  (parsed, then expanded), and of ``POST /tag`` bodies (parsed and costed as
  ``cseq serve`` does; its 4xx refusal is allowed).

The model files are seeded by every learner and training state
(:data:`SEEDS`: every command of :mod:`cseq.registry`, the CRF by L1,
``partial_fit``, early stopping, order 2, ``:tags`` and hashing templates,
an unfitted estimator).  A model that loads goes
through :func:`use_model`: predict, predict_marginals, explain and
top_features, save and load again, pickle, partial_fit, fit again and (one in
:data:`REPORT_EVERY`) the HTML report; each may raise a cseq exception, and
the counts of every outcome are kept in :data:`COUNTS`.

``tests/package/test_fuzz.py`` runs each briefly.  For a long run::

    nice -n 19 python tests/support/fuzz_targets.py --minutes 10

prints the inputs tried, every crash (with its shrunk input), the number of
non-cseq exceptions (distinct crash sites) and the count of each outcome; a
warning is an error there, as in the test suite.  ``CSEQ_FUZZ_EXAMPLES`` sets
the examples per target for ``test_fuzz.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import functools
import hashlib
import io
import json
import pickle
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
import cseq.report
from cseq import conll, registry
from cseq.io import serialize
from cseq.compat.crfpp_model import crfpp_from_bytes
from cseq.compat.crfsuite_model import crfsuite_from_bytes
from cseq.exceptions import CSeqError

if __name__ == "__main__":  # run as a script: tests/ on sys.path, for `support`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.registered import reads_words
from support.paths import DATA

#: Inputs tried per target, in this process.
COUNTS: Counter = Counter()

DIGEST = 32


# ---------------------------------------------------------------------------
# Seed models

#: Training data of the seeds: attribute lists (FeatureVocabulary) and words
#: (templates, the HMM).
X_VOC = [[["w=a", "p=S"], {"w": "b", "v": 2.5}], [["w=c"]], [["w=a"], ["w=b"], ["w=c"]]]
Y_VOC = [["A", "B"], ["C"], ["A", "B", "C"]]
SENTS = [["The", "cat", "sat", "."], ["A", "dog", "ran"]]
TAGS = [["D", "N", "V", "P"], ["D", "N", "V"]]
TMPL = "U00:%x[0,0]\nU01:%x[-1,0:lower]/%x[0,0:shape]\nU02:%x[1,0:suffix2]\nB"
TMPL_TAGS = "U00:%x[0,0]\nU01:%x[1,0:tags]/%x[-1,0:tags]\nB"


def _templates(text: str = TMPL, **kw):
    return cseq.TemplateFeaturizer(text, **kw)


def _partial(est, X, y, batches: int = 2):
    for _ in range(batches):
        est.partial_fit(X, y)
    return est


def _quick_fit(name: str):
    """Command ``name`` of the registry, quickly fitted on the seeds' data."""
    est = registry.COMMANDS[name].quick_estimator()
    return est.fit(SENTS, TAGS) if reads_words(type(est)) else est.fit(X_VOC, Y_VOC)


#: Seed name -> a function making it: every registered learner (its quick
#: settings, cseq.registry), every training state the model file stores (fit,
#: partial_fit, early stopping), order 2, L1, SGD, hashing, ``:tags`` templates,
#: and an unfitted estimator.
SEEDS = {
    **{name: functools.partial(_quick_fit, name) for name in registry.COMMANDS},
    "crf": lambda: cseq.CRF(max_iter=5).fit(X_VOC, Y_VOC),
    "crf-l1": lambda: cseq.CRF(c1=0.1, max_iter=5).fit(X_VOC, Y_VOC),
    "crf-sgd": lambda: cseq.CRF(algorithm="sgd", max_iter=3, random_state=0).fit(X_VOC, Y_VOC),
    "crf-sgd-partial": lambda: _partial(cseq.CRF(algorithm="sgd", random_state=0),
                                        X_VOC, Y_VOC),
    "crf-early": lambda: cseq.CRF(max_iter=6, early_stopping=True, patience=2,
                                  features=_templates()).fit(SENTS, TAGS, SENTS, TAGS),
    "crf-templates": lambda: cseq.CRF(max_iter=5, features=_templates()).fit(SENTS, TAGS),
    "crf-order2": lambda: cseq.CRF(max_iter=5, order=2, features=_templates())
    .fit(SENTS, TAGS),
    "crf-tags": lambda: cseq.CRF(max_iter=5, features=_templates(TMPL_TAGS)).fit(SENTS, TAGS),
    "perceptron": lambda: cseq.StructuredPerceptron(max_iter=3, random_state=0)
    .fit(X_VOC, Y_VOC),
    "perceptron-hashing": lambda: cseq.StructuredPerceptron(
        max_iter=3, random_state=0, features=_templates(n_buckets=32)).fit(SENTS, TAGS),
    "perceptron-partial": lambda: _partial(cseq.StructuredPerceptron(
        random_state=0, features=_templates()), SENTS, TAGS),
    "perceptron-order2-partial": lambda: _partial(cseq.StructuredPerceptron(
        order=2, random_state=0), X_VOC, Y_VOC),
    "ssvm": lambda: cseq.StructuredSVM(max_iter=3, random_state=0).fit(X_VOC, Y_VOC),
    "ssvm-partial": lambda: _partial(cseq.StructuredSVM(
        random_state=0, cost={"A": {"B": 2.0}}), X_VOC, Y_VOC),
    "memm": lambda: cseq.MEMM(max_iter=5).fit(X_VOC, Y_VOC),
    "pa": lambda: cseq.PassiveAggressive(max_iter=3, random_state=0).fit(X_VOC, Y_VOC),
    "arow": lambda: cseq.AROW(max_iter=3, random_state=0, features=_templates()).fit(SENTS, TAGS),
    "hmm": lambda: cseq.HMM().fit(SENTS, TAGS),
    "greedy": lambda: cseq.GreedyTagger(max_iter=3, random_state=0, features=_templates())
    .fit(SENTS, TAGS),
    "unfitted": lambda: cseq.CRF(c2=0.5, features=_templates()),
}


@functools.lru_cache(maxsize=None)
def seed_models() -> dict[str, bytes]:
    """Valid model files of every kind the format stores (small, deterministic)."""
    with warnings.catch_warnings():  # quick fits: no convergence
        warnings.simplefilter("ignore", cseq.ConvergenceWarning)
        return {name: make().to_bytes() for name, make in SEEDS.items()}


def split(data: bytes):
    _, _, head_len = serialize._PREFIX.unpack_from(data)
    start = serialize._PREFIX.size
    return json.loads(data[start:start + head_len]), data[start + head_len:-DIGEST]


#: A header value ``RAW + text`` is written as the bare JSON token ``text``:
#: numbers Python's json would not write (``1e400`` overflows to inf when read).
RAW = "@raw:"


def join(header, arrays: bytes, version: int = serialize.FORMAT_VERSION) -> bytes:
    head = json.dumps(header, sort_keys=True)
    head = re.sub(r'"%s([^"]*)"' % RAW, r"\1", head).encode("ascii")
    body = serialize._PREFIX.pack(serialize.MAGIC, version, len(head)) + head + arrays
    return body + hashlib.sha256(body).digest()


def _data_for(est):
    """Inputs the loaded ``est`` can read: (X to tag, X and y to train on)."""
    if reads_words(type(est)) or isinstance(
            getattr(est, "featurizer_", None) or getattr(est, "features", None),
            cseq.TemplateFeaturizer):
        return [["The", "dog"], [], ["unseen", "words", "here"]], SENTS, TAGS
    return [[["w=a"], {"w": "b", "v": -3.0}], [], [["p=S", "w=c"]]], X_VOC, Y_VOC


#: One in REPORT_EVERY loaded models also goes through the HTML report
#: (matplotlib makes it ~0.3 s); the standalone run lowers it.
REPORT_EVERY = 100


def _one_in(data: bytes, n: int) -> bool:
    """True for about one input in ``n``, the same for the same bytes (a Hypothesis
    draw would favour 0, and so True, far more often)."""
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "little") % n == 0


def _step(name: str, fn):
    """Run one use of a loaded model; a cseq exception is an allowed outcome."""
    try:
        result = fn()
    except CSeqError as exc:
        COUNTS[f"{name}: {type(exc).__name__}"] += 1
        return None
    COUNTS[f"{name}: ok"] += 1
    return result


def _round_trip(est) -> None:
    """A model that saves must load again, and pickle the same way."""
    data = est.to_bytes()
    again = serialize.loads(data)
    assert type(again) is type(est)
    pickle.loads(pickle.dumps(est))


def use_model(est, report: bool = False, X=None) -> None:
    """A model that loaded must work: tag, explain, save, pickle, train on and report.

    Every use may raise a cseq exception (e.g. the templates now read a column
    the input lacks); any other exception, or a result of the wrong shape, is
    a failure.
    """
    # Quick refits stop at max_iter; a header may say verbose=True.
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore", cseq.ConvergenceWarning)
        _use_model(est, report, X)


def _use_model(est, report: bool, X) -> None:
    X_read, X_train, y_train = _data_for(est)
    X = X_read if X is None else X
    fitted = getattr(est, "model_", None) is not None
    if fitted:
        pred = _step("predict", lambda: est.predict(X))
        if pred is not None:
            assert [len(s) for s in pred] == [len(s) for s in X]
            assert all(lab in est.classes_ for s in pred for lab in s)
        if hasattr(est, "predict_marginals"):
            marg = _step("predict_marginals", lambda: est.predict_marginals(X))
            for m, s in zip(marg or (), X):
                assert m.shape == (len(s), len(est.classes_))
                assert np.isfinite(m).all()
        _step("explain", lambda: (est.explain(X[0]), est.top_features(k=3)))
        if report:
            _step("report", lambda: cseq.report.report_html(est, X_train, y_train))
    _step("save", lambda: _round_trip(est))
    if hasattr(est, "partial_fit"):
        trained = _step("partial_fit", lambda: est.partial_fit(X_train, y_train))
        if trained is not None:
            _step("save", lambda: _round_trip(est))
    max_iter = getattr(est, "max_iter", None)
    if type(max_iter) is int and max_iter > 3:
        est.max_iter = 3  # refit quickly: the header's max_iter may be 2**31 - 1
    dev = (X_train, y_train) if getattr(est, "early_stopping", False) is True else ()
    _step("refit", lambda: est.fit(X_train, y_train, *dev))


def check_loads(data: bytes, report: bool = False) -> None:
    try:
        est = serialize.loads(data)
    except CSeqError as exc:
        COUNTS[f"load: {type(exc).__name__}"] += 1
        return
    COUNTS["load: ok"] += 1
    use_model(est, report)


# ---------------------------------------------------------------------------
# Model files: byte mutations


def _edit(draw, buf: bytearray) -> None:
    """One to four byte edits of ``buf`` in place: truncation, a bit flip, bytes
    inserted, deleted or overwritten, a run of zeros or 0xFF."""
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


@st.composite
def mutated_container(draw, seeds) -> bytes:
    """Edits of one of ``seeds()`` (model-container bytes), the checksum recomputed
    90% of the time so that the damage reaches the parser."""
    chosen = seeds()
    data = chosen[draw(st.sampled_from(sorted(chosen)))]
    resign = draw(st.integers(0, 9)) > 0
    buf = bytearray(data[:-DIGEST] if resign else data)
    _edit(draw, buf)
    if resign:
        buf += hashlib.sha256(bytes(buf)).digest()
    return bytes(buf)


def mutated_model():
    return mutated_container(seed_models)


def fuzz_model_loads(data: bytes) -> None:
    COUNTS["model_loads"] += 1
    check_loads(data, _one_in(data, REPORT_EVERY))


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


#: Numbers a JSON reader turns into trouble: inf by overflow, subnormals, -0,
#: beyond int64 and float64's integers, an int beyond float64's range.
RAW_NUMBERS = [RAW + t for t in ("1e400", "-1e400", "5e-324", "-0.0", "1e308", "1e-300",
                                 "NaN", "Infinity", "9007199254740993.0", "1" + "0" * 400)]


def _typed_value(draw, value):
    """A replacement for a header ``value`` chosen by its type: edge numbers for a
    number, other types for anything, a longer or shorter list, an object
    without one of its keys."""
    if isinstance(value, bool):
        return draw(st.sampled_from([0, 1, "true", None, [True]]))
    if isinstance(value, (int, float)):
        return draw(st.one_of(st.sampled_from(SPECIAL_INTS + RAW_NUMBERS),
                              st.sampled_from([float(value), -value, value * 2**40, str(value),
                                               None, True, [value]])))
    if isinstance(value, str):
        return draw(st.sampled_from([1, None, [], {}, "", value * 1000, value[:1],
                                     [value, value]]))
    if isinstance(value, list):
        if value and draw(st.booleans()):
            k = draw(st.integers(0, len(value) - 1))
            return value[:k] + value[k + 1:] if draw(st.booleans()) \
                else value[:k + 1] + value[k:]  # an element dropped or repeated
        return draw(st.sampled_from([[1, 2], [], {}, None, [{}], [[]]]))
    if isinstance(value, dict):
        if value and draw(st.booleans()):
            drop = draw(st.sampled_from(sorted(value)))
            return {k: v for k, v in value.items() if k != drop}
        return draw(st.sampled_from([{}, [], None, 0]))
    return draw(json_leaf)


#: Header sections read after loading (by tagging, training, saving, the report),
#: most searched first (Hypothesis favours a list's first entries).
DEEP_SECTIONS = ["training", "params", "featurizer", "features", "classes", "order"]


@st.composite
def edited_header(draw) -> bytes:
    data = seed_models()[draw(st.sampled_from(sorted(seed_models())))]
    header, arrays = split(data)
    for _ in range(draw(st.sampled_from([1, 1, 2, 3]))):
        # A section first (params, training, featurizer, the array table, ...),
        # then a path in it: the array table's many entries would otherwise
        # take most of the edits, and most files would then not load.
        # The sections that later code reads come up four times as often.
        sections = sorted(header, key=str)
        if not sections:
            break
        section = draw(st.sampled_from(
            [k for k in DEEP_SECTIONS if k in header] * 4 + sections))
        path = draw(st.sampled_from([p for p in _paths(header[section], (section,))]))
        parent = header
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["typed", "typed", "typed", "replace", "delete", "add",
                                   "nudge"]))
        last = path[-1]
        if op == "typed":
            parent[last] = _typed_value(draw, parent[last])
        elif op == "replace":
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
    # (Hypothesis draws the first choice and the smallest integer most often.)
    if draw(st.sampled_from([False] * 19 + [True])):
        arrays = arrays[:draw(st.integers(0, len(arrays)))]
    return join(header, arrays)


def fuzz_model_header(data: bytes) -> None:
    COUNTS["model_header"] += 1
    check_loads(data, _one_in(data, REPORT_EVERY))


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
    use_model(est, X=X)


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


# ---------------------------------------------------------------------------
# The segmenter file, cluster files, template text, the service's request bodies


@functools.lru_cache(maxsize=None)
def segmenter_seeds() -> dict[str, bytes]:
    from cseq.io.serialize import unpack
    path = Path(cseq.__file__).parent / "data" / "en_ewt.cseqp"
    _, arrays = unpack(path.read_bytes())
    return {"en_ewt": arrays["part:segmenter"].tobytes()}


def fuzz_segmenter_file(data: bytes) -> None:
    """The segmenter's model file (the first half of a raw-text pipeline), then segmenting."""
    from cseq.pipeline import load_segmenter
    COUNTS["segmenter_file"] += 1
    seg = _read_file(data, load_segmenter)
    if seg is not None:
        _step("segment", lambda: seg.segment("The dog barks. A cat sat on the mat."))


def _read_file(data: bytes, reader):
    """``reader(path)`` of ``data`` written to a scratch file; None if cseq refuses it."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input"
        path.write_bytes(data)
        try:
            return reader(path)
        except CSeqError:
            return None


@functools.lru_cache(maxsize=None)
def pipeline_seeds() -> dict[str, bytes]:
    """A whole pipeline file (segmenter, UPOS, XPOS, FEATS, lemma parts) of a small treebank."""
    import tempfile

    from cseq.pipeline import Pipeline
    from support.treebanks import treebank
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.conllu"
        train.write_text(treebank(120), encoding="utf-8")
        Pipeline.train(train).save(Path(tmp) / "p.cseqp")
        return {"small": (Path(tmp) / "p.cseqp").read_bytes()}


def fuzz_pipeline_file(data: bytes) -> None:
    """A pipeline file (a container of model files), then raw text through it."""
    from cseq.pipeline import load_pipeline
    COUNTS["pipeline_file"] += 1
    pipe = _read_file(data, load_pipeline)
    if pipe is not None:
        _step("pipeline", lambda: pipe("The dogs walked du lake. A cat jumps."))


@functools.lru_cache(maxsize=None)
def cluster_seed() -> bytes:
    from cseq.features.clusters import brown_clusters
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.tsv"
        brown_clusters([" ".join(s) for s in SENTS] * 3, 4).write(path)
        return path.read_bytes()


@st.composite
def mutated_text(draw, seeds) -> bytes:
    """Byte edits of one of ``seeds()`` (texts), or lines of it repeated, swapped or
    replaced by edge values."""
    buf = bytearray(draw(st.sampled_from(seeds())))
    if draw(st.booleans()):
        _edit(draw, buf)
    else:
        lines = bytes(buf).split(b"\n")
        k = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["repeat", "swap", "number", "long"]))
        if op == "repeat":
            lines[k:k] = [lines[k]] * draw(st.integers(1, 50))
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[k], lines[j] = lines[j], lines[k]
        elif op == "number":
            lines[k] = re.sub(rb"\d+", draw(st.sampled_from(_NUMBERS)).encode(), lines[k],
                              count=1)
        else:
            lines[k] += draw(st.sampled_from([b"0", b"a", b"\t", b"9"])) * draw(
                st.sampled_from([100, 5000, 70000]))
        buf = bytearray(b"\n".join(lines))
    return bytes(buf)


def fuzz_cluster_file(data: bytes) -> None:
    """A word-cluster file, then the table used by a template featurizer."""
    from cseq.features.clusters import read_clusters
    COUNTS["cluster_file"] += 1
    clusters = _read_file(data, read_clusters)
    if clusters is None:
        return
    _step("clusters", lambda: cseq.StructuredPerceptron(
        max_iter=1, features=cseq.TemplateFeaturizer(
            "U00:%x[0,0]\nU01:%x[0,0:cluster4]\nB", clusters=clusters)).fit(
                [[(w,) for w in s] for s in SENTS], TAGS).predict([[("The",), ("cat",)]]))


@functools.lru_cache(maxsize=None)
def vector_seeds() -> list[bytes]:
    """A word2vec text file, a GloVe file (no header) and a word2vec binary file."""
    import struct
    rng = np.random.default_rng(0)
    rows = [(w, rng.standard_normal(4)) for w in sorted({w for s in SENTS for w in s})]
    body = "".join(w + " " + " ".join(f"{v:.4f}" for v in vec) + "\n" for w, vec in rows)
    binary = f"{len(rows)} 4\n".encode() + b"".join(
        w.encode() + b" " + struct.pack("<4f", *vec) + b"\n" for w, vec in rows)
    return [f"{len(rows)} 4\n{body}".encode(), body.encode(), binary]


def fuzz_vector_file(data: bytes) -> None:
    """A word-vector file (either format, found by ``auto``), then its classes used to tag."""
    from cseq.features.vectors import read_vectors, vector_classes
    COUNTS["vector_file"] += 1
    read = _read_file(data, lambda p: read_vectors(p, max_words=500, max_dims=8))
    if read is None:
        return
    words, vectors = read
    assert len(words) == len(vectors) and np.isfinite(vectors).all() and vectors.shape[1] <= 8
    classes = vector_classes(words, vectors, 3)
    _step("vector classes", lambda: cseq.StructuredPerceptron(
        max_iter=1, features=cseq.TemplateFeaturizer("U00:%x[0,0]\nB", clusters=classes)).fit(
            [[(w,) for w in s] for s in SENTS], TAGS).predict([[("The",), ("cat",)]]))


def _template_seeds() -> list[bytes]:
    from cseq.features.presets import PRESETS
    return [text.encode() for text in PRESETS.values()] + [TMPL.encode(), TMPL_TAGS.encode()]


def fuzz_templates(data: bytes) -> None:
    """Template text, parsed, then expanded over a sentence of three columns."""
    from cseq.features.template_language import Templates, expand
    COUNTS["templates"] += 1
    try:
        t = Templates.parse(data.decode("utf-8", "surrogateescape"))
    except CSeqError:
        return
    _step("expand", lambda: expand(t, [(w, "NN", "B-NP") for w in SENTS[0]],
                                   tags=lambda i, w: "N"))


def _body_seeds() -> list[bytes]:
    return [b'{"tokens": ["The", "dog", "barks"]}', b'{"tokens": [["a", "NN"]], "marginals": true}',
            b'{"sentences": [["a", "b"], [], ["c"]], "nbest": 3, "constraints": "bio"}']


def fuzz_http_body(data: bytes) -> None:
    """A ``POST /tag`` body as the service checks it: parsed, then costed against
    its limits (a 4xx ``BadRequest`` is the service's refusal)."""
    from cseq.serve.requests import REQUEST_LIMITS, BadRequest, check_size, parse_tag_request
    COUNTS["http_body"] += 1
    try:
        request = parse_tag_request(data)
        check_size(request, 17, 2, REQUEST_LIMITS)
    except BadRequest as exc:
        assert 400 <= exc.status < 500 and str(exc)
        COUNTS["http_body: refused"] += 1


TARGETS = {
    "model_loads": (fuzz_model_loads, (mutated_model(),)),
    "segmenter_file": (fuzz_segmenter_file, (mutated_container(segmenter_seeds),)),
    "pipeline_file": (fuzz_pipeline_file, (mutated_container(pipeline_seeds),)),
    "cluster_file": (fuzz_cluster_file, (mutated_text(lambda: [cluster_seed()]),)),
    "vector_file": (fuzz_vector_file, (mutated_text(vector_seeds),)),
    "templates": (fuzz_templates, (mutated_text(_template_seeds),)),
    "http_body": (fuzz_http_body, (mutated_text(_body_seeds),)),
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
        m = re.match(r"^[\s|]*(\w+(?:Error|Exception|Exit|Interrupt|Warning))\b", line)
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
    parser.add_argument("--report-every", type=int, default=10,
                        help="one loaded model in N also makes the HTML report (default 10)")
    parser.add_argument("--targets", nargs="*", default=list(TARGETS), choices=list(TARGETS))
    args = parser.parse_args(argv)
    global REPORT_EVERY
    REPORT_EVERY = args.report_every
    # As in the test suite, a warning (e.g. numpy's overflow) is a failure.
    warnings.simplefilter("error")
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
            # A hang shows as the stacks of a round that runs for 5 minutes.
            faulthandler.dump_traceback_later(300)
            try:
                run(TARGETS[name], args.chunk, seed)
            except Exception:  # a crash: record it and go on with the next seed
                report = traceback.format_exc()
                crashes.append((name, seed, report))
                found = crash_sites(report)
                new = found - sites
                sites |= new
                if new or not found:
                    print(f"CRASH in {name} (seed {seed}):\n{report}", flush=True)
                else:
                    print(f"crash in {name} (seed {seed}) at a known site", flush=True)
        rounds += 1
        print(f"{time.monotonic() - start:7.0f}s  inputs tried: "
              + ", ".join(f"{k} {COUNTS[k]}" for k in args.targets)
              + f"  crashes: {len(crashes)}", flush=True)
    faulthandler.cancel_dump_traceback_later()
    total = sum(COUNTS[k] for k in args.targets)
    print(f"done in {(time.monotonic() - start) / 60:.1f} min: {total} inputs "
          f"({', '.join(f'{k} {COUNTS[k]}' for k in args.targets)}), {len(crashes)} crashing "
          f"rounds at {len(sites)} distinct sites (non-cseq exceptions: {len(sites)})")
    for frame, exc in sorted(sites):
        print(f"  {exc} at {frame}")
    print("outcomes of the models' uses (operation: result):")
    for key in sorted(k for k in COUNTS if ": " in k):
        print(f"  {key:40s} {COUNTS[key]}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
