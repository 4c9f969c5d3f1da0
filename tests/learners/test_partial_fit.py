"""Partial_fit: training in batches, with the training state kept in model files.

What "one call over the concatenation" means here: ``partial_fit(A)`` then
(after a save and a load) ``partial_fit(B)`` against one ``partial_fit(A + B)``
on a fresh estimator: one pass over the same sequences in the same order
(``shuffle=False``).  For the perceptron with ``all_states=True`` and every
label known from the first call the two give identical weights.  When a later
batch brings new labels or attribute-label pairs the model grows; the oracle
below (a perceptron written from its definition that stores every weight
vector, grown by name between batches) gives the exact expected weights.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import cseq
import cseq.learners.partial
from cseq import CRF, StructuredPerceptron, StructuredSVM
from cseq import registry
from cseq.io import serialize
from cseq.exceptions import InputError, ModelFormatError
from cseq.conll import read_conllu
from cseq.features import FeatureVocabulary
from cseq.chain.model import LinearChain
from cseq.learners.partial import grow
from cseq.chain.sequences import Sequences
from cseq.templates import TemplateFeaturizer

from support.budget import examples
from support.registered import commands, estimators, quick
from support.oracle import NaivePerceptron
from support.shared_data import EWT, needs
from support.strategies import corpora
from support.presets import UNTAGGED


def _toy(seed: int, n: int, labels: str = "ABC"):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        ys = [labels[rng.integers(len(labels))] for _ in range(rng.integers(1, 6))]
        X.append([[f"w={lab}{rng.integers(3)}", f"n={rng.integers(5)}"] for lab in ys])
        y.append(ys)
    return X, y


XA, YA = _toy(0, 40)
XB, YB = _toy(1, 40, "ABCD")
XC, YC = _toy(2, 30, "ABCDE")

#: Every registered command that trains in batches (registry.Command.resumable).
LEARNERS = {name: lambda name=name, **kw: quick(name, random_state=3, **kw)
            for name in commands(lambda command: command.resumable)}


def _same_state(a, b) -> None:
    assert a.classes_ == b.classes_
    assert a.featurizer_.attribute_names() == b.featurizer_.attribute_names()
    np.testing.assert_array_equal(a.model_.attr_ptr, b.model_.attr_ptr)
    np.testing.assert_array_equal(a.model_.attr_labels, b.model_.attr_labels)
    np.testing.assert_array_equal(a.model_.params, b.model_.params)
    assert set(a._partial.arrays) == set(b._partial.arrays)
    for k in a._partial.arrays:
        np.testing.assert_array_equal(a._partial.arrays[k], b._partial.arrays[k])
    assert a._partial.scalars == b._partial.scalars
    assert a._partial.n_sequences == b._partial.n_sequences


# -- save and load are transparent ------------------------------------------------


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_save_and_load_between_batches_change_nothing(tmp_path, learner, order):
    a = LEARNERS[learner](order=order).partial_fit(XA, YA)
    a.save(tmp_path / "m.cseq")
    b = cseq.load(tmp_path / "m.cseq")
    _same_state(a, b)
    for X, y in ((XB, YB), (XC, YC)):
        a.partial_fit(X, y)
        b = pickle.loads(pickle.dumps(b))  # through the model file again
        b.partial_fit(X, y)
        _same_state(a, b)
    assert a.classes_ == list("ABCDE")
    assert [r["iteration"] for r in b.history_] == [1, 2, 3]
    assert b.n_iter_ == 3
    assert a.predict(XC) == b.predict(XC)


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_one_batch_is_one_epoch_of_fit(learner):
    """The first partial_fit call is fit's first epoch (same weights, same shuffling)."""
    X, y = XA + XB, YA + YB
    part = LEARNERS[learner](all_states=True).partial_fit(X, y)
    whole = LEARNERS[learner](all_states=True, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cseq.ConvergenceWarning)  # the CRF's max_iter=1
        whole.fit(X, y)
    assert part.classes_ == whole.classes_
    np.testing.assert_array_equal(part.model_.params, whole.model_.params)


# -- two halves against one call ---------------------------------------------------


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("declare", [False, True])
def test_perceptron_two_halves_equal_one_call(tmp_path, order, declare):
    # A lacks label D; declaring every label up front (classes=) keeps the label set fixed.
    XA2, YA2 = _toy(5, 60, "ABCD") if not declare else (XA, YA)
    classes = list("ABCD") if declare else None
    first = StructuredPerceptron(shuffle=False, all_states=True, order=order, random_state=0)
    first.partial_fit(XA2, YA2, classes=classes)
    first.save(tmp_path / "half.cseq")
    first = cseq.load(tmp_path / "half.cseq")
    first.partial_fit(XB, YB)
    one = StructuredPerceptron(shuffle=False, all_states=True, order=order, random_state=0)
    one.partial_fit(XA2 + XB, YA2 + YB, classes=classes)
    _same_state(first, one)
    assert first._partial.scalars["n_examples"] == len(XA2) + len(XB)


