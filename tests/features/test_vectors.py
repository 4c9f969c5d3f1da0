"""Word classes from vectors: the vector-file readers, the clustering against references
(Ward's tree against SciPy's, k-means at its fixed point), the shipped English classes
and how a model stores them, and ``cseq clusters --vectors``."""

from __future__ import annotations

import gzip
import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cseq
from cseq.exceptions import InputError, ModelFormatError
from cseq.features.clusters import (BUNDLED, Clusters, bundled_clusters, cluster_table,
                                    clusters_from_reference, read_clusters, tree_paths,
                                    with_cluster_templates)
from cseq.features.vectors import _assign, _kmeans, _ward_tree, read_vectors, vector_classes


def _text(path, rows, header=True):
    lines = [f"{len(rows)} {len(rows[0][1])}"] if header else []
    lines += [w + " " + " ".join(repr(float(v)) for v in vec) for w, vec in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _binary(path, rows, newline=True, declared=None):
    with open(path, "wb") as f:
        f.write(f"{declared if declared is not None else len(rows)} {len(rows[0][1])}\n".encode())
        for w, vec in rows:
            f.write(w.encode("utf-8") + b" " + struct.pack(f"<{len(vec)}f", *vec))
            if newline:
                f.write(b"\n")
    return path


_ROWS = [("the", [0.5, -1.0, 2.0]), ("chat", [1.0, 0.0, -1.0]), ("été", [0.25, 0.5, 0.75])]


# -- reading -------------------------------------------------------------------------

@pytest.mark.parametrize("header", [True, False])
def test_text_with_and_without_a_header(tmp_path, header):
    words, m = read_vectors(_text(tmp_path / "v.txt", _ROWS, header))
    assert words == [w for w, _ in _ROWS]
    np.testing.assert_array_equal(m, np.array([v for _, v in _ROWS], np.float32))


@pytest.mark.parametrize("newline", [True, False])
def test_binary_read_as_such_and_found_by_auto(tmp_path, newline):
    path = _binary(tmp_path / "v.bin", _ROWS, newline)
    for fmt in ("auto", "binary"):
        words, m = read_vectors(path, format=fmt)
        assert words == [w for w, _ in _ROWS]
        np.testing.assert_array_equal(m, np.array([v for _, v in _ROWS], np.float32))


def test_binary_given_as_text_and_text_as_binary(tmp_path):
    with pytest.raises(InputError, match=r"line 2 is not UTF-8 text: a binary word2vec"):
        read_vectors(_binary(tmp_path / "v.bin", _ROWS), format="text")
    with pytest.raises(InputError, match="header says 3 words"):
        read_vectors(_text(tmp_path / "v.txt", _ROWS), format="binary")
    with pytest.raises(InputError, match="begins with 'N D'"):
        read_vectors(_text(tmp_path / "g.txt", _ROWS, header=False), format="binary")


@pytest.mark.parametrize("text, message", [
    ("a 1 2 3\nb 1 2\n", r"line 2: 2 values after the word; the first row has 3"),
    ("2 3\na 1 2 3\nb 1 2 3 4\n", r"line 3: 4 values after the word; the header says 3"),
    ("a 1 nan 3\n", r"line 1: the vector of 'a' is not finite"),
    ("a 1 inf 3\n", r"line 1: the vector of 'a' is not finite"),
    ("a 1 x 3\n", r"line 1: 'x' is not a number"),
    ("a 1 1e300 3\n", r"line 1: the vector of 'a' holds a value beyond 1e\+15"),
    ("3 2\na 1 2\nb 1 2\n", r"the header says 3 words; the file holds 2"),
    ("1 2\na 1 2\nb 1 2\n", r"the header says 1 words; the file holds 2"),
    ("", "holds no vector"),
    ("\n\n", "holds no vector"),
    ("0 20000\n", "20000 dimensions; expected 1 to 10,000"),
])
def test_bad_text_files_name_the_line(tmp_path, text, message):
    path = tmp_path / "v.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_vectors(path)


def test_bad_binary_files(tmp_path):
    with pytest.raises(InputError, match="the header says 5 words; the file ends in word 4"):
        read_vectors(_binary(tmp_path / "a.bin", _ROWS, declared=5), format="binary")
    with pytest.raises(InputError, match="the file holds more"):
        read_vectors(_binary(tmp_path / "b.bin", _ROWS, declared=2), format="binary")
    (tmp_path / "c.bin").write_bytes(b"1 2\n\xff\xfe " + struct.pack("<2f", 1, 2))
    with pytest.raises(InputError, match="word 1: the word is not UTF-8"):
        read_vectors(tmp_path / "c.bin", format="binary")
    (tmp_path / "d.bin").write_bytes(b"1 2\n" + b"x" * 2000)
    with pytest.raises(InputError, match="no space within 1000 bytes"):
        read_vectors(tmp_path / "d.bin", format="binary")
    (tmp_path / "e.bin").write_bytes(b"1 2\nw " + struct.pack("<2f", 1, float("nan")))
    with pytest.raises(InputError, match="word 1: the vector of 'w' is not finite"):
        read_vectors(tmp_path / "e.bin", format="binary")
    with pytest.raises(InputError, match="cannot read vector file"):
        read_vectors(tmp_path / "missing.bin")


def test_a_header_of_huge_numbers_is_a_row(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("9" * 5000 + " 3\n", encoding="utf-8")  # not int()'s digit limit
    words, m = read_vectors(path)
    assert words == ["9" * 5000] and m.tolist() == [[3.0]]


def test_max_words_stops_reading_and_repeats_are_skipped(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("a 1 0\nb 0 1\na 5 5\nc 1 1\nd 2 2\nragged\n", encoding="utf-8")
    words, m = read_vectors(path, max_words=3)  # the ragged last line is never read
    assert words == ["a", "b", "c"] and m[0].tolist() == [1, 0]


def test_projection_bounds_the_width_and_keeps_cosines(tmp_path):
    rng = np.random.default_rng(0)
    rows = [(f"w{i}", rng.standard_normal(300).tolist()) for i in range(40)]
    words, m = read_vectors(_text(tmp_path / "v.txt", rows), max_dims=64)
    assert m.shape == (40, 64) and m.dtype == np.float32
    full = np.array([v for _, v in rows])

    def cos(a):
        return (a @ a.T) / np.outer(np.linalg.norm(a, axis=1), np.linalg.norm(a, axis=1))
    assert np.abs(cos(full) - cos(m.astype(float))).max() < 0.6  # Johnson-Lindenstrauss at 64
    again = read_vectors(_binary(tmp_path / "v.bin", rows), max_dims=64)[1]
    np.testing.assert_allclose(again, m, rtol=1e-4, atol=1e-4)  # the same fixed projection


def test_bad_arguments(tmp_path):
    path = _text(tmp_path / "v.txt", _ROWS)
    with pytest.raises(InputError, match="format must be one of"):
        read_vectors(path, format="glove")
    with pytest.raises(InputError, match="max_words must be >= 1"):
        read_vectors(path, max_words=0)
    with pytest.raises(cseq.InputTypeError, match="max_dims must be an int"):
        read_vectors(path, max_dims=2.5)


# -- clustering ----------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.integers(2, 12), st.integers(0, 2 ** 31))
def test_ward_tree_matches_scipy(k, seed):
    from scipy.cluster.hierarchy import linkage
    rng = np.random.default_rng(seed)
    points = rng.standard_normal((k, 3))
    tree = _ward_tree(points, np.ones(k, dtype=np.int64))
    ref = linkage(points, "ward")
    # The same merges, in the same order (as sets of leaves): ids differ only in naming.
    def members(t):
        sets = [frozenset([i]) for i in range(k)]
        out = []
        for a, b in t:
            sets.append(sets[int(a)] | sets[int(b)])
            out.append(sets[-1])
        return out
    assert members(tree) == members(ref[:, :2].astype(int))


def test_tree_paths_are_a_prefix_code():
    rng = np.random.default_rng(1)
    tree = _ward_tree(rng.standard_normal((30, 4)), np.ones(30, dtype=np.int64))
    paths = tree_paths(tree)
    assert len(set(paths)) == 30
    assert not any(a != b and b.startswith(a) for a in paths for b in paths)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2 ** 31))
def test_kmeans_ends_at_a_fixed_point(k, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((200, 5)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    labels, centers = _kmeans(x, k, seed, 200)
    # Every row is at its nearest centroid (brute force)...
    d = ((x[:, None, :].astype(float) - centers[None]) ** 2).sum(-1)
    assert np.allclose(d[np.arange(200), labels], d.min(1), atol=1e-5)
    assert (_assign(x, centers)[0] == labels).all()
    # ... and every non-empty centroid is its rows' mean, to Lloyd's stopping rule.
    for j in np.unique(labels):
        assert np.abs(centers[j] - x[labels == j].mean(0)).max() < 0.05


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2 ** 31))
def test_separate_directions_become_separate_classes(k, seed):
    rng = np.random.default_rng(seed)
    axes = np.eye(8)[:k] * 10
    which = rng.integers(0, k, 120)
    which[:k] = np.arange(k)
    x = axes[which] + rng.standard_normal((120, 8)) * 0.3
    words = [f"w{i}" for i in range(120)]
    table = vector_classes(words, x, k, seed=seed)
    path = dict(zip(table.words, table.paths))
    for a in range(120):
        for b in range(a):
            assert (path[words[a]] == path[words[b]]) == (which[a] == which[b])


def test_classes_are_deterministic_and_bounded():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((500, 10))
    words = [f"w{i}" for i in range(500)]
    a, b = vector_classes(words, x, 40, seed=5), vector_classes(words, x, 40, seed=5)
    assert a == b and a.n_clusters == 40 and a.words == words
    assert vector_classes(words[:3], x[:3], 10).n_clusters == 3  # fewer words than classes
    assert vector_classes(words[:1], x[:1], 10).paths == ["0"]
    huge = vector_classes(list("abcd"), np.array([[1e300, 0], [2e300, 1e299], [0, 1e300],
                                                  [1e299, 3e300]]), 2)
    assert huge.path("a") == huge.path("b") != huge.path("c") == huge.path("d")
    zero = np.zeros((4, 3))
    assert len(vector_classes(list("abcd"), zero, 2)) == 4  # zero vectors: no division by zero


@pytest.mark.parametrize("kwargs, vectors, message", [
    ({"n_classes": 0}, np.ones((2, 2)), "n_classes must be >= 1"),
    ({"n_classes": 10 ** 6}, np.ones((2, 2)), "at most 5,000"),
    ({}, np.ones((3, 2)), "2 words for 3 vectors"),
    ({}, np.array([[1.0, np.nan], [1, 2]]), "must be finite"),
    ({}, np.ones(2), "2-d array"),
])
def test_vector_classes_bad_input(kwargs, vectors, message):
    with pytest.raises(InputError, match=message):
        vector_classes(["a", "b"], vectors, **kwargs)


# -- the shipped English classes -----------------------------------------------------

def test_shipped_table_is_a_valid_cluster_file_and_reads_the_same_fast():
    from importlib import resources
    path = str(resources.files("cseq").joinpath("data", BUNDLED["en"]))
    checked = read_clusters(path)  # every line through the checking reader
    fast = bundled_clusters("en")
    assert fast.words == checked.words and fast.paths == checked.paths
    assert fast.digest() == checked.digest() and len(fast) == 400_000
    assert fast.bundled == "en" and bundled_clusters("en") is fast
    assert 900 <= fast.n_clusters <= 1000
    # GloVe 6B is lowercased: a cased word is looked up lowercased.
    assert fast.path("Tuesday") == fast.path("wednesday") == fast.path("THURSDAY")
    assert fast.path("Paris") is not None and fast.path("not-a-word-xyz") is None


def test_bundled_names_and_references():
    with pytest.raises(InputError, match="no shipped word classes named 'xx'"):
        bundled_clusters("xx")
    en = bundled_clusters("en")
    assert clusters_from_reference(en.reference(), "m") is en
    with pytest.raises(ModelFormatError, match="m: the model was trained with other word"):
        clusters_from_reference({"bundled": "en", "sha256": "0" * 64}, "m")
    with pytest.raises(ModelFormatError, match="which this cseq does not ship"):
        clusters_from_reference({"bundled": "fr", "sha256": "0" * 64}, "m")
    for bad in (None, "en", {"bundled": "en"}, {"bundled": 1, "sha256": "x"}):
        with pytest.raises(ModelFormatError, match="bad reference"):
            clusters_from_reference(bad, "m")
    with pytest.raises(InputError, match="only a shipped table"):
        Clusters(["a"], ["0"]).reference()
    assert cluster_table("en") is en
    with pytest.raises(cseq.InputTypeError, match="a shipped table's name"):
        cluster_table(3)


def test_a_file_named_like_a_shipped_table_wins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "en").write_text("0\tdog\n", encoding="utf-8")
    assert cluster_table("en").words == ["dog"]


