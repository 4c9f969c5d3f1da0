"""The compiled token functions and column interning (cseq.features._tokens) against
their Python definitions: cseq.templates.TOKEN_FUNCTIONS and expand()."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cseq.features import _keytable, _templates, _columns, _tokens
from cseq.features.template_language import sentence_rows
from cseq.templates import TOKEN_FUNCTIONS, TemplateFeaturizer, expand

from support.budget import examples
from support.presets import UNTAGGED

# Characters where the Python definitions have edge cases: title case letters
# (U+01C5 is neither upper nor lower), the final sigma and dotted capital I of
# str.lower, full case mappings, digits that are not decimal, other scripts'
# digits, symbols and punctuation outside ASCII, combining marks, astral
# characters and lone surrogates.
EDGE = "ǅǈǋᾈΣσςİıßẞﬁǰŉ²³¹٣൧①⁴Ⅻⅰᵃ–—…¿¡€$%+‐‑·׳、。「」a\u0301\u200d🙂𝐀𝟘\ud800\udfff\x00 \t-_.'"
_chars = st.one_of(
    st.characters(),
    st.sampled_from(EDGE),
    st.integers(0xD800, 0xDFFF).map(chr),
    st.integers(0, 127).map(chr),
)
words = st.one_of(
    st.text(_chars, max_size=12),
    st.sampled_from(["", "The", "THE", "Mr.", "U.S.", "ΑΣ", "ΑΣ Α", "İstanbul", "ǅemal", "1,234",
                     "--", "$", "well-known", "McDonald's-2", "Ünïcode9", "\ud800x"]),
)


def test_the_compiled_functions_are_the_python_ones():
    assert _tokens.FUNCTIONS == tuple(TOKEN_FUNCTIONS)


@examples(300)
@given(strings=st.lists(words, max_size=8))
def test_functions_match_python_on_random_unicode(strings):
    for name, fn in TOKEN_FUNCTIONS.items():
        assert _tokens.apply_function(name, strings) == [fn(w) for w in strings], name


def test_functions_on_every_edge_character():
    singles = list(EDGE) + [c + c for c in EDGE] + [c + "a" for c in EDGE] + ["A" + c for c in EDGE]
    for name, fn in TOKEN_FUNCTIONS.items():
        assert _tokens.apply_function(name, singles) == [fn(w) for w in singles], name


@pytest.mark.slow
def test_functions_on_every_code_point():
    # Each code point alone and after an upper-case letter, in every function.
    chars = [chr(c) for c in range(0x110000)]
    pairs = ["A" + c for c in chars[::7]]
    for name, fn in TOKEN_FUNCTIONS.items():
        got = _tokens.apply_function(name, chars)
        assert got == [fn(c) for c in chars], name
        assert _tokens.apply_function(name, pairs) == [fn(w) for w in pairs], name


def test_apply_function_refuses_non_str():
    with pytest.raises(TypeError):
        _tokens.apply_function("lower", [b"x"])
    with pytest.raises(ValueError):
        _tokens.apply_function("nope", ["x"])


# ---------------------------------------------------------------- interning


def test_values_hash_like_hash_strings():
    X = [["The", "naïve", "日本", "😀", "\ud800x", ""]]
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[0,0:lower]\nU2:%x[-1,0:shape]")
    vals, slot_ids, lengths, before, after, words, word_slots = _columns.intern_columns(
        X, f._need, f._col_index, f._slot_col, f._slot_func, f._max_offset, sentence_rows)
    strings = vals.strings()
    assert len(strings) == len(set(strings)) == len(vals)
    assert np.array_equal(vals.hashes(), _templates.hash_strings(strings))
    assert lengths.tolist() == [6]
    assert [strings[i] for i in before] == ["_B-1"] and [strings[i] for i in after] == ["_B+1"]
    # Slots: (0, None), (0, lower), (0, shape).
    assert f._slots == [(0, None), (0, "lower"), (0, "shape")]
    for j, w in enumerate(X[0]):
        assert [strings[i] for i in slot_ids[j]] == [w, w.lower(), TOKEN_FUNCTIONS["shape"](w)]
        assert strings[words[j, 0]] == w
        assert np.array_equal(word_slots[words[j, 0]], slot_ids[j])
    # One row per distinct cell string (function values and padding have none).
    assert word_slots.shape == (len(set(X[0])), 3)
    with pytest.raises(IndexError):
        vals.strings([len(vals)])


def reference_ids(templates, X, min_freq=1):
    """Attribute ids by their definition: distinct attribute strings of expand(),
    numbered in order of first appearance (token by token, template by
    template), keeping those seen at least min_freq times."""
    rows = [expand(templates, sent) for sent in X]
    counts = Counter(a for sent in rows for tok in sent for a in tok)
    ids: dict[str, int] = {}
    for sent in rows:
        for tok in sent:
            for a in tok:
                if counts[a] >= min_freq and a not in ids:
                    ids[a] = len(ids)
    return rows, ids


_cells = st.tuples(st.integers(-2, 2), st.integers(0, 1),
                   st.sampled_from([None, *TOKEN_FUNCTIONS]))
_specs = st.lists(st.lists(_cells, max_size=3), min_size=1, max_size=5)


def _text(spec) -> str:
    return "\n".join(
        f"U{i}:" + "/".join(f"%x[{r},{c}{':' + fn if fn else ''}]" for r, c, fn in cells)
        for i, cells in enumerate(spec)
    )


@examples(80)
@given(spec=_specs, X=st.lists(st.lists(st.tuples(words, words), max_size=6), min_size=1,
                                 max_size=4),
       min_freq=st.integers(1, 2))
def test_featurization_ids_and_names_match_expand(spec, X, min_freq):
    text = _text(spec)
    f = TemplateFeaturizer(text, min_freq=min_freq)
    seqs = f.fit_transform(X)
    rows, ids = reference_ids(text, X, min_freq)
    names = f.attribute_names()
    assert names == list(ids)
    k = 0
    for sent in rows:
        for tok in sent:
            want = [ids[a] for a in tok if a in ids]
            assert seqs.attr_ids[seqs.tok_ptr[k]:seqs.tok_ptr[k + 1]].tolist() == want
            k += 1
    assert k == seqs.n_tokens
    # transform gives the same ids, and drops only unknown attributes.
    again = f.transform(X)
    assert np.array_equal(again.attr_ids, seqs.attr_ids)


@examples(40)
@given(X=st.lists(st.lists(words, max_size=8), min_size=1, max_size=5))
def test_presets_ids_and_names_match_expand(X):
    for name in ("pos", "ner"):
        f = TemplateFeaturizer(UNTAGGED[name])
        seqs = f.fit_transform(X)
        rows, ids = reference_ids(UNTAGGED[name], X)
        assert f.attribute_names() == list(ids)
        flat = [ids[a] for sent in rows for tok in sent for a in tok]
        assert seqs.attr_ids.tolist() == flat


def test_unusual_containers_intern_like_lists():
    # Generators, numpy strings and str subclasses go through the checking
    # path and give the same ids as plain lists of str.
    class S(str):
        pass

    plain = [["The", "cat", "naïve"], ["a"]]
    f = TemplateFeaturizer(UNTAGGED["pos"])
    base = f.fit_transform(plain)
    for X in ([(w for w in s) for s in plain],
              [np.array(s) for s in plain],
              [[S(w) for w in s] for s in plain],
              [tuple(s) for s in plain],
              [[(w,) for w in s] for s in plain]):
        assert np.array_equal(f.transform(X).attr_ids, base.attr_ids)


# ---------------------------------------------------------------- fused kernels


def _fitted(text, X):
    f = TemplateFeaturizer(text)
    f.fit_transform(X)
    data = f._intern(X)
    return f, data, f._key_args(data)


@examples(60)
@given(spec=_specs, X=st.lists(st.lists(st.tuples(words, words), max_size=6), min_size=1,
                                 max_size=4),
       Y=st.lists(st.lists(st.tuples(words, words), max_size=6), min_size=1, max_size=4))
def test_add_tokens_and_lookup_tokens_are_add_and_lookup_of_the_keys(spec, X, Y):
    text = _text(spec)
    f, data, args = _fitted(text, X)
    keys = _templates.extract_keys(*args)
    a = _keytable.KeyTable(0)
    ids = a.add(keys)
    # Without and with the per-string memo: the same ids, counts and first places.
    for memo in ((), (data.words, data.word_slots, f._fit_memo_col)):
        b = _keytable.KeyTable(0)
        assert np.array_equal(b.add_tokens(*args, *memo), ids)
        for name in ("keys", "counts", "first_token", "first_template"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
    # Looking up other text: with the per-string memo, without, in 1 and 2 threads.
    data = f._intern(Y)
    args = f._key_args(data)
    want = a.lookup(_templates.extract_keys(*args))
    no_memo = np.full_like(f._memo_col, -1)
    for memo, rows in ((f._memo_col, f._memo_row), (f._fit_memo_col, None), (no_memo, None)):
        for n_jobs in (1, 2):
            got = a.lookup_tokens(*args, data.words, data.word_slots, memo, n_jobs, rows)
            assert np.array_equal(got, want)
    # Packed: the ids found, row by row, with their offsets; any range of sequences.
    wm = a.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                     data.word_slots, f._memo_col, f._memo_row)
    attr, ptr = a.lookup_packed(*args, data.words, wm)
    assert np.array_equal(attr, want[want >= 0])
    assert np.array_equal(np.diff(ptr), (want >= 0).sum(axis=1))
    sp = data.seq_ptr
    for s0 in range(len(sp)):
        for s1 in range(s0, len(sp)):
            t0, t1 = sp[s0], sp[s1]
            part = [data.slot_ids[t0:t1], data.hashes, sp[s0:s1 + 1] - t0, *args[3:]]
            attr, ptr = a.lookup_packed(*part, data.words[t0:t1], wm)
            assert np.array_equal(attr, want[t0:t1][want[t0:t1] >= 0])
            assert np.array_equal(np.diff(ptr), (want[t0:t1] >= 0).sum(axis=1))


@examples(60)
@given(spec=_specs, X=st.lists(st.lists(st.tuples(words, words), max_size=6), min_size=1,
                                 max_size=4),
       Y=st.lists(st.lists(st.tuples(words, words), max_size=6), min_size=1, max_size=4),
       max_tokens=st.sampled_from([None, 1, 4]))
def test_chunks_without_memo_plus_the_memo_attributes_are_the_chunks(spec, X, Y, max_tokens):
    # What cseq.chain.mapping.map_decoded relies on: per token, the attributes
    # left without the memo plus those of memo_attributes() for each group whose
    # row is inside the sentence are the token's attributes, as a multiset.
    f = TemplateFeaturizer(_text(spec))
    f.fit_transform(X)
    chunks = f.transform_chunks(Y, max_tokens=max_tokens)
    memo = chunks.memo_attributes()
    assert (memo is None) == (f._memo_col < 0).all()
    for k in range(len(chunks)):
        full, part = chunks.sequences(k), chunks.sequences(k, without_memo=True)
        assert np.array_equal(full.seq_ptr, part.seq_ptr)
        words = chunks.words(k)
        assert words.shape[0] == full.n_tokens
        for s in range(full.n_sequences):
            t0, t1 = int(full.seq_ptr[s]), int(full.seq_ptr[s + 1])
            for t in range(t0, t1):
                got = Counter(part.attr_ids[part.tok_ptr[t]:part.tok_ptr[t + 1]].tolist())
                if memo is not None:
                    ids, group, groups = memo
                    for g, (col, offset) in enumerate(groups):
                        if t0 <= t + offset < t1:
                            row = ids[words[t + offset, col], group == g]
                            got.update(row[row >= 0].tolist())
                want = Counter(full.attr_ids[full.tok_ptr[t]:full.tok_ptr[t + 1]].tolist())
                assert got == want


def test_without_memo_keeps_the_per_token_lookups_of_words_the_memo_cannot_answer():
    # A word whose memo entries are -2 (a slot it reads unknown at the word
    # level) is looked up per token even without the memo; the others are
    # left to the caller.  The memo is made here with word 0's slots unknown.
    X = [["a", "b", "a", "c"], ["b", "a"]]
    f, data, args = _fitted("U0:%x[0,0]\nU1:%x[-1,0:lower]\nU2:%x[0,0]/%x[1,0]", X)
    t = f._table
    word_slots = data.word_slots.copy()
    word_slots[0] = -1
    wm = t.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                     word_slots, f._memo_col, f._memo_row)
    ids = wm.memo_ids
    assert (ids[0] == -2).all() and (ids[1:] >= -1).all()
    full, full_ptr = t.lookup_packed(*args, data.words, wm)
    part, part_ptr = t.lookup_packed(*args, data.words, wm, 1, True)
    memo_t = np.flatnonzero(f._memo_col >= 0)
    sp = data.seq_ptr
    for s in range(len(sp) - 1):
        for q in range(sp[s], sp[s + 1]):
            got = Counter(part[part_ptr[q]:part_ptr[q + 1]].tolist())
            for j, tm in enumerate(memo_t):
                r = q + f._memo_row[tm]
                if sp[s] <= r < sp[s + 1]:
                    a = ids[data.words[r, f._memo_col[tm]], j]
                    if a >= 0:
                        got[a] += 1
            assert got == Counter(full[full_ptr[q]:full_ptr[q + 1]].tolist())
    # Word 0's tokens kept their per-token ids of U0 (the first memo template).
    w0 = np.flatnonzero(data.words[:, 0] == 0)
    assert len(w0) and all(part_ptr[q + 1] > part_ptr[q] for q in w0)


def test_the_lookup_plan_a_table_keeps_follows_the_memo_layout():
    # The table keeps the plan of its last lookup (which templates the memo
    # answers, the words' columns and rows) and reuses it while the layout is
    # the same: a lookup with another layout on the same table must not get
    # the kept one, whichever came first.
    X = [["a", "b", "a", "c"], ["b", "a"]]
    f, data, args = _fitted("U0:%x[0,0]\nU1:%x[-1,0:lower]\nU2:%x[0,0]/%x[1,0]\n"
                            "U3:%x[1,0:lower]", X)
    assert (f._memo_col >= 0).sum() >= 2
    layouts = [f._memo_col, np.where(np.arange(len(f._memo_col)) == 0, -1, f._memo_col)]
    layouts = [np.ascontiguousarray(c, dtype=np.int32) for c in layouts]

    def packed(t, col):
        wm = t.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                         data.word_slots, col, f._memo_row)
        attr, ptr = t.lookup_packed(*args, data.words, wm, 1, True)
        return attr.tolist(), ptr.tolist()

    # Each layout on a table of its own: the answers, each from a fresh plan.
    fresh = [packed(_keytable.KeyTable.from_keys(f._table.keys), col) for col in layouts]
    assert fresh[0] != fresh[1]
    t = _keytable.KeyTable.from_keys(f._table.keys)
    for col, want in [*zip(layouts, fresh), *zip(layouts[::-1], fresh[::-1])]:
        assert packed(t, col) == want


def test_memo_covers_one_column_current_token_templates():
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[0,0:lower]/%x[0,0:shape]\nU2:%x[-1,0]/%x[0,0]\n"
                           "U3:%x[0,0]/%x[0,1]\nU4:bias\nU5:%x[0,1:suffix2]")
    assert f._memo_col.tolist() == [0, 0, -1, -1, -1, 1]
    assert f._memo_row.tolist() == [0, 0, 0, 0, 0, 0]
    # One column of one other row: memo when tagging, not when fitting.
    f = TemplateFeaturizer("U0:%x[-1,0]\nU1:%x[2,0:lower]/%x[2,0:shape]\nU2:%x[1,0]/%x[1,1]\n"
                           "U3:%x[0,1]")
    assert f._memo_col.tolist() == [0, 0, -1, 1]
    assert f._memo_row.tolist() == [-1, 2, 0, 0]
    assert f._fit_memo_col.tolist() == [-1, -1, -1, 1]


def test_lookup_tokens_many_sequences_and_threads():
    # Chunks of 256 tokens start inside sequences; the padding must still be right.
    rng = np.random.default_rng(1)
    vocab = ["w%d" % i for i in range(300)] + ["The", "A", "x-y", "1,0"]
    X = [[vocab[i] for i in rng.integers(0, len(vocab), rng.integers(0, 40))]
         for _ in range(300)]
    f, data, args = _fitted(UNTAGGED["pos"], X)
    want = f._table.lookup(_templates.extract_keys(*args))
    for n_jobs in (1, 2, 3):
        got = f._table.lookup_tokens(*args, data.words, data.word_slots, f._memo_col, n_jobs,
                                     f._memo_row)
        assert np.array_equal(got, want)
    # Packed: each thread looks its chunks up into rows of its own, reused.
    wm = f._table.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                            data.word_slots, f._memo_col, f._memo_row)
    for n_jobs in (1, 2, 3):
        attr, ptr = f._table.lookup_packed(*args, data.words, wm, n_jobs)
        assert np.array_equal(attr, want[want >= 0])
        assert np.array_equal(np.diff(ptr), (want >= 0).sum(axis=1))
    # Training with the memo: ids and counts as add() of the keys gives them.
    t = _keytable.KeyTable()
    assert np.array_equal(t.add_tokens(*args, data.words, data.word_slots, f._fit_memo_col),
                          _keytable.KeyTable().add(_templates.extract_keys(*args)))
    assert np.array_equal(f.transform(X, n_jobs=2).attr_ids, f.fit_transform(X).attr_ids)


def test_lookup_tokens_validates():
    X = [["a", "b", "c"]]
    f, data, args = _fitted("U0:%x[0,0]\nU1:%x[-1,0]", X)
    t = f._table
    ok = (data.words, data.word_slots, f._fit_memo_col)
    assert t.lookup_tokens(*args, *ok).shape == (3, 2)
    assert t.lookup_tokens(*args, data.words, data.word_slots, f._memo_col, 1,
                           f._memo_row).shape == (3, 2)
    with pytest.raises(ValueError, match="memo_row"):
        t.lookup_tokens(*args, data.words, data.word_slots, f._memo_col, 1, [0])
    with pytest.raises(ValueError, match="another row"):
        t.lookup_tokens(*args, data.words, data.word_slots, np.array([0, 0], np.int32))
    with pytest.raises(ValueError, match="memo_col"):
        t.lookup_tokens(*args, data.words, data.word_slots, np.array([0], np.int32))
    with pytest.raises(ValueError, match="memo_col out of range"):
        t.lookup_tokens(*args, data.words, data.word_slots, np.array([1, -1], np.int32))
    with pytest.raises(ValueError, match="words out of range"):
        t.lookup_tokens(*args, data.words + 5, data.word_slots, f._fit_memo_col)
    with pytest.raises(ValueError, match="word_cells out of range"):
        t.lookup_tokens(*args, data.words, data.word_slots + 100, f._fit_memo_col)
    with pytest.raises(ValueError, match="n_jobs"):
        t.lookup_tokens(*args, *ok, 0)
    bad = list(args)
    bad[2] = np.array([0, 4], np.int64)
    with pytest.raises(ValueError, match="seq_ptr"):
        t.lookup_tokens(*bad, *ok)
    with pytest.raises(ValueError, match="seq_ptr"):
        _keytable.KeyTable().add_tokens(*bad)
    with pytest.raises(ValueError, match="another row"):
        _keytable.KeyTable().add_tokens(*args, data.words, data.word_slots,
                                         np.array([0, 0], np.int32))
    # A word memo serves only the table that made it, unchanged since.
    wm = t.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                     data.word_slots, f._memo_col, f._memo_row)
    assert t.lookup_packed(*args, data.words, wm)[0].tolist() == t.lookup_tokens(*args, *ok)[
        t.lookup_tokens(*args, *ok) >= 0].tolist()
    with pytest.raises(ValueError, match="another table"):
        _keytable.KeyTable.from_keys(t.keys).lookup_packed(*args, data.words, wm)
    t2 = _keytable.KeyTable()
    t2.add_tokens(*args)
    wm2 = t2.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                       data.word_slots, f._memo_col, f._memo_row)
    t2.add_tokens(*f._key_args(f._intern([["new", "words"]])))
    with pytest.raises(ValueError, match="older state"):
        t2.lookup_packed(*args, data.words, wm2)
    with pytest.raises(ValueError, match="words out of range"):
        t.lookup_packed(*args, data.words + 5, wm)


def _lookup_interned(f, X, cache):
    """intern_for_lookup's arrays, and the hashes of the ids they hold (the
    others are not written)."""
    out = _columns.intern_for_lookup(X, f._need, f._col_index, f._slot_col, f._slot_func,
                                    f._max_offset, sentence_rows, 1, cache)
    slots = out[6][out[6] >= 0]
    return [*out[1:7], out[7][out[1]], out[7][slots]]


@examples(40)
@given(X=st.lists(st.lists(st.tuples(words, words), min_size=1, max_size=6), min_size=1,
                  max_size=4))
def test_function_cache_gives_the_hashes_the_functions_give(X):
    """intern_for_lookup through a FunctionCache (hits, misses, evictions of a
    16-entry cache, strings too long to keep, functions of a second column
    met on a string first seen in the first) equals it without one."""
    f = TemplateFeaturizer("U0:%x[0,0:lower]/%x[0,1:suffix3]\nU1:%x[-1,0:shape]\n"
                           "U2:%x[0,1:lower]\nU3:%x[1,0:prefix2]/%x[0,0]")
    f.fit_transform(X)
    X = [[(w.upper(), v) for w, v in s] for s in X] + X + [[(v, w) for w, v in s] for s in X]
    cache = _tokens.FunctionCache(16)
    assert len(cache) == 16
    for _ in range(2):
        for x in X:
            want = _lookup_interned(f, [x], None)
            got = _lookup_interned(f, [x], cache)
            for a, b in zip(want, got):
                assert np.array_equal(a, b)


def test_function_cache_keeps_only_whole_strings():
    """Strings that share a hash slot, a prefix or a length are told apart
    (the key is the bytes), and one longer than a cache entry is not kept."""
    f = TemplateFeaturizer("U0:%x[0,0:lower]\nU1:%x[0,0:suffix3]\nU2:%x[0,0:shape]")
    X = [["Dog", "dog", "DOG", "do", "Dogs"], ["x" * 24 + "A", "x" * 24 + "B", "Ünïcode9"]]
    f.fit_transform(X)
    cache = _tokens.FunctionCache(16)
    for x in X + X[::-1] + [[w for s in X for w in s]]:
        want = _lookup_interned(f, [x], None)
        got = _lookup_interned(f, [x], cache)
        for a, b in zip(want, got):
            assert np.array_equal(a, b)


def test_function_cache_keeps_the_classes_of_one_tag_dictionary():
    """hash_classes through a FunctionCache equals it without one, across calls
    that change the dictionary or the unknown class (the kept classes are of
    one dictionary, the one given last) and a cache too small for the words."""
    f = TemplateFeaturizer("U0:%x[0,0:lower]\nU1:%x[0,0:suffix3]")
    X = [["The", "dog", "barks", "the", "DOG", "x" * 30], ["a", "Dog", "ünï"]]
    f.fit_transform(X)
    tables = [{"the": "DET", "dog": "NOUN"}, {"the": "PRON", "barks": "VERB", "ünï": "X"}]
    cache = _tokens.FunctionCache(16)

    def classes(x, table, unknown, cache):
        vals, _, _, _, _, _, word_slots, hashes = _columns.intern_for_lookup(
            [x], f._need, f._col_index, f._slot_col, f._slot_func, f._max_offset,
            sentence_rows, 1, cache)
        vals.hash_classes(word_slots, 0, table, unknown, hashes, cache)
        return hashes[word_slots[:, 0]]
    for table, unknown in [(tables[0], "?"), (tables[0], "?"), (tables[1], "?"),
                           (tables[1], "UNK"), (tables[0], "?")]:
        for x in X:
            want = classes(x, table, unknown, None)
            assert np.array_equal(classes(x, table, unknown, cache), want)
            assert np.array_equal(want, _templates.hash_strings(
                [table.get(w.lower(), unknown) for w in dict.fromkeys(x)]))


def test_a_template_plan_gives_the_lookups_of_the_arrays_it_was_made_from():
    """plan_word_memo and plan_lookup_packed with a featurizer's TemplatePlan
    are word_memo and lookup_packed with its arrays; a memo serves a plan of
    its own memo layout only; the plan copies its arrays, checks them when
    made, and pickles."""
    import pickle
    X = [["a", "b", "a", "c"], ["b", "a"]]
    f, data, args = _fitted("U0:%x[0,0]\nU1:%x[-1,0:lower]\nU2:%x[0,0]/%x[1,0]\n"
                            "U3:%x[1,0:lower]", X)
    t, plan = f._table, f._plan
    assert (plan.n_tmpl, plan.n_memo) == (4, int((f._memo_col >= 0).sum()))
    wm = t.word_memo(data.hashes, f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                     data.word_slots, f._memo_col, f._memo_row)
    pm = t.plan_word_memo(plan, data.hashes, data.word_slots)
    assert np.array_equal(wm.memo_ids, pm.memo_ids)
    corpus = (data.slot_ids, data.hashes, data.seq_ptr, data.pad_before, data.pad_after,
              data.words)
    for without in (False, True):
        want = t.lookup_packed(*args, data.words, wm, 1, without)
        for memo in (wm, pm):
            got = t.plan_lookup_packed(plan, *corpus, memo, 1, without)
            assert all(np.array_equal(a, b) for a, b in zip(got, want))
    copied = pickle.loads(pickle.dumps(plan))
    assert all(np.array_equal(a, b) for a, b in zip(copied.memo_layout, plan.memo_layout))
    got = t.plan_lookup_packed(copied, *corpus, pm, 1, True)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    other = _keytable.TemplatePlan(f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                                    np.full(4, -1, np.int32))
    with pytest.raises(ValueError, match="other templates"):
        t.plan_lookup_packed(other, *corpus, pm)
    with pytest.raises(ValueError, match="another row"):
        _keytable.TemplatePlan(f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds,
                                np.zeros(4, np.int32))
    with pytest.raises(ValueError, match="cell_slot out of range"):
        t.plan_word_memo(plan, data.hashes, np.ascontiguousarray(data.word_slots[:, :1]))
    with pytest.raises(ValueError, match="beyond the padding"):
        t.plan_lookup_packed(plan, *corpus[:3], corpus[3][:0], *corpus[4:], pm)
    layout = f._memo_col.copy()
    kept = _keytable.TemplatePlan(f._tmpl_ptr, f._cell_row, f._cell_slot, f._seeds, layout,
                                   f._memo_row)
    layout[:] = -1
    assert np.array_equal(kept.memo_layout[0], f._memo_col)
