"""The HMM: estimates against hand-computed counts, the suffix model against a hand
computation, decoding and marginals against enumeration of P(x, y), and the estimator."""

from __future__ import annotations

import io
import itertools
from collections import Counter
import math
import pickle
import time
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.exceptions import InputError, InputTypeError, ModelFormatError, NotFittedError
from cseq.learners.hmm import WordLexicon, suffix_probabilities

from support.budget import examples

# A tiny corpus: classes_ are D, N, V (ids 0, 1, 2); words the, dog, runs.
X_TINY = [["the", "dog", "runs"], ["the", "runs"], ["dog", "runs"]]
Y_TINY = [["D", "N", "V"], ["D", "N"], ["N", "V"]]
# Counted by hand: tags D 2, N 3, V 2; starts D 2, N 1; pairs D->N 2, N->V 2;
# stops N 1, V 2; (the, D) 2, (dog, N) 2, (runs, N) 1, (runs, V) 2.
# With alpha = 0.5, L = 3 labels (+ the stop among successors) and V = 3 words:
START = [2.5 / 4.5, 1.5 / 4.5, 0.5 / 4.5]
TRANS = [[0.5 / 4, 2.5 / 4, 0.5 / 4],      # from D: c(D) + 4 * 0.5 = 4
         [0.5 / 5, 0.5 / 5, 2.5 / 5],      # from N: c(N) + 2 = 5
         [0.5 / 4, 0.5 / 4, 0.5 / 4]]      # from V
STOP = [0.5 / 4, 1.5 / 5, 2.5 / 4]
EMIT = {"the": [2.5 / 3.5, 0.5 / 4.5, 0.5 / 3.5],     # c(t) + 3 * 0.5
        "dog": [0.5 / 3.5, 2.5 / 4.5, 0.5 / 3.5],
        "runs": [0.5 / 3.5, 1.5 / 4.5, 2.5 / 3.5]}


def test_estimates_equal_hand_computed_counts():
    hmm = cseq.HMM(alpha=0.5).fit(X_TINY, Y_TINY)
    assert hmm.classes_ == ["D", "N", "V"]
    m = hmm.model_
    np.testing.assert_allclose(np.exp(m.start), START, rtol=1e-14)
    np.testing.assert_allclose(np.exp(m.transitions), TRANS, rtol=1e-14)
    np.testing.assert_allclose(np.exp(m.end), STOP, rtol=1e-14)
    W = m.state_weights.reshape(-1, 3)
    for w, probs in EMIT.items():
        k = hmm.featurizer_.attribute_names().index(w)
        np.testing.assert_allclose(np.exp(W[k]), probs, rtol=1e-14)
    # Proper distributions: successors plus stop, and words given a tag.
    np.testing.assert_allclose(np.exp(m.transitions).sum(1) + np.exp(m.end), 1.0, rtol=1e-14)
    np.testing.assert_allclose(np.exp(W[:3]).sum(0), 1.0, rtol=1e-14)


def joint(words, tags):
    """P(x, y) of the hand-made HMM above (a product of the literal fractions)."""
    p = START[tags[0]] * EMIT[words[0]][tags[0]]
    for i in range(1, len(words)):
        p *= TRANS[tags[i - 1]][tags[i]] * EMIT[words[i]][tags[i]]
    return p * STOP[tags[-1]]


@pytest.mark.parametrize("words", [["the", "dog", "runs"], ["runs"], ["dog", "the", "runs", "runs"]])
def test_viterbi_and_forward_backward_are_the_hmm_posterior(words):
    hmm = cseq.HMM(alpha=0.5).fit(X_TINY, Y_TINY)
    paths = list(itertools.product(range(3), repeat=len(words)))
    probs = np.array([joint(words, p) for p in paths])
    best = paths[int(np.argmax(probs))]
    assert hmm.predict([words]) == [[hmm.classes_[t] for t in best]]
    want = np.zeros((len(words), 3))
    for p, pr in zip(paths, probs):
        for i, t in enumerate(p):
            want[i, t] += pr
    want /= probs.sum()
    np.testing.assert_allclose(hmm.predict_marginals([words])[0], want, rtol=1e-10, atol=1e-14)


# Suffix model: every word is seen once, so with rare_threshold=1 all are rare.
X_SUF = [["going", "sing", "dog"], ["runs", "Bing"]]
Y_SUF = [["V", "N", "N"], ["V", "N"]]


