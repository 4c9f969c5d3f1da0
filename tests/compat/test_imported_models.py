"""cseq.from_crfsuite and cseq.from_crfpp: other libraries' models, kept.

The CRFsuite tests train small models with python-crfsuite's ``Trainer`` (the
test extra installs it) and compare every label of ``predict`` with
``Tagger.tag`` and every marginal with ``Tagger.marginal``.  The CRF++ tests
train with ``crf_learn -t`` and compare with ``crf_test -v2``'s labels and
marginals; they skip when CRF++ is absent (``pip install crfpy`` installs both
commands).  Shipped seed models (tests/data) are checked against an
independent reference that needs neither library.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import shutil
import struct
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import cseq
from cseq.compat.crfsuite_items import CRFsuiteVocabulary, convert
from cseq.compat.crfpp_model import crfpp_from_bytes
from cseq.compat.crfsuite_model import crfsuite_from_bytes, read_crfsuite
from cseq.io.serialize import loads
from cseq.templates import expand
from support.cli_run import run
from support.shared_data import CONLL2000, needs
from support.crfsuite_peer import train_tagger as _train_crfsuite
from support.paths import DATA

CRFSUITE_SEED = DATA / "crfsuite_small.model"
CRFPP_SEED = DATA / "crfpp_small.model.txt"
#: python-crfsuite's marginals differ from an exact log-space forward-backward by up to
#: 1.3e-8 on the CoNLL-2000 model below (CRFsuite's SSE exp and scaled sums); cseq's agree
#: with that exact computation to 3e-13 (and with path enumeration, below, to 1e-12).
CRFSUITE_TOL = 5e-8
#: crf_test -v2 prints six decimals, from scores summed in float32.
CRFPP_TOL = 1.5e-6

needs_conll = needs(CONLL2000 / "train.txt")


@pytest.fixture(scope="module")
def pycrfsuite():
    return pytest.importorskip("pycrfsuite")


@pytest.fixture(scope="module")
def crfpp():
    """The crf_learn and crf_test commands (``pip install crfpy``), or skip.

    They are looked for beside this Python's own scripts too, where pip puts
    them in a virtual environment that is not on PATH.
    """
    path = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    learn, test = shutil.which("crf_learn", path=path), shutil.which("crf_test", path=path)
    if learn is None or test is None:
        pytest.skip("CRF++ (crf_learn, crf_test) is not installed: pip install crfpy")
    return learn, test


# -- CRFsuite ------------------------------------------------------------------------

def _assert_same_as_tagger(est, tagger, X):
    """Every label and every marginal of ``est`` is python-crfsuite's."""
    assert est.classes_ == tagger.labels()
    pred, marginals = est.predict(X), est.predict_marginals(X)
    worst = 0.0
    for xseq, labels, m in zip(X, pred, marginals):
        assert labels == tagger.tag(xseq)
        ref = np.array([[tagger.marginal(label, t) for label in est.classes_]
                        for t in range(len(xseq))]).reshape(len(xseq), len(est.classes_))
        worst = max(worst, float(np.abs(ref - m).max(initial=0.0)))
    assert worst <= CRFSUITE_TOL
    return pred


def _random_items(rng: random.Random, n: int, numeric: bool):
    """Sequences of items in every python-crfsuite format, some attributes numeric."""
    words = [f"w{i}" for i in range(30)] + ["a:b", "é", "x y"]
    X = []
    for _ in range(n):
        seq = []
        for _ in range(rng.randint(1, 9)):
            kind = rng.random()
            if kind < 0.5:
                item = {"w": rng.choice(words), "suf": rng.choice(words)[-2:],
                        "up": rng.random() < 0.3, "nest": {"p": rng.choice("abc")}}
                if numeric:
                    item["len"] = rng.uniform(-3, 3)
                    item["zero"] = 0.0
            elif kind < 0.8:
                item = [f"w:{rng.choice(words)}", "bias", rng.choice(["f1", "f2", "f1"])]
            else:
                item = {"w": rng.choice(words), "v": rng.choice([0.5, 2.0, -1.0, 7])}
            seq.append(item)
        X.append(seq)
    return X


