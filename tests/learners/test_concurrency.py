"""Many threads, one model: same answers as serial; training in parallel: same models; no leaks.

Prediction releases the GIL inside the kernels, so threads really overlap;
a fitted model must be safe to share (no per-call state stored on it) and
training must not share hidden state between two estimators.
"""

from __future__ import annotations

import gc
import threading
import os
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import cseq
from cseq.io import serialize

from support.memory import skip_under_asan

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


# -- Partial_fit alongside readers ------------------------------
#
# Every reader takes the fitted state once (cseq.fitted): a predict, predict_marginals,
# explain or save that straddles a partial_fit's commit gives exactly what the old model
# gives or exactly what the new one gives.  The batch brings a label that sorts first, so
# every label id moves: a reader that mixed the old labels with the new model (or the
# grown featurizer with the old model) would name the wrong labels or fail.

RACE_TRIALS = 6


@pytest.fixture(scope="module")
def race_data():
    from cseq.conll import read_conllu
    from support.shared_data import EWT
    path = EWT / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"shared data is absent: {path}")
    X, y = read_conllu(path)
    # The batch: 10 sentences whose determiners get a label that sorts before every other.
    batch = (X[300:310], [["A-DET" if lab == "DET" else lab for lab in seq] for seq in y[300:310]])
    return (X[:300], y[:300]), batch, X[310:1500]


def _snapshots(make, race_data):
    """The model file after the first 300 sentences and after the batch on top, serially."""
    first, batch, _ = race_data
    est = make().partial_fit(*first)
    old = est.to_bytes()
    new = serialize.loads(old).partial_fit(*batch).to_bytes()
    assert "A-DET" in serialize.loads(new).classes_
    return old, new, batch


def _race(est, batch, call) -> list:
    """``call(est)`` in a second thread, again and again, while this one runs partial_fit.

    The first call starts before partial_fit and at least one starts after it
    has returned; every result (or the first exception) comes back.
    """
    results: list = []
    errors: list[BaseException] = []
    started, committed = threading.Event(), threading.Event()

    def reader():
        try:
            while True:
                last = committed.is_set()
                started.set()
                results.append(call(est))
                if last:
                    return
        except BaseException as exc:  # re-raised in the main thread
            errors.append(exc)
            started.set()

    thread = threading.Thread(target=reader)
    thread.start()
    started.wait()
    try:
        est.partial_fit(*batch)
    finally:
        committed.set()
        thread.join()
    if errors:
        raise errors[0]
    return results


def _perceptron():
    return cseq.StructuredPerceptron(features=cseq.TemplateFeaturizer("pos"), random_state=0)


def _crf_sgd():
    return cseq.CRF(algorithm="sgd", eta0=0.1, c2=1.0, random_state=0,
                    features=cseq.TemplateFeaturizer("pos"))


def _as_feature_lists(X):
    return [[[f"w={tok[0]}", f"s={tok[0][-2:]}"] for tok in seq] for seq in X]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_predict_racing_partial_fit_gives_the_old_or_the_new_labels(race_data, n_jobs):
    old, new, batch = _snapshots(_perceptron, race_data)
    X = race_data[2]
    _check_predict_race(old, new, batch, X, n_jobs)


def test_predict_racing_partial_fit_with_feature_lists(race_data):
    (X, y), (Xb, yb), X_test = race_data
    data = ((_as_feature_lists(X), y), (_as_feature_lists(Xb), yb), _as_feature_lists(X_test))
    old, new, batch = _snapshots(lambda: cseq.StructuredPerceptron(random_state=0), data)
    _check_predict_race(old, new, batch, data[2], 2)


