"""Estimator-level constraints and n-best lists.

``predict(X, constraints=..., fixed=...)``, ``predict_marginals`` and
``predict_nbest`` of every chain learner (CRF, perceptron, SSVM at first and
second order, HMM, MEMM) against enumeration of every labeling of small test
sentences.  The reference score of a labeling comes from code that does not
decode: ``sequence_log_prob`` for the probabilistic models, and the oracle's
term-by-term path score on the model's weights for the others.  Then the
chunk-scheme rules (IOB2, IOB1, BIOES), the input checks, and the
acceptance test on WNUT-17.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import cseq
from cseq.conll import read_conll
from cseq.decoding import scheme_constraints
from cseq.exceptions import InputError, InputTypeError
from cseq.metrics import chunk_f1

from support.oracle import path_score, sequence_emissions, split_params, trans2_of
from support.registered import commands, quick, reads_words
from support.shared_data import WNUT17, needs

pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def train_data():
    rng = np.random.default_rng(0)
    words = ["john", "smith", "paris", "in", "went", "to", "new", "york", "the"]
    X, y = [], []
    for _ in range(30):
        n = int(rng.integers(1, 6))
        X.append([[f"w={words[int(rng.integers(len(words)))]}", "bias"] for _ in range(n)])
        y.append([LABELS[int(rng.integers(len(LABELS)))] for _ in range(n)])
    return X, y


TEST_X = [[["w=john"], ["w=smith"], ["w=in"]], [["w=paris"]], [["w=to"], ["w=new"], ["w=york"]],
          [["w=the"], ["w=york"]]]

#: Every registered learner whose model decodes a chain score (its model class's
#: ``chain_scores``: constraints and n-best lists), with its quick settings, and two
#: at order 2.
ESTIMATORS = {
    **{name: lambda name=name: quick(name)
       for name in commands(lambda command: command.estimator._model_class.chain_scores)},
    "crf2": lambda: cseq.CRF(max_iter=20, order=2),
    "perceptron2": lambda: cseq.StructuredPerceptron(max_iter=3, random_state=0, order=2),
}


@pytest.fixture(scope="module", params=sorted(ESTIMATORS))
def fitted(request):
    X, y = train_data()
    est = ESTIMATORS[request.param]()
    if reads_words(type(est)):
        X = [[tok[0][2:] for tok in s] for s in X]
    est.fit(X, y)
    return request.param, est


def inputs_for(est):
    return [[tok[0][2:] for tok in s] for s in TEST_X] if reads_words(type(est)) else TEST_X


def reference_scores(est, x):
    """Every labeling of ``x`` (a tuple of label names) with its score, not by decoding."""
    classes = [str(c) for c in est.classes_]
    L = len(classes)
    labelings = list(itertools.product(classes, repeat=len(x)))
    if est.model_.probabilistic:
        scores = est.sequence_log_prob([x] * len(labelings), [list(p) for p in labelings])
        return labelings, np.asarray(scores)
    model = est.model_
    corpus = est.featurizer_.transform([x])
    E = sequence_emissions(model.params, model.attr_ptr, model.attr_labels, L, corpus, 0)
    _, T, start, end = split_params(model.params, model.n_state, L)
    T2 = trans2_of(model.params, model.n_state, L) if model.order == 2 else None
    ids = {c: i for i, c in enumerate(classes)}
    scores = [path_score(E, T, start, end, [ids[a] for a in p], T2) for p in labelings]
    return labelings, np.asarray(scores)


def bio_ok(labels) -> bool:
    """IOB2 validity, read off the rule: I-X only after B-X or I-X; never first."""
    prev = "O"
    for lab in labels:
        if lab.startswith("I-") and prev[2:] != lab[2:]:
            return False
        prev = lab
    return True


FIXED = [{1: "I-PER"}, None, {0: {"O", "B-LOC"}}, {1: ["I-LOC", "B-PER"]}]


def fixed_ok(labels, entry) -> bool:
    if entry is None:
        return True
    for pos, value in entry.items():
        allowed = {value} if isinstance(value, str) else set(value)
        if labels[pos] not in allowed:
            return False
    return True


@pytest.mark.parametrize("use_fixed", [False, True])
def test_constrained_predict_nbest_and_marginals_match_enumeration(fitted, use_fixed):
    _, est = fitted
    X = inputs_for(est)
    fixed = FIXED if use_fixed else None
    pred = est.predict(X, constraints="bio", fixed=fixed)
    nbest = est.predict_nbest(X, k=7, constraints="bio", fixed=fixed)
    plain_nbest = est.predict_nbest(X, k=4)
    marg = est.predict_marginals(X, constraints="bio", fixed=fixed) \
        if est.model_.probabilistic else None
    classes = [str(c) for c in est.classes_]
    for s, x in enumerate(X):
        labelings, scores = reference_scores(est, x)
        entry = fixed[s] if fixed else None
        keep = np.array([bio_ok(p) and fixed_ok(p, entry) for p in labelings])
        ok_lab = [p for p, k in zip(labelings, keep) if k]
        ok_sc = scores[keep]
        tol = 1e-9 * (1 + np.abs(scores).max())
        best = ok_sc.max()
        # predict: an allowed labeling of the best allowed score.
        assert bio_ok(pred[s]) and fixed_ok(pred[s], entry)
        assert ok_sc[ok_lab.index(tuple(pred[s]))] >= best - tol
        # predict_nbest: the 7 best allowed labelings, best first.
        r = nbest[s]
        order = np.argsort(-ok_sc, kind="stable")
        want = ok_sc[order][:7]
        assert len(r.labels) == len(want)
        got = np.array([ok_sc[ok_lab.index(tuple(p))] for p in r.labels])
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)
        assert len({tuple(p) for p in r.labels}) == len(r.labels)
        if est.model_.probabilistic:
            np.testing.assert_allclose(r.log_probs, got, rtol=0, atol=tol)
            # Unconstrained: the 4 best of all labelings, with log-probabilities.
            allw = np.sort(scores)[::-1][:4]
            np.testing.assert_allclose(plain_nbest[s].log_probs, allw, rtol=0, atol=tol)
            # Constrained marginals: P(y_t = j | allowed), exactly 0 where disallowed.
            prob = np.exp(ok_sc - ok_sc.max())
            prob /= prob.sum()
            want_m = np.zeros((len(x), len(classes)))
            for p, pr in zip(ok_lab, prob):
                for t, lab in enumerate(p):
                    want_m[t, classes.index(lab)] += pr
            np.testing.assert_allclose(marg[s], want_m, rtol=0, atol=1e-9)
            assert (marg[s][want_m == 0] == 0).all()
        else:
            assert r.log_probs is None
            np.testing.assert_allclose(r.scores, got, rtol=0, atol=tol)
        assert plain_nbest[s].labels[0] == est.predict([x])[0]


def test_transition_matrix_constraints_and_errors(fitted):
    _, est = fitted
    X = inputs_for(est)
    L = len(est.classes_)
    ids = {str(c): i for i, c in enumerate(est.classes_)}
    # Only self-transitions allowed: every prediction is one label repeated.
    pred = est.predict(X, constraints=np.eye(L, dtype=bool))
    assert all(len(set(p)) <= 1 for p in pred)
    forced = est.predict(X, constraints=np.eye(L, dtype=bool), fixed=[{0: "B-LOC"}, None, None,
                                                                        None])
    assert forced[0] == ["B-LOC"] * len(X[0])
    with pytest.raises(InputError, match="sequence 0: the constraints allow no label path"):
        est.predict(X, constraints=np.eye(L, dtype=bool), fixed=[{0: "O", 1: "B-PER"}, None,
                                                                   None, None])
    with pytest.raises(InputError, match="no label path"):
        est.predict_nbest(X, constraints="bio", fixed=[None, {0: "I-PER"}, None, None])
    with pytest.raises(InputError, match="not a label of the model"):
        est.predict(X, fixed=[{0: "B-ORG"}, None, None, None])
    with pytest.raises(InputError, match="position 3 is not in 0..2"):
        est.predict(X, fixed=[{3: "O"}, None, None, None])
    with pytest.raises(InputError, match="fixed has 1 entries for 4 sequences"):
        est.predict(X, fixed=[None])
    with pytest.raises(InputTypeError, match="one entry"):
        est.predict(X, fixed={0: "O"})
    with pytest.raises(InputError, match="constraints must be one of"):
        est.predict(X, constraints="bilou")
    with pytest.raises(InputError, match=r"constraints has shape"):
        est.predict(X, constraints=np.ones((L + 1, L + 1), bool))
    with pytest.raises(InputError, match="k must be a positive int"):
        est.predict_nbest(X, k=0)
    assert ids  # the labels exist by name


def test_greedy_tagger_refuses():
    X, y = train_data()
    est = cseq.GreedyTagger(max_iter=2).fit(X, y)
    with pytest.raises(InputError, match="does not decode a chain score"):
        est.predict(X, constraints="bio")
    with pytest.raises(InputError, match="does not decode a chain score"):
        est.predict_nbest(X, k=2)
    assert est.predict(X) == est.predict(X, constraints=None, fixed=None)


# ---------------------------------------------------------------------------
# Chunk schemes


def allowed_by(rules, labels, seq) -> bool:
    trans, start, end = rules
    ids = {lab: i for i, lab in enumerate(labels)}
    p = [ids[a] for a in seq]
    return bool(start[p[0]] and end[p[-1]] and all(trans[a, b] for a, b in zip(p, p[1:])))


def test_iob2_rules():
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    rules = scheme_constraints(labels, "iob2")
    assert rules[0].sum() == 25 - 6  # I-PER after O, B-LOC, I-LOC; I-LOC after O, B-PER, I-PER
    for seq, ok in [(["O", "I-PER"], False), (["B-PER", "I-LOC"], False), (["I-PER"], False),
                    (["B-PER", "I-PER", "I-PER", "O"], True), (["B-LOC", "B-PER", "I-PER"], True),
                    (["I-LOC", "I-LOC"], False), (["B-PER"], True)]:
        assert allowed_by(rules, labels, seq) == ok, seq
    assert all(np.array_equal(a, b) for a, b in zip(rules, scheme_constraints(labels, "bio")))


def test_iob1_rules():
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    rules = scheme_constraints(labels, "iob1")
    for seq, ok in [(["I-PER", "I-PER"], True), (["O", "I-PER"], True), (["I-PER", "B-PER"], True),
                    (["O", "B-PER"], False), (["B-PER"], False), (["I-LOC", "B-PER"], False),
                    (["I-PER", "I-LOC"], True), (["I-PER", "B-PER", "B-PER"], True),
                    (["B-PER", "B-PER"], False)]:
        assert allowed_by(rules, labels, seq) == ok, seq


def test_bioes_rules():
    labels = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "E-LOC", "S-LOC"]
    rules = scheme_constraints(labels, "bio")  # detected from E-/S-
    for seq, ok in [(["B-PER", "E-PER"], True), (["B-PER", "I-PER", "E-PER", "S-LOC"], True),
                    (["S-PER", "O"], True), (["B-PER"], False), (["B-PER", "O"], False),
                    (["I-PER", "E-PER"], False), (["E-PER"], False), (["B-PER", "E-LOC"], False),
                    (["O", "I-PER", "E-PER"], False), (["E-PER", "B-LOC", "E-LOC"], False),
                    (["S-PER", "B-LOC", "E-LOC"], True), (["B-PER", "I-PER"], False)]:
        assert allowed_by(rules, labels, seq) == ok, seq
    assert all(np.array_equal(a, b)
               for a, b in zip(rules, scheme_constraints(labels, "iobes")))


def test_scheme_errors():
    with pytest.raises(InputError, match="needs chunk labels"):
        scheme_constraints(["NOUN", "VERB"], "bio")
    with pytest.raises(InputError, match="not valid in scheme"):
        scheme_constraints(["O", "E-PER"], "iob2")


# ---------------------------------------------------------------------------
# Acceptance: WNUT-17


def wnut_features(words):
    feats = []
    for i, w in enumerate(words):
        low = w.lower()
        feats.append(["bias", f"w={low}", f"suf3={low[-3:]}", f"cap={w[:1].isupper()}",
                      f"prev={words[i - 1].lower() if i else '<s>'}",
                      f"next={words[i + 1].lower() if i + 1 < len(words) else '</s>'}"])
    return feats


@needs(WNUT17 / "wnut17train.conll", WNUT17 / "emerging.dev.conll")
def test_wnut17_bio_constraints_never_emit_invalid_sequences_and_keep_f1():
    rows, y = read_conll(WNUT17 / "wnut17train.conll")
    dev_rows, y_dev = read_conll(WNUT17 / "emerging.dev.conll")
    X = [wnut_features([r[0] for r in s]) for s in rows]
    X_dev = [wnut_features([r[0] for r in s]) for s in dev_rows]
    est = cseq.StructuredPerceptron(max_iter=5, random_state=0).fit(X, y)
    plain = est.predict(X_dev)
    bio = est.predict(X_dev, constraints="bio")
    assert all(bio_ok(p) for p in bio)
    assert chunk_f1(y_dev, bio) >= chunk_f1(y_dev, plain)
    assert chunk_f1(y_dev, bio) > 0.1
    # The same model without its transition, start and end weights (a
    # per-token classifier) does emit invalid sequences; the constraints
    # repair all of them, and the F1 does not drop.
    est.model_.params[est.model_.n_state:] = 0.0
    plain = est.predict(X_dev)
    bio = est.predict(X_dev, constraints="bio")
    assert sum(not bio_ok(p) for p in plain) > 10
    assert all(bio_ok(p) for p in bio)
    assert chunk_f1(y_dev, bio) >= chunk_f1(y_dev, plain)


# ---------------------------------------------------------------------------
# The command line: cseq tag --nbest K, --constraints


def test_cli_tag_nbest_and_constraints(tmp_path):
    import json

    from support.cli_run import TRAIN, run
    train = tmp_path / "train.txt"
    train.write_text(TRAIN)
    model_path = tmp_path / "m.cseq"
    assert run("train", train, "--template", "chunk", "-o", model_path).returncode == 0
    inp = tmp_path / "in.txt"
    inp.write_text("The DT\ndog NN\nsleeps VBZ\n\nA DT\nbarks VBZ\n\n")
    est = cseq.load(model_path)
    X = [[("The", "DT"), ("dog", "NN"), ("sleeps", "VBZ")], [("A", "DT"), ("barks", "VBZ")]]
    want = est.predict_nbest(X, k=3)
    r = run("tag", model_path, inp, "--nbest", "3")
    assert r.returncode == 0, r.stderr
    blocks = [b.splitlines() for b in r.stdout.strip("\n").split("\n\n")]
    assert len(blocks) == 2
    for block, x, res in zip(blocks, X, want):
        rows = [line.split("\t") for line in block]
        assert [tuple(row[:2]) for row in rows] == x
        assert all(len(row) == 2 + 3 for row in rows)
        for i, labels in enumerate(res.labels):
            assert [row[2 + i] for row in rows] == labels
    r = run("tag", model_path, inp, "--nbest", "2", "--output-format", "jsonl")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    for rec, res in zip(records, est.predict_nbest(X, k=2)):
        assert rec["labels"] == res.labels[0]
        assert [e["labels"] for e in rec["nbest"]] == res.labels
        assert [e["score"] for e in rec["nbest"]] == pytest.approx(res.scores, abs=1e-6)
        assert [e["log_prob"] for e in rec["nbest"]] == pytest.approx(res.log_probs, abs=1e-6)
    # More labelings asked for than a sentence has: '_' fills the columns.
    r = run("tag", model_path, inp, "--nbest", "20")
    last = r.stdout.strip("\n").split("\n\n")[1].splitlines()[0].split("\t")
    assert len(last) == 22 and last[2 + 16:] == ["_"] * 4 and "_" not in last[:18]
    r = run("tag", model_path, inp, "--constraints", "bio")
    assert r.returncode == 0, r.stderr
    got = [[line.split("\t")[2] for line in b.splitlines()]
           for b in r.stdout.strip("\n").split("\n\n")]
    assert got == est.predict(X, constraints="bio")
    r = run("tag", model_path, inp, "--constraints", "bio", "--nbest", "4")
    assert r.returncode == 0, r.stderr
    cols = [line.split("\t")[2:] for line in r.stdout.strip("\n").split("\n\n")[0].splitlines()]
    assert [[c[i] for c in cols] for i in range(4)] == est.predict_nbest(
        X[:1], k=4, constraints="bio")[0].labels
    for args, message in [(("--nbest", "2", "--marginals"), "do not combine"),
                          (("--nbest", "0"), "must be at least 1"),
                          (("--constraints", "bilou"), "invalid choice")]:
        r = run("tag", model_path, inp, *args)
        assert r.returncode != 0 and message in r.stderr, r.stderr
