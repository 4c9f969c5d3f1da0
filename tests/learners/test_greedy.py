"""The greedy tagger: training and tagging kernels against a naive greedy perceptron, the tag
dictionary, the model file's history blocks, and the estimator's own parameters."""

from __future__ import annotations

import functools

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cseq
from cseq.learners import _greedy
from cseq.chain import _chain
from cseq.io import serialize
from cseq.exceptions import InputError, ModelFormatError
from cseq.learners.greedy import GreedyChain
from cseq.chain.model import work_chunks

from support.budget import examples
from support.oracle import NaiveGreedy
from support.strategies import corpora
from support import packing


pack = functools.partial(packing.pack, chain=GreedyChain)


def random_tagdict(draw, model):
    """None, or an int32 entry per attribute: -1 (most) or a label."""
    if model.n_attributes == 0 or not draw(st.booleans()):
        return None
    entries = draw(st.lists(st.integers(-1, model.n_labels - 1), min_size=model.n_attributes,
                            max_size=model.n_attributes))
    # Mostly -1, so that scored tokens remain.
    return np.array([e if e >= 0 and i % 3 == 0 else -1 for i, e in enumerate(entries)],
                    dtype=np.int32)


def test_layout_without_the_pair_block_ends_after_two_back():
    lay = _greedy.greedy_layout(7, 3, False)
    assert lay["pair"] == -1 and lay["n_params"] == lay["two_back"] + 4 * 3


def test_pair_history_false_trains_saves_and_loads_its_own_layout(tmp_path):
    X, y = _dict_corpus()
    est = cseq.GreedyTagger(pair_history=False, random_state=0).fit(X, y)
    assert type(est.model_).__name__ == "GreedyChainNoPair" and est.model_.pair is None
    assert len(est.model_.params) == est.model_.layout["two_back"] + (
        est.model_.n_labels + 1) * est.model_.n_labels
    est.save(tmp_path / "g")
    back = cseq.load(tmp_path / "g")
    assert type(back.model_).__name__ == "GreedyChainNoPair"
    assert back.get_params()["pair_history"] is False and back.predict(X) == est.predict(X)
    with pytest.raises(InputError, match="pair_history must be True or False"):
        cseq.GreedyTagger(pair_history="no").fit(X, y)


def test_layout_appends_history_blocks_after_the_chain():
    lay = _greedy.greedy_layout(7, 3)
    chain = _chain.param_layout(7, 3)
    assert {k: lay[k] for k in chain if k != "n_params"} == \
        {k: v for k, v in chain.items() if k != "n_params"}
    assert lay["chain_params"] == chain["n_params"] == 7 + 9 + 6
    assert lay["two_back"] == chain["n_params"]
    assert lay["pair"] == lay["two_back"] + 4 * 3
    assert lay["n_params"] == lay["pair"] + 4 * 3 * 3


def _greedy_params(model, pair: bool) -> int:
    return _greedy.greedy_layout(len(model.attr_labels), model.n_labels, pair)["n_params"]


@examples(60)
@given(corpora(max_len=6, values="dyadic"), st.booleans(), st.integers(1, 3), st.booleans(),
       st.data())
def test_trainer_matches_naive_greedy_after_every_sequence(Xy, all_states, epochs, pair, data):
    """Identical weights after every sequence; the lazy average equals the mean of the weights
    after every scored token (so every intermediate update must match too); with the pair
    block and without it."""
    _, corpus, model = pack(*Xy, all_states=all_states)
    tagdict = random_tagdict(data.draw, model)
    params = _chain.AveragedParams(n_params=_greedy_params(model, pair))
    trainer = _greedy.GreedyTrainer(model.index, corpus.view(), params, tagdict)
    naive = NaiveGreedy(model.attr_ptr, model.attr_labels, model.n_labels, corpus, tagdict,
                        pair=pair)
    assert len(naive.weights) == len(params.w)
    for _ in range(epochs):
        order = data.draw(st.permutations(range(corpus.n_sequences)))
        for s in order:
            errors = trainer.train_epoch(np.array([s], dtype=np.int64))
            assert errors == naive.step(s)
            # Small dyadic values keep every score exact: identical weights.
            np.testing.assert_array_equal(params.w, naive.weights)
            assert params.n_examples == len(naive.history)
            np.testing.assert_allclose(params.averaged(), naive.averaged(), rtol=0, atol=1e-9)


@examples(60)
@given(corpora(max_len=6, values="dyadic"), st.booleans(), st.integers(0, 2**32 - 1),
       st.booleans(), st.data())