def test_a_model_stores_the_shipped_table_by_name_and_digest(tmp_path):
    X = [["The", "dog", "ran"], ["A", "cat", "sat"], ["the", "cat", "ran"]] * 3
    y = [["D", "N", "V"]] * 9
    est = cseq.StructuredPerceptron(max_iter=3, features=cseq.TemplateFeaturizer(
        with_cluster_templates("U0:%x[0,0]"), clusters="en")).fit(X, y)
    path = tmp_path / "m.cseq"
    est.save(path)
    assert path.stat().st_size < 100_000  # not the 400,000-word table
    back = cseq.load(path)
    assert back.featurizer_.clusters is bundled_clusters("en")
    assert back.predict([["a", "wolf", "sat"]]) == est.predict([["a", "wolf", "sat"]])
    assert any(n.startswith("UC0:") for n in back.featurizer_.attribute_names())
    config = est.get_params()["features"].get_config()
    assert config["clusters"] == bundled_clusters("en").reference()
    assert cseq.TemplateFeaturizer.from_config(config).clusters is bundled_clusters("en")


def test_a_model_naming_other_classes_is_refused(tmp_path):
    from cseq.features.featurizer_state import from_state
    X, y = [["the", "dog"]] * 3, [["D", "N"]] * 3
    feat = cseq.TemplateFeaturizer(with_cluster_templates("U0:%x[0,0]"), clusters="en")
    est = cseq.StructuredPerceptron(max_iter=1, features=feat).fit(X, y)
    meta, arrays = est.featurizer_.get_state()
    json.dumps(meta)  # a reference, JSON-able
    meta = {**meta, "clusters": {"bundled": "en", "sha256": "f" * 64}}
    with pytest.raises(ModelFormatError, match="other word classes"):
        from_state(cseq.TemplateFeaturizer, meta, arrays)