@pytest.mark.parametrize("seed,numeric,algorithm,params", [
    (0, False, "lbfgs", {"c1": 0.1, "c2": 0.01, "max_iterations": 60}),
    (1, True, "lbfgs", {"c2": 0.5, "max_iterations": 60, "feature.possible_transitions": True,
                        "feature.possible_states": True}),
    (2, True, "l2sgd", {"c2": 0.1, "max_iterations": 20}),
    (3, False, "ap", {"max_iterations": 10}),
])
def test_crfsuite_models_tag_as_python_crfsuite(pycrfsuite, tmp_path, seed, numeric, algorithm,
                                                params):
    rng = random.Random(seed)
    labels = ["A", "B", "C", "D"][:rng.randint(2, 4)]
    X = _random_items(rng, 80, numeric)
    y = [[rng.choice(labels) for _ in xseq] for xseq in X]
    path = tmp_path / "model.crfsuite"
    tagger = _train_crfsuite(pycrfsuite, X, y, path, algorithm, **params)
    est = cseq.from_crfsuite(path)
    # Seen items, unseen ones, and attributes the model does not know (ignored).
    test = X[:40] + _random_items(random.Random(seed + 100), 30, numeric) \
        + [[{"unknown": "x"}, ["never", "seen"]]]
    _assert_same_as_tagger(est, tagger, test)
    assert isinstance(est.featurizer_, CRFsuiteVocabulary)
    assert np.all(est.model_.start == 0) and np.all(est.model_.end == 0)


@needs_conll
def test_crfsuite_conll2000_model(pycrfsuite, tmp_path):
    sents = _conll_sentences(CONLL2000 / "train.txt", 400)
    X = [[_word_features(s, i) for i in range(len(s))] for s in sents]
    y = [[tok[2] for tok in s] for s in sents]
    tagger = _train_crfsuite(pycrfsuite, X[:300], y[:300], tmp_path / "conll.crfsuite",
                             c1=0.1, c2=0.1, max_iterations=50)
    est = cseq.from_crfsuite(tmp_path / "conll.crfsuite")
    pred = _assert_same_as_tagger(est, tagger, X[300:])
    assert np.mean([a == b for p, g in zip(pred, y[300:]) for a, b in zip(p, g)]) > 0.8


def test_crfsuite_model_saves_as_cseq_model(pycrfsuite, tmp_path):
    """Saved and loaded, still python-crfsuite's labels: also where two label paths tie
    exactly (two sequences of these items do), broken as CRFsuite breaks ties."""
    rng = random.Random(5)
    X = _random_items(rng, 40, True)
    y = [[rng.choice("XY") for _ in xseq] for xseq in X]
    tagger = _train_crfsuite(pycrfsuite, X, y, tmp_path / "m.crfsuite", c2=0.1,
                             max_iterations=30)
    est = cseq.from_crfsuite(tmp_path / "m.crfsuite")
    est.save(tmp_path / "m.cseq")
    loaded = cseq.load(tmp_path / "m.cseq")
    assert isinstance(loaded.featurizer_, CRFsuiteVocabulary)
    _assert_same_as_tagger(loaded, tagger, X)
    assert loaded.stop_reason_.startswith("imported from the CRFsuite model")


def test_crfsuite_vocabulary_trains_on_crfsuite_items():
    """As a featurizer of its own, CRFsuiteVocabulary reads items as CRFsuite does."""
    X = [[{"w": "the"}, {"w": "dog"}], [{"w": "a"}, {"w": "cat"}]]
    est = cseq.CRF(c2=0.01, features=CRFsuiteVocabulary()).fit(X, [["D", "N"], ["D", "N"]])
    assert sorted(est.featurizer_.attribute_names()) == ["w:a", "w:cat", "w:dog", "w:the"]
    loaded = loads(est.to_bytes())
    assert isinstance(loaded.featurizer_, CRFsuiteVocabulary)
    assert loaded.predict(X) == [["D", "N"], ["D", "N"]]