def test_tagging_equals_naive_left_to_right_argmax(Xy, all_states, seed, pair, data):
    _, corpus, model = pack(*Xy, all_states=all_states)
    tagdict = random_tagdict(data.draw, model)
    # Multiples of 1/4 in a small range: exact sums, and ties happen (lowest label wins).
    w = np.random.default_rng(seed).integers(-3, 4, size=_greedy_params(model, pair)) / 4.0
    naive = NaiveGreedy(model.attr_ptr, model.attr_labels, model.n_labels, corpus, tagdict,
                        pair=pair)
    expected = [y for s in range(corpus.n_sequences) for y in naive.tag(s, w)]
    for n_jobs in (1, 2):
        got = _greedy.tag_corpus(model.index, w, corpus.view(), tagdict,
                                 work_chunks(corpus.seq_ptr, n_jobs), n_jobs)
        assert got.tolist() == expected


def test_history_features_are_used_and_learned():
    """Labels that only the previous label can tell apart: the word is always 'x'."""
    X = [[["w=x"]] * 4] * 20
    y = [["a", "b", "a", "b"]] * 20
    # The final weights: the average over the first, confused pass would blur the toy problem.
    est = cseq.GreedyTagger(max_iter=5, average=False, random_state=0).fit(X, y)
    assert est.predict([[["w=x"]] * 6]) == [["a", "b", "a", "b", "a", "b"]]
    pair = est.model_.pair
    assert pair.shape == (3, 2, 2) and np.any(pair != 0)
    assert est.model_.two_back.shape == (3, 2)


def _dict_corpus():
    """'the' is always DET (25 times), 'run' is NOUN 15 / VERB 10 times, 'dog' NOUN 5 times."""
    X, y = [], []
    for i in range(25):
        tag = "NOUN" if i < 15 else "VERB"
        X.append([["w=the"], ["w=run"]] + ([["w=dog"]] if i < 5 else []))
        y.append(["DET", tag] + (["NOUN"] if i < 5 else []))
    return X, y


def test_tag_dict_follows_the_count_and_share_thresholds():
    X, y = _dict_corpus()
    est = cseq.GreedyTagger(tag_dict="w=", random_state=0).fit(X, y)
    names = est.featurizer_.attribute_names()
    got = {names[a]: est.classes_[k] for a, k in zip(est.model_.tag_attrs, est.model_.tag_labels)}
    assert got == {"w=the": "DET"}  # run is ambiguous (60%), dog too rare (5 < 20)
    est.set_params(tag_dict_min_count=5).fit(X, y)
    got = {names[a]: est.classes_[k] for a, k in zip(est.model_.tag_attrs, est.model_.tag_labels)}
    assert got == {"w=the": "DET", "w=dog": "NOUN"}
    est.set_params(tag_dict_min_share=0.6).fit(X, y)
    assert est.tag_dict_size_ == 3
    est.set_params(tag_dict_min_share=0.61).fit(X, y)
    assert est.tag_dict_size_ == 2


def test_tag_dict_is_honoured_when_tagging_and_skips_training():
    X, y = _dict_corpus()
    est = cseq.GreedyTagger(tag_dict="w=", tag_dict_min_count=5, random_state=0).fit(X, y)
    # Scores alone would tag 'the' DET; make them say NOUN everywhere: the dictionary wins.
    model = est.model_
    noun = est.classes_.index("NOUN")
    model.params[:] = 0.0
    model.start[noun] = model.transitions[:, noun] = 10.0
    assert est.predict([[["w=the"], ["w=dog"], ["w=cat"], ["w=run"]]]) == \
        [["DET", "NOUN", "NOUN", "NOUN"]]
    # Tokens in the dictionary are not training examples: only 'run' tokens were scored.
    est2 = cseq.GreedyTagger(tag_dict="w=", tag_dict_min_count=5, max_iter=1,
                             shuffle=False, average=False).fit(X, y)
    the = est2.featurizer_.attribute_names().index("w=the")
    k = slice(est2.model_.attr_ptr[the], est2.model_.attr_ptr[the + 1])
    assert np.all(est2.model_.params[k] == 0.0)


def test_tag_dict_survives_the_model_file(tmp_path):
    X, y = _dict_corpus()
    est = cseq.GreedyTagger(tag_dict="w=", tag_dict_min_count=5, random_state=0).fit(X, y)
    est.save(tmp_path / "g.cseq")
    loaded = cseq.load(tmp_path / "g.cseq")
    assert isinstance(loaded.model_, GreedyChain)
    np.testing.assert_array_equal(loaded.model_.tagdict, est.model_.tagdict)
    np.testing.assert_array_equal(loaded.model_.params, est.model_.params)
    assert loaded.predict(X) == est.predict(X)
    assert pickle.loads(pickle.dumps(est)).tag_dict_size_ == 2


