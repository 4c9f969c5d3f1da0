"""The shared kernel pieces written once: the per-sequence prologue, the
one open-addressing table of the three interners, the order-index check and the margin
learners' epoch loop; and one algorithm family per kernel module."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cseq.learners import _arow, _greedy, _pa, _crf_sgd, _ssvm, _perceptron
from cseq.chain import _crf, _forward_backward, _chain
from cseq.features import _pack, _keytable, _templates, _columns

from cseq.learners.greedy import GreedyChain
from cseq.features.template_language import sentence_rows

from support.packing import pack
from support.paths import ROOT

# The sources beside the tests (a checkout or an unpacked sdist; a wheel holds
# no .pyx/.pxd); kernels live in the sub-packages.
CSEQ = ROOT / "cseq"


def _source(pattern: str) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(CSEQ.rglob(pattern))}


def _calls(name: str) -> dict[str, int]:
    """Call sites of ``name(`` per .pyx/.pxd file (definitions and declarations excluded)."""
    found = {}
    for fname, text in {**_source("*.pyx"), **_source("*.pxd")}.items():
        n = len(re.findall(rf"(?<![\w.]){name}\(", text)) - len(
            re.findall(rf"cdef [^\n(=]*\b{name}\(", text))
        if n:
            found[fname] = n
    return found


def test_the_per_sequence_prologue_is_written_once():
    # Sequence kernels score a sequence's emissions only through
    # _chain.sequence_emissions; the greedy tagger's per-token step (one token,
    # not a sequence) is the one other caller of score_emissions.
    assert _calls("score_emissions") == {"_chain.pxd": 1, "_chain.pyx": 2, "_greedy.pyx": 1}
    users = _calls("sequence_emissions")
    for kernel in ("_decode.pyx", "_forward_backward.pyx", "_crf.pyx", "_clamped.pyx",
                   "_memm.pyx", "_ssvm.pyx", "_perceptron.pyx", "_greedy.pyx", "_margin.pxd"):
        assert kernel in users, kernel


def test_one_probe_and_one_grow_serve_the_three_interners():
    # The linear probe `(i + 1) & mask` is written in _hash.pxd only.
    probes = {f: t.count("+ 1) & ") for f, t in {**_source("*.pyx"), **_source("*.pxd")}.items()}
    assert {f: n for f, n in probes.items() if n} == {"_hash.pxd": 2}
    for fname in ("_pack.pyx", "_keytable.pyx", "_tokens.pyx", "_chars.pyx"):
        text = _source(fname)[fname]
        assert "table_probe(" in text and "table_grow(" in text, fname


def test_the_order_check_is_written_once():
    texts = {**_source("*.pyx"), **_source("*.pxd")}
    raising = [f for f, t in texts.items() if 'raise IndexError(f"sequence index' in t]
    assert raising == ["_chain.pyx"]


def test_each_kernel_module_holds_one_family():
    # The CRF objective and its SGD step left the forward-backward module.
    assert not hasattr(_forward_backward, "crf_log_z_and_expectations")
    assert not hasattr(_forward_backward, "sequence_loss_and_gradient")
    assert hasattr(_crf, "crf_log_z_and_expectations")
    assert "crf_sequence_update" in _source("_crf.pxd")["_crf.pxd"]
    assert "sequence_update" not in _source("_forward_backward.pxd")["_forward_backward.pxd"]
    # Decoding, the word rows and the OpenMP probe are three modules; so are the
    # keys of templates and the key table that maps them to ids.
    from cseq._core import _parallel
    from cseq.chain import _decode, _word_rows
    assert not any(hasattr(_decode, n) for n in ("word_rows", "WordRowCache", "openmp_enabled"))
    assert hasattr(_word_rows, "WordRowCache") and hasattr(_parallel, "openmp_enabled")
    assert not any(hasattr(_templates, n) for n in ("KeyTable", "TemplatePlan", "WordMemo"))
    assert hasattr(_keytable, "KeyTable") and hasattr(_templates, "extract_keys")
    # The token functions and their cache, and the interning of a corpus.
    from cseq.features import _tokens
    assert not hasattr(_tokens, "intern_columns") and hasattr(_tokens, "apply_function")
    assert hasattr(_columns, "intern_for_lookup") and hasattr(_columns, "intern_columns")


X3 = [[{"a": 1.0}, {"b": 1.0}], [{"a": 1.0}], [{"c": 2.0}, {"a": 1.0}, {"b": 1.0}]]
Y3 = [["A", "B"], ["A"], ["C", "A", "B"]]


@pytest.fixture(scope="module")
def small():
    _, corpus, model = pack(X3, Y3)
    return corpus, model


def _trainers(corpus, model):
    n = len(model.params)
    _, greedy_corpus, greedy = pack(X3, Y3, chain=GreedyChain)
    yield "perceptron", _perceptron.PerceptronTrainer(
        model.index, corpus.view(), _chain.AveragedParams(n_params=n)).train_epoch
    yield "ssvm", _ssvm.SSVMTrainer(
        model.index, corpus.view(), _chain.AveragedParams(n_params=n), 0.1, None).train_epoch
    yield "greedy", _greedy.GreedyTrainer(
        greedy.index, greedy_corpus.view(),
        _chain.AveragedParams(n_params=len(greedy.params))).train_epoch
    yield "pa", _pa.PATrainer(
        model.index, corpus.view(), _chain.AveragedParams(n_params=n), 1, 1.0,
        True).train_epoch
    yield "arow", _arow.AROWTrainer(
        model.index, corpus.view(), np.zeros(n), np.ones(n), 1.0).train_epoch
    sgd = _crf_sgd.CRFSGDTrainer(model.index, corpus.view(), np.zeros(n))
    yield "sgd", lambda order: sgd.epoch(order, 0.1, 1.0, 0)


@pytest.mark.parametrize("bad", [-1, 3, 2**40])
def test_every_training_entry_refuses_an_order_out_of_range(small, bad):
    corpus, model = small
    for _name, epoch in _trainers(corpus, model):
        with pytest.raises(IndexError, match=f"sequence index {bad} out of range"):
            epoch(np.array([0, bad, 1], dtype=np.int64))


def test_margin_epochs_count_errors_and_losses(small):
    # One pass through the shared margin_epoch: under zero weights every
    # label but the first (ties go to label 0) is wrong.
    corpus, model = small
    n = len(model.params)
    params = _chain.AveragedParams(n_params=n)
    errors, loss = _pa.PATrainer(model.index, corpus.view(), params, 1, 1.0, True).train_epoch(
        np.arange(3, dtype=np.int64))
    assert errors > 0 and loss > 0 and params.n_examples == 3
    mean, cov = np.zeros(n), np.ones(n)
    errors, loss = _arow.AROWTrainer(model.index, corpus.view(), mean, cov, 1.0).train_epoch(
        np.arange(3, dtype=np.int64))
    assert errors > 0 and loss > 0 and (cov < 1).any()


def test_interners_keep_ids_through_many_grows_and_copies():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**63, size=(5000, 1), dtype=np.uint64)
    kt = _keytable.KeyTable(0)
    st = _pack.StringTable(0)
    words = [f"w{k}" for k in keys[:, 0].tolist()]
    for i in range(0, 5000, 500):
        assert kt.add(keys[i:i + 500]).ravel().tolist() == list(range(i, i + 500))
        assert [st.add(w) for w in words[i:i + 500]] == list(range(i, i + 500))
        kc, sc = kt.copy(), st.copy()
        kc.add(rng.integers(0, 2**63, size=(50, 1), dtype=np.uint64))
        sc.add("only in the copy")
        assert len(kt) == i + 500 and len(st) == i + 500 and "only in the copy" not in st
        assert kc.lookup(keys[:i + 500]).ravel().tolist() == list(range(i + 500))
        assert [sc.get(w) for w in words[:i + 500]] == list(range(i + 500))
    assert kt.capacity >= 5000 / 0.7 and kt.lookup(keys).ravel().tolist() == list(range(5000))
    assert [st.get(w) for w in words] == list(range(5000)) and st.get("absent") == -1
    assert st.names() == words


def test_values_intern_cell_strings_in_first_seen_order_through_grows():
    X = [[(f"w{i % 3000}",) for i in range(k, k + 7)] for k in range(0, 7000, 7)]
    vals = _columns.intern_columns(X, 1, np.array([0], dtype=np.int32),
                                  np.array([0], dtype=np.int32), np.array([-1], dtype=np.int32),
                                  0, sentence_rows)[0]
    assert vals.strings() == [f"w{i}" for i in range(3000)]
    assert len(set(vals.hashes().tolist())) == 3000