def test_template_featurizer_numbers_attributes_as_one_call():
    sents = [[w for w in s.split()] for s in
             ("the cat sat", "a dog ran fast", "the dog sat", "cats ran", "a cat")]
    f = TemplateFeaturizer(UNTAGGED["pos"])
    f.partial_fit_transform(sents[:2])
    loaded = TemplateFeaturizer.from_state(*f.get_state())
    one = TemplateFeaturizer(UNTAGGED["pos"])
    whole = one.fit_transform(sents)
    for g in (f, loaded):
        part = g.partial_fit_transform(sents[2:])
        assert g.attribute_names() == one.attribute_names()
        np.testing.assert_array_equal(g.get_state()[1]["keys"], one.get_state()[1]["keys"])
        n = whole.seq_ptr[2]
        np.testing.assert_array_equal(part.attr_ids, whole.attr_ids[whole.tok_ptr[n]:])
    # The names survive a save and a load after growing.
    again = TemplateFeaturizer.from_state(*loaded.get_state())
    assert again.attribute_names() == one.attribute_names()


def test_template_featurizer_min_freq_and_hashing():
    with pytest.raises(InputError, match="min_freq"):
        TemplateFeaturizer(UNTAGGED["pos"], min_freq=2).partial_fit_transform([["a"]])
    h = TemplateFeaturizer(UNTAGGED["pos"], n_buckets=97)
    a = h.partial_fit_transform([["a", "b"]])
    np.testing.assert_array_equal(a.attr_ids, h.transform([["a", "b"]]).attr_ids)
    assert h.n_attributes == 97


def test_perceptron_with_templates_two_halves(tmp_path):
    sents = [s.split() for s in ("the cat sat", "a dog ran fast", "the dog sat", "cats ran",
                                 "a cat", "dogs sat fast")]
    tags = [["D" if w in ("the", "a") else "V" if w in ("sat", "ran") else "A" if w == "fast"
             else "N" for w in s] for s in sents]
    est = StructuredPerceptron(features=TemplateFeaturizer(UNTAGGED["pos"]), shuffle=False, random_state=0,
                               all_states=True)
    est.partial_fit(sents[:3], tags[:3], classes=["A", "D", "N", "V"])
    est.save(tmp_path / "t.cseq")
    est = cseq.load(tmp_path / "t.cseq")
    est.partial_fit(sents[3:], tags[3:])
    one = StructuredPerceptron(features=TemplateFeaturizer(UNTAGGED["pos"]), shuffle=False, random_state=0,
                               all_states=True).partial_fit(sents, tags)
    _same_state(est, one)


# -- growth: the oracle ------------------------------------------------------------


def _positions(attr_ptr, attr_labels, labels, n_attrs, order):
    """Where each named weight sits in the flat vector: (attribute id, label names) -> index."""
    L, n_state = len(labels), len(attr_labels)
    pos = {}
    for a in range(n_attrs):
        for k in range(int(attr_ptr[a]), int(attr_ptr[a + 1])):
            pos[("s", a, labels[int(attr_labels[k])])] = k
    for i in range(L):
        pos[("start", labels[i])] = n_state + L * L + i
        pos[("end", labels[i])] = n_state + L * L + L + i
        for j in range(L):
            pos[("t", labels[i], labels[j])] = n_state + i * L + j
            if order == 2:
                for m in range(L):
                    pos[("t2", labels[i], labels[j], labels[m])] = (
                        n_state + L * L + 2 * L + (i * L + j) * L + m)
    return pos


def _named(vec, *layout):
    """A parameter vector as a dict keyed by names."""
    return {key: float(vec[k]) for key, k in _positions(*layout).items()}


def _unnamed(named, *layout):
    """Inverse of :func:`_named` on a (larger) layout; names it lacks are 0."""
    pos = _positions(*layout)
    assert set(named) <= set(pos), "growth lost a weight"
    out = np.zeros(len(pos))
    for key, v in named.items():
        out[pos[key]] = v
    return out


