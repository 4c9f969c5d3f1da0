"""Word rows: emission rows summed once per word (``LinearChain.word_rows``) and added in decoding.

Tagging with a template featurizer adds, for the templates that read one
cell, one precomputed row per word and window offset instead of looking up
and scoring each attribute per token (``cseq.chain.mapping.map_decoded``).
Checked here against independent references: dense weight matrices summed
with numpy, brute-force Viterbi over every label path, and the plain
per-token path of the estimators.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
import cseq.chain._word_rows
from cseq.chain import mapping
from cseq.exceptions import InputError
from cseq.chain.model import LinearChain
from cseq.chain.sequences import Sequences

from support.budget import examples
from support.oracle import brute_viterbi, path_score, sequence_emissions, split_params
from support.packing import pack, random_params
from support.strategies import corpora


def _dense_state(model) -> np.ndarray:
    """The state weights as a dense (n_attributes, L) matrix (0 where a pair has no weight)."""
    W = np.zeros((model.n_attributes, model.n_labels))
    ptr, lab = model.index.attr_ptr, model.index.attr_labels
    for a in range(model.n_attributes):
        for k in range(ptr[a], ptr[a + 1]):
            W[a, lab[k]] = model.params[k]
    return W


@examples(60)
@given(data=corpora(max_labels=4), seed=st.integers(0, 2**16), n_rows=st.integers(0, 6),
       n_cols=st.integers(0, 5), n_groups=st.integers(1, 3))
def test_word_rows_are_sums_of_dense_rows(data, seed, n_rows, n_cols, n_groups):
    X, y = data
    _, _, model = pack(X, y)
    model.params = random_params(model, seed, 1.0)
    rng = np.random.default_rng(seed)
    attrs = rng.integers(-2, model.n_attributes, size=(n_rows, n_cols)).astype(np.int32)
    group = rng.integers(0, n_groups, size=n_cols).astype(np.int32)
    got = model.word_rows(attrs, group, n_groups)
    W = _dense_state(model)
    want = np.zeros((n_rows, n_groups, model.n_labels))
    for r in range(n_rows):
        for j in range(n_cols):
            if attrs[r, j] >= 0:
                want[r, group[j]] += W[attrs[r, j]]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@examples(60)
@given(data=corpora(max_labels=4), seed=st.integers(0, 2**16), n_rows=st.integers(0, 4),
       n_cols=st.integers(0, 5), n_groups=st.integers(1, 3))
def test_word_rows_are_the_emissions_of_tokens_holding_each_group_bit_for_bit(
        data, seed, n_rows, n_cols, n_groups):
    """A word row is exactly (not merely close to) the emission the scorer gives a
    token holding the group's attributes in column order: tagging with word rows
    gives the batch path's labels only if both add the same weights in the same order."""
    X, y = data
    _, _, model = pack(X, y)
    model.params = random_params(model, seed, 1.0)
    rng = np.random.default_rng(seed)
    attrs = rng.integers(-2, model.n_attributes, size=(n_rows, n_cols)).astype(np.int32)
    group = rng.integers(0, n_groups, size=n_cols).astype(np.int32)
    got = model.word_rows(attrs, group, n_groups)
    tokens = [[int(a) for a, g in zip(attrs[r], group) if a >= 0 and g == k]
              for r in range(n_rows) for k in range(n_groups)]
    tok_ptr = np.cumsum([0] + [len(t) for t in tokens]).astype(np.int64)
    ids = np.array([a for t in tokens for a in t], dtype=np.int32)
    corpus = Sequences.packed(np.array([0, len(tokens)], dtype=np.int64), tok_ptr, ids,
                              np.ones(len(ids), dtype=np.float32))
    want = model.emissions(corpus, 0, len(tokens)).reshape(n_rows, n_groups, model.n_labels)
    assert got.tobytes() == want.tobytes()


def test_word_rows_refuse_bad_arguments():
    _, _, model = pack([[["a"], ["b"]], [["c"]]], [["X", "Y"], ["X"]])
    ok = np.zeros((2, 2), dtype=np.int32)
    group = np.zeros(2, dtype=np.int32)
    with pytest.raises(InputError, match="group must give each"):
        model.word_rows(ok, group[:1], 1)
    with pytest.raises(InputError, match="group must give each"):
        model.word_rows(ok, np.array([0, 1], dtype=np.int32), 1)
    with pytest.raises(InputError, match="attributes"):
        model.word_rows(ok + model.n_attributes, group, 1)