def test_suffix_model_equals_a_hand_computation():
    hmm = cseq.HMM(alpha=1.0, suffix_length=2, rare_threshold=1).fit(X_SUF, Y_SUF)
    assert hmm.classes_ == ["N", "V"]
    # P^(t): N 3/5, V 2/5; theta = sample variance = (0.1^2 + 0.1^2) / 1 = 0.02.
    assert hmm.theta_ == pytest.approx(0.02, rel=1e-12)
    lex = hmm.featurizer_
    names = lex.attribute_names()
    W = hmm.model_.state_weights.reshape(-1, 2)
    p_tag = np.array([3 / 5, 2 / 5])

    def row(name):
        return W[names.index(name)]
    # Lower-case rare words: going/V, sing/N, dog/N, runs/V.
    # "" : N 2, V 2 -> (1/2, 1/2), the root.
    # "g": going V, sing N, dog N -> (2/3, 1/3); smoothed:
    #      ((2/3 + 0.02 / 2) / 1.02, (1/3 + 0.02 / 2) / 1.02) = (203/306, 103/306).
    # "ng": going V, sing N -> (1/2, 1/2); smoothed with "g":
    #      ((1/2 + 0.02 * 203/306) / 1.02, ...) = (7853/15606, 7753/15606).
    np.testing.assert_allclose(row("suffix[l]="), np.log([0.5, 0.5]) - np.log(p_tag), rtol=1e-12)
    np.testing.assert_allclose(row("suffix[l]=g"), np.log([203 / 306, 103 / 306]) - np.log(p_tag),
                               rtol=1e-12)
    np.testing.assert_allclose(row("suffix[l]=ng"),
                               np.log([7853 / 15606, 7753 / 15606]) - np.log(p_tag), rtol=1e-12)
    # "s": runs V -> (0, 1); "ns" the same, smoothed twice.
    s = (np.array([0.0, 1.0]) + 0.02 * np.array([0.5, 0.5])) / 1.02
    np.testing.assert_allclose(np.exp(row("suffix[l]=s")) * p_tag, s, rtol=1e-12)
    # Unknown words get their longest seen suffix of their case class.
    for word, name in [("bring", "suffix[l]=ng"), ("cat", "suffix[l]="), ("fog", "suffix[l]=og"),
                       ("Zing", "suffix[U]=ng"), ("Zeta", "suffix[U]="), ("dog", "dog")]:
        corpus = lex.transform([[word]])
        assert names[int(corpus.attr_ids[0])] == name, word
    # No suffix longer than suffix_length, no suffix of a frequent word.
    assert "suffix[l]=ing" not in names
    frequent = cseq.HMM(suffix_length=2, rare_threshold=0).fit(X_SUF, Y_SUF)
    assert [n for n in frequent.featurizer_.attribute_names() if n.startswith("suffix")] == \
        ["suffix[*]="]


def test_suffix_probabilities_by_abstraction():
    # A chain root -> a -> b with counts; theta = 1 gives plain averages.
    counts = np.array([[1.0, 3.0], [2.0, 0.0], [0.0, 0.0]])
    got = suffix_probabilities(counts, np.array([-1, 0, 1]), 1.0)
    np.testing.assert_allclose(got[0], [0.25, 0.75])
    np.testing.assert_allclose(got[1], [(1 + 0.25) / 2, (0 + 0.75) / 2])
    # A suffix without counts (not possible from training, but defined) is its parent's.
    np.testing.assert_allclose(got[2], got[1] / 2)


def test_unknown_words_fall_back_when_their_case_class_has_no_rare_word():
    hmm = cseq.HMM(rare_threshold=1).fit([["going", "dog"]], [["V", "N"]])
    names = hmm.featurizer_.attribute_names()
    assert names[int(hmm.featurizer_.transform([["Zebra"]]).attr_ids[0])] == "suffix[*]="
    assert hmm.predict([["Zebra"]])[0][0] in ("N", "V")


WORDS = [["the", "dog", "runs"], ["a", "cat", "sleeps"], ["the", "cat", "runs"]] * 4
TAGS = [["D", "N", "V"]] * 12


