"""Brown clustering (issue 31): the compiled kernel against a from-scratch AMI oracle,
the API, cluster files, the ``cluster`` template functions and ``cseq clusters``."""

from __future__ import annotations

import itertools
import math

import numpy as np
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
        assert ami[step] == pytest.approx(_ami(clusters, wcount, pair, total), abs=1e-9)
    assert k.done and k.advance(5) == 0
    return k


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_clusters", [2, 3, 5])
def test_kernel_matches_exhaustive_ami(seed, n_clusters):
    rng = np.random.default_rng(seed)
    texts = _random_corpus(rng, int(rng.integers(5, 40)), int(rng.integers(3, 12)))
    _oracle_check(texts, n_clusters)


def test_kernel_fewer_words_than_clusters():
    k = _oracle_check(["a b a c", "b c"], 10)
    leaf, tree = k.result()
    assert sorted(leaf.tolist()) == [0, 1, 2] and tree.shape == (2, 2)