@examples(60)
@given(data=corpora(max_labels=4), seed=st.integers(0, 2**16), n_rows=st.integers(0, 8),
       n_cols=st.integers(0, 5), n_groups=st.integers(1, 3), capacity=st.sampled_from([1, 2, 64]))
def test_cached_word_rows_equal_the_uncached_ones_bit_for_bit_on_hits_and_misses(
        data, seed, n_rows, n_cols, n_groups, capacity):
    """Through a cache (a tiny one too, whose entries replace each other), the rows
    of words seen before (hits) and new (misses) are the uncached rows exactly."""
    X, y = data
    _, _, model = pack(X, y)
    model.params = random_params(model, seed, 1.0)
    rng = np.random.default_rng(seed)
    attrs = rng.integers(-2, model.n_attributes, size=(n_rows, n_cols)).astype(np.int32)
    group = rng.integers(0, n_groups, size=n_cols).astype(np.int32)
    want = model.word_rows(attrs, group, n_groups)
    cache = cseq.chain._word_rows.WordRowCache(model.index, model.params, group, n_groups, capacity)
    for order in (slice(None), slice(None, None, -1), slice(None)):  # misses, then hits
        got = model.word_rows(attrs[order], group, n_groups, cache)
        assert got.tobytes() == want[order].tobytes()


def test_a_word_row_cache_refuses_another_model_or_grouping():
    _, _, model = pack([[["a"], ["b"]], [["c"]]], [["X", "Y"], ["X"]])
    _, _, other = pack([[["a"], ["b"]], [["c"]]], [["X", "Y"], ["X"]])
    attrs = np.zeros((2, 2), dtype=np.int32)
    group = np.array([0, 1], dtype=np.int32)
    cache = model.word_row_cache(group, 2)
    assert 16 <= cache.capacity <= 4096
    model.word_rows(attrs, group, 2, cache)
    with pytest.raises(InputError, match="another model or grouping"):
        other.word_rows(attrs, group, 2, cache)
    with pytest.raises(InputError, match="another model or grouping"):
        model.word_rows(attrs, np.array([1, 0], dtype=np.int32), 2, cache)
    with pytest.raises(InputError, match="another model or grouping"):
        model.word_rows(attrs, group, 3, cache)


@st.composite
def _word_rows(draw, n_tokens: int, n_labels: int):
    n_groups = draw(st.integers(0, 3))
    n_words = draw(st.integers(1, 4))
    n_cols = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(n_words, n_groups, n_labels))
    words = rng.integers(0, n_words, size=(n_tokens, n_cols)).astype(np.int32)
    groups = np.stack([rng.integers(0, n_cols, size=n_groups),
                       rng.integers(-2, 3, size=n_groups)], axis=1).astype(np.int32)
    return rows, words, groups


@examples(60)
@given(data=corpora(max_labels=3, max_len=4), seed=st.integers(0, 2**16), rows=st.data(),
       n_jobs=st.integers(1, 2))
def test_decode_with_word_rows_is_viterbi_of_the_summed_emissions(data, seed, rows, n_jobs):
    X, y = data
    _, corpus, model = pack(X, y)
    L = model.n_labels
    model.params = random_params(model, seed, 1.0)
    word_rows = rows.draw(_word_rows(corpus.n_tokens, L))
    R, words, groups = word_rows
    got = model.decode(corpus, n_jobs, word_rows=word_rows)
    _, T, start, end = split_params(model.params, len(model.index.attr_labels), L)
    for s in range(corpus.n_sequences):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        if t0 == t1:
            continue
        E = sequence_emissions(model.params, model.index.attr_ptr, model.index.attr_labels, L,
                               corpus, s)
        for t in range(t1 - t0):
            for g, (col, offset) in enumerate(groups):
                if 0 <= t + offset < t1 - t0:
                    E[t] += R[words[t0 + t + offset, col], g]
        best, _ = brute_viterbi(E, T, start, end)
        assert path_score(E, T, start, end, got[t0:t1]) == pytest.approx(best, abs=1e-9)


def test_decode_refuses_word_rows_that_do_not_fit():
    _, corpus, model = pack([[["a"], ["b"]], [["c"]]], [["X", "Y"], ["X"]])
    L, n = model.n_labels, corpus.n_tokens
    rows = np.zeros((2, 1, L))
    words = np.zeros((n, 1), dtype=np.int32)
    groups = np.array([[0, 1]], dtype=np.int32)
    model.decode(corpus, word_rows=(rows, words, groups))  # fits
    bad = {
        "labels": (np.zeros((2, 1, L + 1)), words, groups),
        "tokens": (rows, words[:-1], groups),
        "groups": (rows, words, np.zeros((2, 2), dtype=np.int32)),
        "column": (rows, words, np.array([[1, 0]], dtype=np.int32)),
        "word id": (rows, words + 2, groups),
        "negative word id": (rows, words - 1, groups),
    }
    for word_rows in bad.values():
        with pytest.raises(ValueError, match="decode_corpus"):
            model.decode(corpus, word_rows=word_rows)


