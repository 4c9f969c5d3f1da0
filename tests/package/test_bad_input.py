"""The bad-input matrix: every public entry point against every kind of bad input.

Each cell of :data:`CELLS` is one entry point given one input, and states the
defined outcome: a result (checked) or a cseq exception (a subclass of
``CSeqError`` and of ``ValueError`` or ``TypeError``, whose message names the
sequence and position at fault where there is one).  ``docs/reliability.md``
lists every cell; ``python tests/package/test_bad_input.py`` prints that table.

Cells run in-process; :func:`test_no_cell_crashes_the_interpreter` first runs
the whole matrix in a child process, so a segfault or abort in any cell is
reported as a failure naming that cell instead of killing pytest.
"""

from __future__ import annotations

import functools
import io
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import cseq
from cseq import conll
from cseq.exceptions import (
    ConvergenceError,
    CSeqError,
    InputError,
    InputTypeError,
    ModelFormatError,
)
if __name__ == "__main__":  # run as a script: tests/ on sys.path, for `support`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.paths import ROOT, TESTS

# Quick fits here stop at max_iter on purpose; ConvergenceWarning itself is tested in
# test_crf_options.py.
pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

HERE = Path(__file__).resolve().parent
DOC = ROOT / "docs" / "reliability.md"


# ---------------------------------------------------------------------------
# The matrix


@dataclass(frozen=True)
class Raises:
    """The cell raises ``exc``; ``match`` is searched in the message (names the position)."""

    exc: type
    match: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class Returns:
    """The cell returns a value that ``check`` accepts (``check`` asserts).

    With ``errors_ok`` a cseq exception is an accepted outcome too.
    """

    check: Callable[[Any], None]
    doc: str
    errors_ok: bool = False


@dataclass(frozen=True)
class Cell:
    entry: str
    input: str
    run: Callable[[], Any]
    outcome: Raises | Returns

    @property
    def id(self) -> str:
        return f"{self.entry} | {self.input}"


X_SMALL = [[["w=a", "p=S"], ["w=b"]], [["w=c"]], [{"w": "a", "x": 2.0}, ["w=b"]]]
Y_SMALL = [["A", "B"], ["B"], ["A", "C"]]


@functools.lru_cache(maxsize=None)
def fitted(kind: str):
    """Small fitted models shared by the cells (built on first use)."""
    if kind == "CRF":
        return cseq.CRF(max_iter=10).fit(X_SMALL, Y_SMALL)
    if kind == "StructuredPerceptron":
        return cseq.StructuredPerceptron(max_iter=5, random_state=0).fit(X_SMALL, Y_SMALL)
    raise KeyError(kind)


@functools.lru_cache(maxsize=None)
def million_token_sequence():
    # One list object repeated: a 1e6-token sequence costs 8 MB of pointers.
    return MILLION_UNIT * 333_334


MILLION_UNIT = [["w=a"], ["w=b"], ["w=c", "p=S"]]


@functools.lru_cache(maxsize=1)
def million_emissions():
    return np.random.default_rng(0).normal(size=(1_000_000, 3))


def nan_at(seq: int, tok: int, value: float):
    """Two sequences of dict tokens with ``value`` at X[seq][tok] (everything else fine)."""
    X = [[{"w": "a", "v": 1.0}, {"w": "b"}], [{"w": "c"}, {"w": "a"}, {"w": "b"}]]
    X[seq][tok] = {"w": "a", "v": value}
    y = [["A", "B"], ["B", "A", "C"]]
    return X, y


# -- result checks ----------------------------------------------------------


def is_value(expected):
    def check(got):
        assert got == expected, got
    return check


def predictions_of_shape(lengths, classes=None):
    def check(got):
        assert isinstance(got, list) and [len(s) for s in got] == list(lengths), got
        for seq in got:
            assert all(isinstance(lab, str) for lab in seq)
            if classes is not None:
                assert set(seq) <= set(classes), seq
    return check


def marginals_of_shape(lengths, n_labels):
    def check(got):
        assert isinstance(got, list) and len(got) == len(lengths)
        for m, n in zip(got, lengths):
            assert m.shape == (n, n_labels)
            assert np.isfinite(m).all() and (m >= 0).all()
            np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    return check


def fitted_with_classes(classes):
    def check(est):
        assert est.classes_ == sorted(classes)
        assert np.isfinite(est.model_.params).all()
    return check


def fits_and_round_trips(X, y):
    """The model trains, predicts the training labels' alphabet and survives save/load."""
    def check(est):
        assert set(est.classes_) == {lab for seq in y for lab in seq}
        pred = est.predict(X)
        assert [len(s) for s in pred] == [len(s) for s in X]
        again = cseq.serialize.loads(est.to_bytes())
        assert again.classes_ == est.classes_ and again.predict(X) == pred
    return check


def valid_path(n, L):
    def check(got):
        path, score = got
        assert path.dtype == np.int32 and path.shape == (n,)
        assert n == 0 or (path.min() >= 0 and path.max() < L)
        assert not np.isnan(score)
    return check