def _crfsuite_reference(data: bytes, X):
    """Labels and marginals of every sequence by enumerating every label path."""
    labels, attributes, features = read_crfsuite(data)
    L, index = len(labels), {a: i for i, a in enumerate(attributes)}
    W = np.zeros((len(attributes), L))
    T = np.zeros((L, L))
    for f in features:
        (W if f["type"] == 0 else T)[f["src"], f["dst"]] += f["weight"]
    out = []
    for xseq in convert(X):
        E = np.zeros((len(xseq), L))
        for t, item in enumerate(xseq):
            pairs = item.items() if isinstance(item, dict) else ((a, 1.0) for a in item)
            for a, v in pairs:
                if a in index:
                    E[t] += v * W[index[a]]
        paths = list(itertools.product(range(L), repeat=len(xseq)))
        scores = np.array([sum(E[t, p[t]] for t in range(len(p)))
                           + sum(T[p[t - 1], p[t]] for t in range(1, len(p))) for p in paths])
        prob = np.exp(scores - scores.max())
        prob /= prob.sum()
        marg = np.zeros((len(xseq), L))
        for p, q in zip(paths, prob):
            marg[np.arange(len(p)), list(p)] += q
        out.append(([labels[k] for k in paths[int(np.argmax(scores))]], marg))
    return out


def test_shipped_crfsuite_model_against_path_enumeration():
    """tests/data/crfsuite_small.model (python-crfsuite's) by brute force, without pycrfsuite."""
    X = [[{"w": "the", "len": 3.0}, {"w": "dog", "len": 3.0, "suf": {"s2": "og"}}],
         [["w:a", "bias"], ["w:cat", "bias"], {"w": "dogs", "n": -2.0}], [{"zzz": 1}]]
    est = cseq.from_crfsuite(CRFSUITE_SEED)
    for (labels, marg), pred, m in zip(_crfsuite_reference(CRFSUITE_SEED.read_bytes(), X),
                                       est.predict(X), est.predict_marginals(X)):
        assert pred == labels
        np.testing.assert_allclose(m, marg, atol=1e-12)


def test_crfsuite_reader_refuses_malformed_files(tmp_path):
    data = CRFSUITE_SEED.read_bytes()
    cases = {
        "truncated": data[:-1],
        "header only": data[:48],
        "cseq model": cseq.CRF(max_iter=3).fit([[["a"]]], [["A"]]).to_bytes(),
        "text": b"lCRF" + b"not a model" * 10,
    }
    header = list(struct.unpack_from("<4sI4s9I", data))
    for field, name in [(7, "features"), (8, "labels"), (9, "attributes")]:
        for value in (0, 0xFFFFFFFF, 0x80000000, len(data) - 4):
            changed = header.copy()
            changed[field] = value
            cases[f"{name} offset {value}"] = struct.pack("<4sI4s9I", *changed) + data[48:]
    changed = header.copy()
    changed[5] = 0x7FFFFFFF
    cases["huge label count"] = struct.pack("<4sI4s9I", *changed) + data[48:]
    for bad in cases.values():
        with pytest.raises(cseq.ModelFormatError, match="CRFsuite model"):
            crfsuite_from_bytes(bad)
        (tmp_path / "bad").write_bytes(bad)
        with pytest.raises(cseq.ModelFormatError, match="CRFsuite model"):
            cseq.from_crfsuite(tmp_path / "bad")
    if Path("/dev/zero").exists():   # a device would stream forever
        with pytest.raises(cseq.ModelFormatError, match="not a regular file"):
            cseq.from_crfsuite("/dev/zero")


# -- CRF++ ---------------------------------------------------------------------------

