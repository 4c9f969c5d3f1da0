"""Feature templates: syntax, token functions, the compiled path against the
plain-Python reference, min_freq, hashing mode, state round trips, bad input."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cseq.features import _keytable, _templates
from cseq.exceptions import InputError, InputTypeError, ModelFormatError, NotFittedError
from cseq.conll import read_conll
from cseq.chain.sequences import Sequences
from cseq.templates import (
    PRESETS,
    TOKEN_FUNCTIONS,
    Cell,
    TemplateFeaturizer,
    Templates,
    expand,
    preset,
)

from support.budget import examples
from support.presets import UNTAGGED
from support.shared_data import DATA, needs

CONLL2000 = DATA / "conll2000" / "train.txt"


def compiled_names(feat: TemplateFeaturizer, seqs: Sequences) -> list[list[list[str]]]:
    """Map packed ids back to names, nested as sentences of tokens."""
    names = feat.attribute_names()
    out = []
    for s in range(seqs.n_sequences):
        sent = []
        for t in range(seqs.seq_ptr[s], seqs.seq_ptr[s + 1]):
            ids = seqs.attr_ids[seqs.tok_ptr[t] : seqs.tok_ptr[t + 1]]
            sent.append([names[i] for i in ids])
        out.append(sent)
    return out


def assert_same_features(feat: TemplateFeaturizer, X, seqs: Sequences) -> None:
    """The compiled path gives every token the reference's attributes, by name and by id.

    ``seqs`` must come from ``feat.fit_transform(X)`` (``min_freq=1``): ids are
    then dense and given in order of first occurrence (token by token, template
    by template), which the reference's names determine.  Comparing names alone
    would let one attribute be split over two ids.
    """
    ref = feat.features_python(X)
    got = compiled_names(feat, seqs)
    assert len(ref) == len(got)
    for s, (r, g) in enumerate(zip(ref, got)):
        assert len(r) == len(g), s
        for t, (rt, gt) in enumerate(zip(r, g)):
            assert Counter(rt) == Counter(gt), (s, t, rt, gt)
    # An attribute is a template skeleton with its values (two of them may
    # render to one name: "U1:%x[0,0]%x[0,1]" on ab|c and on a|bc).
    index: dict[tuple, int] = {}
    want = [index.setdefault(key, len(index)) for key in _reference_attributes(feat, X)]
    assert seqs.attr_ids.tolist() == want
    names = feat.attribute_names()
    assert names == [tpl_render(key) for key in index]


def _reference_attributes(feat: TemplateFeaturizer, X):
    """(skeleton, values) of every attribute, token by token, template by template,
    read the way :func:`expand` reads them."""
    for sent in X:
        rows = [(tok,) if isinstance(tok, str) else tuple(tok) for tok in sent]
        n = len(rows)
        for i in range(n):
            for t in feat.templates.templates:
                values = []
                for c in t.cells:
                    j = i + c.row
                    if j < 0:
                        values.append(f"_B-{-j}")
                    elif j >= n:
                        values.append(f"_B+{j - n + 1}")
                    elif c.func is None:
                        values.append(rows[j][c.col])
                    else:
                        values.append(TOKEN_FUNCTIONS[c.func](rows[j][c.col]))
                yield t.skeleton, tuple(values)


def tpl_render(key) -> str:
    skeleton, values = key
    parts = skeleton.split("\x00")
    out = [parts[0]]
    for v, p in zip(values, parts[1:]):
        out += [v, p]
    return "".join(out)


# ---------------------------------------------------------------- syntax


def test_crfpp_example_and_padding():
    text = "U00:%x[-2,0]\nU01:%x[-1,0]\nU02:%x[0,0]\nU03:%x[1,0]\nU04:%x[2,0]\nU05:%x[-1,0]/%x[0,0]\n"
    got = expand(text, ["a", "b", "c"])
    assert got[0] == ["U00:_B-2", "U01:_B-1", "U02:a", "U03:b", "U04:c", "U05:_B-1/a"]
    assert got[2] == ["U00:a", "U01:b", "U02:c", "U03:_B+1", "U04:_B+2", "U05:b/c"]


def test_large_offsets_and_literals():
    t = Templates("U9:<%x[-7,0]|%x[+5,0]>end")
    assert t.templates[0].parts == ("U9:<", "|", ">end")
    assert t.max_offset == 7
    assert expand(t, ["w"]) == [["U9:<_B-7|_B+5>end"]]


def test_multiple_columns():
    X = [("Confidence", "NN"), ("in", "IN"), ("the", "DT")]
    got = expand("U16:%x[-1,1]/%x[0,1]\nU02:%x[0,0]/%x[1,1]", X)
    assert got == [["U16:_B-1/NN", "U02:Confidence/IN"], ["U16:NN/IN", "U02:in/DT"],
                   ["U16:IN/DT", "U02:the/_B+1"]]


def test_comments_blank_lines_and_bigram_flag():
    t = Templates("# a comment\n\n   \nU00:%x[0,0]\n  # indented comment\nB\n")
    assert len(t) == 1 and t.bigram
    assert not Templates("U00:%x[0,0]").bigram
    assert Templates("B00\nU1:%x[0,0]").bigram
    assert t.templates[0].line_no == 4


def test_bias_template_without_macros():
    assert expand("U99:bias", ["a", "b"]) == [["U99:bias"], ["U99:bias"]]


def test_whitespace_inside_macro():
    assert Templates("U1:%x[ -1 , 0 : lower ]").templates[0].cells == (Cell(-1, 0, "lower"),)


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("U01:%x[0]", 1, "malformed macro"),
        ("# c\n\nU01:%x[0,a]", 3, "malformed macro"),
        ("U01:%x[0,0", 1, "malformed macro"),
        ("U01:%X[0,0]", 1, "malformed macro"),
        ("U01:%x[0,-1]", 1, "malformed macro"),
        ("U01:%x[0,0:nosuch]", 1, "unknown token function 'nosuch'"),
        ("U00:%x[0,0]\nX01:%x[0,0]", 2, "must start with 'U'"),
        ("U00:%x[0,0]\nB01:%x[0,0]", 2, "bigram templates with macros"),
        ("U01:%x[5000,0]", 1, "row offset"),
    ],
)
def test_malformed_lines_name_the_line(text, line, fragment):
    with pytest.raises(InputError, match=f"template line {line}: .*{fragment}|"
                       f"template line {line}: {fragment}") as info:
        Templates(text)
    assert f"template line {line}" in str(info.value)
    assert fragment in str(info.value)


def test_unknown_preset_and_bad_types():
    with pytest.raises(InputError, match="presets are pos, chunk, ner"):
        TemplateFeaturizer("nerr")
    with pytest.raises(InputError, match="unknown template preset"):
        preset("nope")
    with pytest.raises(InputTypeError):
        TemplateFeaturizer(42)
    with pytest.raises(InputError, match="no unigram"):
        TemplateFeaturizer("# nothing\nB\n")


def test_presets_parse():
    for name in PRESETS:
        t = preset(name)
        assert t == Templates.preset(name) == Templates(PRESETS[name])
        assert t.bigram and len(t) > 10
    assert preset("chunk").n_columns == 2
    assert preset("pos").n_columns == preset("ner").n_columns == 1


def test_from_file(tmp_path):
    p = tmp_path / "template"
    p.write_text(PRESETS["chunk"], encoding="utf-8")
    assert Templates.from_file(p) == preset("chunk")


# ---------------------------------------------------------------- token functions


@pytest.mark.parametrize(
    "func, word, value",
    [
        ("lower", "McDonald", "mcdonald"),
        ("prefix1", "Apple", "A"),
        ("prefix2", "Apple", "Ap"),
        ("prefix3", "Apple", "App"),
        ("prefix4", "Apple", "Appl"),
        ("prefix4", "an", "an"),
        ("suffix1", "walked", "d"),
        ("suffix2", "walked", "ed"),
        ("suffix3", "walked", "ked"),
        ("suffix4", "walked", "lked"),
        ("suffix4", "is", "is"),
        ("suffix2", "", ""),
        ("shape", "McDonald's-2", "XxXxxxxx'x-d"),
        ("shape", "Ünïcode9", "Xxxxxxxd"),
        ("shortshape", "McDonald's-2", "XxXx'x-d"),
        ("shortshape", "1,234.50", "d,d.d"),
        ("shortshape", "...", "."),
        ("istitle", "Mr.", "1"),
        ("istitle", "A", "1"),
        ("istitle", "USA", "0"),
        ("istitle", "McDonald", "0"),
        ("istitle", "the", "0"),
        ("isupper", "USA", "1"),
        ("isupper", "U.S.", "1"),
        ("isupper", "Usa", "0"),
        ("hasdigit", "A4", "1"),
        ("hasdigit", "Ab", "0"),
        ("alldigits", "1984", "1"),
        ("alldigits", "1,984", "0"),
        ("hashyphen", "well-known", "1"),
        ("hashyphen", "known", "0"),
        ("ispunct", ",", "1"),
        ("ispunct", "--", "1"),
        ("ispunct", "$", "1"),
        ("ispunct", "a.", "0"),
        ("ispunct", "", "0"),
        ("len", "", "0"),
        ("len", "a", "1"),
        ("len", "abcd", "4"),
        ("len", "abcde", "5-6"),
        ("len", "abcdef", "5-6"),
        ("len", "abcdefg", "7-9"),
        ("len", "abcdefghi", "7-9"),
        ("len", "abcdefghij", "10+"),
    ],
)
def test_token_function_values(func, word, value):
    assert TOKEN_FUNCTIONS[func](word) == value
    # The same value through the reference and the compiled path.
    assert expand(f"U:%x[0,0:{func}]", [word]) == [[f"U:{value}"]]
    f = TemplateFeaturizer(f"U:%x[0,0:{func}]")
    seqs = f.fit_transform([[word]])
    assert compiled_names(f, seqs) == [[[f"U:{value}"]]]


def test_every_function_on_padding_and_real_text():
    text = "\n".join(
        f"U{i:02d}:%x[-1,0:{name}]/%x[0,0:{name}]/%x[1,0:{name}]"
        for i, name in enumerate(TOKEN_FUNCTIONS)
    )
    X = [["The", "U.S.", "well-known", "1984", ",", "Ünïcode9", "x"], ["single"], []]
    f = TemplateFeaturizer(text)
    assert_same_features(f, X, f.fit_transform(X))
    # Functions never apply to padding.
    assert expand("U:%x[-1,0:lower]/%x[1,0:len]", ["A"]) == [["U:_B-1/_B+1"]]


# ---------------------------------------------------------------- compiled vs reference

_words = st.one_of(
    st.sampled_from(["the", "The", "a", "/", "_B-1", "_B+1", "", "U.S.", "1,000", "-", "ǅemal"]),
    st.text(min_size=0, max_size=6),
)
_cells = st.tuples(
    st.integers(-3, 3), st.integers(0, 2), st.sampled_from([None, *TOKEN_FUNCTIONS])
)
_template_sets = st.lists(
    st.tuples(st.sampled_from(["U1:", "U2:", "U3"]), st.lists(_cells, min_size=0, max_size=3),
              st.sampled_from(["/", "|", ""])),
    min_size=1,
    max_size=6,
)


def _template_text(spec) -> str:
    lines = []
    for ident, cells, sep in spec:
        macros = [f"%x[{r},{c}{':' + fn if fn else ''}]" for r, c, fn in cells]
        lines.append(ident + sep.join(macros))
    return "\n".join(lines)


def test_attributes_that_render_alike_keep_their_own_ids():
    # Found by the id comparison: a template without macros and one whose
    # value is empty both print "U1:", and "ab"+"c" and "a"+"bc" both print
    # "U2:abc".  Each is its own attribute (skeleton and values), with its own
    # id, whose name appears twice in attribute_names().
    f = TemplateFeaturizer("U1:\nU1:%x[0,0]\nU2:%x[0,0]%x[0,1]")
    seqs = f.fit_transform([[("", "c"), ("ab", "c"), ("a", "bc")]])
    assert seqs.attr_ids.tolist() == [0, 1, 2, 0, 3, 4, 0, 5, 6]
    assert f.attribute_names() == ["U1:", "U1:", "U2:c", "U1:ab", "U2:abc", "U1:a", "U2:abc"]
    assert_same_features(f, [[("", "c"), ("ab", "c"), ("a", "bc")]], seqs)


@examples(60)
@given(
    spec=_template_sets,
    X=st.lists(st.lists(st.tuples(_words, _words, _words), max_size=7), min_size=1, max_size=5),
)
def test_compiled_matches_reference_random(spec, X):
    f = TemplateFeaturizer(_template_text(spec))
    seqs = f.fit_transform(X)
    assert seqs.n_sequences == len(X) and seqs.n_tokens == sum(map(len, X))
    assert seqs.labels is None and np.all(seqs.values == 1.0)
    assert_same_features(f, X, seqs)
    # transform of the training data gives the same ids as fit_transform.
    again = f.transform(X)
    assert np.array_equal(again.attr_ids, seqs.attr_ids)
    assert np.array_equal(again.tok_ptr, seqs.tok_ptr)
    # ids are dense.
    if len(seqs.attr_ids):
        assert set(seqs.attr_ids.tolist()) == set(range(f.n_attributes))


@examples(30)
@given(X=st.lists(st.lists(_words, max_size=8), min_size=1, max_size=6))
def test_single_column_strings_presets(X):
    for name in ("pos", "ner"):
        f = TemplateFeaturizer(UNTAGGED[name])
        assert_same_features(f, X, f.fit_transform(X))


def test_duplicate_and_shared_skeleton_templates():
    # Same literal text and same values -> the same attribute (as in CRF++).
    f = TemplateFeaturizer("U1:%x[0,0]\nU1:%x[0,0:lower]\nU1:%x[0,0]")
    seqs = f.fit_transform([["the", "The"]])
    assert f.attribute_names() == ["U1:the", "U1:The"]
    assert seqs.attr_ids.tolist() == [0, 0, 0, 1, 0, 1]


def test_token_that_looks_like_padding_shares_its_attribute():
    f = TemplateFeaturizer("U:%x[-1,0]")
    seqs = f.fit_transform([["_B-1", "x"]])
    assert seqs.attr_ids.tolist() == [0, 0]
    assert f.attribute_names() == ["U:_B-1"]


@needs(CONLL2000)
@pytest.mark.parametrize("name", ["chunk", "pos", "ner"])
def test_compiled_matches_reference_conll2000(name):
    X = read_conll(CONLL2000)[0][:500]
    assert len(X) == 500
    f = TemplateFeaturizer(UNTAGGED[name])
    seqs = f.fit_transform(X)
    assert_same_features(f, X, seqs)
    assert seqs.n_tokens == sum(map(len, X))
    assert len(seqs.attr_ids) == seqs.n_tokens * len(f.templates)


def test_sequences_layout():
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]")
    seqs = f.fit_transform([["a", "b"], [], ["c"]])
    assert seqs.seq_ptr.dtype == np.int64 and seqs.tok_ptr.dtype == np.int64
    assert seqs.attr_ids.dtype == np.int32 and seqs.values.dtype == np.float32
    assert seqs.seq_ptr.tolist() == [0, 2, 2, 3]
    assert seqs.tok_ptr.tolist() == [0, 2, 4, 6]
    assert f.attribute_names() == ["U0:a", "U1:_B-1", "U0:b", "U1:a", "U0:c"]
    assert seqs.attr_ids.tolist() == [0, 1, 2, 3, 4, 1]


def test_transform_drops_unknown_attributes():
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[0,0:suffix1]")
    f.fit_transform([["cat", "dog"]])
    seqs = f.transform([["cow", "cat"], ["emu"]])
    names = f.attribute_names()
    got = compiled_names(f, seqs)
    assert got == [[[], ["U0:cat", "U1:t"]], [[]]]
    assert seqs.tok_ptr.tolist() == [0, 0, 2, 2]
    assert set(names) == {"U0:cat", "U1:t", "U0:dog", "U1:g"}


@pytest.mark.parametrize("n_jobs", [2, 3])
def test_transform_threads_give_the_serial_arrays(n_jobs):
    rng = np.random.default_rng(n_jobs)
    words = ["cat", "dog", "emu", "gnu", "Cow", "a-b", "42", ""]
    X = [[words[k] for k in rng.integers(0, len(words), rng.integers(0, 9))] for _ in range(300)]
    f = TemplateFeaturizer(UNTAGGED["pos"])
    f.fit_transform(X[:100])
    a, b = f.transform(X), f.transform(X, n_jobs=n_jobs)
    for name in ("seq_ptr", "tok_ptr", "attr_ids", "values"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_fit_transform_refits():
    f = TemplateFeaturizer("U0:%x[0,0]")
    f.fit_transform([["a"]])
    f.fit_transform([["b", "c"]])
    assert f.attribute_names() == ["U0:b", "U0:c"]


# ---------------------------------------------------------------- min_freq


@examples(40)
@given(
    X=st.lists(st.lists(st.sampled_from(list("aabbbcdeff")), max_size=8), min_size=1, max_size=8),
    k=st.integers(1, 5),
)
def test_min_freq_keeps_exactly_the_frequent(X, k):
    text = "U0:%x[0,0]\nU1:%x[-1,0]/%x[0,0]"
    counts = Counter(a for sent in X for tok in expand(text, sent) for a in tok)
    f = TemplateFeaturizer(text, min_freq=k)
    seqs = f.fit_transform(X)
    names = f.attribute_names()
    assert set(names) == {a for a, c in counts.items() if c >= k}
    assert f.n_attributes == len(names)
    # Each token keeps exactly its frequent attributes, ids dense.
    ref = f.features_python(X)
    got = compiled_names(f, seqs)
    for rs, gs in zip(ref, got):
        for rt, gt in zip(rs, gs):
            assert Counter(gt) == Counter(a for a in rt if counts[a] >= k)
    if len(seqs.attr_ids):
        assert seqs.attr_ids.max() < f.n_attributes
    assert np.array_equal(f.transform(X).attr_ids, seqs.attr_ids)


def test_min_freq_validation():
    with pytest.raises(InputError):
        TemplateFeaturizer("pos", min_freq=0)
    with pytest.raises(InputTypeError):
        TemplateFeaturizer("pos", min_freq=1.5)
    with pytest.raises(InputError, match="min_freq"):
        TemplateFeaturizer("pos", min_freq=2, n_buckets=64)


def test_min_freq_can_drop_everything():
    f = TemplateFeaturizer("U0:%x[0,0]", min_freq=5)
    seqs = f.fit_transform([["a", "b"]])
    assert f.n_attributes == 0 and len(seqs.attr_ids) == 0
    assert f.attribute_names() == []
    meta, arrays = f.get_state()
    g = TemplateFeaturizer.from_state(meta, arrays)
    assert g.n_attributes == 0 and len(g.transform([["a"]]).attr_ids) == 0


# ---------------------------------------------------------------- hashing mode


def test_hash_mode():
    X = [["the", "cat", "sat"], ["the", "dog"]]
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]", n_buckets=16)
    table = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]")
    a = f.fit_transform(X)
    t = table.fit_transform(X)
    assert f.n_attributes == 16
    assert a.attr_ids.min() >= 0 and a.attr_ids.max() < 16
    assert np.array_equal(a.tok_ptr, t.tok_ptr)
    # Same attribute -> same bucket; the bucket is the key modulo n_buckets.
    keys = table._table.keys
    assert np.array_equal(a.attr_ids, (keys % np.uint64(16)).astype(np.int32)[t.attr_ids])
    # Nothing is dropped on new data, and no fit is needed.
    fresh = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]", n_buckets=16)
    b = fresh.transform([["emu", "gnu"]])
    assert len(b.attr_ids) == 4
    assert f.attribute_names()[:2] == ["hash[0]", "hash[1]"]
    assert len(f.attribute_names()) == 16


def test_hash_mode_validation():
    for bad in (0, -3, 2**31):
        with pytest.raises(InputError):
            TemplateFeaturizer("pos", n_buckets=bad)
    with pytest.raises(InputTypeError):
        TemplateFeaturizer("pos", n_buckets=2.0)


# ---------------------------------------------------------------- state


def roundtrip(f: TemplateFeaturizer) -> TemplateFeaturizer:
    meta, arrays = f.get_state()
    meta = json.loads(json.dumps(meta))
    for a in arrays.values():
        assert a.dtype.byteorder in "<|" or (a.dtype.byteorder == "=" and np.little_endian)
    return TemplateFeaturizer.from_state(meta, {k: v.copy() for k, v in arrays.items()})


@pytest.mark.parametrize("kwargs", [{}, {"min_freq": 2}, {"n_buckets": 1 << 12}])
@pytest.mark.parametrize("name", ["pos", "chunk", "ner"])
def test_state_roundtrip(name, kwargs):
    X = [[("The", "DT"), ("cat", "NN"), ("sat", "VBD")], [("The", "DT"), ("dog", "NN")],
         [("A", "DT"), ("cat", "NN")]]
    test = [[("The", "DT"), ("emu", "NN")], [], [("cat", "NN")]]
    f = TemplateFeaturizer(UNTAGGED[name], **kwargs)
    f.fit_transform(X)
    g = roundtrip(f)
    assert g.n_attributes == f.n_attributes
    assert g.templates == f.templates and g.min_freq == f.min_freq and g.n_buckets == f.n_buckets
    for data in (X, test):
        a, b = f.transform(data), g.transform(data)
        assert np.array_equal(a.attr_ids, b.attr_ids)
        assert np.array_equal(a.tok_ptr, b.tok_ptr)
    if f.n_buckets is None:
        assert g.attribute_names() == f.attribute_names()


@needs(CONLL2000)
def test_state_roundtrip_real_data():
    X = read_conll(CONLL2000)[0][:300]
    f = TemplateFeaturizer("chunk", min_freq=2)
    f.fit_transform(X[:200])
    g = roundtrip(f)
    assert np.array_equal(f.transform(X).attr_ids, g.transform(X).attr_ids)
    assert g.attribute_names() == f.attribute_names()


def test_byte_swapped_arrays_are_accepted():
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]/%x[0,0]")
    f.fit_transform([["a", "b", "c"]])
    meta, arrays = f.get_state()
    swapped = {k: v.astype(v.dtype.newbyteorder(">")) for k, v in arrays.items()}
    g = TemplateFeaturizer.from_state(meta, swapped)
    assert g.attribute_names() == f.attribute_names()


def _state():
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]/%x[0,0]")
    f.fit_transform([["a", "b", "c"], ["b", "é"]])
    return f.get_state()


def _corrupt_key(m, a):
    a["keys"][1] ^= np.uint64(1)


def _corrupt_string(m, a):
    a["strings"][0] ^= 1


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda m, a: m.update(kind="dict"), "kind"),
        (lambda m, a: m.update(format=99), "format"),
        (lambda m, a: m.update(hash="md5"), "hash scheme"),
        (lambda m, a: m.update(templates=7), "template text"),
        (lambda m, a: m.update(templates="U0:%x[0,"), "malformed"),
        (lambda m, a: m.update(templates="U0:%x[0,0]\nU1:%x[-1,0]|%x[0,0]"), "do not match"),
        (lambda m, a: m.update(n_attributes=-1), "n_attributes"),
        (lambda m, a: m.update(n_attributes=3), "n_attributes"),
        (lambda m, a: m.update(min_freq="1"), "min_freq"),
        (lambda m, a: a.pop("keys"), "arrays must be"),
        (lambda m, a: a.update(extra=np.zeros(1)), "arrays must be"),
        (lambda m, a: a.update(keys=a["keys"].astype(np.int64)), "dtype"),
        (lambda m, a: a.update(keys=a["keys"].reshape(1, -1)), "1-d"),
        (lambda m, a: a.update(keys=[1, 2]), "1-d"),
        (lambda m, a: a.update(name_template=a["name_template"] + 5), "out of range"),
        (lambda m, a: a.update(name_cells=a["name_cells"][:-1]), "cell counts"),
        (lambda m, a: a.update(name_cells=a["name_cells"] + 100), "out of range"),
        (lambda m, a: a.update(string_ptr=a["string_ptr"][::-1].copy()), "string offsets"),
        (lambda m, a: a.update(strings=np.full(len(a["strings"]), 0xFF, np.uint8)), "UTF-8"),
        (_corrupt_key, "do not match"),
        (_corrupt_string, "do not match"),
    ],
)
def test_from_state_rejects_bad_state(mutate, fragment):
    meta, arrays = _state()
    mutate(meta, arrays)
    with pytest.raises(ModelFormatError, match=fragment):
        TemplateFeaturizer.from_state(meta, arrays)


def test_from_state_rejects_non_dicts_and_hash_mode_arrays():
    with pytest.raises(ModelFormatError):
        TemplateFeaturizer.from_state([], {})
    f = TemplateFeaturizer(UNTAGGED["pos"], n_buckets=8)
    meta, arrays = f.get_state()
    assert arrays == {}
    with pytest.raises(ModelFormatError, match="no arrays"):
        TemplateFeaturizer.from_state(meta, {"keys": np.zeros(1, np.uint64)})
    meta["n_attributes"] = 9
    with pytest.raises(ModelFormatError, match="n_buckets"):
        TemplateFeaturizer.from_state(meta, {})


def test_duplicate_keys_rejected():
    f = TemplateFeaturizer("U0:%x[0,0]\nU0:%x[0,0:lower]")
    f.fit_transform([["a", "B"]])
    meta, arrays = f.get_state()
    # Attribute 1 ("U0:B") renamed to "U0:a": its key then equals attribute 0's.
    arrays["name_cells"][1] = arrays["name_cells"][0]
    arrays["keys"][1] = arrays["keys"][0]
    with pytest.raises(ModelFormatError, match="repeats"):
        TemplateFeaturizer.from_state(meta, arrays)


def test_not_fitted():
    f = TemplateFeaturizer("pos")
    for call in (lambda: f.transform([["a"]]), lambda: f.n_attributes, f.get_state,
                 f.attribute_names):
        with pytest.raises(NotFittedError):
            call()


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "X, exc, fragment",
    [
        ([], InputError, "empty"),
        ("a b c", InputTypeError, "list of sentences"),
        (5, InputTypeError, "list of sentences"),
        (["a b"], InputTypeError, "sentence 0 must be a list"),
        ([["a"], [1]], InputTypeError, "sentence 1, token 0"),
        ([["a", ("b", "c")]], InputError, "sentence 0, token 1 has 2 column"),
        ([[("a",), (3,)]], InputTypeError, "sentence 0, token 1, column 0"),
        ([[(["x"], "a")]], InputTypeError, "sentence 0, token 0, column 0"),
        ([[("a", "b"), ("c", None)]], None, None),  # unread columns are not inspected
        ([[("a", "b"), ("c",)]], InputError, "sentence 0, token 1 has 1 column"),
        ([[("a",), ("b",)], [("a", "b"), ("c", "d"), ("e", "f", "g")]], InputError,
         "sentence 1, token 2 has 3 column"),
    ],
)
def test_bad_input(X, exc, fragment):
    f = TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]")
    if exc is None:
        assert f.fit_transform(X).n_tokens == len(X[0]) == len(f.features_python(X)[0])
        return
    with pytest.raises(exc, match=fragment):
        f.fit_transform(X)
    with pytest.raises(exc, match=fragment):
        f.features_python(X)


def test_too_few_columns_names_sentence_and_token():
    f = TemplateFeaturizer("chunk")
    with pytest.raises(InputError, match="sentence 1, token 0 has 1 column.*column 1"):
        f.fit_transform([[("a", "DT")], ["b", "c"]])
    with pytest.raises(InputError, match="sentence 0, token 0 has 1 column"):
        f.fit_transform([[("a",)]])
    with pytest.raises(InputError, match="sentence 1, token 0"):
        expand("chunk", [("a",)], _si=1)


def test_flexible_containers():
    f = TemplateFeaturizer("U0:%x[0,0]/%x[0,1]")
    base = f.fit_transform([[("a", "b"), ("c", "d")]])
    mixed = f.transform(((["a", "b"], ("c", "d")),))  # tuple X, list and tuple tokens
    gen = f.transform(iter([iter([("a", "b"), ("c", "d")])]))  # iterators
    assert np.array_equal(base.attr_ids, mixed.attr_ids)
    assert np.array_equal(base.attr_ids, gen.attr_ids)
    g = TemplateFeaturizer("U0:%x[0,0]")
    a = g.fit_transform([["a", ("b",)]])  # str and 1-tuple tokens mix
    b = g.transform([np.array(["a", "b"])])  # numpy str tokens
    assert np.array_equal(a.attr_ids, b.attr_ids)


def test_empty_sentences_only():
    f = TemplateFeaturizer(UNTAGGED["pos"])
    seqs = f.fit_transform([[], []])
    assert seqs.n_sequences == 2 and seqs.n_tokens == 0 and f.n_attributes == 0


def test_surrogates_and_unicode():
    X = [["\ud800x", "naïve", "日本", "😀"]]
    f = TemplateFeaturizer("ner")
    seqs = f.fit_transform(X)
    assert_same_features(f, X, seqs)
    g = roundtrip(f)
    assert g.attribute_names() == f.attribute_names()


# ---------------------------------------------------------------- kernels


def test_hash_strings_is_stable():
    # Golden values: the hash must not change across platforms or releases,
    # or saved models would no longer find their attributes.
    h = _templates.hash_strings(["", "the", "U05:\x00/\x00"])
    assert h.dtype == np.uint64
    assert h.tolist() == GOLDEN
    with pytest.raises(TypeError):
        _templates.hash_strings(["a", 1])


GOLDEN = [8848935107335307795, 183583124830653945, 5093191575522305539]


def test_keytable_growth_and_lookup():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2**63, size=(5000, 3), dtype=np.uint64)
    keys[2500:] = keys[:2500]
    t = _keytable.KeyTable(0)
    ids = t.add(keys)
    assert len(t) == 7500 and t.capacity >= 7500 / 0.7
    assert np.array_equal(ids[2500:], ids[:2500])
    assert sorted(set(ids.ravel().tolist())) == list(range(7500))
    assert np.array_equal(t.keys[ids], keys)
    assert t.counts.tolist() == [2] * 7500
    assert np.array_equal(t.lookup(keys), ids)
    miss = rng.integers(0, 2**63, size=(10, 2), dtype=np.uint64)
    assert (t.lookup(miss) == -1).all()
    u = _keytable.KeyTable.from_keys(t.keys)
    assert np.array_equal(u.lookup(keys), ids)
    with pytest.raises(ValueError, match="repeats"):
        _keytable.KeyTable.from_keys(np.array([1, 2, 1], dtype=np.uint64))
    zero = _keytable.KeyTable()
    assert zero.add(np.zeros((2, 1), np.uint64)).tolist() == [[0], [0]]  # key 0 is a key


def test_keytable_copy_is_independent():
    """partial_fit grows a copy of the table while readers probe the original."""
    rng = np.random.default_rng(2)
    keys = rng.integers(0, 2**63, size=(3000, 2), dtype=np.uint64)
    t = _keytable.KeyTable(0, max_ids=10_000)
    ids = t.add(keys[:1000])
    c = t.copy()
    assert len(c) == len(t) and c.capacity == t.capacity and c.max_ids == 10_000
    assert np.array_equal(c.keys, t.keys) and np.array_equal(c.counts, t.counts)
    assert np.array_equal(c.first_token, t.first_token)
    assert np.array_equal(c.first_template, t.first_template)
    grown = c.add(keys)  # past the capacity: the copy's slots grow
    assert np.array_equal(grown[:1000], ids) and len(c) == 6000 and c.capacity > t.capacity
    assert len(t) == 2000 and np.array_equal(t.lookup(keys[:1000]), ids)
    assert (t.lookup(keys[1000:]) == -1).all()
    assert t.counts.tolist() == [1] * 2000 and c.counts[:2000].tolist() == [2] * 2000
    empty = _keytable.KeyTable(0).copy()
    assert len(empty) == 0 and empty.add(keys[:2]).ravel().tolist() == [0, 1, 2, 3]


def test_template_featurizer_copy_grows_alone():
    f = TemplateFeaturizer(UNTAGGED["pos"])
    f.fit_transform([["a", "b"], ["c"]])
    names = f.attribute_names()
    g = f.copy()
    g.partial_fit_transform([["d", "a"]])
    assert g.n_attributes > f.n_attributes == len(names)
    assert f.attribute_names() == names and g.attribute_names()[:len(names)] == names
    assert f.transform([["d"]]).attr_ids.max() < f.n_attributes


def test_keytable_ids_never_wrap_past_int32():
    # 70% of the largest slot table (2**32 slots) is more than 2**31 ids: the
    # table must stop at its id bound with a clear error instead of wrapping.
    assert _keytable.KeyTable().max_ids == 2**31 - 1
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**63, size=(40, 1), dtype=np.uint64)
    t = _keytable.KeyTable(0, max_ids=25)
    assert t.add(keys[:25]).ravel().tolist() == list(range(25))
    with pytest.raises(InputError, match="more than 25 distinct attributes"):
        t.add(keys)
    assert len(t) == 25
    assert t.lookup(keys[:25]).ravel().tolist() == list(range(25))
    assert (t.add(keys[:25]) >= 0).all()  # known keys still count
    with pytest.raises(ValueError, match="more than 3 keys"):
        _keytable.KeyTable.from_keys(keys[:4, 0], max_ids=3)
    for bad in (0, 2**31):
        with pytest.raises(ValueError, match="max_ids"):
            _keytable.KeyTable(max_ids=bad)


def test_extract_keys_validates():
    cells = np.zeros((2, 1), np.int32)
    hashes = np.zeros(1, np.uint64)
    ok = dict(
        cells=cells, hashes=hashes, seq_ptr=np.array([0, 2], np.int64),
        tmpl_ptr=np.array([0, 1], np.int32), cell_row=np.array([-1], np.int32),
        cell_slot=np.array([0], np.int32), tmpl_seed=np.zeros(1, np.uint64),
        pad_before=np.zeros(1, np.int32), pad_after=np.zeros(1, np.int32),
    )
    assert _templates.extract_keys(**ok).shape == (2, 1)
    bad = [
        {"seq_ptr": np.array([0, 3], np.int64)},
        {"seq_ptr": np.array([0, 3, 2], np.int64)},
        {"tmpl_ptr": np.array([0, 2], np.int32)},
        {"cell_slot": np.array([1], np.int32)},
        {"cell_row": np.array([-2], np.int32)},
        {"cells": np.ones((2, 1), np.int32)},
        {"pad_before": np.ones(1, np.int32)},
    ]
    for change in bad:
        with pytest.raises(ValueError):
            _templates.extract_keys(**{**ok, **change})


def test_from_state_validates_before_allocating():
    # One unused template line with 100,000 macros and a million attributes of
    # a one-macro template: sizing the key check by the widest template line
    # asked for 10^6 x 10^5 x 8 bytes.  The check must cost memory in
    # proportion to the stored arrays, and the bad keys give ModelFormatError.
    import tracemalloc

    n = 1_000_000
    text = "U0:%x[0,0]\nU1:" + "%x[0,0]" * 100_000
    meta = {"kind": "templates", "format": 1, "hash": "fnv1a64-combine1", "templates": text,
            "min_freq": 1, "n_buckets": None, "n_attributes": n, "bigram": False}
    meta.update({k: v for k, v in _state()[0].items() if k in ("format", "hash")})
    arrays = {
        "keys": np.arange(n, dtype=np.uint64),
        "name_template": np.zeros(n, np.int32),
        "name_cells": np.zeros(n, np.int32),
        "strings": np.frombuffer(b"a", np.uint8).copy(),
        "string_ptr": np.array([0, 1], np.int64),
    }
    stored = sum(a.nbytes for a in arrays.values())
    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError, match="do not match"):
            TemplateFeaturizer.from_state(meta, arrays)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * stored + (16 << 20), peak


@pytest.mark.parametrize("digits", [5000, 20000])
def test_huge_row_offset_names_the_line(digits):
    # Python refuses int() of more than 4300 digits with a bare ValueError.
    text = "U0:%x[0,0]\nU1:%x[" + "9" * digits + ",0]"
    with pytest.raises(InputError, match="template line 2: row offset"):
        Templates(text)
    with pytest.raises(InputError, match="template line 2: column"):
        Templates("U0:%x[0,0]\nU1:%x[0," + "7" * digits + "]")
    # loads() of a model whose featurizer holds such a text: ModelFormatError
    meta, arrays = _state()
    meta["templates"] = text
    with pytest.raises(ModelFormatError, match="template line 2"):
        TemplateFeaturizer.from_state(meta, arrays)


def test_hash_pieces_and_attribute_keys_are_the_string_path():
    # The loader hashes the stored UTF-8 bytes and folds the keys in C; the
    # same as hash_strings of the decoded strings and extract_keys' keys.
    from cseq.features import encode_strings
    strings = ["", "a", "naïve", "\ud800x", "日本語", "x" * 20, "😀"]
    table = encode_strings(strings)
    assert np.array_equal(_templates.hash_pieces(table["blob"], table["offsets"]),
                          _templates.hash_strings(strings))
    f = TemplateFeaturizer(UNTAGGED["pos"])
    f.fit_transform([["The", "naïve", "cat"], ["A", "😀"]])
    _, arrays = f.get_state()
    hashes = _templates.hash_pieces(arrays["strings"], arrays["string_ptr"])
    keys = _templates.attribute_keys(f._seeds, f._n_cells, arrays["name_template"],
                                     arrays["name_cells"], hashes)
    assert np.array_equal(keys, arrays["keys"])
    with pytest.raises(ValueError, match="offsets"):
        _templates.hash_pieces(table["blob"], table["offsets"][::-1].copy())
    with pytest.raises(ValueError, match="out of range"):
        _templates.attribute_keys(f._seeds, f._n_cells, arrays["name_template"],
                                  arrays["name_cells"], hashes[:1])
    with pytest.raises(ValueError, match="cell counts"):
        _templates.attribute_keys(f._seeds, f._n_cells, arrays["name_template"],
                                  arrays["name_cells"][1:], hashes)


def test_from_state_refuses_a_string_that_starts_inside_a_character():
    f = TemplateFeaturizer("U0:%x[0,0]")
    f.fit_transform([["naïve", "b"]])
    meta, arrays = f.get_state()
    ptr = arrays["string_ptr"].copy()
    assert f._strings()[0] == "naïve"
    ptr[1] = 3  # "na" + the first byte of "ï": the next string starts on its second byte
    with pytest.raises(ModelFormatError, match="inside a character"):
        TemplateFeaturizer.from_state(meta, {**arrays, "string_ptr": ptr})
    # Loaded, the names are decoded when first asked for, and saved again as stored.
    g = TemplateFeaturizer.from_state(meta, arrays)
    assert g.get_state()[1]["strings"].tobytes() == arrays["strings"].tobytes()
    assert g.attribute_names() == f.attribute_names() == ["U0:naïve", "U0:b"]


def test_transform_chunks_are_transform_of_their_sentences():
    rng = np.random.default_rng(5)
    vocab = ["w%d" % i for i in range(200)] + ["The", "naïve", "x-y", "1,0", "_B-1", ""]
    X = [[vocab[i] for i in rng.integers(0, len(vocab), rng.integers(0, 30))]
         for _ in range(120)]
    f = TemplateFeaturizer(UNTAGGED["pos"])
    f.fit_transform(X[:60])
    whole = f.transform(X)
    for max_tokens, min_chunks in ((None, 1), (50, 1), (1, 1), (None, 7), (10**6, 16)):
        chunks = f.transform_chunks(X, max_tokens=max_tokens, min_chunks=min_chunks)
        assert chunks.block(0).start == 0 and chunks.block(len(chunks) - 1).stop == len(X)
        if max_tokens == 1:
            assert len(chunks) > 60
        if min_chunks > 1:
            assert len(chunks) >= min_chunks
        parts = []
        for k in range(len(chunks)):
            b = chunks.block(k)
            assert k == 0 or b.start == chunks.block(k - 1).stop
            got, want = chunks.sequences(k), f.transform(X[b])
            for name in ("seq_ptr", "tok_ptr", "attr_ids", "values"):
                assert np.array_equal(getattr(got, name), getattr(want, name)), name
            parts.append(got.attr_ids)
        assert np.array_equal(np.concatenate(parts), whole.attr_ids)


def test_predict_and_score_through_chunks_in_threads():
    import cseq
    rng = np.random.default_rng(6)
    vocab = ["w%d" % i for i in range(60)] + ["The", "Naïve", "x-y", "1,0"]
    X = [[vocab[i] for i in rng.integers(0, len(vocab), rng.integers(1, 12))]
         for _ in range(150)]
    y = [["A" if len(w) % 2 else "B" for w in s] for s in X]
    est = cseq.StructuredPerceptron(max_iter=3, random_state=0,
                                    features=TemplateFeaturizer("pos")).fit(X, y)
    one = est.predict(X)
    for n_jobs in (2, 3):
        assert est.predict(X, n_jobs=n_jobs) == one
        assert est.score(X, y, n_jobs=n_jobs) == est.score(X, y)
    # The same model unpruned predicts the same (the perceptron drops exact zeros).
    full = cseq.StructuredPerceptron(max_iter=3, random_state=0, all_states=False,
                                     features=TemplateFeaturizer("pos"))
    full._finish = lambda model: model  # type: ignore[method-assign]
    full.fit(X, y)
    assert full.model_.n_state > est.model_.n_state
    assert full.featurizer_.n_attributes > est.featurizer_.n_attributes
    assert full.predict(X) == one