def same_as(fn, *args):
    """The cell's result equals ``fn(*args)`` (e.g. the contiguous float64 input)."""
    def check(got):
        want = fn(*args)
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_array_equal(got, want)
    return check


def proper_marginals(n, L, atol=1e-9):
    def check(got):
        log_z, m, pm = got
        assert not np.isnan(log_z)
        assert m.shape == (n, L) and pm.shape == (max(n - 1, 0), L, L)
        assert np.isfinite(m).all() and np.isfinite(pm).all()
        np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=0, atol=atol)
        np.testing.assert_allclose(pm.sum(axis=(1, 2)), 1.0, rtol=0, atol=atol)
    return check


def path_is(path, score, rtol=1e-12):
    """Viterbi returns exactly ``path`` and a score within ``rtol`` of ``score``."""
    def check(got):
        p, sc = got
        assert p.dtype == np.int32
        np.testing.assert_array_equal(p, path)
        np.testing.assert_allclose(sc, score, rtol=rtol, atol=0)
    return check


def marginals_are(log_z, m, pm=None, atol=1e-12, rtol_z=1e-12, pm_every=1):
    """forward_backward returns these values (pair marginals checked every ``pm_every``-th)."""
    def check(got):
        gz, gm, gpm = got
        np.testing.assert_allclose(gz, log_z, rtol=rtol_z, atol=0)
        np.testing.assert_allclose(gm, m, rtol=0, atol=atol)
        want_pm = pm if pm is not None else np.einsum("ti,tj->tij", m[:-1:pm_every],
                                                      m[1::pm_every])
        np.testing.assert_allclose(gpm[::pm_every], want_pm, rtol=0, atol=atol)
        proper_marginals(len(m), m.shape[1], atol)(got)
    return check


def same_as_a_short_repetition(kind, method, unit, reps=100, edge=150):
    """A long periodic sequence gives, at its ends, the values of a short repetition
    of the same unit, and in the middle the short one's middle values, period by period
    (the influence of the ends has died out to below 1e-9 after ``edge`` tokens)."""
    def check(got):
        (long,) = got
        (short,) = getattr(fitted(kind), method)([unit * reps])
        long, short = np.asarray(long), np.asarray(short)
        n, p = len(long), len(unit)
        assert n % p == 0 and edge % p == 0
        middle = short[edge + np.arange(n - 2 * edge) % p]
        if method == "predict":
            assert long[:edge].tolist() == short[:edge].tolist()
            assert long[n - edge:].tolist() == short[len(short) - edge:].tolist()
            assert long[edge:n - edge].tolist() == middle.tolist()
        else:
            np.testing.assert_allclose(long[:edge], short[:edge], rtol=0, atol=1e-9)
            np.testing.assert_allclose(long[n - edge:], short[len(short) - edge:],
                                       rtol=0, atol=1e-9)
            np.testing.assert_allclose(long[edge:n - edge], middle, rtol=0, atol=1e-9)
    return check


def has_classes(classes):
    def check(est):
        assert est.classes_ == classes, est.classes_
    return check


def reads_as(X, y):
    def check(got):
        assert got == (X, y), got
    return check


# -- estimator cells ----------------------------------------------------------


