"""Brown clustering: the compiled kernel against a from-scratch AMI oracle,
the API, cluster files, the ``cluster`` template functions and ``cseq clusters``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import time

import pytest

from cseq.exceptions import InputError, ModelFormatError
from cseq.features import _brown
from cseq.features.clusters import Clusters, _pairs, brown_clusters, read_clusters


def _random_corpus(rng, n_sent, vocab, zipf=1.3):
    words = [f"w{i}" for i in range(vocab)]
    p = 1.0 / np.arange(1, vocab + 1) ** zipf
    p /= p.sum()
    return [" ".join(rng.choice(words, size=int(rng.integers(1, 9)), p=p)) for _ in range(n_sent)]


def _kernel_input(texts, min_count=1):
    from collections import Counter
    counts = Counter(t for s in texts for t in s.split())
    vocab = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    ids = {w: i for i, w in enumerate(vocab)}
    ptr, left, right, cnt = _pairs([s.split() for s in texts], ids, len(vocab))
    return np.asarray([counts[w] for w in vocab], float), ptr, left, right, cnt


def _ami(clusters, wcount, pair, total):
    """AMI of ``clusters`` (lists of word ids) from scratch: sum of P log(P / (p p))."""
    of = {w: k for k, c in enumerate(clusters) for w in c}
    p1 = [sum(wcount[w] for w in c) / total for c in clusters]
    p2: dict = {}
    for (a, b), n in pair.items():
        if a in of and b in of:
            key = (of[a], of[b])
            p2[key] = p2.get(key, 0.0) + n / total
    return sum(v * math.log(v / (p1[s] * p1[t])) for (s, t), v in p2.items())


def _oracle_check(texts, n_clusters):
    """Run the kernel merge by merge; after each, compare with exhaustive recomputation."""
    wcount, ptr, left, right, cnt = _kernel_input(texts)
    total = wcount.sum()
    pair = {(int(a), int(b)): float(c) for a, b, c in zip(left, right, cnt)}
    k = _brown.BrownClusterer(wcount, ptr, left, right, cnt, n_clusters)
    V, C = len(wcount), min(n_clusters, len(wcount))
    clusters = [[w] for w in range(C)]
    nxt = C
    for step in range(V - 1):
        if nxt < V:
            clusters.append([nxt])
            nxt += 1
        before = _ami(clusters, wcount, pair, total)
        losses = {}
        for a, b in itertools.combinations(range(len(clusters)), 2):
            merged = [c for i, c in enumerate(clusters) if i not in (a, b)]
            merged.append(clusters[a] + clusters[b])
            ra, rb = sorted((min(clusters[a]), min(clusters[b])))
            losses[(ra, rb)] = before - _ami(merged, wcount, pair, total)
        assert k.advance(1) == 1
        pairs, ami = k.trace()
        chosen = tuple(int(x) for x in pairs[step])
        best = min(losses.values())
        assert losses[chosen] == pytest.approx(best, abs=1e-9)
        # A unique minimum (beyond rounding) must be the one chosen; among
        # equal losses, the smallest representatives.
        near = sorted(r for r, v in losses.items() if v <= best + 1e-9)
        if len(near) == 1 or all(abs(losses[r] - best) < 1e-12 for r in near):
            assert chosen == near[0]
        ia = next(i for i, c in enumerate(clusters) if min(c) == chosen[0])
        ib = next(i for i, c in enumerate(clusters) if min(c) == chosen[1])
        clusters = [c for i, c in enumerate(clusters) if i not in (ia, ib)] + [clusters[ia] + clusters[ib]]
        after = _ami(clusters, wcount, pair, total)
        assert ami[step] == pytest.approx(after, abs=1e-9)
        # Every pair's loss as the kernel keeps it, not only the one chosen.
        kept_pairs, kept_loss = k.losses()
        for (ra, rb), loss in zip(kept_pairs.tolist(), kept_loss.tolist()):
            ia = next(i for i, c in enumerate(clusters) if min(c) == ra)
            ib = next(i for i, c in enumerate(clusters) if min(c) == rb)
            merged = [c for i, c in enumerate(clusters) if i not in (ia, ib)]
            merged.append(clusters[ia] + clusters[ib])
            assert loss == pytest.approx(after - _ami(merged, wcount, pair, total), abs=1e-9)
    assert k.done and k.advance(5) == 0
    return k


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("n_clusters", [2, 3, 5])
def test_kernel_matches_exhaustive_ami(seed, n_clusters):
    rng = np.random.default_rng(seed)
    texts = _random_corpus(rng, int(rng.integers(5, 40)), int(rng.integers(3, 12)))
    _oracle_check(texts, n_clusters)


def test_kernel_fewer_words_than_clusters():
    k = _oracle_check(["a b a c", "b c"], 10)
    leaf, tree = k.result()
    assert sorted(leaf.tolist()) == [0, 1, 2] and tree.shape == (2, 2)


def test_deterministic_and_paths_form_a_tree():
    rng = np.random.default_rng(7)
    texts = _random_corpus(rng, 300, 60)
    a = brown_clusters(texts, 8)
    b = brown_clusters(list(texts), 8)
    assert a == b and a.n_clusters == 8
    paths = set(a.paths)
    # Leaves of a binary tree: no path is a prefix of another.
    assert not any(p != q and q.startswith(p) for p in paths for q in paths)
    # A word's count is its count in the text.
    assert dict(zip(a.words, a.counts))["w0"] == sum(s.split().count("w0") for s in texts)


def test_brown_clusters_groups_words_of_one_context():
    # Days follow "on" and precede "morning"; animals follow "the" and precede "ran".
    texts = [f"on {d} morning" for d in ("monday", "tuesday", "friday")] * 5 + \
            [f"the {a} ran" for a in ("dog", "cat", "cow")] * 5
    c = brown_clusters(texts, 4)
    days = {c.path(d) for d in ("monday", "tuesday", "friday")}
    animals = {c.path(a) for a in ("dog", "cat", "cow")}
    assert len(days) == 1 and len(animals) == 1 and days != animals


def test_min_count_and_bad_arguments():
    c = brown_clusters(["a b a c", "a b"], 2, min_count=2)
    assert sorted(c.words) == ["a", "b"]
    with pytest.raises(InputError, match="min_count"):
        brown_clusters(["a b"], 2, min_count=5)
    with pytest.raises(InputError, match="n_clusters"):
        brown_clusters(["a b"], 0)
    with pytest.raises(InputError, match="at most 5,000"):
        brown_clusters(["a b"], 5001)
    with pytest.raises(TypeError, match="one str"):
        brown_clusters("a b c", 2)
    with pytest.raises(TypeError, match="text 1"):
        brown_clusters(["a b", 3], 2)


def test_cluster_file_round_trip(tmp_path):
    c = brown_clusters(["the dog ran", "the cat ran", "a dog sat"], 3)
    path = tmp_path / "c.tsv"
    c.write(path)
    line = path.read_text(encoding="utf-8").splitlines()[0].split("\t")
    assert len(line) == 3 and set(line[0]) <= {"0", "1"} and line[2].isdigit()
    assert read_clusters(path) == c


@pytest.mark.parametrize("text, message", [
    ("", "no cluster line"),
    ("0101\n", "expected bit-string"),
    ("01x\tdog\t3\n", "not a bit string"),
    ("01\tdog\t-3\n", "not an integer from 0"),
    # Crafted: a count of 5,000 digits (Python's int() refuses it with a ValueError of its
    # own), one past int64, a bit string no cluster tree has, a line with no end.
    ("01\tdog\t" + "9" * 5000 + "\n", "not an integer from 0"),
    ("01\tdog\t9223372036854775808\n", "not an integer from 0"),
    ("0" * 257 + "\tdog\n", "257 bits; at most 256"),
    ("01\t" + "d" * 2_000_000, "line 1: the line is over 65,536 characters"),
    ("01\tdog\t3\n11\tdog\t1\n", "already on line 1"),
    ("01\t\t3\n", "empty or holds whitespace"),
    ("01\tdog\t3\textra\n", "expected bit-string"),
])
def test_bad_cluster_files(tmp_path, text, message):
    path = tmp_path / "c.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_clusters(path)


def test_a_million_distinct_words_read_in_bounded_time_and_a_repeat_named(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{i % 64:b}\tw{i}\t{i}\n" for i in range(1_000_000)),
                    encoding="utf-8")
    t = time.process_time()
    c = read_clusters(path)
    assert len(c) == 1_000_000 and c.path("w65") == "1"
    assert time.process_time() - t < 30  # linear: about 2 s here
    with path.open("a", encoding="utf-8") as f:
        f.write("0\tw5\n")
    with pytest.raises(InputError, match="line 1000001: the word 'w5' is already on line 6"):
        read_clusters(path)


def test_clusters_of_one_repeated_word():
    c = brown_clusters(["a a a a", "a a"], 5)
    assert c.words == ["a"] and len(c.paths[0]) >= 1


def test_cluster_file_not_utf8_or_missing(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(b"01\t\xff\t3\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_clusters(path)
    with pytest.raises(InputError, match="cannot read"):
        read_clusters(tmp_path / "missing.tsv")


# -- the cluster template functions ----------------------------------------------

_TABLE = Clusters(["the", "a", "dog", "cat"], ["000", "001", "10", "110"], [5, 4, 2, 1])
_X = [["The", "dog", "barks"], ["a", "cat"]]


def test_cluster_functions_values():
    from cseq.features.featurizer import TemplateFeaturizer
    f = TemplateFeaturizer("U0:%x[0,0:cluster2]\nU1:%x[-1,0:cluster]/%x[0,0]\nU2:%x[1,0:cluster1]",
                           clusters=_TABLE)
    f.fit_transform(_X)
    # "The" falls back to "the"; "barks" has no cluster; padding is padding.
    assert f.features_python(_X)[0] == [
        ["U0:00", "U1:_B-1/The", "U2:1"], ["U0:10", "U1:000/dog", "U2:_UNK_"],
        ["U0:_UNK_", "U1:10/barks", "U2:_B+1"]]


def test_cluster_functions_compiled_equals_reference():
    from cseq.features.featurizer import TemplateFeaturizer
    f = TemplateFeaturizer("U0:%x[0,0:cluster2]\nU1:%x[-1,0:cluster]/%x[0,0]\nU2:%x[1,0:cluster1]",
                           clusters=_TABLE)
    seqs = f.fit_transform(_X)
    names = f.attribute_names()
    got = [[names[a] for a in seqs.attr_ids[seqs.tok_ptr[t]:seqs.tok_ptr[t + 1]]]
           for t in range(seqs.n_tokens)]
    assert got == [tok for sent in f.features_python(_X) for tok in sent]
    # Tagging (the hashed lookup path) gives the fitted ids.
    assert np.array_equal(f.transform(_X).attr_ids, seqs.attr_ids)


def test_cluster_templates_need_a_table_and_valid_names():
    from cseq.features.featurizer import TemplateFeaturizer
    with pytest.raises(InputError, match="cluster"):
        TemplateFeaturizer("U0:%x[0,0:cluster4]")
    with pytest.raises(InputError, match="unknown token function 'cluster65'"):
        TemplateFeaturizer("U0:%x[0,0:cluster65]", clusters=_TABLE)
    with pytest.raises(TypeError, match="clusters must be"):
        TemplateFeaturizer("U0:%x[0,0]", clusters=3)


def test_model_round_trip_keeps_the_table(tmp_path):
    import cseq
    from cseq.features.clusters import with_cluster_templates
    cfile = tmp_path / "c.tsv"
    _TABLE.write(cfile)
    X = [["the", "dog", "ran"], ["a", "cat", "sat"], ["the", "cat", "ran"]] * 3
    y = [["D", "N", "V"]] * 9
    est = cseq.StructuredPerceptron(features=cseq.TemplateFeaturizer(
        with_cluster_templates("U0:%x[0,0]"), clusters=str(cfile)), max_iter=3).fit(X, y)
    cfile.unlink()  # tagging must not need the file
    path = tmp_path / "m.cseq"
    est.save(path)
    back = cseq.load(path)
    assert back.featurizer_.clusters == _TABLE
    assert back.predict([["a", "dog", "ran"]]) == est.predict([["a", "dog", "ran"]])


# -- the command line ------------------------------------------------------------

def test_cli_clusters_then_train_with_them(tmp_path, capsys):
    from cseq.cli import main
    raw = tmp_path / "raw.txt"
    raw.write_text("the dog ran\nthe cat ran\na dog sat\na cat sat\n" * 3, encoding="utf-8")
    out = tmp_path / "c.tsv"
    assert main(["clusters", str(raw), str(raw), "-o", str(out), "--clusters", "3", "-q"]) == 0
    table = read_clusters(out)
    assert table.n_clusters == 3 and dict(zip(table.words, table.counts))["dog"] == 12
    train = tmp_path / "train.conll"
    train.write_text("the\tD\ndog\tN\nran\tV\n\na\tD\ncat\tN\nsat\tV\n\n", encoding="utf-8")
    model = tmp_path / "m.cseq"
    assert main(["train", str(train), "--algorithm", "perceptron", "--template", "pos",
                 "--clusters", str(out), "-o", str(model), "--quiet"]) == 0
    import cseq
    est = cseq.load(model)
    assert est.featurizer_.clusters == table
    assert any(n.startswith("UC0:") for n in est.featurizer_.attribute_names())


def test_cli_clusters_bad_input(tmp_path, capsys):
    from cseq.cli import main
    raw = tmp_path / "raw.txt"
    raw.write_bytes(b"a \xff b\n")
    assert main(["clusters", str(raw), "-o", str(tmp_path / "c.tsv")]) == 1
    assert "not UTF-8" in capsys.readouterr().err
    assert main(["clusters", str(raw), "-o", str(raw)]) == 1
    assert "destroy" in capsys.readouterr().err and raw.read_bytes() == b"a \xff b\n"
    bad = tmp_path / "bad.tsv"
    bad.write_text("01x\tdog\n", encoding="utf-8")
    train = tmp_path / "train.conll"
    train.write_text("the\tD\n\n", encoding="utf-8")
    assert main(["train", str(train), "--algorithm", "perceptron", "--clusters", str(bad),
                 "-o", str(tmp_path / "m.cseq"), "--quiet"]) == 1
    assert "line 1" in capsys.readouterr().err


def test_bad_cluster_table_in_a_model_state():
    from cseq.features.featurizer import TemplateFeaturizer
    f = TemplateFeaturizer("U0:%x[0,0:cluster2]", clusters=_TABLE)
    f.fit_transform(_X)
    meta, arrays = f.get_state()
    assert TemplateFeaturizer.from_state(meta, arrays).clusters == _TABLE
    missing = {k: v for k, v in arrays.items() if k != "cluster_counts"}
    with pytest.raises(ModelFormatError, match="lacks"):
        TemplateFeaturizer.from_state(meta, missing)
    bad = dict(arrays, cluster_paths=np.frombuffer(b"0x000110110", dtype=np.uint8).copy())
    with pytest.raises(ModelFormatError, match="not a string of 0s and 1s"):
        TemplateFeaturizer.from_state(meta, bad)
    short = dict(arrays, cluster_counts=arrays["cluster_counts"][:2])
    with pytest.raises(ModelFormatError, match="differ in length"):
        TemplateFeaturizer.from_state(meta, short)
    bad_ptr = dict(arrays, cluster_word_ptr=arrays["cluster_word_ptr"][::-1].copy())
    with pytest.raises(ModelFormatError):
        TemplateFeaturizer.from_state(meta, bad_ptr)


def test_config_round_trip_carries_the_table():
    import json
    from cseq.features.featurizer import TemplateFeaturizer
    f = TemplateFeaturizer("U0:%x[0,0:cluster2]", clusters=_TABLE)
    g = TemplateFeaturizer.from_config(json.loads(json.dumps(f.get_config())))
    assert g.clusters == _TABLE and f.fresh().clusters == _TABLE
    assert f.get_params()["clusters"] is _TABLE
    bad = dict(f.get_config(), clusters={"words": ["a"], "paths": ["2"], "counts": [1]})
    with pytest.raises(ModelFormatError, match="0s and 1s"):
        TemplateFeaturizer.from_config(bad)


def test_one_word_and_one_cluster():
    assert brown_clusters(["a a a"]).paths == ["0"]
    assert sorted(brown_clusters(["a b"]).paths) == ["0", "1"]
    assert brown_clusters(["a", "b c"], 1).paths == ["0", "0", "0"]