def _check_predict_race(old, new, batch, X, n_jobs):
    want_old = serialize.loads(old).predict(X, n_jobs=n_jobs)
    want_new = serialize.loads(new).predict(X, n_jobs=n_jobs)
    assert want_old != want_new
    seen = set()
    for _ in range(RACE_TRIALS):
        est = serialize.loads(old)
        for got in _race(est, batch, lambda e: e.predict(X, n_jobs=n_jobs)):
            assert got in (want_old, want_new), "labels of neither model"
            seen.add(got == want_new)
        assert est.to_bytes() == new
    assert seen == {False, True}


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_predict_marginals_racing_partial_fit_are_the_old_or_the_new_ones(race_data, n_jobs):
    old, new, batch = _snapshots(_crf_sgd, race_data)
    X = race_data[2][:400]
    want = [serialize.loads(b).predict_marginals(X, n_jobs=n_jobs) for b in (old, new)]

    def same(a, b):
        return len(a) == len(b) and all(x.shape == z.shape and np.array_equal(x, z)
                                        for x, z in zip(a, b))
    for _ in range(RACE_TRIALS):
        est = serialize.loads(old)
        for got in _race(est, batch, lambda e: e.predict_marginals(X, n_jobs=n_jobs)):
            assert same(got, want[0]) or same(got, want[1]), "marginals of neither model"


def test_explain_racing_partial_fit_explains_the_old_or_the_new_model(race_data):
    old, new, batch = _snapshots(_perceptron, race_data)
    x = race_data[2][5]
    want = [serialize.loads(b).explain(x) for b in (old, new)]
    tops = [serialize.loads(b).top_features("DET", k=5) for b in (old, new)]
    assert want[0] != want[1]
    for _ in range(RACE_TRIALS):
        est = serialize.loads(old)
        for got, top in _race(est, batch, lambda e: (e.explain(x), e.top_features("DET", k=5))):
            assert got in want
            assert top in tops


def test_checkpoints_saved_while_partial_fit_runs_load_as_one_of_the_models(race_data, tmp_path):
    first, batch, _ = race_data
    est = _perceptron().partial_fit(*first)
    # Three batches (the first brings a label): the model file after each.
    batches = [batch, (first[0][:20], first[1][:20]), (first[0][20:40], first[1][20:40])]
    states = [est.to_bytes()]
    ref = serialize.loads(states[0])
    for b in batches:
        states.append(ref.partial_fit(*b).to_bytes())
    assert len(set(states)) == len(states)
    paths: list = []
    stop = threading.Event()

    def saver():
        while not stop.is_set():
            path = tmp_path / f"checkpoint-{len(paths)}.cseq"
            est.save(path)
            paths.append(path)
    for _ in range(2):
        est = serialize.loads(states[0])
        paths.clear()
        thread = threading.Thread(target=saver)
        thread.start()
        try:
            for b in batches:
                est.partial_fit(*b)
        finally:
            stop.set()
            thread.join()
            stop.clear()
        assert paths
        for path in paths:
            data = path.read_bytes()
            assert data in states, f"{path.name} is none of the models"
            assert cseq.load(path).to_bytes() == data


