"""Shared test helpers: packing small corpora the way the estimators do, and kernel switches."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from cseq.chain import _decode
from cseq.chain import _labels
from cseq.features import FeatureVocabulary
from cseq.chain.model import LinearChain
from cseq.chain.sequences import Sequences


def pack(X, y, all_states=False, order=1, chain=LinearChain):
    """Featurizer, labeled corpus and zero model (a ``chain``, of ``order``), as the estimators
    build them."""
    fv = FeatureVocabulary()
    c = fv.fit_transform(X)
    label_ids: dict[str, int] = {}
    labels = _labels.pack_labels(y, c.seq_ptr, label_ids, True)
    corpus = Sequences(c.seq_ptr, c.tok_ptr, c.attr_ids, c.values, labels)
    extra = {} if order == 1 else {"order": order}
    model = chain.from_corpus(corpus, fv.n_attributes, len(label_ids), all_states, **extra)
    return fv, corpus, model


def random_params(model, seed, scale):
    """Normal random weights of ``model``'s layout, times ``scale``."""
    return np.random.default_rng(seed).normal(size=len(model.params)) * scale


def single_sequence(corpus, s):
    """Sequence ``s`` of a packed corpus as a corpus of its own (arrays sliced by hand)."""
    t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
    f0, f1 = int(corpus.tok_ptr[t0]), int(corpus.tok_ptr[t1])
    return Sequences(np.array([0, t1 - t0], dtype=np.int64),
                     np.ascontiguousarray(corpus.tok_ptr[t0:t1 + 1] - f0),
                     corpus.attr_ids[f0:f1].copy(), corpus.values[f0:f1].copy(),
                     None if corpus.labels is None else corpus.labels[t0:t1].copy())


@contextlib.contextmanager
def viterbi_step(avx2: bool):
    """Run Viterbi with the AVX2 step on or off (skips when the CPU has no AVX2)."""
    if _decode._set_avx2(avx2) != avx2:
        _decode._set_avx2(True)
        pytest.skip("this CPU has no AVX2")
    try:
        yield
    finally:
        _decode._set_avx2(True)