def _estimator_cells() -> list[Cell]:
    cells: list[Cell] = []
    nan_seq1 = nan_at(1, 2, float("nan"))
    for kind in ("CRF", "StructuredPerceptron"):
        cls = getattr(cseq, kind)
        quick = {"max_iter": 3} if kind == "CRF" else {"max_iter": 3, "random_state": 0}

        def fit(X, y, cls=cls, quick=quick, **kw):
            return lambda: cls(**{**quick, **kw}).fit(X, y)

        def predict(X, kind=kind):
            return lambda: fitted(kind).predict(X)

        def score(X, y, kind=kind):
            return lambda: fitted(kind).score(X, y)

        def marg(X, kind=kind):
            return lambda: fitted(kind).predict_marginals(X)

        classes = ["A", "B", "C"]
        add = cells.append
        f, p, s, m = f"{kind}.fit", f"{kind}.predict", f"{kind}.score", f"{kind}.predict_marginals"
        # empty corpus / empty sequence
        add(Cell(f, "empty corpus", fit([], []), Raises(InputError, "empty")))
        add(Cell(f, "only empty sequences", fit([[], []], [[], []]),
                 Raises(InputError, "without tokens")))
        add(Cell(f, "one empty sequence among others", fit([[], [["a"]]], [[], ["A"]]),
                 Returns(fitted_with_classes(["A"]), "fits; the empty sequence is ignored")))
        add(Cell(p, "empty corpus", predict([]), Returns(is_value([]), "[]")))
        add(Cell(p, "empty sequence", predict([[], [["w=a"]]]),
                 Returns(predictions_of_shape([0, 1], classes), "[[], [label]]")))
        add(Cell(s, "empty corpus", score([], []), Returns(is_value(0.0), "0.0")))
        add(Cell(s, "empty sequence", score([[]], [[]]), Returns(is_value(0.0), "0.0")))
        # len(X) != len(y), token/label counts
        add(Cell(f, "len(X) != len(y)", fit(X_SMALL, Y_SMALL[:2]),
                 Raises(InputError, "X has 3 sequences but y has 2")))
        add(Cell(s, "len(X) != len(y)", score(X_SMALL, Y_SMALL[:2]),
                 Raises(InputError, "X has 3 sequences but y has 2")))
        bad_y = [["A", "B"], ["B", "B"], ["A", "C"]]
        add(Cell(f, "tokens and labels differ in length", fit(X_SMALL, bad_y),
                 Raises(InputError, r"sequence 1: X has 1 tokens but y has 2 labels")))
        add(Cell(s, "tokens and labels differ in length", score(X_SMALL, bad_y),
                 Raises(InputError, r"sequence 1: X has 1 tokens but y has 2 labels")))
        # labels that are not strings
        for what, lab in (("int", 1), ("None", None), ("bytes", b"A"), ("float", 1.5)):
            y = [["A", "B"], ["B"], ["A", lab]]
            at = Raises(InputTypeError, r"y\[2\]\[1\]")
            if lab is None:  # an unknown label: the CRF and the perceptron train on it
                add(Cell(f, f"label is {what}", fit(X_SMALL, y), Returns(
                    has_classes(["A", "B"]),
                    "fits: an unknown label (a partially labelled sequence)")))
            else:
                add(Cell(f, f"label is {what}", fit(X_SMALL, y), at))
            add(Cell(s, f"label is {what}", score(X_SMALL, y), at))
        add(Cell(s, "label unknown to the model", score([[["w=a"]]], [["Z"]]),
                 Returns(is_value(0.0), "counted as an error (0.0 here)")))
        # one class, many classes
        add(Cell(f, "single label class", fit([[["a"], ["b"]], [["c"]]], [["A", "A"], ["A"]]),
                 Returns(fits_and_round_trips([[["a"], ["b"]], [["c"]]], [["A", "A"], ["A"]]),
                         "fits; predicts that label (marginals all 1.0)")))
        X_many = [[[f"w={i}"], [f"w={i + 1}"]] for i in range(0, 1000, 2)]
        y_many = [[f"L{i:04d}", f"L{i + 1:04d}"] for i in range(0, 1000, 2)]
        add(Cell(f, "1,000 label classes (max_iter=2)", fit(X_many, y_many, max_iter=2),
                 Returns(fits_and_round_trips(X_many[:20], y_many),
                         "fits; 1,000 classes, predictions among them")))
        # non-finite / huge feature values
        for what, v in (("nan", float("nan")), ("inf", float("inf")), ("-inf", -np.inf),
                        ("1e300", 1e300), ("4e38 (beyond float32)", 4e38)):
            Xb, yb = nan_at(1, 2, v)
            add(Cell(f, f"dict value {what} at X[1][2]", fit(Xb, yb),
                     Raises(InputError, r"X\[1\]\[2\].*finite")))
            add(Cell(p, f"dict value {what} at X[1][2]", predict(Xb),
                     Raises(InputError, r"X\[1\]\[2\].*finite")))
            add(Cell(s, f"dict value {what} at X[1][2]", score(Xb, yb),
                     Raises(InputError, r"X\[1\]\[2\].*finite")))
        X30, y30 = nan_at(1, 2, 1e30)
        X30[0][0] = {"w": "a", "v": -1e30}
        if kind == "CRF":
            add(Cell(f, "dict values +-1e30", fit(X30, y30),
                     Raises(ConvergenceError, r"largest feature value 1e\+30")))
        else:
            add(Cell(f, "dict values +-1e30", fit(X30, y30),
                     Returns(fits_and_round_trips(X30, y30), "fits; round-trips")))
        add(Cell(p, "dict values +-1e30", predict(X30),
                 Returns(predictions_of_shape([2, 3], classes), "labels")))
        # wrong container types
        obj = np.empty(1, dtype=object)
        obj[0] = [["w=a"]]
        for what, X in (("X is bytes", b"abc"), ("X is None", None), ("X is a str", "abc"),
                        ("X is a numpy object array", obj), ("X is a dict", {0: [["a"]]})):
            add(Cell(f, what, fit(X, [["A"]]), Raises(InputTypeError, "X must be a list")))
            add(Cell(p, what, predict(X), Raises(InputTypeError, "X must be a list")))
        add(Cell(f, "y is a str", fit([[["a"]]], "A"), Raises(InputTypeError, "y must be a list")))
        add(Cell(f, "y is None", fit([[["a"]]], None), Raises(InputTypeError, "y must be a list")))
        add(Cell(f, "y[1] is a str", fit([[["a"]], [["b"]]], [["A"], "B"]),
                 Raises(InputTypeError, r"y\[1\]")))
        add(Cell(p, "X[1] is a str", predict([[["w=a"]], "w=a"]),
                 Raises(InputTypeError, r"X\[1\]")))
        add(Cell(p, "X[0][1] is a str (token not a list)", predict([[["w=a"], "w=b"]]),
                 Raises(InputTypeError, r"X\[0\]\[1\]")))
        add(Cell(p, "X[0][1] is None", predict([[["w=a"], None]]),
                 Raises(InputTypeError, r"X\[0\]\[1\]")))
        add(Cell(p, "feature is bytes at X[0][1]", predict([[["w=a"], [b"w=b"]]]),
                 Raises(InputTypeError, r"X\[0\]\[1\]")))
        add(Cell(p, "numpy array of strings as token", predict([[np.array(["w=a"])]]),
                 Raises(InputTypeError, r"X\[0\]\[0\]")))
        if kind == "CRF":
            add(Cell(m, "empty corpus", marg([]), Returns(is_value([]), "[]")))
            add(Cell(m, "empty sequence", marg([[], [["w=a"]]]),
                     Returns(marginals_of_shape([0, 1], 3), "[(0, L) array, (1, L) array]")))
            add(Cell(m, "dict value nan at X[1][2]", marg(nan_seq1[0]),
                     Raises(InputError, r"X\[1\]\[2\].*finite")))
            add(Cell(m, "dict values +-1e30", marg(X30),
                     Returns(marginals_of_shape([2, 3], 3), "finite marginals summing to 1")))
            add(Cell(m, "X is None", marg(None), Raises(InputTypeError, "X must be a list")))
            add(Cell(m, "X is a str", marg("abc"), Raises(InputTypeError, "X must be a list")))
            add(Cell(m, "1,000,000-token sequence", marg([million_token_sequence()]),
                     Returns(same_as_a_short_repetition(kind, "predict_marginals", MILLION_UNIT),
                             "the marginals of a 300-token repetition (ends and middle)")))
        add(Cell(p, "1,000,000-token sequence", predict([million_token_sequence()]),
                 Returns(same_as_a_short_repetition(kind, "predict", MILLION_UNIT),
                         "the labels of a 300-token repetition (ends and middle)")))
    return cells