def _state_index(batches_corpora, labels, n_attrs, all_states):
    """Pairs (attribute, label id) seen in gold so far (every pair with all_states)."""
    L = len(labels)
    pairs = set()
    for corpus, names in batches_corpora:
        for t in range(corpus.n_tokens):
            for f in range(int(corpus.tok_ptr[t]), int(corpus.tok_ptr[t + 1])):
                pairs.add((int(corpus.attr_ids[f]), labels.index(names[t])))
    if all_states:
        pairs = {(a, y) for a in range(n_attrs) for y in range(L)}
    attr_ptr = np.zeros(n_attrs + 1, dtype=np.int64)
    attr_labels = []
    for a in range(n_attrs):
        ys = sorted(y for b, y in pairs if b == a)
        attr_labels.extend(ys)
        attr_ptr[a + 1] = attr_ptr[a] + len(ys)
    return attr_ptr, np.array(attr_labels, dtype=np.int32)


def _naive_batches(batches, order, all_states):
    """Averaged perceptron over batches, grown by name between them (see the module doc)."""
    vocab = FeatureVocabulary()
    seen, labels, history, weights = [], [], [], None
    layout_prev = None
    for X, y in batches:
        corpus = vocab.fit_transform(X)
        flat = [lab for seq in y for lab in seq]
        seen.append((corpus, flat))
        labels = sorted(set(labels) | set(flat))
        n_attrs = vocab.n_attributes
        ptr, lab = _state_index(seen, labels, n_attrs, all_states)
        layout = (ptr, lab, labels, n_attrs, order)
        if layout_prev is not None:
            weights = _unnamed(_named(weights, *layout_prev), *layout)
            history = [_unnamed(_named(h, *layout_prev), *layout) for h in history]
        ids = np.array([labels.index(v) for v in flat], dtype=np.int32)
        packed = Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values, ids)
        p = NaivePerceptron(ptr, lab, len(labels), packed, order=order)
        if weights is not None:
            p.weights = weights.copy()
        p.history = list(history)
        for s in range(packed.n_sequences):
            p.step(s)
        weights, history, layout_prev = p.weights, p.history, layout
    return _named(np.mean(np.array(history), axis=0), *layout_prev), layout_prev


@given(st.lists(corpora(max_seqs=3, max_len=4, values="dyadic"), min_size=2, max_size=3),
       st.sampled_from([1, 2]), st.booleans())
@example([([[["f1"], ["f2"]], [["f2"], ["f1"]]], [["n", "b"], ["b", "n"]]),
          ([[["f1"], ["f3"]]], [["a", "z"]])], 1, False)  # labels sort before and after
@example([([[["f1"], ["f2"], ["f1"]]], [["z", "b", "z"]]),
          ([[["f2"], ["f3"], ["f2"], ["f1"]]], [["a", "n", "b", "z"]])], 2, True)
@examples(40)
def test_growing_batches_match_the_oracle(batches, order, all_states):
    """New labels, attributes and pairs in later batches: exact weights, by name."""
    batches = [(X, y) for X, y in batches if any(len(s) for s in X)]
    if not batches:
        return
    est = StructuredPerceptron(shuffle=False, all_states=all_states, order=order)
    for X, y in batches:
        est = pickle.loads(pickle.dumps(est.partial_fit(X, y)))
    expected, (ptr, lab, labels, n_attrs, _) = _naive_batches(batches, order, all_states)
    assert est.classes_ == labels
    got = _named(est.model_.params, est.model_.attr_ptr, est.model_.attr_labels, est.classes_,
                 est.model_.n_attributes, order)
    assert set(got) == set(expected)
    for k, v in expected.items():
        assert got[k] == pytest.approx(v, abs=1e-9), k


def test_grow_moves_weights_by_name():
    old = LinearChain(2, np.array([0, 1, 3], dtype=np.int64), np.array([1, 0, 1], dtype=np.int32),
                      np.arange(1.0, 3 + 4 + 4 + 1), order=1)
    # New labels: old 0 -> 1, old 1 -> 3 (two labels sort before/between); a new attribute.
    perm = np.array([1, 3], dtype=np.int32)
    new = LinearChain(4, np.array([0, 2, 4, 5], dtype=np.int64),
                      np.array([0, 3, 1, 3, 2], dtype=np.int32), np.zeros(5 + 16 + 8), order=1)
    g = grow(old.params, old, new, perm)
    np.testing.assert_array_equal(g[:5], [0, 1, 2, 3, 0])  # (0,B)->(0,3); (1,A)->(1,1); (1,B)->(1,3)
    T = g[5:21].reshape(4, 4)
    assert T[1, 1] == 4 and T[1, 3] == 5 and T[3, 1] == 6 and T[3, 3] == 7
    assert T.sum() == 4 + 5 + 6 + 7
    np.testing.assert_array_equal(g[21:25], [0, 8, 0, 9])
    np.testing.assert_array_equal(g[25:29], [0, 10, 0, 11])