# -- the command line ----------------------------------------------------------------

def test_cli_train_with_the_shipped_classes(tmp_path, capsys):
    from cseq.cli import main
    train = tmp_path / "train.conll"
    train.write_text("The\tD\ndog\tN\nran\tV\n\na\tD\ncat\tN\nsat\tV\n\n", encoding="utf-8")
    model = tmp_path / "m.cseq"
    assert main(["train", str(train), "--algorithm", "perceptron", "--template", "pos",
                 "--clusters", "en", "-o", str(model), "--quiet"]) == 0
    assert cseq.load(model).featurizer_.clusters is bundled_clusters("en")
    for preset, options, want in (("pos", [], "en"), ("ner", [], "en"),
                                  ("pos", ["--clusters", "none"], None)):
        assert main(["train", str(train), "--algorithm", "perceptron", "--template", preset,
                     *options, "-o", str(model), "--quiet"]) == 0
        table = cseq.load(model).featurizer_.clusters
        assert (table and table.bundled) == want, (preset, options)
    assert main(["train", str(train), "--algorithm", "hmm", "--template", "pos",
                 "-o", str(model), "--quiet"]) == 1  # the hmm takes no templates
    capsys.readouterr()
    assert main(["train", str(train), "--algorithm", "hmm", "--clusters", "en",
                 "-o", str(model), "--quiet"]) == 1
    assert "--clusters does not apply" in capsys.readouterr().err


