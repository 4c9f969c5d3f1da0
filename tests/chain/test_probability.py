"""Sequence log-probabilities, confidences, entropies and span marginals against enumeration.

Every reference enumerates all ``L ** n`` label paths (``tests/support/oracle.py``):
``log P(y) = score(y) - logsumexp(scores)`` for a CRF or an HMM, the sum of the
local log-probabilities for a MEMM; the entropy is ``-sum_y P(y) log P(y)``;
a span's probability is the total probability of the paths that have the
span's labels and no continuing label after it.
"""

from __future__ import annotations

import math
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cseq
from cseq.chain import _forward_backward
from cseq import probability
from cseq.chain.normalized import GlobalChain
from cseq.exceptions import InputError
from cseq.learners.memm import LocalChain

from support.budget import examples
from support.oracle import (all_path_scores, all_paths, brute_log_z, brute_marginals, brute_memm,
                    brute_pair_marginals, brute_triple_marginals, logsumexp)
from support.registered import commands, quick, reads_words
from support.strategies import chains

pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

_unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def chains12(draw, max_n: int = 5, max_labels: int = 4):
    """A dense chain ``(E, T, start, end, T2)``; ``T2`` is None (first order) half the time."""
    E, T, start, end = draw(chains(max_n=max_n, max_labels=max_labels, with_start_end=True))
    if draw(st.booleans()):
        return E, T, start, end, None
    L = E.shape[1]
    exponent = draw(st.one_of(st.floats(-3.0, 2.0), st.floats(2.5, 4.0)))
    T2 = draw(hnp.arrays(np.float64, (L, L, L), elements=_unit)) * 10.0 ** exponent
    return E, T, start, end, T2


def magnitude(E, T, start, end, T2) -> float:
    n = E.shape[0]
    side = max(np.abs(T).max(), np.abs(start).max(), np.abs(end).max(),
               0.0 if T2 is None else np.abs(T2).max())
    return 1.0 + n * float(np.abs(E).max()) + 2 * (n + 1) * float(side)


def brute_log_probs(E, T, start, end, T2):
    """Every path and its log-probability, by enumeration."""
    paths, scores = all_path_scores(E, T, start, end, T2)
    return paths, scores - logsumexp(scores)


def brute_entropy(logp) -> float:
    p = np.exp(logp)
    return float(-sum(pi * lp for pi, lp in zip(p, logp) if pi > 0))


def brute_run(paths, logp, begin, run, next_not) -> float:
    """Total probability of the paths with ``run`` at ``begin`` and no ``next_not`` label after."""
    total = 0.0
    m = len(run)
    for path, lp in zip(paths, logp):
        if list(path[begin:begin + m]) != list(run):
            continue
        if begin + m < len(path) and path[begin + m] in next_not:
            continue
        total += math.exp(lp)
    return total


# ---------------------------------------------------------------------------
# the array API


@examples(120)
@given(chains12(), st.data())
def test_path_log_prob_is_score_minus_log_z(chain, data):
    E, T, start, end, T2 = chain
    n, L = E.shape
    paths, logp = brute_log_probs(*chain)
    mag = magnitude(*chain)
    k = data.draw(st.integers(0, len(paths) - 1))
    got = probability.path_log_prob(E, T, paths[k], start, end, transitions2=T2)
    assert got <= 0.0
    assert got == pytest.approx(min(logp[k], 0.0), rel=0, abs=1e-10 * mag)