def _conll_sentences(path: Path, n: int) -> list[list[tuple[str, ...]]]:
    sents, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.split()
            if cols:
                cur.append(tuple(cols))
            elif cur:
                sents.append(cur)
                cur = []
                if len(sents) == n:
                    break
    return sents


def _word_features(sent, i):
    word, pos = sent[i][0], sent[i][1]
    feats = {"bias": 1.0, "w": word.lower(), "suf3": word[-3:], "pos": pos,
             "title": word.istitle(), "len": len(word) / 10}
    if i > 0:
        feats["-1"] = {"w": sent[i - 1][0].lower(), "pos": sent[i - 1][1]}
    else:
        feats["BOS"] = True
    if i < len(sent) - 1:
        feats["+1"] = {"w": sent[i + 1][0].lower(), "pos": sent[i + 1][1]}
    return feats


def _write_conll(path: Path, sents) -> None:
    path.write_text("".join("".join("\t".join(tok) + "\n" for tok in s) + "\n" for s in sents),
                    encoding="utf-8")


def _crf_learn(crfpp, tmp_path: Path, template: str, sents, *options: str) -> Path:
    (tmp_path / "template").write_text(template, encoding="utf-8")
    _write_conll(tmp_path / "train.txt", sents)
    subprocess.run([crfpp[0], "-t", *options, str(tmp_path / "template"),
                    str(tmp_path / "train.txt"), str(tmp_path / "model")],
                   check=True, capture_output=True, timeout=300)
    return tmp_path / "model.txt"


def _crf_test(crfpp, model: Path, sents, *options: str):
    """crf_test -v2's labels and marginals (columns in the model's label order)."""
    _write_conll(model.parent / "test.txt", sents)
    out = subprocess.run([crfpp[1], "-v2", *options, "-m", str(model.with_suffix("")),
                          str(model.parent / "test.txt")],
                         check=True, capture_output=True, text=True, timeout=300).stdout
    result, labels, marg = [], [], []
    for line in out.split("\n"):
        if line.startswith("# ") and "\t" not in line:   # "# <probability>", not a '#' token
            continue
        if not line.strip():
            if labels:
                result.append((labels, np.array(marg)))
                labels, marg = [], []
            continue
        cols = line.split("\t")
        n_cols = len(sents[0][0])
        labels.append(cols[n_cols].rsplit("/", 1)[0])
        marg.append([float(c.rsplit("/", 1)[1]) for c in cols[n_cols + 1:]])
    assert len(result) == len(sents)
    return result


def _assert_same_as_crf_test(est, crfpp, model, sents, *options):
    X = [[tok[:-1] for tok in s] for s in sents]   # crf_test reads the gold column too
    worst = 0.0
    for (labels, marg), pred, m in zip(_crf_test(crfpp, model, sents, *options),
                                       est.predict(X), est.predict_marginals(X)):
        assert pred == labels
        worst = max(worst, float(np.abs(marg - m).max()))
    assert worst <= CRFPP_TOL


CHUNK_TEMPLATE = """\
# CRF++'s example/chunking/template
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0]/%x[0,0]
U06:%x[0,0]/%x[1,0]

U10:%x[-2,1]
U11:%x[-1,1]
U12:%x[0,1]
U13:%x[1,1]
U14:%x[2,1]
U15:%x[-2,1]/%x[-1,1]
U16:%x[-1,1]/%x[0,1]
U17:%x[0,1]/%x[1,1]
U18:%x[1,1]/%x[2,1]

U20:%x[-2,1]/%x[-1,1]/%x[0,1]
U21:%x[-1,1]/%x[0,1]/%x[1,1]
U22:%x[0,1]/%x[1,1]/%x[2,1]

B
"""