def test_cli_clusters_from_vectors(tmp_path, capsys):
    from cseq.cli import main
    rng = np.random.default_rng(0)
    rows = [(f"a{i}", (np.eye(4)[0] * 5 + rng.standard_normal(4) * 0.1).tolist()) for i in range(6)]
    rows += [(f"b{i}", (np.eye(4)[1] * 5 + rng.standard_normal(4) * 0.1).tolist()) for i in range(6)]
    for name, write in (("v.txt", _text), ("v.bin", _binary)):
        out = tmp_path / (name + ".tsv")
        assert main(["clusters", "--vectors", str(write(tmp_path / name, rows)), "-o", str(out),
                     "--clusters", "2", "-q"]) == 0
        table = read_clusters(out)
        assert len({table.path(f"a{i}") for i in range(6)}) == 1 != table.n_clusters
    vec = tmp_path / "v.txt"
    assert main(["clusters", str(vec), "--vectors", str(vec), "-o", str(tmp_path / "o")]) == 1
    assert "not both" in capsys.readouterr().err
    assert main(["clusters", "-o", str(tmp_path / "o")]) == 1
    assert "or --vectors FILE" in capsys.readouterr().err
    raw = tmp_path / "raw.txt"
    raw.write_text("a b\n", encoding="utf-8")
    assert main(["clusters", str(raw), "--max-words", "5", "-o", str(tmp_path / "o")]) == 1
    assert "--max-words applies to --vectors only" in capsys.readouterr().err
    assert main(["clusters", "--vectors", str(vec), "-o", str(vec)]) == 1
    assert "destroy" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nb 1\n", encoding="utf-8")
    assert main(["clusters", "--vectors", str(bad), "-o", str(tmp_path / "o")]) == 1
    assert "line 2: 1 values after the word" in capsys.readouterr().err


def test_gzipped_cluster_files(tmp_path):
    path = tmp_path / "c.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("01\tdog\t3\n1\tcat\n")
    assert read_clusters(path) == Clusters(["dog", "cat"], ["01", "1"], [3, 0])
    path.write_bytes(gzip.compress(b"01\tdog\n")[:-6])
    with pytest.raises(InputError, match="not a whole gzip file"):
        read_clusters(path)