@examples(150)
@given(chains12())
def test_forward_backward_sums_match_enumeration(chain):
    # The kernel behind the entropy: the pair (and trigram) marginals summed
    # over the positions, exactly as forward_backward_array's per-position
    # ones sum (the entropy is the same to the last bit either way).
    E, T, start, end, T2 = chain
    n, L = E.shape
    got = _forward_backward.forward_backward_sums(E, T, start, end, T2)
    full = _forward_backward.forward_backward_array(E, T, start, end, T2)
    assert len(got) == len(full) == (3 if T2 is None else 4)
    assert got[0] == full[0]
    np.testing.assert_array_equal(got[1], full[1])
    assert got[2].shape == (L, L)
    np.testing.assert_array_equal(got[2], full[2].sum(axis=0))
    mag = magnitude(*chain)
    atol = 1e-9 + 1e-13 * mag
    assert got[0] == pytest.approx(brute_log_z(E, T, start, end, T2), rel=0, abs=1e-10 * mag)
    np.testing.assert_allclose(got[1], brute_marginals(E, T, start, end, T2), rtol=0, atol=atol)
    np.testing.assert_allclose(got[2], brute_pair_marginals(E, T, start, end, T2).sum(axis=0),
                               rtol=0, atol=n * atol)
    if T2 is not None:
        assert got[3].shape == (L, L, L)
        np.testing.assert_array_equal(got[3], full[3].sum(axis=0))
        np.testing.assert_allclose(
            got[3], brute_triple_marginals(E, T, start, end, T2).sum(axis=0), rtol=0,
            atol=n * atol)
        return
    # with_beta: the posterior's transitions P(y_{t+1} | y_t) from the
    # backward messages (what span probabilities read), against enumeration.
    log_z, marg, pair_sum, log_beta = _forward_backward.forward_backward_sums(
        E, T, start, end, None, True)
    assert log_beta.shape == (n, L) and (log_z, marg.tolist()) == (got[0], got[1].tolist())
    pairs = brute_pair_marginals(E, T, start, end)
    for t in range(n - 1):
        z = T + E[t + 1] + log_beta[t + 1]
        cond = np.exp(z - z.max(axis=1, keepdims=True))
        cond /= cond.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(marg[t][:, None] * cond, pairs[t], rtol=0, atol=atol)


@examples(120)
@given(chains12())
def test_chain_entropy_is_minus_sum_p_log_p(chain):
    E, T, start, end, T2 = chain
    n, L = E.shape
    _, logp = brute_log_probs(*chain)
    got = probability.chain_entropy(E, T, start, end, transitions2=T2)
    assert 0.0 <= got <= n * math.log(L) + 1e-9
    assert got == pytest.approx(brute_entropy(logp), rel=1e-7, abs=1e-9 + 1e-12 * magnitude(*chain))


@examples(150)
@given(chains12(), st.data())
def test_span_probability_matches_enumeration(chain, data):
    E, T, start, end, T2 = chain
    n, L = E.shape
    paths, logp = brute_log_probs(*chain)
    begin = data.draw(st.integers(0, n - 1))
    m = data.draw(st.integers(1, n - begin))
    # A piece of one of the most probable paths (a random run is often
    # improbable to 0 when scores are large), or now and then a random one.
    order = np.argsort(-logp, kind="stable")
    path = paths[order[data.draw(st.integers(0, min(3, len(paths) - 1)))]]
    run = path[begin:begin + m].tolist()
    if data.draw(st.integers(0, 4)) == 0:
        run = data.draw(st.lists(st.integers(0, L - 1), min_size=m, max_size=m))
    nxt = [int(path[begin + m])] if begin + m < n and data.draw(st.booleans()) else []
    next_not = sorted(set(nxt + data.draw(st.lists(st.integers(0, L - 1), max_size=2))))
    got = probability.span_probability(E, T, begin, run, next_not=next_not, start=start,
                                       end=end, transitions2=T2)
    want = brute_run(paths, logp, begin, run, next_not)
    assert 0.0 <= got <= 1.0
    assert got == pytest.approx(want, rel=1e-7, abs=1e-9 + 1e-13 * magnitude(*chain))


def test_array_functions_on_a_uniform_chain():
    # Two labels, three positions, all scores 0: 8 equally likely paths.
    E, T = np.zeros((3, 2)), np.zeros((2, 2))
    assert probability.path_log_prob(E, T, [0, 1, 1]) == pytest.approx(math.log(1 / 8))
    assert probability.chain_entropy(E, T) == pytest.approx(3 * math.log(2))
    # Label 0 at 1 and then not 0 at 2: 2 * 1 * 1 of 8 paths.
    assert probability.span_probability(E, T, 1, [0], next_not=[0]) == pytest.approx(0.25)
    assert probability.span_probability(E, T, 1, [0, 1]) == pytest.approx(0.25)
    assert probability.path_log_prob(np.zeros((0, 2)), T, []) == 0.0
    assert probability.chain_entropy(np.zeros((0, 2)), T) == 0.0


@pytest.mark.parametrize("begin, labels, next_not, match", [
    (0, [], (), "at least one"),
    (2, [0, 0], (), "does not fit"),
    (-1, [0], (), "does not fit"),
    (0, [2], (), "label ids in 0..1"),
    (0, [0], [5], "label ids in 0..1"),
    (0, "ab", (), "sequence of label ids"),
    (0.5, [0], (), "begin must be an int"),
    (True, [0], (), "begin must be an int"),
])
def test_span_probability_refuses_bad_spans(begin, labels, next_not, match):
    with pytest.raises(InputError, match=match):
        probability.span_probability(np.zeros((3, 2)), np.zeros((2, 2)), begin, labels,
                                     next_not=next_not)