# -- unicode ------------------------------------------------------------------

UNICODE = {
    "combining marks": "e\u0301\u0302\u20dd",
    "emoji ZWJ sequence": "\U0001F469\u200d\U0001F4BB\U0001F600",
    "RTL with override": "\u05e9\u05dc\u05d5\u05dd\u202e\u0627",
    "NUL": "a\x00b",
    "lone surrogate": "x\ud800y\udfff",
    "BOM and zero-width": "\ufeff\u200b",
    "empty string": "",
}


def _unicode_cells() -> list[Cell]:
    cells = []
    for what, s in UNICODE.items():
        X = [[[s], ["f=" + s], ["b"]], [["b"], [s]]]
        y = [[s, "B", "B"], ["B", s]]
        for kind in ("CRF", "StructuredPerceptron"):
            cls = getattr(cseq, kind)
            cells.append(Cell(f"{kind}.fit", f"{what} in features and labels",
                              lambda cls=cls, X=X, y=y: cls(max_iter=5).fit(X, y),
                              Returns(fits_and_round_trips(X, y),
                                      "fits; labels and features round-trip through the file")))
        tokens = [[s, "b", s + s], ["c", s]]
        ty = [[s, "B", s], ["B", s]]
        cells.append(Cell(
            "TemplateFeaturizer", f"{what} in tokens and labels",
            lambda tokens=tokens, ty=ty: cseq.StructuredPerceptron(
                max_iter=3, random_state=0,
                features=cseq.TemplateFeaturizer("U00:%x[0,0]\nU01:%x[-1,0:lower]/%x[0,0:shape]"),
            ).fit(tokens, ty),
            Returns(fits_and_round_trips(tokens, ty), "fits; round-trips")))
        if "\n" not in s and "\r" not in s:
            tmpl = f"U00:{s}%x[0,0]\nU01:%x[1,0]{s}"
            cells.append(Cell(
                "TemplateFeaturizer", f"{what} in template text",
                lambda tmpl=tmpl, tokens=tokens, ty=ty: cseq.StructuredPerceptron(
                    max_iter=3, random_state=0, features=cseq.TemplateFeaturizer(tmpl)
                ).fit(tokens, ty),
                Returns(fits_and_round_trips(tokens, ty), "fits; round-trips")))
    return cells


# -- kernel cells -------------------------------------------------------------

RNG = np.random.default_rng(7)
EM = RNG.normal(size=(6, 3))
TR = RNG.normal(size=(3, 3))