def test_two_partial_fits_on_one_estimator_learn_both_batches(race_data):
    """Training calls on one estimator run one at a time: both batches are learned, in
    one order or the other, neither overwritten by the other's commit."""
    first, batch, _ = race_data
    other = (first[0][100:200], first[1][100:200])
    base = _perceptron().partial_fit(first[0][:100], first[1][:100]).to_bytes()
    orders = {serialize.loads(base).partial_fit(*a).partial_fit(*b).to_bytes()
              for a, b in ((batch, other), (other, batch))}
    for _ in range(RACE_TRIALS):
        est = serialize.loads(base)
        barrier = threading.Barrier(2)

        def train(est, barrier, b):
            barrier.wait()
            est.partial_fit(*b)
        threads = [threading.Thread(target=train, args=(est, barrier, b)) for b in (batch, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert est.to_bytes() in orders
        assert est.n_iter_ == 3


def test_training_from_inside_a_training_call_is_refused():
    """A fit's callback that trains the same estimator gets an InputError, not a deadlock."""
    est = cseq.StructuredPerceptron(max_iter=2)
    calls = []

    def callback(record):
        with pytest.raises(cseq.InputError, match="already training"):
            est.partial_fit(X_TRAIN[:5], Y_TRAIN[:5])
        calls.append(record)
    est.fit(X_TRAIN, Y_TRAIN, callback=callback)
    assert calls
    est.fit(X_TRAIN[:20], Y_TRAIN[:20])  # the estimator trains again afterwards


def test_predict_racing_fit_gives_the_old_or_the_new_labels_or_not_fitted():
    """fit makes the estimator unfitted until it commits: a predict meanwhile sees the old
    model, the new one or NotFittedError, never a mix."""
    old = cseq.StructuredPerceptron(max_iter=3, random_state=0).fit(X_TRAIN, Y_TRAIN)
    relabelled = [[lab.lower() for lab in seq] for seq in Y_TRAIN]
    want = [old.predict(X_TEST),
            cseq.StructuredPerceptron(max_iter=3, random_state=0).fit(X_TRAIN, relabelled)
            .predict(X_TEST)]
    est = serialize.loads(old.to_bytes())
    results: list = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            try:
                results.append(est.predict(X_TEST))
            except cseq.NotFittedError:
                results.append(None)
    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for _ in range(3):
            est.fit(X_TRAIN, relabelled)
    finally:
        stop.set()
        thread.join()
    assert results and all(r is None or r in want for r in results)


# -- Sentence at a time from many threads, alongside partial_fit -------

@pytest.mark.parametrize("make", [_perceptron, _crf_sgd], ids=["perceptron", "crf-sgd"])
def test_many_threads_tagging_single_sentences_racing_partial_fit(race_data, make):
    # The serving pattern: one model, 8 threads each calling predict([sentence]) while
    # another thread's partial_fit commits, 4 times (each commit is a chance to land
    # inside some call).  Every sentence gets the labels one of the committed models
    # gives it alone, never a mix of two states (e.g. one snapshot's labels, the next
    # one's model: the first batch adds a label that sorts first, so every id moves).
    (X, y), batch, X_test = race_data
    batches = [batch] + [(X[k:k + 10], y[k:k + 10]) for k in (0, 100, 200)]
    est = make().partial_fit(X, y)
    models = [est.to_bytes()]
    for b in batches:  # the models the racing estimator commits, serially
        models.append(serialize.loads(models[-1]).partial_fit(*b).to_bytes())
    sentences = X_test[:160]
    want = [serialize.loads(m).predict(sentences) for m in models]
    assert want[0] != want[1]
    est = serialize.loads(models[0])
    results: list = []
    errors: list[BaseException] = []
    go, done = threading.Barrier(9), threading.Event()

    def tagger(k: int):
        try:
            go.wait()
            while True:
                last = done.is_set()
                for i in range(k, len(sentences), 8):
                    results.append((i, est.predict([sentences[i]])[0]))
                if last:
                    return
        except BaseException as exc:  # re-raised in the main thread
            errors.append(exc)
    threads = [threading.Thread(target=tagger, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    go.wait()
    try:
        for b in batches:
            est.partial_fit(*b)
    finally:
        done.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    assert est.to_bytes() == models[-1]
    for i, labels in results:
        assert any(labels == w[i] for w in want), f"sentence {i}: labels of no committed model"
    # Every thread's last pass started after the last commit: the last model's labels.
    assert [est.predict([x])[0] for x in sentences] == want[-1]


def test_word_row_caches_are_per_thread_and_per_snapshot(race_data):
    # predict([s]) keeps summed word rows in a cache that is not locked: each thread
    # must get its own, and a new snapshot (a partial_fit commit) a new one.
    from cseq.chain import mapping

    (X, y), batch, _ = race_data
    est = _perceptron().partial_fit(X, y)
    fitted = est._check_fitted()
    group = np.zeros(3, dtype=np.int32)
    mine = mapping._row_cache(fitted, group, 1)
    assert mapping._row_cache(fitted, group, 1) is mine
    with ThreadPoolExecutor(1) as pool:
        theirs = pool.submit(mapping._row_cache, fitted, group, 1).result()
    assert theirs is not mine
    est.partial_fit(*batch)
    assert mapping._row_cache(est._check_fitted(), group, 1) is not mine
