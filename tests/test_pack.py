"""The string table and the packing of feature lists (cseq._pack)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cseq import _pack
from cseq.exceptions import InputError

# Every width CPython uses (1, 2 and 4 bytes per code point), lone surrogates included.
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
mixed = st.one_of(any_text, st.sampled_from(["", "a", "é", "Ω", "\U0001F600", "\ud800", "a" * 40]))


@settings(max_examples=200, deadline=None)
@given(st.lists(mixed, max_size=60), st.lists(mixed, max_size=30))
def test_string_table_matches_a_dict(inserted, queried):
    table = _pack.StringTable(capacity=0)  # forces several rehashes
    ref: dict[str, int] = {}
    for s in inserted:
        assert table.add(s) == ref.setdefault(s, len(ref))
    assert len(table) == len(ref)
    assert table.names() == list(ref)
    for s in queried + inserted:
        assert table.get(s) == ref.get(s, -1)
        assert (s in table) == (s in ref)


def test_same_bytes_in_different_widths_are_different_strings():
    # "ab" is stored 1 byte per code point: 61 62.  U+6261 is stored 2 bytes
    # per code point: 61 62 as well on a little-endian machine (62 61 on a
    # big-endian one).  Equal bytes and equal hash, so only the width tells
    # them apart.
    import sys
    narrow = "ab"
    wide = "\u6261" if sys.byteorder == "little" else "\u6162"
    table = _pack.StringTable()
    assert table.add(narrow) == 0
    assert table.get(wide) == -1
    assert table.add(wide) == 1
    assert table.names() == [narrow, wide]


def test_from_strings_refuses_repeats_and_non_strings():
    assert _pack.StringTable.from_strings(["a", "b"]).names() == ["a", "b"]
    with pytest.raises(ValueError, match="item 2 repeats"):
        _pack.StringTable.from_strings(["a", "b", "a"])
    with pytest.raises(TypeError, match="item 1"):
        _pack.StringTable.from_strings(["a", b"b"])
    with pytest.raises(ValueError):
        _pack.StringTable(capacity=-1)

    class Sub(str):
        pass

    table = _pack.StringTable()
    for bad in (Sub("a"), b"a", None, 1):
        with pytest.raises(TypeError, match="expected str"):
            table.add(bad)
        with pytest.raises(TypeError, match="expected str"):
            table.get(bad)
    assert Sub("a") not in table and len(table) == 0
    assert 3 not in _pack.StringTable()


def _random_corpus(rng, n_seq, vocab):
    return [[[vocab[k] for k in rng.integers(0, len(vocab), rng.integers(0, 6))]
             for _ in range(rng.integers(0, 7))] for _ in range(n_seq)]


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_lookup_drops_unknown_features_like_a_dict(n_jobs):
    rng = np.random.default_rng(n_jobs)
    words = [f"w={i}" for i in range(300)] + ["é", "Ω", "\U0001F600", ""]
    train = _random_corpus(rng, 50, words[:200])
    test = _random_corpus(rng, 300, words)
    table = _pack.StringTable()
    _pack.pack_features(train, table, True)
    seq_ptr, tok_ptr, attr, values = _pack.pack_features(test, table, False, n_jobs)
    known = dict(zip(table.names(), range(len(table))))
    expect = [[[known[f] for f in tok if f in known] for tok in seq] for seq in test]
    flat = [ids for seq in expect for ids in seq]
    assert list(seq_ptr) == list(np.cumsum([0] + [len(s) for s in test]))
    assert list(tok_ptr) == list(np.cumsum([0] + [len(ids) for ids in flat]))
    assert attr.tolist() == [a for ids in flat for a in ids]
    assert np.all(values == 1.0)


def test_training_ids_follow_first_occurrence():
    X = [[["b", "a"], ["c"]], [["a", "d", "b"]]]
    table = _pack.StringTable()
    _, _, attr, _ = _pack.pack_features(X, table, True)
    assert attr.tolist() == [0, 1, 2, 1, 3, 0]
    assert table.names() == ["b", "a", "c", "d"]


def test_changing_x_while_packing_is_an_error_not_an_overrun():
    X = [[{"f": 1.0}], [["a"], ["b"]]]

    class Sneaky:
        def __float__(self):
            X[1][0].extend(["x"] * 1000)  # grows a later token behind the count
            return 1.0

    X[0][0]["g"] = Sneaky()
    with pytest.raises(InputError, match="changed while it was being packed"):
        _pack.pack_features(X, _pack.StringTable(), True)
    with pytest.raises(ValueError, match="n_jobs"):
        _pack.pack_features([], _pack.StringTable(), False, 0)