def _kernel_cells() -> list[Cell]:
    cells = []
    ro_em, ro_tr = EM.copy(), TR.copy()
    ro_em.flags.writeable = False
    ro_tr.flags.writeable = False
    big = np.zeros((12, 6))
    big[::2, ::2] = EM
    for fn in (cseq.viterbi, cseq.forward_backward):
        name = f"cseq.{fn.__name__}"
        is_v = fn is cseq.viterbi
        add = cells.append

        def call(*args, fn=fn):
            return lambda: fn(*args)

        ref = functools.partial(fn, EM, TR)
        add(Cell(name, "empty sequence (0, L)", call(np.zeros((0, 3)), TR),
                 Returns(path_is(np.zeros(0), 0.0) if is_v
                         else marginals_are(0.0, np.zeros((0, 3)), np.zeros((0, 3, 3))),
                         "empty path, 0.0" if is_v else "0.0, (0, L), (0, L, L)")))
        add(Cell(name, "no labels (n, 0)", call(np.zeros((3, 0)), np.zeros((0, 0))),
                 Raises(InputError, "at least one label")))
        one = float(EM[:, 0].sum() + 5 * TR[0, 0])
        add(Cell(name, "one label", call(EM[:, :1], TR[:1, :1]),
                 Returns(path_is(np.zeros(6), one) if is_v
                         else marginals_are(one, np.ones((6, 1)), np.ones((5, 1, 1))),
                         "all-zero path, the score of that path" if is_v
                         else "log Z = that path's score, marginals all 1.0")))
        # dtypes
        for dt in ("int64", "int8", "uint64", "float32", "float16", ">f8"):
            arr = (EM * 10).astype(dt) if dt[0] in "iu" else EM.astype(dt)
            add(Cell(name, f"emissions dtype {dt}", call(arr, TR),
                     Returns(same_as(fn, arr.astype(np.float64), TR),
                             "same as the float64 copy")))
        for dt in ("bool", "complex128", "object", "<U3", "datetime64[s]"):
            arr = EM.astype(dt) if dt not in ("<U3", "datetime64[s]") else np.zeros((2, 3), dt)
            add(Cell(name, f"emissions dtype {dt}", call(arr, TR),
                     Raises(InputTypeError, "real numbers")))
        add(Cell(name, "transitions dtype object", call(EM, TR.astype(object)),
                 Raises(InputTypeError, "transitions")))
        # shapes
        for what, em, tr in (("1-d emissions", EM[0], TR), ("3-d emissions", EM[None], TR),
                             ("0-d emissions", np.float64(1.0), TR),
                             ("transitions (2, 3)", EM, TR[:2]),
                             ("transitions 1-d", EM, TR.ravel()),
                             ("transitions (4, 4)", EM, np.zeros((4, 4)))):
            add(Cell(name, what, call(em, tr),
                     Raises(InputError, "transitions" if "transitions" in what else "emissions")))
        add(Cell(name, "start of length 4", call(EM, TR, np.zeros(4)), Raises(InputError, "start")))
        add(Cell(name, "end 2-d", call(EM, TR, None, np.zeros((3, 1))), Raises(InputError, "end")))
        # containers
        for what, em in (("None", None), ("str", "abc"), ("bytes", b"abc")):
            add(Cell(name, f"emissions is {what}", call(em, TR),
                     Raises(InputTypeError, "emissions")))
        add(Cell(name, "nested lists", call(EM.tolist(), TR.tolist()),
                 Returns(same_as(ref), "same as the array")))
        add(Cell(name, "ragged nested list", call([[1.0, 2.0, 3.0], [1.0]], TR),
                 Raises(InputError, "emissions")))
        # layout
        for what, em, tr in (("Fortran-ordered", np.asfortranarray(EM), np.asfortranarray(TR)),
                             ("strided view", big[::2, ::2], TR),
                             ("negative strides", EM[::-1].copy()[::-1],
                              TR[:, ::-1].copy()[:, ::-1]),
                             ("read-only", ro_em, ro_tr)):
            add(Cell(name, what, call(em, tr),
                     Returns(same_as(ref), "same as a C-contiguous copy")))
        # non-finite and huge
        for what, args, match in (
                ("nan in emissions at (2, 1)", (np.where(np.arange(18).reshape(6, 3) == 7,
                                                         np.nan, EM), TR), r"emissions.*\(2, 1\)"),
                ("inf in transitions at (0, 2)", (EM, np.where(np.eye(3, k=2) > 0, np.inf, TR)),
                 r"transitions.*\(0, 2\)"),
                ("-inf in start", (EM, TR, np.array([0.0, -np.inf, 0.0])), r"start.*\(1,\)"),
                ("nan in end", (EM, TR, None, np.array([np.nan, 0.0, 0.0])), r"end.*\(0,\)")):
            add(Cell(name, what, call(*args), Raises(InputError, match)))
        # Scaling every score by 1e300 keeps the best path and makes it certain.
        best_path, best = cseq.viterbi(EM, TR)
        onehot = np.eye(3)[best_path]
        add(Cell(name, "scores of 1e300", call(EM * 1e300, TR * 1e300),
                 Returns(path_is(best_path, best * 1e300) if is_v
                         else marginals_are(best * 1e300, onehot,
                                            np.einsum("ti,tj->tij", onehot[:-1], onehot[1:])),
                         "the unscaled best path, its score x 1e300" if is_v
                         else "log Z = best score; marginals one-hot on the best path")))
        # Sums of finite scores that overflow float64 (1e308 + 1e308).
        overflow = (np.array([[1e308, 0.0]]), np.zeros((2, 2)), np.array([1e308, 0.0]))
        add(Cell(name, "scores whose sum overflows (1e308 + 1e308)", call(*overflow),
                 Raises(InputError, "overflow")))
        if not is_v:
            # Log-space path (start spread > 250) with a large end score: each
            # row of marginals must still sum to one.
            args = (np.zeros((2, 2)), np.zeros((2, 2)), np.array([0.0, 300.0]),
                    np.array([1e12, 1e12]))
            # Independent tokens: y0 ~ softmax([0, 300]), y1 uniform.  (The
            # oracle cannot check this one: its path scores near 1e12 keep only
            # four decimals.)
            m0 = np.array([1.0, np.exp(300.0)]) / (1.0 + np.exp(300.0))
            m = np.array([m0, [0.5, 0.5]])
            add(Cell(name, "end scores of 1e12 in log-space mode", call(*args),
                     Returns(marginals_are(1e12 + 300.0 + np.log(2.0), m,
                                           np.einsum("i,j->ij", m0, m[1])[None]),
                             "log Z = 1e12 + 300 + log 2, marginals [[e^-300, 1], "
                             "[0.5, 0.5]]")))
            args = (np.array([[0.0, 1e20]]), np.zeros((2, 2)), np.array([3e19, 0.0]),
                    np.array([1e20, 3e19]))
            add(Cell(name, "one token, tied scores of 1.3e20 in log-space mode", call(*args),
                     Returns(marginals_are(1.3e20, np.array([[0.5, 0.5]]),
                                           np.zeros((0, 2, 2))),
                             "log Z = 1.3e20, marginals [[0.5, 0.5]]")))
        # Constant transitions make the tokens independent, so the exact
        # answer is known in closed form even for a million tokens.
        n = 1_000_000
        const = np.full((3, 3), 0.7)

        def exact(got, is_v=is_v):
            big_em = million_emissions()
            if is_v:
                check = path_is(big_em.argmax(axis=1),
                                big_em.max(axis=1).sum() + (n - 1) * 0.7, rtol=1e-9)
            else:
                lse = np.logaddexp.reduce(big_em, axis=1)
                check = marginals_are(lse.sum() + (n - 1) * 0.7, np.exp(big_em - lse[:, None]),
                                      atol=1e-9, rtol_z=1e-9, pm_every=997)
            check(got)

        add(Cell(name, "1,000,000 tokens, L=3, constant transitions",
                 lambda fn=fn: fn(million_emissions(), const),
                 Returns(exact, "the closed form: path of row maxima, its score" if is_v
                         else "the closed form: row softmax, log Z = sum of row log-sum-exps")))
    return cells


