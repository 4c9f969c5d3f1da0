"""Constrained decoding and forward-backward against brute-force enumeration.

Constraints are per-position allowed labels, allowed transitions and allowed
first/last labels (``cseq.chain._masks``).  Every reference enumerates all ``L ** n``
label paths, keeps those that satisfy the constraints position by position
(``oracle.path_allowed``) and takes the argmax, log Z and marginals over them;
first and second order, both forward-backward variants (scaled, log space),
the array API and ``LinearChain.decode/marginals`` over packed corpora.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cseq
from cseq.chain import _decode, _masks
from cseq.chain._masks import NoAllowedPath
from cseq.exceptions import InputError, InputTypeError

from support.budget import examples
from support.oracle import (
    brute_constrained,
    kernel_tie_break,
    path_allowed,
    path_score,
    sequence_emissions,
    split_params,
    trans2_of,
)
from support.strategies import chains, chains2, corpora, magnitude, masks, oracle_masks
from support.packing import pack

_unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)
seeds = st.integers(0, 2**32 - 1)


def first_dead(n, L, m) -> int:
    """The first position t such that no label prefix of length t + 1 satisfies the masks."""
    prefixes = [()]
    for t in range(n):
        nxt = []
        for p in prefixes:
            for y in range(L):
                q = p + (y,)
                ok = path_allowed(q, m["allowed"], m["allowed_transitions"], m["allowed_start"],
                                  None)
                if ok and (t < n - 1 or m["allowed_end"] is None or m["allowed_end"][y]):
                    nxt.append(q)
        if not nxt:
            return t
        prefixes = nxt
    return -1


def check_against_brute_force(E, T, start, end, T2, m):
    n, L = E.shape
    ref = brute_constrained(E, T, start, end, T2, **oracle_masks(m))
    kw = dict(transitions2=T2, **m)
    if len(ref["paths"]) == 0:
        dead = first_dead(n, L, m)
        assert dead >= 0
        for call in (cseq.viterbi, cseq.forward_backward):
            with pytest.raises(NoAllowedPath) as info:
                call(E, T, start, end, **kw)
            assert info.value.position == dead
            assert isinstance(info.value, InputError)
            assert f"position {dead}" in str(info.value)
        return
    assert first_dead(n, L, m) == -1
    mag = magnitude(E, T, start, end, T2)
    path, score = cseq.viterbi(E, T, start, end, **kw)
    assert path_allowed(path, **oracle_masks(m))
    assert score == pytest.approx(ref["best"], rel=1e-12, abs=1e-12 * mag)
    assert path_score(E, T, start, end, path, T2) == pytest.approx(ref["best"], rel=1e-12,
                                                                   abs=1e-12 * mag)
    result = cseq.forward_backward(E, T, start, end, **kw)
    log_z, marg, pairs = result[:3]
    assert log_z == pytest.approx(ref["log_z"], rel=0, abs=1e-10 * mag)
    atol = 1e-9 + 1e-13 * mag
    assert np.isfinite(marg).all() and np.isfinite(pairs).all()
    np.testing.assert_allclose(marg, ref["marginals"], rtol=0, atol=atol)
    np.testing.assert_allclose(pairs, ref["pairs"], rtol=0, atol=atol)
    # Disallowed labels and label pairs: exactly zero, not merely small.
    if m["allowed"] is not None:
        assert (marg[~m["allowed"]] == 0.0).all()
    if m["allowed_transitions"] is not None and n > 1:
        assert (pairs[:, ~m["allowed_transitions"]] == 0.0).all()
    if m["allowed_start"] is not None:
        assert (marg[0, ~m["allowed_start"]] == 0.0).all()
    if m["allowed_end"] is not None:
        assert (marg[-1, ~m["allowed_end"]] == 0.0).all()
    if T2 is not None:
        np.testing.assert_allclose(result[3], ref["triples"], rtol=0, atol=atol)


@examples(150)
@given(chains(max_n=5, max_labels=4), st.data())
def test_constrained_viterbi_and_marginals_match_brute_force(chain, data):
    E, T, start, end = chain
    m = data.draw(masks(*E.shape))
    check_against_brute_force(E, T, start, end, None, m)


@examples(100)
@given(chains2(), st.data())
def test_constrained_second_order_matches_brute_force(chain, data):
    E, T, start, end, T2 = chain
    m = data.draw(masks(*E.shape))
    check_against_brute_force(E, T, start, end, T2, m)


@examples(60)
@given(st.integers(1, 5), st.integers(1, 4), st.booleans(), st.data())
def test_constrained_viterbi_breaks_ties_as_unconstrained(n, L, order2, data):
    # Small integers: exact scores, many ties; the kernel's tie rule (lowest
    # labels, read from the end) holds among the allowed paths.
    ints = st.integers(-2, 2).map(float)
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=ints))
    T = data.draw(hnp.arrays(np.float64, (L, L), elements=ints))
    T2 = data.draw(hnp.arrays(np.float64, (L, L, L), elements=ints)) if order2 else None
    m = data.draw(masks(n, L))
    ref = brute_constrained(E, T, None, None, T2, **oracle_masks(m))
    if len(ref["paths"]) == 0:
        with pytest.raises(NoAllowedPath):
            cseq.viterbi(E, T, transitions2=T2, **m)
        return
    path, score = cseq.viterbi(E, T, transitions2=T2, **m)
    assert score == ref["best"]
    assert tuple(path.tolist()) == kernel_tie_break(ref["argmax"])


@examples(60)
@given(chains(max_n=5, max_labels=4), st.data())
def test_constrained_loss_augmented_viterbi_matches_brute_force(chain, data):
    E, T, start, end = chain
    n, L = E.shape
    m = data.draw(masks(n, L))
    gold = np.array(data.draw(st.lists(st.integers(0, L - 1), min_size=n, max_size=n)))
    ref = brute_constrained(E + (np.arange(L)[None, :] != gold[:, None]), T, start, end, None,
                            **oracle_masks(m))
    if len(ref["paths"]) == 0:
        with pytest.raises(NoAllowedPath):
            cseq.loss_augmented_viterbi(E, T, gold, None, start, end, **m)
        return
    path, score = cseq.loss_augmented_viterbi(E, T, gold, None, start, end, **m)
    assert path_allowed(path, **oracle_masks(m))
    assert score == pytest.approx(ref["best"], rel=1e-12, abs=1e-12 * magnitude(E, T, start, end))


@examples(40)
@given(chains(max_n=5, max_labels=4), st.data())
def test_all_allowed_masks_change_nothing(chain, data):
    E, T, start, end = chain
    n, L = E.shape
    ones = dict(allowed=np.ones((n, L), bool), allowed_transitions=np.ones((L, L), bool),
                allowed_start=np.ones(L, bool), allowed_end=np.ones(L, bool))
    p0, s0 = cseq.viterbi(E, T, start, end)
    p1, s1 = cseq.viterbi(E, T, start, end, **ones)
    assert p0.tolist() == p1.tolist() and s0 == s1
    r0 = cseq.forward_backward(E, T, start, end)
    r1 = cseq.forward_backward(E, T, start, end, **ones)
    assert r0[0] == r1[0]
    np.testing.assert_array_equal(r0[1], r1[1])


def test_forced_labels_decode_around_them():
    # The best path is 0 0 0; forcing label 2 at position 1 (a one-label row)
    # gives the best completion around it, found by enumeration.
    E = np.array([[2.0, 0.0, 0.0], [1.0, 0.5, 0.0], [2.0, 0.0, 1.9]])
    T = np.array([[0.0, 0.0, -3.0], [0.0, 0.0, 0.0], [-5.0, 0.0, 0.0]])
    allowed = np.ones((3, 3), bool)
    allowed[1] = [False, False, True]
    path, score = cseq.viterbi(E, T, allowed=allowed)
    assert path.tolist() == [1, 2, 2]
    assert score == 0.0 + 0.0 + 0.0 + 0.0 + 0.0 + 1.9
    assert cseq.viterbi(E, T)[0].tolist() == [0, 0, 0]


def test_no_nan_when_masked_transitions_leave_unreachable_states():
    # Label 1 is unreachable after position 0 (no transition into it): the
    # log-space recursion meets an all -inf term there and must give -inf,
    # not NaN; its marginal is exactly 0.
    E = np.zeros((4, 3))
    T = np.zeros((3, 3))
    tr = np.ones((3, 3), bool)
    tr[:, 1] = False
    log_z, marg, pairs = cseq.forward_backward(E, T, allowed_transitions=tr)
    assert np.isfinite(log_z) and not np.isnan(marg).any() and not np.isnan(pairs).any()
    assert (marg[1:, 1] == 0.0).all()
    ref = brute_constrained(E, T, trans_ok=tr)
    assert log_z == pytest.approx(ref["log_z"], abs=1e-12)
    np.testing.assert_allclose(marg, ref["marginals"], atol=1e-12)


def test_fully_masked_position_is_a_clear_error():
    E = np.zeros((3, 2))
    allowed = np.ones((3, 2), bool)
    allowed[1] = False
    for call in (cseq.viterbi, cseq.forward_backward):
        with pytest.raises(InputError, match="no allowed labelling reaches position 1"):
            call(E, np.zeros((2, 2)), allowed=allowed)


def test_bad_masks_are_refused():
    E, T = np.zeros((2, 2)), np.zeros((2, 2))
    with pytest.raises(InputError, match="allowed has shape"):
        cseq.viterbi(E, T, allowed=np.ones((3, 2), bool))
    with pytest.raises(InputError, match="allowed_transitions has shape"):
        cseq.forward_backward(E, T, allowed_transitions=np.ones((2,), bool))
    with pytest.raises(InputError, match="only 0/1"):
        cseq.viterbi(E, T, allowed_start=[0, 2])
    with pytest.raises(InputTypeError, match="boolean"):
        cseq.viterbi(E, T, allowed_end=[0.5, 1.0])
    with pytest.raises(InputTypeError, match="boolean"):
        cseq.viterbi(E, T, allowed="yes")
    # Integer 0/1 masks are accepted like booleans.
    assert cseq.viterbi(E, T, allowed_start=[0, 1])[0][0] == 1
    # An empty sequence still has its constraints checked, and decodes to nothing.
    assert cseq.viterbi(np.zeros((0, 2)), T, allowed=np.ones((0, 2), bool))[0].shape == (0,)
    with pytest.raises(InputError):
        cseq.viterbi(np.zeros((0, 2)), T, allowed=np.ones((1, 2), bool))


@examples(40)
@given(st.integers(1, 6), st.integers(1, 4), st.data())
def test_clamp_rows_keeps_only_the_given_labels(n, L, data):
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=_unit))
    labels = np.array(data.draw(st.lists(st.integers(-1, L - 1), min_size=n, max_size=n)),
                      dtype=np.int32)
    got = _masks.clamp_array(E, labels)
    for t in range(n):
        for j in range(L):
            if labels[t] < 0 or labels[t] == j:
                assert got[t, j] == E[t, j]
            else:
                assert got[t, j] == -np.inf


# ---------------------------------------------------------------------------
# Packed corpora: LinearChain.decode / marginals


@examples(40)
@given(corpora(max_len=4, max_labels=3), st.sampled_from([1, 2]), seeds,
       st.sampled_from([0.3, 3.0, 300.0]), st.data())
def test_model_decode_and_marginals_with_constraints_match_brute_force(Xy, order, seed, scale,
                                                                       data):
    _, corpus, model = pack(*Xy, order=order)
    L = model.n_labels
    model.params = np.random.default_rng(seed).normal(size=len(model.params)) * scale
    m = data.draw(masks(corpus.n_tokens, L))
    _, T, start, end = split_params(model.params, model.n_state, L)
    T2 = trans2_of(model.params, model.n_state, L)
    refs, first_bad = [], None
    for s in range(corpus.n_sequences):
        t0, t1 = int(corpus.seq_ptr[s]), int(corpus.seq_ptr[s + 1])
        if t1 == t0:
            refs.append(None)
            continue
        E = sequence_emissions(model.params, model.attr_ptr, model.attr_labels, L, corpus, s)
        om = oracle_masks(m)
        om["allowed"] = None if m["allowed"] is None else m["allowed"][t0:t1]
        ref = brute_constrained(E, T, start, end, T2, **om)
        if len(ref["paths"]) == 0 and first_bad is None:
            first_bad = s
        refs.append((t0, t1, E, ref))
    n_jobs = data.draw(st.sampled_from([1, 2]))
    if first_bad is not None:
        for call in (model.decode, model.marginals):
            with pytest.raises(NoAllowedPath, match=f"sequence {first_bad}:") as info:
                call(corpus, n_jobs=n_jobs, **m)
            assert info.value.sequence == first_bad
        return
    decoded = model.decode(corpus, n_jobs=n_jobs, **m)
    marginals = model.marginals(corpus, n_jobs=n_jobs, **m)
    for item in refs:
        if item is None:
            continue
        t0, t1, E, ref = item
        mag = magnitude(E, T, start, end, T2)
        path = decoded[t0:t1]
        om = oracle_masks(m)
        om["allowed"] = None if m["allowed"] is None else m["allowed"][t0:t1]
        assert path_allowed(path, **om)
        assert path_score(E, T, start, end, path, T2) == pytest.approx(
            ref["best"], rel=1e-11, abs=1e-11 * mag)
        np.testing.assert_allclose(marginals[t0:t1], ref["marginals"], rtol=0,
                                   atol=1e-9 + 1e-13 * mag)


def test_model_constraints_are_validated():
    _, corpus, model = pack([[["a"]], [["b"], ["c"]]], [["x"], ["y", "x"]])
    with pytest.raises(InputError, match="allowed has shape"):
        model.decode(corpus, allowed=np.ones((2, 2), bool))
    with pytest.raises(InputError, match="allowed_transitions has shape"):
        model.marginals(corpus, allowed_transitions=np.ones((3, 3), bool))


def test_mask_set_refuses_arrays_the_kernels_cannot_read():
    with pytest.raises(ValueError):
        _masks.MaskSet(2, np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError):
        _masks.MaskSet(2, None, np.ones((4, 4), dtype=np.uint8)[:, ::2])
    # The error class raised for a sequence without an allowed path.
    with pytest.raises(NoAllowedPath, match="sequence 3: "):
        _decode.raise_bad_sequence(np.array([[-1, -1, -1], [-1, 3, 0]]))
    with pytest.raises(FloatingPointError):
        _decode.raise_bad_sequence(np.array([[2, 3, 0]]))