@pytest.mark.parametrize("make, word", [
    (lambda s: s, None),                                           # plain word lists
    (lambda s: [[w, "x=" + w[-1]] for w in s], None),              # feature lists: first feature
    (lambda s: [["bias", "w=" + w] for w in s], "w"),              # a named feature
    (lambda s: [{"w": w, "bias": 1.0} for w in s], None),          # dicts: first value
    (lambda s: [{"bias": 1.0, "w": w} for w in s], "w"),           # dicts: named
    (lambda s: [(w, "POS") for w in s], None),                     # raw columns
])
def test_the_same_word_from_every_form_of_x(make, word):
    plain = cseq.HMM().fit(WORDS, TAGS)
    X = [make(s) for s in WORDS]
    hmm = cseq.HMM(word=word).fit(X, TAGS)
    np.testing.assert_array_equal(hmm.model_.params, plain.model_.params)
    test = [["a", "dog", "sleeps"], ["the", "bird", "sings"]]
    assert hmm.predict([make(s) for s in test]) == plain.predict(test) == [["D", "N", "V"]] * 2


@pytest.mark.parametrize("X, error, match", [
    ([[["bias"]]], InputError, "no feature w="),
    ([[{"bias": 1.0}]], InputError, "no str feature 'w'"),
    ([[3]], InputTypeError, r"X\[0\]\[0\]"),
    ("the dog", InputTypeError, "list of sequences"),
])
def test_bad_words_raise(X, error, match):
    with pytest.raises(error, match=match):
        cseq.HMM(word="w" if X != [[3]] and X != "the dog" else None).fit(X, [["D"]])


def test_estimator_api_round_trips_and_verbose(tmp_path):
    hmm = cseq.HMM(alpha=0.1, suffix_length=3, verbose=True)
    out = io.StringIO()
    with redirect_stdout(out):
        hmm.fit(WORDS, TAGS, WORDS[:2], TAGS[:2])
    assert out.getvalue().count("\n") == 1 and "dev acc 100.00%" in out.getvalue()
    assert hmm.n_iter_ == 1 and hmm.history_[0]["dev_accuracy"] == 1.0
    assert hmm.get_params() == {"alpha": 0.1, "suffix_length": 3, "rare_threshold": 10,
                                "word": None, "verbose": True}
    assert hmm.score(WORDS, TAGS) == 1.0
    path = tmp_path / "hmm.cseq"
    hmm.save(path)
    for loaded in (cseq.load(path), pickle.loads(pickle.dumps(hmm))):
        assert type(loaded) is cseq.HMM
        assert loaded.to_bytes() == hmm.to_bytes()
        assert loaded.theta_ == hmm.theta_
        test = [["a", "bird", "sings"], ["Zorro", "sleeps"]]
        assert loaded.predict(test) == hmm.predict(test)
        for a, b in zip(loaded.predict_marginals(test), hmm.predict_marginals(test)):
            np.testing.assert_array_equal(a, b)
    unfitted = pickle.loads(pickle.dumps(cseq.HMM(alpha=2.0, word="w")))
    assert unfitted.get_params()["word"] == "w"
    with pytest.raises(NotFittedError):
        unfitted.predict(WORDS)
    with pytest.raises(InputError, match="no parameter"):
        hmm.set_params(c2=1.0)


@pytest.mark.parametrize("params", [{"alpha": 0.0}, {"alpha": -1.0}, {"alpha": "1"},
                                    {"alpha": 5e-324}, {"alpha": 1e300},
                                    {"suffix_length": -1}, {"rare_threshold": 1.5},
                                    {"word": 3}])
def test_bad_hyperparameters(params):
    with pytest.raises(InputError):
        cseq.HMM(**params).fit(WORDS, TAGS)


def test_a_lexicon_without_its_parent_suffix_is_refused():
    hmm = cseq.HMM(rare_threshold=1).fit(X_SUF, Y_SUF)
    meta, arrays = hmm.featurizer_.get_state()
    WordLexicon.from_state(meta, arrays)  # intact: loads
    from cseq.features import encode_strings
    keys = ["", "lg", "lng"][::2]  # "lng" without "lg"
    bad = dict(arrays)
    enc = encode_strings(keys)
    bad["suffixes/blob"], bad["suffixes/offsets"] = enc["blob"], enc["offsets"]
    with pytest.raises(ModelFormatError, match="parent"):
        WordLexicon.from_state(meta, bad)
    with pytest.raises(ModelFormatError):
        WordLexicon.from_state({**meta, "suffix_length": -1}, arrays)
    assert math.isfinite(hmm.theta_)