# -- readers, load, CLI -----------------------------------------------------

CONLLU_ROW = "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_"


def _reader_cells() -> list[Cell]:
    cells = []
    add = cells.append
    for rd in (conll.read_conll, conll.read_conllu):
        name = f"cseq.conll.{rd.__name__}"

        def read(src, rd=rd, **kw):
            return lambda: rd(src() if callable(src) else src, **kw)

        add(Cell(name, "empty file", read(lambda: io.StringIO("")),
                 Returns(reads_as([], []), "([], [])")))
        add(Cell(name, "only blank lines", read(lambda: io.BytesIO(b"\n \n\t\n\r\n")),
                 Returns(reads_as([], []), "([], [])")))
        for what, src in (("source is bytes", b"a B\n"), ("source is None", None),
                          ("source is a list of lines", ["a B\n"]), ("source is an int", 3)):
            add(Cell(name, what, read(src), Raises(InputTypeError, "source must be a path")))
        add(Cell(name, "file content passed as a path", read("a B\n\n"),
                 Raises(FileNotFoundError, "No such file")))
        add(Cell(name, "a directory", read(str(HERE)), Raises(IsADirectoryError)))
        add(Cell(name, "bogus encoding name", read(lambda: io.BytesIO(b"a B\n"), encoding="nope"),
                 Raises(InputError, "encoding")))
    rc, rcu = "cseq.conll.read_conll", "cseq.conll.read_conllu"
    add(Cell(rc, "invalid UTF-8 on line 2", lambda: conll.read_conll(io.BytesIO(b"a B\n\xff C\n")),
             Raises(InputError, "<stream>:2: cannot decode")))
    add(Cell(rc, "row with a missing column on line 3",
             lambda: conll.read_conll(io.StringIO("a B\nb C\nc\n")),
             Raises(InputError, "<stream>:3: expected 2 columns, found 1")))
    add(Cell(rc, "only -DOCSTART- lines", lambda: conll.read_conll(io.StringIO("-DOCSTART- O\n\n")),
             Returns(reads_as([], []), "([], [])")))
    add(Cell(rc, "label_column out of range", lambda: conll.read_conll(io.StringIO("a B\n"),
                                                                        label_column=5),
             Raises(InputError, "<stream>:1: no column 5")))
    for what, s in UNICODE.items():
        if not s or s.isspace() or s == "\ufeff\u200b":
            continue
        text = f"{s} {s}x\nb B\n\n"
        add(Cell(rc, f"{what} in tokens and labels",
                 lambda text=text: conll.read_conll(io.StringIO(text)),
                 Returns(reads_as([[(s,), ("b",)]], [[s + "x", "B"]]), "read verbatim")))
        row = CONLLU_ROW.replace("Hi", s).replace("INTJ", s + "x")
        add(Cell(rcu, f"{what} in form and label",
                 lambda row=row: conll.read_conllu(io.StringIO(row + "\n\n")),
                 Returns(reads_as([[(s,)]], [[s + "x"]]), "read verbatim")))
    add(Cell(rcu, "invalid UTF-8 on line 2",
             lambda: conll.read_conllu(io.BytesIO(b"# c\n" + CONLLU_ROW.encode() + b"\xff\n")),
             Raises(InputError, "<stream>:2: cannot decode")))
    add(Cell(rcu, "9 columns on line 2",
             lambda: conll.read_conllu(io.StringIO("# c\n" + CONLLU_ROW.rsplit("\t", 1)[0] + "\n")),
             Raises(InputError, "<stream>:2: expected 10")))
    add(Cell(rcu, "ID 'x'", lambda: conll.read_conllu(io.StringIO(CONLLU_ROW.replace("1", "x", 1))),
             Raises(InputError, "<stream>:1: invalid ID")))
    add(Cell(rcu, "ID '\u00b2' (a superscript digit, not an integer)",
             lambda: conll.read_conllu(io.StringIO(CONLLU_ROW.replace("1", "\u00b2", 1))),
             Raises(InputError, "<stream>:1: invalid ID")))
    add(Cell(rcu, "only comments", lambda: conll.read_conllu(io.StringIO("# a\n# b\n\n")),
             Returns(reads_as([], []), "([], [])")))
    add(Cell(rcu, "unknown label column", lambda: conll.read_conllu(io.StringIO(""), label="nope"),
             Raises(InputError, "unknown CoNLL-U column")))
    add(Cell(rcu, "columns is a str", lambda: conll.read_conllu(io.StringIO(""), columns="form"),
             Raises(InputTypeError, "columns")))
    return cells