@pytest.mark.parametrize("change", ["unsorted", "attr_range", "label_range", "length",
                                    "missing", "params_short"])
def test_bad_history_or_tag_dict_in_a_model_file_is_refused(change):
    X, y = _dict_corpus()
    est = cseq.GreedyTagger(tag_dict="w=", tag_dict_min_count=5, random_state=0).fit(X, y)
    header, arrays = serialize.unpack(est.to_bytes())
    attrs, labels = arrays["model/tag_attrs"], arrays["model/tag_labels"]
    if change == "unsorted":
        arrays["model/tag_attrs"] = attrs[::-1].copy()
    elif change == "attr_range":
        attrs[-1] = est.model_.n_attributes
    elif change == "label_range":
        labels[0] = len(est.classes_)
    elif change == "length":
        arrays["model/tag_labels"] = labels[:1].copy()
    elif change == "missing":
        del arrays["model/tag_attrs"]
    else:
        arrays["model/params"] = arrays["model/params"][:est.model_.layout["chain_params"]].copy()
    header = {k: v for k, v in header.items() if k not in ("arrays", "library", "library_version")}
    with pytest.raises(ModelFormatError):
        serialize.loads(serialize.pack(header, arrays))


def test_predict_in_parallel_blocks_equals_one_thread():
    rng = np.random.default_rng(5)
    X = [[[f"w={rng.integers(8)}"] for _ in range(rng.integers(1, 9))] for _ in range(200)]
    y = [[f"t{int(t[0][2:]) % 3}" for t in s] for s in X]
    est = cseq.GreedyTagger(random_state=0).fit(X, y)
    assert est.predict(X, n_jobs=2) == est.predict(X)
    decoded = est.model_.decode(est.featurizer_.transform(X), n_jobs=2)
    np.testing.assert_array_equal(decoded, est.model_.decode(est.featurizer_.transform(X)))


def test_trains_with_templates_and_the_dictionary_on_a_template_attribute():
    X = [["The", "dog", "runs"], ["A", "cat", "sleeps"], ["The", "cat", "runs"]] * 10
    y = [["DET", "NOUN", "VERB"]] * 30
    feats = cseq.TemplateFeaturizer("U00:%x[0,0]\nU01:%x[0,0:suffix2]")
    est = cseq.GreedyTagger(features=feats, tag_dict="U00:", tag_dict_min_count=11,
                            random_state=0).fit(X, y)
    names = est.featurizer_.attribute_names()
    assert sorted(names[a] for a in est.model_.tag_attrs) == ["U00:The", "U00:cat", "U00:runs"]
    assert est.predict([["The", "dog", "sleeps"]]) == [["DET", "NOUN", "VERB"]]


@pytest.mark.parametrize("params", [
    {"tag_dict": ""}, {"tag_dict": 3}, {"tag_dict_min_count": 0},
    {"tag_dict_min_share": 1.5}, {"tag_dict_min_share": -0.1}, {"tag_dict_min_share": "x"},
    {"max_iter": 0}, {"random_state": -2},
])
def test_bad_parameters_raise_input_error(params):
    X, y = _dict_corpus()
    with pytest.raises(InputError):
        cseq.GreedyTagger(**params).fit(X, y)


def test_tag_dict_prefix_that_names_nothing_is_an_error():
    X, y = _dict_corpus()
    with pytest.raises(InputError, match="no attribute name starts with"):
        cseq.GreedyTagger(tag_dict="word=").fit(X, y)


def test_no_marginals_or_path_features():
    X, y = _dict_corpus()
    est = cseq.GreedyTagger().fit(X, y)
    corpus = est.featurizer_.transform(X)
    with pytest.raises(InputError):
        est.model_.marginals(corpus)
    with pytest.raises(InputError):
        est.model_.path_features(corpus)


def test_trainer_refuses_a_vector_of_the_chain_layout():
    _, corpus, model = pack([[["a"], ["b"]]], [["x", "y"]])
    short = _chain.AveragedParams(n_params=model.layout["chain_params"])
    with pytest.raises(ValueError, match="greedy layout .* without the pair block"):
        _greedy.GreedyTrainer(model.index, corpus.view(), short)
    with pytest.raises(ValueError, match="tagdict"):
        _greedy.GreedyTrainer(model.index, corpus.view(),
                              _chain.AveragedParams(n_params=len(model.params)),
                              np.zeros(model.n_attributes + 1, dtype=np.int32))
