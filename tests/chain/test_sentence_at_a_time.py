"""Sentence at a time equals the batch, bit for bit.

A production tagger calls ``predict([sentence])`` once per request.  The
per-call work was trimmed (no validation of cseq's own packed arrays, no
affinity call for ``n_jobs=1``, per-snapshot and per-featurizer derived
state built once); none of it may change a result.  For every learner, with
feature lists and with the ``pos`` template preset (``:tags`` included),
with constraints and at order 2, the labels and the marginals of each
sentence tagged alone must equal, exactly, those of one call on the whole
corpus (with one thread and with two, whose blocks and chunks differ).
"""

from __future__ import annotations

import numpy as np
import pytest

import cseq
from support.registered import commands, quick
from support.shared_data import EWT, needs

pytestmark = [needs(EWT / "en_ewt-ud-dev.conllu"),
              pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")]


@pytest.fixture(scope="module")
def ewt():
    from cseq.conll import read_conllu
    X, y = read_conllu(EWT / "en_ewt-ud-dev.conllu")
    words = [[row[0] for row in s] for s in X]
    # Training and test sentences apart, so the test has unseen words and attributes.
    return (words[:200], y[:200]), words[200:330]


def _lists(words):
    """Feature lists of the python-crfsuite style, one value feature among them."""
    return [[{"w": w.lower(), "suf": w[-2:], "i": i / 10.0,
              "prev": s[i - 1].lower() if i else "<s>"}
             for i, w in enumerate(s)] for s in words]


def _templates():
    return cseq.TemplateFeaturizer("pos")


#: Every registered learner with its quick settings (registered.quick), and two at order 2.
LEARNERS = {
    **{name: lambda f, name=name: quick(name, features=f) for name in commands()},
    "perceptron-order2": lambda f: cseq.StructuredPerceptron(max_iter=3, random_state=0,
                                                             order=2, features=f),
    "crf-order2": lambda f: cseq.CRF(max_iter=10, order=2, features=f),
}

_FITTED: dict = {}


def _fitted(name: str, features: str, ewt):
    key = (name, features)
    if key not in _FITTED:
        (words, y), _ = ewt
        f = _templates() if features == "templates" else None
        X = words if features == "templates" else _lists(words)
        _FITTED[key] = LEARNERS[name](f).fit(X, y)
    return _FITTED[key]


def _test_X(features: str, ewt):
    words = ewt[1]
    return words if features == "templates" else _lists(words)


def _no_det_after_det(est) -> np.ndarray:
    """A transition matrix that forbids DET after DET (changes some labelings)."""
    allowed = np.ones((len(est.classes_),) * 2, dtype=bool)
    det = est.classes_.index("DET")
    allowed[det, det] = False
    return allowed


def _same_arrays(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x.shape == z.shape and x.dtype == z.dtype
                                    and np.array_equal(x, z) for x, z in zip(a, b))


@pytest.mark.parametrize("features", ["lists", "templates"])
@pytest.mark.parametrize("name", list(LEARNERS))
def test_sentence_at_a_time_predicts_the_batch_labels(ewt, name, features):
    est = _fitted(name, features, ewt)
    X = _test_X(features, ewt)
    one = [est.predict([x])[0] for x in X]
    assert one == est.predict(X) == est.predict(X, n_jobs=2)
    if name == "greedy":
        return  # the greedy tagger decodes left to right and takes no constraints
    allowed = _no_det_after_det(est)
    one = [est.predict([x], constraints=allowed)[0] for x in X]
    assert one == est.predict(X, constraints=allowed)


@pytest.mark.parametrize("features", ["lists", "templates"])
@pytest.mark.parametrize("name", ["crf", "crf-order2", "memm"])
def test_sentence_at_a_time_gives_the_batch_marginals_bit_for_bit(ewt, name, features):
    est = _fitted(name, features, ewt)
    X = _test_X(features, ewt)
    one = [est.predict_marginals([x])[0] for x in X]
    assert _same_arrays(one, est.predict_marginals(X))
    assert _same_arrays(one, est.predict_marginals(X, n_jobs=2))
    allowed = _no_det_after_det(est)
    one = [est.predict_marginals([x], constraints=allowed)[0] for x in X]
    assert _same_arrays(one, est.predict_marginals(X, constraints=allowed))


def test_hmm_sentence_at_a_time_equals_the_batch(ewt):
    (words, y), X = ewt
    est = cseq.HMM().fit(words, y)
    assert [est.predict([x])[0] for x in X] == est.predict(X)
    assert _same_arrays([est.predict_marginals([x])[0] for x in X], est.predict_marginals(X))


def test_one_token_and_empty_sentences_alone_equal_the_batch(ewt):
    est = _fitted("perceptron", "templates", ewt)
    X = [["Hello"], [], ["the"], ["Zyzzyva", "runs"], []]
    assert [est.predict([x])[0] for x in X] == est.predict(X)


def test_a_word_memo_keeps_a_layout_its_caller_changes_afterwards():
    # The word memo keeps the featurizer's own template layout arrays (read-only,
    # so that threads share them safely) and a copy of any other: changing a
    # caller's writable array after the memo was made must not change the lookup.
    X = [["a", "b", "a", "c"], ["b", "a"]]
    f = cseq.TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0:lower]\nU2:%x[0,0]/%x[1,0]")
    f.fit_transform(X)
    assert not f._memo_col.flags.writeable and not f._memo_row.flags.writeable
    data = f._intern_lookup(X)
    table = f._table
    args = (data.slot_ids, data.hashes, data.seq_ptr, f._tmpl_ptr, f._cell_row, f._cell_slot,
            f._seeds, data.pad_before, data.pad_after, data.words)

    def memo(col, row):
        return table.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                               data.word_slots, col, row)
    want = table.lookup_packed(*args, memo(f._memo_col, f._memo_row), 1, True)
    col, row = f._memo_col.copy(), f._memo_row.copy()
    kept = memo(col, row)
    col[:] = -1
    row[:] = 5
    got = table.lookup_packed(*args, kept, 1, True)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_tag_classes_are_hashed_as_the_string_hashes_of_the_dictionary_lookups():
    # Values.hash_classes (one pass in C) replaced a list of classes hashed by
    # hash_strings: every word with the slot gets the hash of its class, found
    # by its lowercased string (non-ASCII included; unknown words: UNKNOWN),
    # and the ids of words without the slot (-1) are left as they were.
    from cseq.features import _columns, _templates, _tokens
    words = ["The", "ÉCOLE", "dog", "x\ud800y", "Zyzzyva"]
    table = {"the": "DET", "école": "NOUN|PROPN", "x\ud800y": "X"}
    word_slots = np.array([[0, 7], [1, 5], [2, -1], [3, 6], [4, 8]], dtype=np.int32)
    hashes = np.zeros(9, dtype=np.uint64)
    hashes[2] = 12345
    vals = _tokens.Values()
    assert _columns.intern_strings(vals, words).tolist() == list(range(len(words)))
    vals.hash_classes(word_slots, 1, table, "<unk>", hashes)
    want = _templates.hash_strings(["DET", "NOUN|PROPN", "X", "<unk>"])
    assert hashes[[7, 5, 6, 8]].tolist() == want.tolist()
    assert hashes[2] == 12345 and not hashes[[0, 1, 3, 4]].any()
    with pytest.raises(ValueError):
        vals.hash_classes(word_slots, 2, table, "<unk>", hashes)