def test_path_log_prob_refuses_a_bad_path():
    with pytest.raises(InputError):
        probability.path_log_prob(np.zeros((3, 2)), np.zeros((2, 2)), [0, 1])
    with pytest.raises(InputError):
        probability.path_log_prob(np.zeros((2, 2)), np.zeros((2, 2)), [0, 2])


# ---------------------------------------------------------------------------
# estimators

LABELS = ["B-PER", "I-PER", "B-LOC", "I-LOC", "O"]
TRAIN_X = [[["w=Ann"], ["w=Lee"], ["w=in"], ["w=Paris"]],
           [["w=Bob"], ["w=went"], ["w=to"], ["w=New"], ["w=York"]],
           [["w=in"], ["w=Rome"]]]
TRAIN_Y = [["B-PER", "I-PER", "O", "B-LOC"],
           ["B-PER", "O", "O", "B-LOC", "I-LOC"],
           ["O", "B-LOC"]]
QUERY_X = [[["w=Ann"], ["w=went"], ["w=New"], ["w=York"]], [], [["w=Lee"]],
           [["w=Rome"], ["w=Bob"], ["w=zzz"]]]


def _words(X):
    return [[tok[0][2:] for tok in seq] for seq in X]


#: Every registered learner whose model defines probabilities (its model class's
#: ``probabilistic``), briefly fitted (the tests draw its weights), and the CRF at
#: order 2.
LEARNERS = {
    **{name: lambda name=name: quick(name, max_iter=3)
       for name in commands(lambda command: command.estimator._model_class.probabilistic)},
    "crf-order2": lambda: cseq.CRF(max_iter=3, order=2),
}


def _fitted(name: str, seed: int | None, scale: float = 1.0):
    est = LEARNERS[name]()
    X = _words(TRAIN_X) if reads_words(type(est)) else TRAIN_X
    est.fit(X, TRAIN_Y)
    assert est.classes_ == sorted(LABELS)
    if seed is not None:
        rng = np.random.default_rng(seed)
        est.model_.params = rng.normal(size=est.model_.params.shape) * scale
    return est


def _query(est):
    return _words(QUERY_X) if reads_words(type(est)) else QUERY_X


def _brute(est, x):
    """Every path of one sequence and its log-probability under the estimator's model
    (globally or locally normalised: the two kinds of probabilistic chains)."""
    model = est.model_
    corpus = est.featurizer_.transform([x])
    E = model.emissions(corpus, 0, corpus.n_tokens)
    if isinstance(model, LocalChain):
        paths, logp, _ = brute_memm(E, model.transitions, model.start)
        return paths, logp
    return brute_log_probs(E, model.transitions, model.start, model.end, model.trans2)


