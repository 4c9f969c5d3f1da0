"""The string table and the packing of feature lists (cseq.features._pack)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cseq.features import _pack
from cseq.exceptions import InputError

from support.budget import examples

# Every width CPython uses (1, 2 and 4 bytes per code point), lone surrogates included.
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
mixed = st.one_of(any_text, st.sampled_from(["", "a", "é", "Ω", "\U0001F600", "\ud800", "a" * 40]))


@examples(200)
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


@examples(100)
@given(st.lists(mixed, max_size=40), st.lists(mixed, max_size=40))
def test_string_table_copy_grows_alone(first, later):
    """partial_fit grows a copy of the table while readers look strings up in the original."""
    table = _pack.StringTable(capacity=0)
    for s in first:
        table.add(s)
    names = table.names()
    copy = table.copy()
    assert copy.names() == names and copy.max_ids == table.max_ids
    ref = {s: i for i, s in enumerate(names)}
    for s in later:  # enough to rehash the copy
        assert copy.add(s) == ref.setdefault(s, len(ref))
    assert copy.names() == list(ref)
    assert table.names() == names
    assert all(table.get(s) == names.index(s) if s in names else table.get(s) == -1
               for s in later)


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


def test_strings_that_differ_in_one_code_unit_of_any_word_get_their_own_ids():
    """The table's hash reads whole words and overlapping tails: every position counts.

    For each length up to 40 (all the word and tail cases) and each position,
    a string with that one code unit changed is a distinct entry, found again.
    """
    strings = ["x" * n for n in range(41)]
    strings += ["x" * i + "y" + "x" * (n - i - 1) for n in range(1, 41) for i in range(n)]
    strings += [s.replace("x", "\u00e9") for s in strings if "x" in s]  # still 1 byte each
    strings += [s.replace("x", "\u0416") for s in strings[1:41]]  # 2 bytes per code point
    table = _pack.StringTable(capacity=0)
    assert [table.add(s) for s in strings] == list(range(len(strings)))
    assert [table.get(s) for s in strings] == list(range(len(strings)))
    assert table.get("x" * 41) == -1 and table.get("y") == 41 + 0


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


@pytest.mark.parametrize("dict_token", [False, True])
def test_a_sentence_is_looked_up_in_place_or_copied_with_the_same_ids(dict_token):
    """A short list corpus is looked up reading the strings in place (no dict token, so
    no user code runs before the lookup); a dict token makes it copy them first.  Both
    give the ids of a dict, over every string width and the word/tail cases."""
    rng = np.random.default_rng(7)
    words = ([f"w={i}" for i in range(200)] + ["é" * 9, "Ω" * 5, "\U0001F600" * 3, "", "a" * 17]
             + [f"long=feature string {i:020d}" for i in range(50)])
    table = _pack.StringTable()
    _pack.pack_features([[words[::2]]], table, True)
    sentence = _random_corpus(rng, 1, words)[0] + [list(words[:40])]
    if dict_token:
        sentence = sentence + [{"w": "2"}]  # "w=2" is known
    _, tok_ptr, attr, values = _pack.pack_features([sentence], table, False)
    known = dict(zip(table.names(), range(len(table))))
    expect = [[known[f] for f in tok if f in known] for tok in sentence[:-1]]
    expect.append([known["w=2"]] if dict_token else [known[f] for f in sentence[-1] if f in known])
    assert list(tok_ptr) == list(np.cumsum([0] + [len(ids) for ids in expect]))
    assert attr.tolist() == [a for ids in expect for a in ids]
    assert values.tolist() == [1.0] * len(attr)


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


# ---------------------------------------------------------------------------
# More than one 65,536-string scratch block

BLOCK = 1 << 16


def _block_corpus(n_strings, width=1000):
    """Sentences of tokens of ``width`` distinct, freshly made strings each."""
    words = [f"f={i % 90_001}" for i in range(n_strings)]
    toks = [words[k : k + width] for k in range(0, n_strings, width)]
    return [toks[k : k + 7] for k in range(0, len(toks), 7)]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_packing_more_than_one_block_gives_the_dict_ids(n_jobs):
    # 3.05 blocks of strings, a block boundary inside a token (1000 does not
    # divide 65,536): ids checked one by one against a dict.
    X = _block_corpus(3 * BLOCK + 3_000)
    table = _pack.StringTable()
    seq_ptr, tok_ptr, attr, values = _pack.pack_features(X, table, True)
    index: dict[str, int] = {}
    expect = [index.setdefault(f, len(index)) for seq in X for tok in seq for f in tok]
    assert attr.tolist() == expect
    assert table.names() == list(index)
    assert len(index) == 90_001
    # Prediction: the other half of the strings is unknown and dropped.
    test = [[[f if k % 2 else f"unknown {f}" for k, f in enumerate(tok)] for tok in seq]
            for seq in X]
    seq_ptr2, tok_ptr2, attr2, _ = _pack.pack_features(test, table, False, n_jobs)
    flat = [[index[f] for f in tok if f in index] for seq in test for tok in seq]
    assert attr2.tolist() == [a for ids in flat for a in ids]
    assert tok_ptr2.tolist() == np.cumsum([0] + [len(ids) for ids in flat]).tolist()
    assert seq_ptr2.tolist() == seq_ptr.tolist()


def _flush_corpus(kind):
    # 330 tokens of 1,000 fresh strings: five flushes fall inside a token
    # (after 65,536, 131,072, ... strings), the sixth after the last token.
    if kind == "list":
        return [[[f"f={k}" + "" for k in range(1000)] for _ in range(66)] for _ in range(5)]
    return [[{f"f={k}": 1.0 for k in range(1000)} for _ in range(66)] for _ in range(5)]


_FLUSH_VOCAB = [f"f={i}" for i in range(0, 1000, 7)]


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_a_token_changed_during_a_flush_is_an_error(kind):
    # A prediction-time flush looks strings up without the GIL, so another
    # thread may run there.  _set_after_flush runs that "other thread" at that
    # exact point: it clears every token (freeing its item array and its
    # strings).  The packer must notice that the token it is in the middle of
    # has changed instead of reading its old items (before the fix it kept
    # reading them, a use-after-free, and returned without an error).
    full = _pack.pack_features(_flush_corpus(kind), _pack.StringTable.from_strings(_FLUSH_VOCAB),
                               False, 1)
    calls = []
    _pack._set_after_flush(lambda: calls.append(1))
    try:
        got = _pack.pack_features(_flush_corpus(kind),
                                  _pack.StringTable.from_strings(_FLUSH_VOCAB), False, 1)
    finally:
        _pack._set_after_flush(None)
    assert len(calls) == 6  # five flushes inside a token, one at the end
    for a, b in zip(got, full):
        np.testing.assert_array_equal(a, b)

    X = _flush_corpus(kind)
    tokens = [tok for seq in X for tok in seq]

    def vandal():
        for tok in tokens:
            tok.clear()

    _pack._set_after_flush(vandal)
    try:
        with pytest.raises(InputError, match="changed while it was being packed"):
            _pack.pack_features(X, _pack.StringTable.from_strings(_FLUSH_VOCAB), False, 1)
    finally:
        _pack._set_after_flush(None)


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_tokens_freed_by_a_thread_during_packing_give_an_error_or_the_intact_result(kind):
    # The same with a real second thread, for the sanitizer builds: whenever
    # the scheduler lets it run (inside a flush or not), packing either
    # raises the documented error or returns the arrays of the intact X; under
    # AddressSanitizer any read of a freed item aborts the run.
    import sys
    import threading

    full = _pack.pack_features(_flush_corpus(kind), _pack.StringTable.from_strings(_FLUSH_VOCAB),
                               False, 1)

    def attempt():
        table = _pack.StringTable.from_strings(_FLUSH_VOCAB)
        X = _flush_corpus(kind)
        tokens = [tok for seq in X for tok in seq]
        stop = []

        def vandal():
            # Adding to the table fails exactly while the packer is looking
            # strings up in it, which tells this thread it is inside a flush.
            n = 0
            while not stop:
                n += 1
                try:
                    table.add(f"probe {n}")
                except RuntimeError:
                    for tok in tokens:
                        tok.clear()
                    return

        thread = threading.Thread(target=vandal)
        thread.start()
        try:
            try:
                got = _pack.pack_features(X, table, False, 1)
            except InputError as exc:
                assert "changed while it was being packed" in str(exc)
                return
        finally:
            stop.append(True)
            thread.join()
        for a, b in zip(got, full):
            np.testing.assert_array_equal(a, b)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        for _ in range(10):
            attempt()
    finally:
        sys.setswitchinterval(old)


def test_string_table_refuses_more_strings_than_int32_ids():
    assert _pack.StringTable().max_ids == 2**31 - 1
    table = _pack.StringTable(max_ids=3)
    assert [table.add(s) for s in "abcab"] == [0, 1, 2, 0, 1]
    with pytest.raises(InputError, match="more than 3 distinct feature strings"):
        table.add("d")
    assert len(table) == 3 and table.get("d") == -1 and table.get("c") == 2
    # through the packer, past a block boundary
    table = _pack.StringTable(max_ids=BLOCK + 5)
    X = [[[f"s{i}" for i in range(BLOCK + 10)]]]
    with pytest.raises(InputError, match=f"more than {BLOCK + 5:,} distinct"):
        _pack.pack_features(X, table, True)
    for bad in (0, -1, 2**31):
        with pytest.raises(ValueError, match="max_ids"):
            _pack.StringTable(max_ids=bad)