def _load_cells(tmp: Path) -> list[Cell]:
    cells = []
    files = {"empty file": b"", "8 bytes": b"CSEQMDL\x00", "text file": b"hello world\n" * 10,
             "zeros": b"\x00" * 100}
    for what, data in files.items():
        path = tmp / f"{what.replace(' ', '_')}.cseq"
        cells.append(Cell("cseq.load", what,
                          lambda path=path, data=data: (path.write_bytes(data), cseq.load(path)),
                          Raises(ModelFormatError, "model")))
    cells.append(Cell("cseq.load", "missing file", lambda: cseq.load(tmp / "missing.cseq"),
                      Raises(FileNotFoundError)))
    cells.append(Cell("cseq.load", "a directory", lambda: cseq.load(tmp),
                      Raises(IsADirectoryError)))
    cells.append(Cell("cseq.load", "path is None", lambda: cseq.load(None),
                      Raises(InputTypeError, "path")))
    cells.append(Cell("cseq.serialize.loads", "str instead of bytes",
                      lambda: cseq.serialize.loads("CSEQMDL"), Raises(ModelFormatError, "bytes")))
    return cells


def build_cells(tmp: Path) -> list[Cell]:
    return _estimator_cells() + _unicode_cells() + _kernel_cells() + _reader_cells() + \
        _load_cells(tmp)


def _cells_for_ids() -> list[Cell]:
    # Built once at collection with a placeholder directory for the load cells;
    # the load cells are rebuilt per test with pytest's tmp_path.
    return build_cells(Path("/nonexistent-cseq-placeholder"))


CELLS = _cells_for_ids()
_IDS = [c.id for c in CELLS]
assert len(set(_IDS)) == len(_IDS), [i for i in _IDS if _IDS.count(i) > 1]


def check_cell(cell: Cell) -> None:
    """Run one cell and assert its defined outcome."""
    out = cell.outcome
    if isinstance(out, Raises):
        with pytest.raises(Exception) as info:
            cell.run()
        exc = info.value
        assert isinstance(exc, out.exc), f"{cell.id}: expected {out.exc.__name__}, got {exc!r}"
        if issubclass(out.exc, CSeqError):
            assert isinstance(exc, CSeqError) and isinstance(exc, (ValueError, TypeError)), exc
        else:
            assert isinstance(exc, OSError), exc
        if out.match:
            assert re.search(out.match, str(exc)), f"{cell.id}: {str(exc)!r} !~ {out.match!r}"
    else:
        try:
            got = cell.run()
        except CSeqError as exc:
            if not out.errors_ok:
                raise
            assert isinstance(exc, (ValueError, TypeError)), exc
            return
        out.check(got)