@pytest.mark.parametrize("name", list(LEARNERS))
@examples(12)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.1, 1.0, 5.0]))
def test_estimator_probabilities_match_enumeration(name, seed, scale):
    est = _fitted(name, seed, scale)
    X = _query(est)
    classes = est.classes_
    ids = {c: i for i, c in enumerate(classes)}
    pred = est.predict(X)
    rng = np.random.default_rng(seed)
    given_y = [[classes[k] for k in rng.integers(0, len(classes), len(x))] for x in X]
    logp = est.sequence_log_prob(X, given_y)
    entropy = est.sequence_entropy(X)
    conf = est.predict_confidence(X)
    tagged = probability.annotate(est, X)
    spans = [[(typ, i, j) for typ in ("PER", "LOC") for i in range(len(x))
              for j in range(i + 1, len(x) + 1)] for x in X]
    span_p = est.span_marginals(X, spans)
    for s, x in enumerate(X):
        assert tagged[s].labels == pred[s]
        if not x:
            assert logp[s] == 0.0 and entropy[s] == 0.0 and len(conf[s]) == 0
            assert tagged[s].spans == [] and len(span_p[s]) == 0
            continue
        paths, lp = _brute(est, x)
        index = {tuple(p): k for k, p in enumerate(paths.tolist())}
        k = index[tuple(ids[c] for c in given_y[s])]
        assert logp[s] == pytest.approx(lp[k], rel=1e-9, abs=1e-9)
        k = index[tuple(ids[c] for c in pred[s])]
        assert tagged[s].log_prob == pytest.approx(lp[k], rel=1e-9, abs=1e-9)
        assert entropy[s] == pytest.approx(brute_entropy(lp), rel=1e-9, abs=1e-9)
        assert tagged[s].entropy == entropy[s]
        marg = np.zeros((len(x), len(classes)))
        for path, v in zip(paths, lp):
            marg[np.arange(len(x)), path] += math.exp(v)
        want_conf = marg[np.arange(len(x)), [ids[c] for c in pred[s]]]
        np.testing.assert_allclose(conf[s], want_conf, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(tagged[s].confidence, want_conf, rtol=1e-9, atol=1e-12)
        for (typ, i, j), got in zip(spans[s], span_p[s]):
            run = [ids[f"B-{typ}"]] + [ids[f"I-{typ}"]] * (j - i - 1)
            want = brute_run(paths, lp, i, run, [ids[f"I-{typ}"]])
            assert got == pytest.approx(want, rel=1e-8, abs=1e-12), (typ, i, j)
        want_spans = cseq.metrics.chunks(pred[s], "iob2")
        assert [sp[:3] for sp in tagged[s].spans] == want_spans
        for typ, i, j, p in tagged[s].spans:
            run = [ids[c] for c in pred[s][i:j]]
            assert p == pytest.approx(brute_run(paths, lp, i, run, [ids[f"I-{typ}"]]),
                                      rel=1e-8, abs=1e-12)
    assert est.predict_spans(X) == [t.spans for t in tagged]


@pytest.mark.parametrize("name", list(LEARNERS))
def test_probabilities_sum_to_one_over_all_labelings(name):
    est = _fitted(name, None)
    x = _query(est)[0]
    classes = est.classes_
    ys = [[classes[k] for k in path] for path in all_paths(len(x), len(classes))]
    logp = est.sequence_log_prob([x] * len(ys), ys)
    assert np.exp(logp).sum() == pytest.approx(1.0, rel=1e-9)
    assert (logp <= 0).all()


def test_hmm_probabilities_are_those_of_the_joint_model():
    # P(y | x) = P(x, y) / P(x): the HMM's scores are log P(x, y) (up to a
    # label-independent constant for unknown words).
    est = _fitted("hmm", None)
    x = _words(QUERY_X)[0]
    corpus = est.featurizer_.transform([x])
    E = est.model_.emissions(corpus, 0, corpus.n_tokens)
    m = est.model_
    paths, scores = all_path_scores(E, m.transitions, m.start, m.end)
    want = scores - logsumexp(scores)
    ys = [[est.classes_[k] for k in p] for p in paths]
    np.testing.assert_allclose(est.sequence_log_prob([x] * len(ys), ys), want, rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(
        est.predict_confidence([x])[0],
        brute_marginals(E, m.transitions, m.start, m.end)[np.arange(len(x)), [
            est.classes_.index(c) for c in est.predict([x])[0]]], rtol=1e-9, atol=1e-12)


def test_memm_sequence_log_proba_is_sequence_log_prob():
    est = _fitted("memm", 3)
    X, y = QUERY_X, [["O"] * len(x) for x in QUERY_X]
    np.testing.assert_array_equal(est.sequence_log_proba(X, y), est.sequence_log_prob(X, y))


def test_bioes_spans_match_enumeration():
    y = [["S-PER", "O", "B-LOC", "E-LOC"], ["B-LOC", "I-LOC", "E-LOC", "O"]]
    X = [[["a"], ["b"], ["c"], ["d"]], [["c"], ["e"], ["d"], ["b"]]]
    est = cseq.CRF(max_iter=3).fit(X, y)
    est.model_.params = np.random.default_rng(7).normal(size=est.model_.params.shape)
    ids = {c: i for i, c in enumerate(est.classes_)}
    spans = [("PER", 0, 1), ("LOC", 1, 3), ("LOC", 0, 4), ("PER", 1, 3)]
    got = est.span_marginals(X[:1], [spans])[0]
    paths, lp = _brute(est, X[0])
    want = [brute_run(paths, lp, 0, [ids["S-PER"]], []),
            brute_run(paths, lp, 1, [ids["B-LOC"], ids["E-LOC"]], []),
            brute_run(paths, lp, 0, [ids["B-LOC"], ids["I-LOC"], ids["I-LOC"], ids["E-LOC"]],
                      []),
            0.0]  # the model has no B-PER / E-PER: probability 0
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)
    assert got[0] > 0 and got[1] > 0
    for _typ, i, j, p in est.predict_spans(X)[0]:
        run = [ids[c] for c in est.predict(X)[0][i:j]]
        assert p == pytest.approx(brute_run(paths, lp, i, run, []), rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("est", [cseq.StructuredPerceptron(max_iter=2),
                                 cseq.StructuredSVM(max_iter=2),
                                 cseq.GreedyTagger(max_iter=2),
                                 cseq.PassiveAggressive(max_iter=2),
                                 cseq.AROW(max_iter=2)],
                         ids=lambda e: type(e).__name__)
def test_models_without_probabilities_refuse(est):
    est.fit(TRAIN_X, TRAIN_Y)
    for call in (lambda: est.sequence_log_prob(TRAIN_X, TRAIN_Y),
                 lambda: est.sequence_entropy(TRAIN_X),
                 lambda: est.predict_confidence(TRAIN_X),
                 lambda: est.span_marginals(TRAIN_X, [[]] * 3),
                 lambda: est.predict_spans(TRAIN_X),
                 lambda: probability.annotate(est, TRAIN_X)):
        with pytest.raises(InputError, match="define no probabilities"):
            call()


def test_readers_ask_the_model_not_the_estimator():
    """Probabilities, n-best log-probabilities, decoding and explain follow the model's
    answers (its class), whatever estimator holds it."""
    est = cseq.StructuredPerceptron(max_iter=2).fit(TRAIN_X, TRAIN_Y)
    with pytest.raises(InputError, match="define no probabilities"):
        est.sequence_log_prob(TRAIN_X, TRAIN_Y)
    assert est.predict_nbest(TRAIN_X, 2)[0].log_probs is None
    fitted, m = est._fitted, est._fitted.model
    arrays = (m.n_labels, m.attr_ptr, m.attr_labels, m.params)
    for chain, twin in ((GlobalChain, cseq.CRF()), (LocalChain, cseq.MEMM())):
        est._fitted = twin._fitted = replace(fitted, model=chain(*arrays))
        got = est.sequence_log_prob(TRAIN_X, TRAIN_Y)
        assert (got < 0).all()
        np.testing.assert_array_equal(got, twin.sequence_log_prob(TRAIN_X, TRAIN_Y))
        assert est.predict(TRAIN_X) == twin.predict(TRAIN_X)
        assert est.predict_nbest(TRAIN_X, 2)[0].log_probs is not None
    with pytest.raises(InputError, match="sum of weights"):
        est.explain(TRAIN_X[0])  # a LocalChain's decoder maximizes log P, not the weights


@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_a_pruned_crf_keeps_its_probabilities():
    # Pruning copies the model in its own class: the copy still defines them.
    est = cseq.CRF(c1=0.5, max_iter=30, all_states=True).fit(TRAIN_X, TRAIN_Y)
    assert est.n_pruned_ > 0 and type(est.model_) is GlobalChain
    assert (est.sequence_log_prob(TRAIN_X, TRAIN_Y) < 0).all()


def test_unfitted_model_refuses():
    with pytest.raises(cseq.NotFittedError):
        cseq.CRF().sequence_entropy(TRAIN_X)


def test_bad_arguments_are_refused():
    est = _fitted("crf", 1)
    with pytest.raises(InputError, match="label the model does not know"):
        est.sequence_log_prob(TRAIN_X[:1], [["B-PER", "I-PER", "O", "B-ORG"]])
    with pytest.raises(InputError):
        est.sequence_log_prob(TRAIN_X[:1], [["O"]])
    with pytest.raises(InputError, match="one list of"):
        est.span_marginals(TRAIN_X, [[]])
    with pytest.raises(InputError, match="not inside"):
        est.span_marginals(TRAIN_X[:1], [[("PER", 2, 9)]])
    with pytest.raises(InputError, match="not inside"):
        est.span_marginals(TRAIN_X[:1], [[("PER", 2, 2)]])
    with pytest.raises(InputError, match="type, start, end"):
        est.span_marginals(TRAIN_X[:1], [[("PER", 0)]])
    with pytest.raises(InputError, match="type, start, end"):
        est.span_marginals(TRAIN_X[:1], [[("PER", 0, 1.0)]])
    with pytest.raises(InputError, match="scheme must be"):
        est.predict_spans(TRAIN_X, scheme="iob1")
    pos = cseq.CRF(max_iter=2).fit([[["a"], ["b"]]], [["NOUN", "VERB"]])
    with pytest.raises(InputError, match="not BIO or BIOES"):
        pos.predict_spans([[["a"]]])
    # Without BIO labels, annotate still gives confidences, and no spans.
    tagged = probability.annotate(pos, [[["a"], ["b"]]])
    assert tagged[0].spans is None and len(tagged[0].confidence) == 2


def test_results_do_not_depend_on_threads():
    est = _fitted("crf", 5)
    X = QUERY_X * 20
    one = probability.annotate(est, X)
    two = probability.annotate(est, X, n_jobs=2)
    assert [t.spans for t in one] == [t.spans for t in two]
    assert [t.log_prob for t in one] == [t.log_prob for t in two]
    y = [["O"] * len(x) for x in X]
    np.testing.assert_array_equal(est.sequence_log_prob(X, y),
                                  est.sequence_log_prob(X, y, n_jobs=2))
    np.testing.assert_array_equal(est.sequence_log_prob(X, iter(y)),
                                  est.sequence_log_prob(X, y))


# ---------------------------------------------------------------------------
# the command line: cseq tag --marginals (--confidence) in JSON lines


def test_cli_jsonl_has_confidence_log_prob_entropy_and_spans(tmp_path):
    import json

    from support.cli_run import TRAIN, run
    train = tmp_path / "train.txt"
    train.write_text(TRAIN, encoding="utf-8")
    model = tmp_path / "m.cseq"
    assert run("train", train, "-o", model, "--template", "chunk", "--quiet").returncode == 0
    r = run("tag", model, train, "--labeled", "--output-format", "jsonl", "--confidence")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    est = cseq.load(model)
    X = [[tuple(line.split()[:2]) for line in block.splitlines()]
         for block in TRAIN.strip().split("\n\n")]
    assert [rec["tokens"] for rec in records] == [[t[0] for t in x] for x in X]
    pred = est.predict(X)
    assert [rec["labels"] for rec in records] == pred
    for rec, conf, lp, h, spans in zip(records, est.predict_confidence(X),
                                       est.sequence_log_prob(X, pred), est.sequence_entropy(X),
                                       est.predict_spans(X)):
        np.testing.assert_allclose(rec["confidence"], conf, atol=5e-5)
        assert rec["log_prob"] == pytest.approx(lp, abs=1e-6)
        assert rec["entropy"] == pytest.approx(h, abs=1e-6)
        assert [(s["type"], s["start"], s["end"]) for s in rec["spans"]] == \
            [sp[:3] for sp in spans]
        np.testing.assert_allclose([s["probability"] for s in rec["spans"]],
                                   [sp[3] for sp in spans], atol=5e-5)
        assert [s["text"] for s in rec["spans"]] == \
            [" ".join(rec["tokens"][i:j]) for _, i, j, _ in spans]
    # CoNLL output: the confidence column; the same option name as --marginals.
    conll = run("tag", model, train, "--labeled", "--marginals")
    assert conll.returncode == 0
    first = conll.stdout.splitlines()[0].split("\t")
    assert float(first[3]) == pytest.approx(records[0]["confidence"][0], abs=1e-4)


def test_cli_jsonl_without_bio_labels_has_no_spans_and_other_learners_refuse(tmp_path):
    import json

    from support.cli_run import run
    train = tmp_path / "pos.txt"
    train.write_text("The DT\ndog NN\nbarks VBZ\n\nA DT\ncat NN\n\n", encoding="utf-8")
    for algorithm in ("hmm", "memm"):
        model = tmp_path / f"{algorithm}.cseq"
        assert run("train", train, "-o", model, "--algorithm", algorithm,
                   "--quiet").returncode == 0
        r = run("tag", model, train, "--labeled", "--output-format", "jsonl", "--marginals")
        assert r.returncode == 0, r.stderr
        rec = json.loads(r.stdout.splitlines()[0])
        assert "spans" not in rec and len(rec["confidence"]) == 3 and rec["log_prob"] <= 0
    model = tmp_path / "ap.cseq"
    assert run("train", train, "-o", model, "--algorithm", "perceptron",
               "--quiet").returncode == 0
    r = run("tag", model, train, "--labeled", "--output-format", "jsonl", "--confidence")
    assert r.returncode == 1 and "no marginals" in r.stderr


@examples(100)
@given(chains12(), st.data())
def test_span_probability_is_the_ratio_of_constrained_partition_functions(chain, data):
    # A second route to the same number: Z over the paths with the span forced
    # (constrained forward-backward) divided by Z (Culotta and McCallum 2004).
    E, T, start, end, T2 = chain
    n, L = E.shape
    begin = data.draw(st.integers(0, n - 1))
    m = data.draw(st.integers(1, n - begin))
    path = cseq.viterbi(E, T, start, end, transitions2=T2)[0]
    run = path[begin:begin + m].tolist()
    next_not = data.draw(st.lists(st.integers(0, L - 1), max_size=2, unique=True))
    allowed = np.ones((n, L), dtype=bool)
    allowed[np.arange(begin, begin + m)] = False
    allowed[np.arange(begin, begin + m), run] = True
    if begin + m < n:
        allowed[begin + m, next_not] = False
    got = probability.span_probability(E, T, begin, run, next_not=next_not, start=start,
                                       end=end, transitions2=T2)
    log_z = cseq.forward_backward(E, T, start, end, transitions2=T2)[0]
    try:
        log_zc = cseq.forward_backward(E, T, start, end, transitions2=T2, allowed=allowed)[0]
    except InputError:  # no allowed path: every label of the next position is excluded
        # (P(run) minus the sum of P(run, c) over every c: 0 up to rounding)
        assert got == pytest.approx(0.0, abs=1e-12)
        return
    want = math.exp(min(log_zc - log_z, 0.0))
    assert got == pytest.approx(want, rel=1e-7, abs=1e-9 + 1e-13 * magnitude(*chain))


# ---------------------------------------------------------------------------
# with constraints: the distribution restricted to the allowed labelings


def bio_valid(names) -> bool:
    """A BIO labeling: I-X only right after B-X or I-X (so never first)."""
    prev = "O"
    for lab in names:
        if lab.startswith("I-") and prev[2:] != lab[2:]:
            return False
        prev = lab
    return True


@pytest.mark.parametrize("name", list(LEARNERS))
@examples(8)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([0.5, 2.0]), data=st.data())
def test_probabilities_under_constraints_match_enumeration(name, seed, scale, data):
    est = _fitted(name, seed, scale)
    X = _query(est)
    classes = est.classes_
    ids = {c: i for i, c in enumerate(classes)}
    fixed = []
    for x in X:
        if x and data.draw(st.booleans()):
            pos = data.draw(st.integers(0, len(x) - 1))
            fixed.append({pos: data.draw(st.sampled_from(["B-PER", "O", "B-LOC"]))})
        else:
            fixed.append(None)
    kw = {"constraints": "bio", "fixed": fixed}
    tagged = probability.annotate(est, X, **kw)
    assert [t.labels for t in tagged] == est.predict(X, **kw)
    conf = est.predict_confidence(X, **kw)
    entropy = est.sequence_entropy(X, **kw)
    spans = [[(typ, i, j) for typ in ("PER", "LOC") for i in range(len(x))
              for j in range(i + 1, len(x) + 1)] for x in X]
    span_p = est.span_marginals(X, spans, **kw)
    restricted_marg = est.predict_marginals(X, **kw)
    for s, x in enumerate(X):
        if not x:
            assert tagged[s].labels == [] and entropy[s] == 0.0
            continue
        paths, lp = _brute(est, x)
        ok = np.array([bio_valid([classes[k] for k in p]) and all(
            classes[p[pos]] == lab for pos, lab in (fixed[s] or {}).items()) for p in paths])
        rp = np.full(len(lp), -np.inf)
        rp[ok] = lp[ok] - logsumexp(lp[ok])  # log-probabilities restricted to allowed paths
        pred = [ids[c] for c in tagged[s].labels]
        k = {tuple(p): i for i, p in enumerate(paths.tolist())}[tuple(pred)]
        assert ok[k] and rp[k] == rp[ok].max()
        assert tagged[s].log_prob == pytest.approx(lp[k], rel=1e-9, abs=1e-9)
        marg = np.zeros((len(x), len(classes)))
        for path, v in zip(paths[ok], rp[ok]):
            marg[np.arange(len(x)), path] += math.exp(v)
        np.testing.assert_allclose(conf[s], marg[np.arange(len(x)), pred], rtol=1e-8,
                                   atol=1e-12)
        np.testing.assert_allclose(tagged[s].confidence, conf[s])
        np.testing.assert_allclose(restricted_marg[s][np.arange(len(x)), pred], conf[s],
                                   rtol=1e-8, atol=1e-12)
        assert entropy[s] == pytest.approx(brute_entropy(rp[ok]), rel=1e-8, abs=1e-9)
        for (typ, i, j), got in zip(spans[s], span_p[s]):
            run = [ids[f"B-{typ}"]] + [ids[f"I-{typ}"]] * (j - i - 1)
            want = brute_run(paths[ok], rp[ok], i, run, [ids[f"I-{typ}"]])
            assert got == pytest.approx(want, rel=1e-8, abs=1e-12), (typ, i, j)
        for typ, i, j, p in tagged[s].spans:
            run = [ids[c] for c in tagged[s].labels[i:j]]
            assert p == pytest.approx(brute_run(paths[ok], rp[ok], i, run,
                                                [ids[f"I-{typ}"]]), rel=1e-8, abs=1e-12)


def test_cli_marginals_with_constraints_are_those_of_the_restricted_distribution(tmp_path):
    import json

    from support.cli_run import TRAIN, run
    train = tmp_path / "train.txt"
    train.write_text(TRAIN, encoding="utf-8")
    model = tmp_path / "m.cseq"
    assert run("train", train, "-o", model, "--template", "chunk", "--max-iter", "3",
               "--quiet").returncode == 0
    r = run("tag", model, train, "--labeled", "--output-format", "jsonl", "--marginals",
            "--constraints", "bio")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    est = cseq.load(model)
    X = [[tuple(line.split()[:2]) for line in block.splitlines()]
         for block in TRAIN.strip().split("\n\n")]
    tagged = probability.annotate(est, X, constraints="bio")
    assert [rec["labels"] for rec in records] == est.predict(X, constraints="bio")
    for rec, t in zip(records, tagged):
        np.testing.assert_allclose(rec["confidence"], t.confidence, atol=5e-5)
        assert rec["entropy"] == pytest.approx(t.entropy, abs=1e-6)
        assert [(s["type"], s["start"], s["end"]) for s in rec["spans"]] == \
            [sp[:3] for sp in t.spans]
    # the restricted distribution, not the model's: the entropies differ
    free = probability.annotate(est, X)
    assert any(abs(a.entropy - b.entropy) > 1e-6 for a, b in zip(tagged, free))


def _numpy_peak(call) -> int:
    """Peak bytes of Python and numpy allocations (tracemalloc) while ``call()`` runs."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


_LEARNERS = {"crf": lambda: cseq.CRF(max_iter=5), "crf-order2": lambda: cseq.CRF(max_iter=3, order=2),
             "memm": lambda: cseq.MEMM(max_iter=5)}
_CALLS = {
    "predict_confidence": lambda est, X: est.predict_confidence(X),
    "sequence_entropy": lambda est, X: est.sequence_entropy(X),
    "annotate": lambda est, X: probability.annotate(est, X, spans=False),
    "annotate-spans": lambda est, X: probability.annotate(est, X),
}


@pytest.mark.parametrize("learner,method", [
    (learner, method) for learner in _LEARNERS for method in _CALLS
    # Second-order spans read per-position pair and trigram marginals.
    if (learner, method) != ("crf-order2", "annotate-spans")])
def test_confidence_and_entropy_memory_grows_as_n_times_L(learner, method):
    # 6.2 KB per token at L = 19 (the (n - 1, L, L) pair
    # marginals; (n - 2, L, L, L) at second order, the MEMM's local
    # distributions too), so one long sequence (a file without blank lines
    # under `cseq tag --marginals`) needed gigabytes.  Now a few (n, L)
    # arrays (spans: the backward messages, and the spans found): the growth
    # per token is measured between two lengths, and held under 10 L
    # doubles, a tenth of the L^2 of the pair marginals alone at L = 24.
    L = 24
    rng = np.random.default_rng(0)
    X = [[[f"w={int(w)}"] for w in rng.integers(0, 48, 8)] for _ in range(100)]
    y = [[f"{'BI'[int(t[0][2:]) % 2]}-T{int(t[0][2:]) % L // 2}" for t in x] for x in X]
    est = _LEARNERS[learner]().fit(X, y)
    assert est.model_.n_labels == L

    def call(Z):
        return _CALLS[method](est, Z)
    words = np.random.default_rng(1).integers(0, 48, 3000)
    short, long = [[[f"w={int(w)}"] for w in words[:1000]]], [[[f"w={int(w)}"] for w in words]]
    call(short)
    per_token = (_numpy_peak(lambda: call(long)) - _numpy_peak(lambda: call(short))) / 2000
    assert per_token < 10 * L * 8, f"{per_token:.0f} bytes per token"