def test_a_label_first_seen_later_is_learnt():
    est = StructuredPerceptron(random_state=0).partial_fit(XA, YA)
    assert est.classes_ == list("ABC")
    for _ in range(3):
        est.partial_fit(XB, YB)
    assert est.classes_ == list("ABCD")
    pred = [lab for seq in est.predict(XB) for lab in seq]
    gold = [lab for seq in YB for lab in seq]
    assert "D" in pred and est.score(XB, YB) > 0.9
    assert gold.count("D") > 0


# -- errors --------------------------------------------------------------------------


def test_errors_are_clear():
    with pytest.raises(InputError, match="algorithm='sgd'"):
        CRF().partial_fit(XA, YA)
    with pytest.raises(InputError, match="fit\\(\\)"):
        StructuredPerceptron(max_iter=1).fit(XA, YA).partial_fit(XB, YB)
    est = StructuredPerceptron().partial_fit(XA, YA)
    est.set_params(features=TemplateFeaturizer(UNTAGGED["pos"]))
    with pytest.raises(InputError, match="features changed"):
        est.partial_fit(XB, YB)
    est = StructuredSVM().partial_fit(XA, YA)
    est.set_params(order=2)
    with pytest.raises(InputError, match="order changed"):
        est.partial_fit(XB, YB)
    with pytest.raises(InputError, match="min_freq"):
        StructuredPerceptron(features=TemplateFeaturizer(min_freq=2)).partial_fit(
            [["a", "b"]], [["X", "Y"]])
    # A learner that no resumable command trains has no partial_fit.
    for cls in estimators(lambda cls: not any(
            command.resumable for command in registry.LEARNERS[cls.__name__].commands)):
        assert not hasattr(cls(), "partial_fit")
    # fit after partial_fit starts over and keeps no training state.
    est = StructuredPerceptron(max_iter=1).partial_fit(XA, YA)
    est.fit(XA, YA)
    assert est._partial is None
    with pytest.raises(InputError, match="fit\\(\\)"):
        est.partial_fit(XA, YA)
    assert "training/w" not in serialize.unpack(est.to_bytes())[1]


def test_a_bad_batch_changes_nothing():
    est = StructuredPerceptron().partial_fit(XA, YA)
    before = est.to_bytes()
    bad_y = [list(s) for s in YB]
    bad_y[3] = bad_y[3][:-1]
    with pytest.raises(InputError, match="sequence 3"):
        est.partial_fit(XB, bad_y)
    bad_y = [list(s) for s in YB]
    bad_y[5][0] = 7
    with pytest.raises(cseq.InputTypeError):
        est.partial_fit(XB, bad_y)
    assert est.to_bytes() == before


# Where partial_fit is interrupted: (the object, the name of what it
# calls, whether the interrupt comes before or after that call does its work).
STAGES = {
    "checking the batch": (TemplateFeaturizer, "transform", "after"),
    "growing the featurizer": (TemplateFeaturizer, "partial_fit_transform", "after"),
    "relabelling": (cseq.learners.partial, "relabel", "after"),
    "growing the state index": (cseq.learners.partial, "_grown_index", "after"),
    "growing the weights": (cseq.learners.partial, "grow", "after"),
    "copying the counters": (cseq.learners.partial.copy, "deepcopy", "after"),
    "the pass": ("learner", "_partial_pass", "before"),
    "after the pass": ("learner", "_partial_pass", "after"),
}


def _words(X):
    return [[tok[0][2:] for tok in seq] for seq in X]


@pytest.mark.parametrize("exc", [KeyboardInterrupt, MemoryError])
@pytest.mark.parametrize("stage", sorted(STAGES))
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_an_interrupted_batch_leaves_the_previous_state_whole(monkeypatch, tmp_path, learner,
                                                              stage, exc):
    """Interrupted anywhere before its commit, partial_fit changes nothing: the estimator
    predicts, saves and continues exactly as if the batch had not been given."""
    est = LEARNERS[learner](features=TemplateFeaturizer(UNTAGGED["pos"]))
    est.partial_fit(_words(XA), YA)
    before, predicted = est.to_bytes(), est.predict(_words(XC))
    owner, name, when = STAGES[stage]
    owner = type(est) if owner == "learner" else owner
    real = getattr(owner, name)

    def interrupted(*args, **kwargs):
        if when == "after":
            real(*args, **kwargs)
        raise exc
    monkeypatch.setattr(owner, name, interrupted)
    with pytest.raises(exc):
        est.partial_fit(_words(XC), YC)  # brings two labels and new attributes
    monkeypatch.undo()
    assert est.to_bytes() == before
    assert est.predict(_words(XC)) == predicted
    est.save(tmp_path / "m.cseq")
    assert cseq.load(tmp_path / "m.cseq").to_bytes() == before
    uninterrupted = serialize.loads(before).partial_fit(_words(XC), YC)
    assert est.partial_fit(_words(XC), YC).to_bytes() == uninterrupted.to_bytes()