def test_word_rows_add_to_the_emissions_only_inside_the_sequence():
    # Two sequences of two tokens, one label pair with a zero model: the word
    # rows decide.  Offset +1 reads the next token's word, never across the
    # sequence boundary.
    _, corpus, model = pack([[["a"], ["a"]], [["a"], ["a"]]], [["X", "Y"], ["X", "Y"]])
    model.params = np.zeros_like(model.params)
    rows = np.array([[[0.0, 1.0]], [[1.0, 0.0]]])     # word 0 favours Y, word 1 favours X
    words = np.array([[0], [1], [1], [0]], dtype=np.int32)
    got = model.decode(corpus, word_rows=(rows, words, np.array([[0, 1]], dtype=np.int32)))
    # Token 0 reads word 1 (X); token 1's next row is outside: no row, tie, label 0 (X);
    # token 2 reads word 0 (Y); token 3: tie again.
    assert got.tolist() == [0, 0, 1, 0]


# -- estimators: the word-row path against the plain one ----------------------------------


@pytest.fixture(scope="module")
def sample():
    from cseq.conll import read_conll
    from cseq.data import sample_path

    sents, y = read_conll(sample_path(), sep="\t")[:2]
    return [[row[0] for row in s] for s in sents], y


def _spy(monkeypatch) -> list:
    calls = []
    decode = LinearChain.decode

    def spy(self, corpus, *args, **kw):
        calls.append(kw.get("word_rows") is not None)
        return decode(self, corpus, *args, **kw)
    monkeypatch.setattr(LinearChain, "decode", spy)
    return calls


@pytest.mark.filterwarnings("ignore::cseq.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("learner", ["perceptron", "crf"])
def test_predict_and_score_with_word_rows_equal_the_plain_path(sample, monkeypatch, learner):
    X, y = sample
    if learner == "perceptron":
        est = cseq.StructuredPerceptron(max_iter=2, random_state=0,
                                        features=cseq.TemplateFeaturizer("pos"))
    else:
        est = cseq.CRF(max_iter=15, features=cseq.TemplateFeaturizer("pos"))
    est.fit(X[:150], y[:150])
    test = X[150:]
    calls = _spy(monkeypatch)
    fast = [est.predict(test, n_jobs=n) for n in (1, 2)]
    fast_score = est.score(test, y[150:])
    assert calls and all(calls)  # every decode took the word rows
    calls.clear()
    monkeypatch.setattr(mapping, "_WORD_ROWS_BYTES", -1)
    plain = est.predict(test)
    plain_score = est.score(test, y[150:])
    assert calls and not any(calls)
    assert fast[0] == fast[1] == plain
    assert fast_score == plain_score


@pytest.mark.filterwarnings("ignore::cseq.exceptions.ConvergenceWarning")
def test_learners_that_read_the_model_otherwise_decode_plainly(sample, monkeypatch):
    X, y = sample
    est = cseq.MEMM(max_iter=5, features=cseq.TemplateFeaturizer("pos")).fit(X[:60], y[:60])
    calls = _spy(monkeypatch)
    est.predict(X[60:80])
    assert not any(calls)


@pytest.mark.filterwarnings("ignore::cseq.exceptions.ConvergenceWarning")
def test_sentence_at_a_time_through_the_word_row_cache_equals_the_batch_across_commits(sample):
    """``predict([s])`` sums a sentence's words through the thread's cache of the
    snapshot: a word seen before (a hit) gives the labels the batch path gives, and
    after a ``partial_fit`` commit the new snapshot's labels, never a mix of the two
    models (a cache kept across the commit would be refused, or give old rows)."""
    X, y = sample
    est = cseq.StructuredPerceptron(random_state=0, features=cseq.TemplateFeaturizer("pos"))
    est.partial_fit(X[:40], y[:40])
    test = X[150:190]
    for _ in range(2):  # misses, then hits
        assert [est.predict([s])[0] for s in test] == est.predict(test)
    before = est.predict(test)
    for _ in range(3):
        est.partial_fit(X[40:150], y[40:150])
    batch = est.predict(test)
    assert batch != before  # the commits changed the model, so a stale cache would show
    assert [est.predict([s])[0] for s in test] == batch
