"""Exact n-best decoding against brute-force enumeration.

``cseq.viterbi_nbest`` must list the k best label paths exactly (k up to L^n
and beyond), first and second order, with and without constraints, ties
broken by the documented rule (equal scores: the reversed label sequence in
lexicographic order, as ``cseq.viterbi``).  The references enumerate every
``L ** n`` path (``tests/support/oracle.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cseq
from cseq.chain._masks import NoAllowedPath
from cseq.exceptions import InputError

from support.budget import examples
from support.oracle import brute_constrained, path_allowed, path_score
from support.strategies import chains2, magnitude, masks, oracle_masks, chains


def ranked(paths, scores):
    """Paths sorted by the documented order: score descending, then reversed labels ascending."""
    items = [(float(s), tuple(int(y) for y in p)) for p, s in zip(paths, scores)]
    items.sort(key=lambda it: (-it[0], tuple(reversed(it[1]))))
    return items


def check(E, T, start, end, T2, k, m):
    n, L = E.shape
    ref = brute_constrained(E, T, start, end, T2, **oracle_masks(m))
    if len(ref["paths"]) == 0:
        with pytest.raises(NoAllowedPath):
            cseq.viterbi_nbest(E, T, k, start, end, transitions2=T2, **m)
        return
    paths, scores = cseq.viterbi_nbest(E, T, k, start, end, transitions2=T2, **m)
    want = ranked(ref["paths"], ref["scores"])
    kk = min(k, len(want))
    assert paths.shape == (kk, n) and scores.shape == (kk,) and paths.dtype == np.int32
    mag = magnitude(E, T, start, end, T2)
    tol = 1e-12 * mag
    # The scores are the k best, in order; each path is allowed, distinct, and
    # scores what the kernel says.
    np.testing.assert_allclose(scores, [s for s, _ in want[:kk]], rtol=0, atol=tol)
    assert (np.diff(scores) <= 0).all()
    assert len({tuple(p) for p in paths.tolist()}) == kk
    for p, s in zip(paths, scores):
        assert path_allowed(p, **oracle_masks(m))
        assert path_score(E, T, start, end, p, T2) == pytest.approx(s, rel=0, abs=tol)
    # Every listed path scores at least as well as every path left out.
    if kk < len(want):
        assert scores[-1] >= want[kk][0] - tol
    # The first is Viterbi's, to the bit.
    vpath, vscore = cseq.viterbi(E, T, start, end, transitions2=T2, **m)
    assert paths[0].tolist() == vpath.tolist() and scores[0] == vscore


@examples(120)
@given(chains(max_n=4, max_labels=4), st.integers(1, 300), st.booleans(), st.data())
def test_nbest_matches_brute_force(chain, k, constrained, data):
    E, T, start, end = chain
    m = data.draw(masks(*E.shape)) if constrained else dict.fromkeys(
        ("allowed", "allowed_transitions", "allowed_start", "allowed_end"))
    check(E, T, start, end, None, k, m)


@examples(80)
@given(chains2(max_n=4, max_labels=3), st.integers(1, 90), st.booleans(), st.data())
def test_nbest_second_order_matches_brute_force(chain, k, constrained, data):
    E, T, start, end, T2 = chain
    m = data.draw(masks(*E.shape)) if constrained else dict.fromkeys(
        ("allowed", "allowed_transitions", "allowed_start", "allowed_end"))
    check(E, T, start, end, T2, k, m)


@examples(100)
@given(st.integers(1, 4), st.integers(1, 3), st.booleans(), st.booleans(), st.data())
def test_nbest_ties_follow_the_documented_order(n, L, order2, constrained, data):
    # Small integers: exact sums and many ties; the whole list must come in the
    # documented order, all L^n paths.
    ints = st.integers(-1, 1).map(float)
    E = data.draw(hnp.arrays(np.float64, (n, L), elements=ints))
    T = data.draw(hnp.arrays(np.float64, (L, L), elements=ints))
    start = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    end = data.draw(hnp.arrays(np.float64, (L,), elements=ints))
    T2 = data.draw(hnp.arrays(np.float64, (L, L, L), elements=ints)) if order2 else None
    m = data.draw(masks(n, L)) if constrained else dict.fromkeys(
        ("allowed", "allowed_transitions", "allowed_start", "allowed_end"))
    ref = brute_constrained(E, T, start, end, T2, **oracle_masks(m))
    if len(ref["paths"]) == 0:
        return
    k = L ** n + 3
    paths, scores = cseq.viterbi_nbest(E, T, k, start, end, transitions2=T2, **m)
    got = [(float(s), tuple(p)) for p, s in zip(paths.tolist(), scores)]
    assert got == ranked(ref["paths"], ref["scores"])


def test_nbest_example_and_edge_cases():
    E = np.array([[1.0, 0.0], [0.0, 2.0]])
    paths, scores = cseq.viterbi_nbest(E, np.zeros((2, 2)), 10)
    assert paths.tolist() == [[0, 1], [1, 1], [0, 0], [1, 0]]
    assert scores.tolist() == [3.0, 2.0, 1.0, 0.0]
    # An empty sequence: one empty path.
    paths, scores = cseq.viterbi_nbest(np.zeros((0, 2)), np.zeros((2, 2)), 3)
    assert paths.shape == (1, 0) and scores.tolist() == [0.0]
    # A huge k on a long chain is min(k, L^n) without overflowing.
    paths, scores = cseq.viterbi_nbest(np.zeros((70, 2)), np.zeros((2, 2)), 4)
    assert paths.shape == (4, 70)
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(InputError, match="k must be a positive int"):
            cseq.viterbi_nbest(E, np.zeros((2, 2)), bad)
