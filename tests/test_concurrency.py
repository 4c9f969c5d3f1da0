"""Many threads, one model: same answers as serial; training in parallel: same models; no leaks.

Prediction releases the GIL inside the kernels, so threads really overlap;
a fitted model must be safe to share (no per-call state stored on it) and
training must not share hidden state between two estimators.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import cseq
from cseq import serialize

from memory import skip_under_asan

# Quick fits here stop at max_iter on purpose; ConvergenceWarning itself is tested in
# test_crf_options.py.
pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")


def corpus(seed: int, n: int):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for _ in range(n):
        k = int(rng.integers(0, 12))
        ws = rng.integers(0, 40, size=k).tolist()
        X.append([[f"w={w}", f"p={ws[i - 1] if i else '<s>'}"] if w % 5 else
                  {"w": str(w), "len": float(w % 7)} for i, w in enumerate(ws)])
        y.append([("N", "V", "D", "A")[(w + int(rng.integers(0, 2))) % 4] for w in ws])
    return X, y


X_TRAIN, Y_TRAIN = corpus(0, 150)
X_TEST, _ = corpus(1, 400)
SENTS = [[f"t{int(v)}" for v in np.random.default_rng(s).integers(0, 30, size=s % 9 + 1)]
         for s in range(120)]
TAGS = [[("A", "B", "C")[int(w[1:]) % 3] for w in sent] for sent in SENTS]

N_THREADS = 8


@pytest.fixture(scope="module")
def models():
    return {
        "crf": cseq.CRF(max_iter=30, c2=0.1).fit(X_TRAIN, Y_TRAIN),
        "perceptron": cseq.StructuredPerceptron(max_iter=5, random_state=0).fit(X_TRAIN, Y_TRAIN),
        "crf-templates": cseq.CRF(max_iter=15, features=cseq.TemplateFeaturizer("pos"))
        .fit(SENTS, TAGS),
    }


def _inputs(name):
    if name == "crf-templates":
        return [SENTS[i % len(SENTS)][::-1] for i in range(300)]
    return X_TEST


def _run_in_threads(fn, n_calls):
    with ThreadPoolExecutor(max_workers=N_THREADS) as pool:
        return list(pool.map(lambda _: fn(), range(n_calls)))


@pytest.mark.parametrize("name", ["crf", "perceptron", "crf-templates"])
def test_threads_predict_like_serial(models, name):
    est, X = models[name], _inputs(name)
    serial = est.predict(X)
    for got in _run_in_threads(lambda: est.predict(X), 3 * N_THREADS):
        assert got == serial


@pytest.mark.parametrize("name", ["crf", "crf-templates"])
def test_threads_predict_marginals_like_serial(models, name):
    est, X = models[name], _inputs(name)
    serial = est.predict_marginals(X)
    for got in _run_in_threads(lambda: est.predict_marginals(X), 2 * N_THREADS):
        assert len(got) == len(serial)
        for a, b in zip(got, serial):
            np.testing.assert_array_equal(a, b)


def test_threads_each_predicting_with_two_jobs(models):
    est = models["crf"]
    serial = est.predict(X_TEST)
    for got in _run_in_threads(lambda: est.predict(X_TEST, n_jobs=2), 2 * N_THREADS):
        assert got == serial


def test_threads_mixing_different_calls_on_one_model(models):
    est = models["crf"]
    want = {"predict": est.predict(X_TEST), "score": est.score(X_TRAIN, Y_TRAIN),
            "bytes": est.to_bytes()}
    calls = [("predict", lambda: est.predict(X_TEST)),
             ("score", lambda: est.score(X_TRAIN, Y_TRAIN)),
             ("bytes", lambda: est.to_bytes()),
             ("marginals", lambda: est.predict_marginals(X_TEST[:50]))]
    with ThreadPoolExecutor(max_workers=N_THREADS) as pool:
        futures = [(name, pool.submit(fn)) for _ in range(6) for name, fn in calls]
        for name, fut in futures:
            if name in want:
                assert fut.result() == want[name], name
            else:
                assert len(fut.result()) == 50


TRAINERS = {
    "crf": lambda: cseq.CRF(max_iter=20, c2=0.1).fit(X_TRAIN, Y_TRAIN),
    "crf-2-jobs": lambda: cseq.CRF(max_iter=20, c2=0.1, n_jobs=2).fit(X_TRAIN, Y_TRAIN),
    "perceptron": lambda: cseq.StructuredPerceptron(max_iter=5, random_state=3)
    .fit(X_TRAIN, Y_TRAIN),
    "perceptron-templates": lambda: cseq.StructuredPerceptron(
        max_iter=5, random_state=4, features=cseq.TemplateFeaturizer("pos")).fit(SENTS, TAGS),
}


@pytest.mark.parametrize("pair", [("crf", "perceptron"), ("crf-2-jobs", "perceptron-templates"),
                                  ("perceptron-templates", "perceptron-templates")],
                         ids=lambda p: "+".join(p))
def test_two_threads_training_give_the_serial_models(pair):
    serial = [TRAINERS[name]().to_bytes() for name in pair]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(TRAINERS[name]) for name in pair]
        parallel = [f.result().to_bytes() for f in futures]
    assert parallel == serial


# ---------------------------------------------------------------------------
# Memory


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm")
@skip_under_asan
def test_fit_predict_save_load_cycles_do_not_leak(tmp_path):
    X = [[["w=a", "p=S"], {"w": "b", "v": 2.0}], [["w=c"], ["w=a"]]]
    y = [["A", "B"], ["C", "A"]]
    sents, tags = [["The", "cat"], ["a", "dog", "ran"]], [["D", "N"], ["D", "N", "V"]]
    path = tmp_path / "m.cseq"

    def cycle(i):
        if i % 3 == 0:
            est = cseq.CRF(max_iter=3).fit(X, y)
            est.predict_marginals(X, n_jobs=2)
        elif i % 3 == 1:
            est = cseq.StructuredPerceptron(max_iter=2, random_state=i).fit(X, y)
        else:
            est = cseq.StructuredPerceptron(
                max_iter=2, features=cseq.TemplateFeaturizer("U00:%x[0,0]\nU01:%x[-1,0]")
            ).fit(sents, tags)
        est.predict(X if i % 3 != 2 else sents, n_jobs=1 + i % 2)
        est.save(path)
        serialize.loads(cseq.load(path).to_bytes())
        cseq.viterbi(np.ones((5, 3)), np.zeros((3, 3)))
        cseq.forward_backward(np.ones((5, 3)), np.zeros((3, 3)))

    for i in range(100):  # warm-up: caches, interned strings, allocator arenas
        cycle(i)
    gc.collect()
    rss0 = _rss_bytes()
    for i in range(1000):
        cycle(i)
    gc.collect()
    rss1 = _rss_bytes()
    # C-level leaks (malloc in the kernels, numpy buffers) show in the RSS.
    assert rss1 - rss0 < 4 * 1024 * 1024, f"RSS grew by {(rss1 - rss0) / 2**20:.1f} MB"
    # Python-level leaks (objects kept alive by a cache or a cycle) show here.
    tracemalloc.start()
    for i in range(30):
        cycle(i)
    gc.collect()
    snap0 = tracemalloc.take_snapshot()
    for i in range(300):
        cycle(i)
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    growth = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert growth < 128 * 1024, snap1.compare_to(snap0, "lineno")[:10]