@pytest.mark.parametrize("index", range(len(CELLS)), ids=_IDS)
def test_cell(index, tmp_path):
    cell = CELLS[index]
    if cell.entry in ("cseq.load",):
        cell = next(c for c in _load_cells(tmp_path) if c.input == cell.input)
    check_cell(cell)


# ---------------------------------------------------------------------------
# The whole matrix in a child process: a crash names its cell.

_CHILD = r"""
import sys, faulthandler
faulthandler.enable()
sys.path[:0] = [{tests!r}, {here!r}]
from pathlib import Path
import test_bad_input as m
for cell in m.build_cells(Path({tmp!r})):
    if "1,000 label classes" in cell.input:
        continue  # slow, and the same kernels as the other fit cells
    print("CELL", cell.id, flush=True)
    try:
        cell.run()
    except BaseException as exc:
        if not isinstance(exc, Exception):
            raise
print("ALL DONE", flush=True)
"""


def test_no_cell_crashes_the_interpreter(tmp_path):
    code = _CHILD.format(tests=str(TESTS), here=str(HERE), tmp=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=240, cwd=tmp_path)
    last = [ln for ln in r.stdout.splitlines() if ln.startswith("CELL")][-1:]
    assert r.returncode == 0 and r.stdout.rstrip().endswith("ALL DONE"), (
        f"child exited with {r.returncode} during {last}; stderr:\n{r.stderr[-3000:]}")


def test_docs_list_every_cell():
    if not DOC.exists():
        pytest.skip("docs/reliability.md is not beside the tests (installed-package run)")
    text = DOC.read_text(encoding="utf-8")
    missing = [c.id for c in CELLS if f"| {c.entry} | {_doc_input(c)} |" not in text]
    assert not missing, f"{len(missing)} cells are missing from docs/reliability.md: {missing[:5]}"


# ---------------------------------------------------------------------------
# The CLI: a few cells, each a subprocess.


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "cseq", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_cli_bad_inputs_exit_1_with_a_one_line_message(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    badutf = tmp_path / "bad.txt"
    badutf.write_bytes(b"a B\nb C\n\xff\xfe D\n\n")
    cut = tmp_path / "cut.cseq"
    cut.write_bytes(b"CSEQMDL\x00" + b"\x01" * 40)
    cases = [
        (["train", empty, "-o", tmp_path / "m.cseq"], "empty"),
        (["train", badutf, "-o", tmp_path / "m.cseq"], "bad.txt:3"),
        (["tag", cut, empty], "model"),
    ]
    for args, needle in cases:
        r = _cli(*args, cwd=tmp_path)
        assert r.returncode == 1, (args, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr and needle in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_cli_unicode_round_trip(tmp_path):
    words = ["e\u0301", "\U0001F469\u200d\U0001F4BB", "\u05e9\u05dc\u05d5\u05dd", "a\u0000b"]
    text = "".join(f"{w}\t{'L' + w}\n" for w in words) + "\n"
    data = tmp_path / "uni.txt"
    data.write_text(text, encoding="utf-8")
    model = tmp_path / "uni.cseq"
    r = _cli("train", data, "-o", model, "--algorithm", "crf", "--c2", "0.001", "--sep", "\t",
             "--max-iter", "50", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("tag", model, data, "--labeled", "--sep", "\t", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [ln.split("\t") for ln in r.stdout.splitlines() if ln]
    assert [row[0] for row in rows] == words
    assert [row[1] for row in rows] == ["L" + w for w in words]


CLI_CELLS = [
    ("cseq train", "empty file", "exit 1, one line naming the problem"),
    ("cseq train", "invalid UTF-8 on line 3", "exit 1, 'bad.txt:3: cannot decode ...'"),
    ("cseq tag", "truncated model file", "exit 1, 'not a cseq model ...'"),
    ("cseq train / tag", "combining marks, emoji, RTL, NUL in tokens and labels",
     "exit 0; tokens and labels written back verbatim"),
]


# ---------------------------------------------------------------------------
# The table for docs/reliability.md


def _doc_input(cell: Cell) -> str:
    # "[" escaped: "X[1][2]" would read as a reference-style link (mkdocs --strict refuses it).
    return cell.input.replace("|", "\\|").replace("\x00", "\\x00").replace("[", "\\[")


def _doc_outcome(cell: Cell) -> str:
    out = cell.outcome
    if isinstance(out, Raises):
        text = out.exc.__name__
        if out.match:
            pattern = out.match.replace("|", "\\|")
            text += f" (message matches `{pattern}`)"
        return text
    return out.doc.replace("|", "\\|")


def markdown_table() -> str:
    lines = ["| entry point | input | defined outcome |", "|---|---|---|"]
    lines += [f"| {c.entry} | {_doc_input(c)} | {_doc_outcome(c)} |" for c in CELLS]
    lines += [f"| {e} | {i} | {o} |" for e, i, o in CLI_CELLS]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
    print(f"\n{len(CELLS) + len(CLI_CELLS)} cells")