# -- the model file --------------------------------------------------------------------


def _tamper(data: bytes, header_fn=None, arrays_fn=None) -> bytes:
    header, arrays = serialize.unpack(data)
    header = {k: v for k, v in header.items() if k not in ("arrays", "library",
                                                           "library_version")}
    if header_fn:
        header_fn(header)
    if arrays_fn:
        arrays_fn(arrays)
    return serialize.pack(header, arrays)


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_the_model_file_keeps_and_checks_the_training_state(learner):
    est = LEARNERS[learner]().partial_fit(XA, YA)
    data = est.to_bytes()
    header, arrays = serialize.unpack(data)
    assert set(k for k in arrays if k.startswith("training/")) == {
        f"training/{k}" for k in est._partial_arrays}
    assert header["training"]["partial"]["n_sequences"] == len(XA)
    serialize.loads(_tamper(data))  # untouched: loads

    def nan(arrays):
        arrays["training/w"] = arrays["training/w"].copy()
        arrays["training/w"][0] = np.nan

    def short(arrays):
        arrays["training/w"] = arrays["training/w"][:-1].copy()

    def extra(arrays):
        arrays["training/v"] = arrays["training/w"].copy()

    def drop(arrays):
        del arrays["training/w"]

    for fn in (nan, short, extra, drop):
        with pytest.raises(ModelFormatError):
            serialize.loads(_tamper(data, arrays_fn=fn))

    def set_(path, value):
        def fn(header):
            d = header["training"]["partial"]
            for k in path[:-1]:
                d = d[k]
            if value is KeyError:
                del d[path[-1]]
            else:
                d[path[-1]] = value
        return fn
    counter = "t" if learner == "crf-sgd" else "n_examples"
    for path, value in [(("n_sequences",), 0), (("n_sequences",), "3"), ((counter,), -1),
                        ((counter,), 1.5), ((counter,), KeyError), (("rng", "state"), -1),
                        (("rng", "inc"), 1 << 130), (("rng",), "seed"), (("surprise",), 1)]:
        with pytest.raises(ModelFormatError):
            serialize.loads(_tamper(data, header_fn=set_(path, value)))
    with pytest.raises(ModelFormatError):
        serialize.loads(_tamper(data, header_fn=lambda h: h["training"].pop("partial")))


# -- real data -------------------------------------------------------------------------


@needs(EWT / "en_ewt-ud-train.conllu")
def test_ewt_two_halves_with_a_save_and_load_equal_one_call(tmp_path):
    """The acceptance test: EWT (first 1,200 sentences), perceptron, templates, identical weights."""
    X, y = read_conllu(EWT / "en_ewt-ud-train.conllu")
    X, y = X[:1200], y[:1200]
    classes = sorted({lab for seq in y for lab in seq})

    def make():
        return StructuredPerceptron(features=TemplateFeaturizer(UNTAGGED["pos"]), shuffle=False, random_state=0,
                                    all_states=True)
    half = make().partial_fit(X[:600], y[:600], classes=classes)
    half.save(tmp_path / "half.cseq")
    half = cseq.load(tmp_path / "half.cseq")
    half.partial_fit(X[600:], y[600:])
    one = make().partial_fit(X, y, classes=classes)
    _same_state(half, one)
    assert half.featurizer_.n_attributes > 10000


def test_a_batch_whose_loss_overflows_is_refused_and_the_model_still_saves():
    # Weights of 1e160 (a crafted file's training state loads: they are
    # finite) made the SGD loss inf: partial_fit recorded it in history_ and
    # every later save raised ValueError ("Out of range float values are not
    # JSON compliant").  Found by the model-file fuzzer.
    from support import fuzz_targets
    est = serialize.loads(fuzz_targets.seed_models()["crf-sgd-partial"])
    est._partial.arrays["w"][:] = 1e160
    history = list(est.history_)
    with pytest.raises(cseq.ConvergenceError, match="the loss of this batch is inf"):
        est.partial_fit(fuzz_targets.X_VOC, fuzz_targets.Y_VOC)
    assert est.history_ == history
    assert serialize.loads(est.to_bytes()).history_ == history