@needs_conll
def test_crfpp_conll2000_model_tags_as_crf_test(crfpp, tmp_path):
    sents = _conll_sentences(CONLL2000 / "train.txt", 200)
    model = _crf_learn(crfpp, tmp_path, CHUNK_TEMPLATE, sents[:80], "-c", "4", "-f", "2",
                       "-m", "30")
    est = cseq.from_crfpp(model)
    assert est.classes_ == sorted({tok[-1] for s in sents[:80] for tok in s})
    _assert_same_as_crf_test(est, crfpp, model, sents[80:])
    # The estimator keeps the templates: a saved model tags raw columns the same way.
    est.save(tmp_path / "m.cseq")
    X = [[tok[:-1] for tok in s] for s in sents[80:]]
    loaded = cseq.load(tmp_path / "m.cseq")
    assert loaded.predict(X) == est.predict(X)
    assert isinstance(loaded.featurizer_, cseq.TemplateFeaturizer)


RANDOM_TEMPLATE = """\
U00:%x[0,0]
U01:%x[-1,0]/%x[0,0]
U01:%x[-1,0]/%x[0,0]
U02:%x[0,1]%x[1,1]
U03:%x[-3,0]_%x[3,1]
U04:%x[0,0]/%x[0,1]/%x[1,0]
U05:x
U0%x[0,1]
B
B2
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_crfpp_ambiguous_strings_tag_as_crf_test(crfpp, tmp_path, seed):
    """Values holding the templates' separators, adjacent macros, a repeated template, two
    bare B templates and one whose text is a prefix of another's."""
    rng = random.Random(seed)
    words = ["a", "b", "a/b", "b/a", "/", "a_b", "_", "U0x", "ab", "_B-1", "B"]
    tags = ["a", "b", "ab", "/", "a/"]

    def sentence():
        return [(rng.choice(words), rng.choice(tags), rng.choice("XYZ"))
                for _ in range(rng.randint(1, 7))]
    train = [sentence() for _ in range(60)]
    model = _crf_learn(crfpp, tmp_path, RANDOM_TEMPLATE, train, "-c", "2")
    est = cseq.from_crfpp(model)
    _assert_same_as_crf_test(est, crfpp, model, train[:30] + [sentence() for _ in range(30)])


def test_crfpp_cost_factor_is_crf_test_c(crfpp, tmp_path):
    sents = [[("a", "x", "A"), ("b", "y", "B")],
             [("b", "x", "B"), ("a", "y", "A"), ("c", "x", "A")]]
    model = _crf_learn(crfpp, tmp_path, "U0:%x[0,0]\nU1:%x[0,1]/%x[1,0]\nB\n", sents)
    _assert_same_as_crf_test(cseq.from_crfpp(model, cost_factor=2.5), crfpp, model, sents,
                             "-c", "2.5")
    with pytest.raises(cseq.InputError, match="cost_factor"):
        cseq.from_crfpp(model, cost_factor=0)


def test_crfpp_refuses_input_dependent_transitions(crfpp, tmp_path):
    sents = [[("a", "A"), ("b", "B")], [("b", "B"), ("a", "A")]]
    model = _crf_learn(crfpp, tmp_path, "U0:%x[0,0]\nB1:%x[0,0]\n", sents)
    with pytest.raises(cseq.ModelFormatError, match="conditions label transitions on the input"):
        cseq.from_crfpp(model)


def _crfpp_reference(text: str, X):
    """crf_test's labels and marginals by enumerating every label path, from the text alone."""
    blocks = text.split("\n\n")
    labels, templates = blocks[1].split("\n"), blocks[2].split("\n")
    ids = {name: int(fid) for fid, name in (line.split(" ", 1) for line in blocks[3].split("\n"))}
    alpha = np.array([float(w) for w in blocks[4].split()], dtype=np.float32).astype(float)
    L = len(labels)
    unigram = "\n".join(t for t in templates if t.startswith("U"))
    T = sum((alpha[ids[b]:ids[b] + L * L].reshape(L, L) for b in templates
             if b.startswith("B") and b in ids), np.zeros((L, L)))
    out = []
    for sent in X:
        E = np.zeros((len(sent), L))
        for t, names in enumerate(expand(unigram, sent)):
            for name in names:
                if name in ids:
                    E[t] += alpha[ids[name]:ids[name] + L]
        paths = list(itertools.product(range(L), repeat=len(sent)))
        scores = np.array([sum(E[t, p[t]] for t in range(len(p)))
                           + sum(T[p[t - 1], p[t]] for t in range(1, len(p))) for p in paths])
        prob = np.exp(scores - scores.max())
        prob /= prob.sum()
        marg = np.zeros((len(sent), L))
        for p, q in zip(paths, prob):
            marg[np.arange(len(p)), list(p)] += q
        out.append(([labels[k] for k in paths[int(np.argmax(scores))]], marg))
    return out