# ---------------------------------------------------------------------------
# Random corpora: estimates against a Counter-based count, posteriors against
# enumeration of P(x, y) built from the stored probabilities.

_word = st.sampled_from(["a", "b", "Ab", "cab", "x"])
_tag = st.sampled_from(["P", "Q", "R"])


@st.composite
def word_corpora(draw):
    n = draw(st.integers(1, 5))
    X, y = [], []
    for _ in range(n):
        k = draw(st.integers(1, 4))
        X.append(draw(st.lists(_word, min_size=k, max_size=k)))
        y.append(draw(st.lists(_tag, min_size=k, max_size=k)))
    return X, y


@examples(60)
@given(word_corpora(), st.sampled_from([0.05, 0.5, 2.0]),
       st.lists(st.sampled_from(["a", "b", "Ab", "cab", "x", "zab", "Q", "y"]), min_size=1,
                max_size=4))
def test_random_corpora_counts_and_posteriors(Xy, alpha, sentence):
    X, y = Xy
    hmm = cseq.HMM(alpha=alpha).fit(X, y)
    tags = hmm.classes_
    L = len(tags)
    words = list(dict.fromkeys(w for s in X for w in s))
    V = len(words)
    tag_c = Counter(t for s in y for t in s)
    start_c = Counter(s[0] for s in y)
    stop_c = Counter(s[-1] for s in y)
    pair_c = Counter((s[i], s[i + 1]) for s in y for i in range(len(s) - 1))
    emit_c = Counter((w, t) for xs, ys in zip(X, y) for w, t in zip(xs, ys))
    m = hmm.model_
    W = m.state_weights.reshape(-1, L)
    names = hmm.featurizer_.attribute_names()
    for j, t in enumerate(tags):
        assert math.exp(m.start[j]) == pytest.approx((start_c[t] + alpha) / (len(y) + alpha * L))
        denom = tag_c[t] + alpha * (L + 1)
        assert math.exp(m.end[j]) == pytest.approx((stop_c[t] + alpha) / denom)
        for k, u in enumerate(tags):
            assert math.exp(m.transitions[j, k]) == pytest.approx((pair_c[t, u] + alpha) / denom)
        for w in words:
            assert math.exp(W[names.index(w), j]) == pytest.approx(
                (emit_c[w, t] + alpha) / (tag_c[t] + alpha * V))
    # Viterbi and forward-backward are the posterior of the stored tables.
    E = m.emissions(hmm.featurizer_.transform([sentence]), 0, len(sentence))
    paths = list(itertools.product(range(L), repeat=len(sentence)))
    logp = np.array([m.start[p[0]] + m.end[p[-1]] + sum(E[i, p[i]] for i in range(len(p)))
                     + sum(m.transitions[p[i - 1], p[i]] for i in range(1, len(p)))
                     for p in paths])
    best = float(logp.max())
    got = [tags.index(t) for t in hmm.predict([sentence])[0]]
    assert logp[paths.index(tuple(got))] >= best - 1e-9
    post = np.exp(logp - best)
    post /= post.sum()
    want = np.zeros((len(sentence), L))
    for p, pr in zip(paths, post):
        for i, t in enumerate(p):
            want[i, t] += pr
    np.testing.assert_allclose(hmm.predict_marginals([sentence])[0], want, rtol=1e-9,
                               atol=1e-12)


def test_a_huge_suffix_length_costs_no_more_than_the_longest_word():
    # suffix_length=2**31 - 1 (a valid int; a model file's header may say it)
    # made fit loop over every length up to it: a hang (10**8 took about ten
    # seconds).  Found by the model-file fuzzer refitting a loaded HMM.
    t = time.perf_counter()
    huge = cseq.HMM(suffix_length=10**8, rare_threshold=1).fit(X_SUF, Y_SUF)
    assert time.perf_counter() - t < 5
    longest = max(len(w) for s in X_SUF for w in s)
    same = cseq.HMM(suffix_length=longest, rare_threshold=1).fit(X_SUF, Y_SUF)
    assert huge.featurizer_.attribute_names() == same.featurizer_.attribute_names()
    assert huge.predict([["unseenly"]]) == same.predict([["unseenly"]])