def test_shipped_crfpp_model_against_path_enumeration():
    """tests/data/crfpp_small.model.txt (crf_learn's) by brute force, without CRF++."""
    X = [[("The", "DT"), ("cat", "NN"), ("sat", "VBD"), ("a/b", "SYM")],
         [("sat", "VBD"), ("a/b", "SYM"), ("The", "DT")], [("sat/a", "VBD"), ("b", "SYM")],
         [("A", "DT")]]
    est = cseq.from_crfpp(CRFPP_SEED)
    assert "U01:sat/a/b" in est.featurizer_.attribute_names()
    for (labels, marg), pred, m in zip(_crfpp_reference(CRFPP_SEED.read_text("utf-8"), X),
                                       est.predict(X), est.predict_marginals(X)):
        assert pred == labels
        np.testing.assert_allclose(m, marg, atol=1e-12)


@pytest.mark.parametrize("edit,match", [
    (lambda t: t.replace("B\n\n", "B01:%x[0,0]\n\n"), "conditions label transitions"),
    (lambda t: t.replace("U00:%x[0,0]", "U00:%x[9,0]"), "rows -8..8"),
    (lambda t: t.replace("U00:%x[0,0]", "U00:%x[0,2]"), "columns 0..1"),
    (lambda t: t.replace("U00:%x[0,0]", "U00:%x[+1,0]"), "not a CRF\\+\\+ macro"),
    (lambda t: t.replace("U00:%x[0,0]", "U00:%x[-0000009,0]"), "rows -8..8"),
    (lambda t: t.replace("U00:%x[0,0]", "U00:%x[" + "1" * 5000 + ",0]"),
     "not a CRF\\+\\+ macro"),
    (lambda t: t.replace("U00:%x[0,0]", "U00:%x[0,0] "), "blanks"),
    (lambda t: t.replace("maxid: 88", "maxid: 87"), "maxid is 87"),
    (lambda t: t.replace("maxid: 88", "maxid: -88"), "maxid"),
    (lambda t: t.replace("68 U00:A", "87 U00:A"), "pass maxid"),
    (lambda t: t.replace("68 U00:A", "-1 U00:A"), "feature id"),
    (lambda t: t.replace("68 U00:A", "68 U00:The"), "listed twice"),
    (lambda t: t.replace("version: 100", "version: 200"), "version"),
    (lambda t: t.replace("xsize: 2\n", ""), "xsize"),
    (lambda t: t.replace("\nB-VP\n", "\nB-NP\n"), "distinct"),
    (lambda t: t.rsplit("\n", 2)[0] + "\nnan\n", "not finite"),
    (lambda t: t.rsplit("\n", 2)[0] + "\n1e999\n", "not finite"),
    (lambda t: t.rsplit("\n", 2)[0] + "\n0x1p3\n", "not a number"),
    (lambda t: t.replace("\n\n", "\n", 1), "5 blocks"),
    (lambda t: t[:len(t) // 2], "maxid|blocks"),
])
def test_crfpp_reader_refuses_malformed_files(tmp_path, edit, match):
    text = CRFPP_SEED.read_text("utf-8")
    bad = edit(text)
    assert bad != text
    (tmp_path / "model.txt").write_text(bad, encoding="utf-8")
    with pytest.raises(cseq.ModelFormatError, match=match):
        cseq.from_crfpp(tmp_path / "model.txt")


def test_crfpp_reader_encoding(tmp_path):
    text = CRFPP_SEED.read_text("utf-8").replace("U00:A\n", "U00:\u00c4\n")
    (tmp_path / "latin1.txt").write_bytes(text.encode("latin-1"))
    with pytest.raises(cseq.ModelFormatError, match="cannot decode"):
        cseq.from_crfpp(tmp_path / "latin1.txt")
    est = cseq.from_crfpp(tmp_path / "latin1.txt", encoding="latin-1")
    assert "U00:\u00c4" in est.featurizer_.attribute_names()
    assert not math.isnan(est.predict_marginals([[("\u00c4", "DT")]])[0].sum())


def _crfpp_text(labels, templates, features, weights, xsize=2):
    return ("version: 100\ncost-factor: 1\nmaxid: {}\nxsize: {}\n\n{}\n\n{}\n\n{}\n\n{}\n".format(
        len(weights), xsize, "\n".join(labels), "\n".join(templates),
        "\n".join(f"{fid} {name}" for fid, name in features),
        "\n".join(map(str, weights)))).encode()


def test_crfpp_reader_bounds_the_label_pair_table():
    """5,000 labels in 30 KB would make a 25M-weight transition table: refused, not allocated."""
    labels = [f"L{i}" for i in range(5000)]
    data = _crfpp_text(labels, ["U0:%x[0,0]"], [(0, "U0:a")], [0.5] * 5000)
    with pytest.raises(cseq.ModelFormatError, match="out of proportion"):
        crfpp_from_bytes(data)
    assert crfpp_from_bytes(_crfpp_text(labels[:50], ["U0:%x[0,0]"], [(0, "U0:a")],
                                        [0.5] * 50)).classes_ == labels[:50]


def test_crfpp_reader_bounds_the_splitting_of_feature_strings():
    """Strings full of a template's separators cannot make the reader take exponential time."""
    template = ["U0:%x[0,0]/%x[0,1]/%x[1,0]#%x[1,1]"]
    data = _crfpp_text(["A", "B"], template, [(0, "U0:" + "a/" * 3000 + "a")], [0.1, 0.2])
    with pytest.raises(cseq.ModelFormatError, match="too many sets of template values"):
        crfpp_from_bytes(data)
    data = _crfpp_text(["A", "B"], template, [(0, "U0:a/b/c#d")], [0.1, 0.2])
    assert crfpp_from_bytes(data).featurizer_.attribute_names() == ["U0:a/b/c#d"]


def test_cli_import_then_tag(tmp_path):
    """``cseq import crfpp`` writes a model that ``cseq tag`` applies to CoNLL columns."""
    r = run("import", "crfpp", CRFPP_SEED, "-o", tmp_path / "m.cseq")
    assert r.returncode == 0, r.stderr
    (tmp_path / "test.txt").write_text("The DT\ncat NN\nsat VBD\n\nA DT\n", encoding="utf-8")
    r = run("tag", tmp_path / "m.cseq", tmp_path / "test.txt")
    assert r.returncode == 0, r.stderr
    tagged = [line.split("\t")[-1] for line in r.stdout.split("\n") if line.strip()]
    X = [[("The", "DT"), ("cat", "NN"), ("sat", "VBD")], [("A", "DT")]]
    assert tagged == [label for labels in cseq.from_crfpp(CRFPP_SEED).predict(X)
                      for label in labels]
    r = run("import", "crfsuite", CRFSUITE_SEED, "-o", tmp_path / "s.cseq")
    assert r.returncode == 0 and "3 labels" in r.stdout, r.stderr
    assert isinstance(cseq.load(tmp_path / "s.cseq").featurizer_, CRFsuiteVocabulary)
    r = run("import", "crfsuite", CRFPP_SEED, "-o", tmp_path / "x.cseq")
    assert r.returncode == 1 and "cseq import: error: CRFsuite model" in r.stderr
    assert not (tmp_path / "x.cseq").exists()
