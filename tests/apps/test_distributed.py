"""cseq.distributed: training and tagging on a Dask LocalCluster with worker processes.

One module-scoped cluster of 2 single-threaded worker processes serves every
test (the machine has few cores); the killed-worker tests come last.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cseq
from cseq.conll import read_conll
from cseq.learners.frame import pack
from cseq.learners.objectives import CRFObjective
from support.shared_data import CONLL2000, needs

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.bag as db  # noqa: E402

import cseq.distributed.cluster as cluster  # noqa: E402
import cseq.distributed as cd  # noqa: E402
import cseq.distributed.crf  # noqa: E402
import cseq.distributed.shards  # noqa: E402


def _corpus(n: int, seed: int = 0):
    """A small labeled corpus of feature-list tokens with learnable labels."""
    rng = np.random.default_rng(seed)
    words = ["the", "cat", "dog", "runs", "sees", "a", "big", "red", "fast", "it"]
    tags = {"the": "D", "a": "D", "cat": "N", "dog": "N", "it": "N", "runs": "V", "sees": "V",
            "big": "A", "red": "A", "fast": "A"}
    X, y = [], []
    for _ in range(n):
        ws = rng.choice(words, size=int(rng.integers(1, 8))).tolist()
        X.append([[f"w={w}", f"s={w[-1]}", f"p={ws[i - 1] if i else '<s>'}"]
                  for i, w in enumerate(ws)])
        y.append([tags[w] for w in ws])
    return X, y


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        yield c


# -- no cluster ---------------------------------------------------------------

def test_import_cseq_does_not_import_dask():
    code = ("import sys, cseq, cseq.cli, cseq.learners.base; "
            "bad = [m for m in ('dask', 'distributed', 'cseq.distributed') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_without_dask_names_the_extra():
    code = textwrap.dedent("""
        import sys
        sys.modules["dask"] = None  # as if dask were not installed
        try:
            import cseq.distributed
        except ImportError as exc:
            print(exc)
        else:
            raise SystemExit("imported without dask")
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert "cseq-labeling[dask]" in out


@pytest.mark.parametrize("features", [
    None,
    cseq.TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]/%x[0,1]"),
    cseq.TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]/%x[0,1]", min_freq=2),
    cseq.TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]/%x[0,1]", n_buckets=64),
])
@pytest.mark.parametrize("cuts", [[], [1], [3, 4], [2, 5, 9]])
def test_merge_of_parts_is_fit_on_the_whole(features, cuts):
    X, _ = _corpus(12, seed=3)
    if features is not None:
        X = [[(tok[0][2:], tok[1][2:]) for tok in seq] for seq in X]
    est = cseq.CRF(features=features)
    whole = est._new_featurizer()
    packed = whole.fit_transform(X)
    bounds = [0, *cuts, len(X)]
    parts = [est._new_featurizer().fit_part(X[a:b]) for a, b in zip(bounds, bounds[1:])]
    merged = est._new_featurizer().merge(parts)
    assert merged.n_attributes == whole.n_attributes
    assert merged.attribute_names() == whole.attribute_names()
    again = merged.transform(X)
    assert np.array_equal(again.attr_ids, packed.attr_ids)
    assert np.array_equal(again.tok_ptr, packed.tok_ptr)


class _DyingClient:
    """Stands for a client whose workers keep dying: every gather ends as Dask ends
    it when the workers running a task died ``allowed-failures + 1`` times."""

    direct_to_workers = False

    def submit(self, *args, **kwargs):
        return object()

    def gather(self, futures, **kwargs):
        from distributed.scheduler import KilledWorker
        raise KilledWorker("_predict_part-abc", _LastWorker(), 3)


class _LastWorker:
    address = "tcp://10.0.0.9:4242"


def test_workers_that_keep_dying_end_in_a_cluster_error():
    from distributed.scheduler import KilledWorker
    with pytest.raises(cd.ClusterError, match="kept losing workers") as info:
        cd._predict_list(_DyingClient(), None, [[["w=a"]], [["w=b"]]], 2)
    msg = str(info.value)
    assert "'_predict_part-abc'" in msg and "4 workers" in msg and "tcp://10.0.0.9:4242" in msg
    assert isinstance(info.value.__cause__, KilledWorker)


def test_tag_file_refuses_an_output_that_is_its_input(tmp_path):
    # The check on the worker (whose file system is the one that counts).
    src = tmp_path / "in"
    src.mkdir()
    data = src / "a.txt"
    data.write_text("a D\nb N\n\n")
    model = cseq.StructuredPerceptron(max_iter=1).fit([[["w=a"], ["w=b"]]], [["X", "Y"]])
    (tmp_path / "out").symlink_to(src, target_is_directory=True)
    with pytest.raises(cseq.InputError, match="is the input"):
        cd._tag_file(model, str(data), str(tmp_path / "out" / "a.txt"), {})
    assert data.read_text() == "a D\nb N\n\n"


# -- the cluster ------------------------------------------------------------------

def test_tag_files_into_a_link_to_the_input_directory_is_refused(client, tmp_path):
    X, y = _corpus(20, seed=4)
    X = [[(tok[0][2:], tok[1][2:]) for tok in seq] for seq in X]
    src = tmp_path / "in"
    src.mkdir()
    paths = [src / "a.txt", src / "b.txt"]
    for p in paths:
        _write_conll(p, X, y)
    before = [p.read_bytes() for p in paths]
    model = cseq.StructuredPerceptron(max_iter=2, features=cseq.TemplateFeaturizer(
        "U0:%x[0,0]\nU1:%x[0,1]")).fit(X, y)
    link = tmp_path / "out"
    link.symlink_to(src, target_is_directory=True)
    with pytest.raises(cseq.InputError, match="is the input"):
        cd.tag_files(model, paths, link, client=client)
    assert [p.read_bytes() for p in paths] == before
    # a real directory works, and leaves no temporary file
    out = cd.tag_files(model, paths, tmp_path / "tagged", client=client)
    assert sorted(os.listdir(tmp_path / "tagged")) == ["a.txt", "b.txt"]
    tagged, _ = read_conll(out[0], label_column=None)
    assert [[row[-1] for row in s] for s in tagged] == model.predict(X)


def test_fit_and_tag_files_end_in_a_cluster_error_when_workers_keep_dying(client, tmp_path,
                                                                           monkeypatch):
    from distributed.scheduler import KilledWorker
    X, y = _corpus(20, seed=5)
    model = cseq.StructuredPerceptron(max_iter=1).fit(X, y)
    data = tmp_path / "a.txt"
    data.write_text("a D\n\n")
    monkeypatch.setattr(type(client), "gather", _DyingClient.gather)
    for call in (lambda: cd.fit(cseq.StructuredPerceptron(max_iter=1), X, y, client=client),
                 lambda: cd.predict(model, X, client=client),
                 lambda: cd.tag_files(model, [data], tmp_path / "out", client=client)):
        with pytest.raises(cd.ClusterError, match="kept losing workers") as info:
            call()
        assert isinstance(info.value.__cause__, KilledWorker)


def test_one_partition_gives_the_weights_of_fit(client):
    X, y = _corpus(80)
    ref = cseq.CRF(c2=0.5, max_iter=25, tol=1e-3).fit(X, y)
    got = cd.fit(cseq.CRF(c2=0.5, max_iter=25, tol=1e-3), X, y, client=client, npartitions=1)
    assert np.array_equal(got.model_.params, ref.model_.params)
    assert got.to_bytes() == ref.to_bytes()
    # The model is the CRF's class, which defines probabilities.
    assert type(got.model_) is type(ref.model_)
    np.testing.assert_array_equal(got.sequence_log_prob(X, y), ref.sequence_log_prob(X, y))


@needs(CONLL2000 / "train.txt")
@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_one_partition_with_templates_and_l1(client):
    X, y = read_conll(CONLL2000 / "train.txt")
    X, y = X[:150], y[:150]
    make = lambda: cseq.CRF(c1=0.05, c2=0.1, max_iter=15, tol=1e-3,  # noqa: E731
                            features=cseq.TemplateFeaturizer("chunk", min_freq=2))
    ref = make().fit(X, y)
    got = cd.fit(make(), X, y, client=client, npartitions=1)
    assert got.featurizer_.attribute_names() == ref.featurizer_.attribute_names()
    assert np.array_equal(got.model_.params, ref.model_.params)
    assert np.array_equal(got.model_.attr_labels, ref.model_.attr_labels)


@pytest.mark.parametrize("make", [
    lambda: cseq.CRF(c2=0.5, max_iter=25, tol=1e-3),
    lambda: cseq.StructuredPerceptron(max_iter=3, shuffle=False, all_states=True),
])
@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_partially_labelled_sequences_as_in_fit(client, make):
    X, y = _corpus(60, seed=13)
    y = [[None if (i + j) % 4 == 0 else lab for j, lab in enumerate(seq)]
         for i, seq in enumerate(y)]
    ref = make().fit(X, y)
    got = cd.fit(make(), X, y, client=client, npartitions=1)
    assert got.classes_ == ref.classes_
    assert np.allclose(got.model_.params, ref.model_.params, rtol=1e-12, atol=1e-12)


def _objective(est, X, y):
    """The single-machine objective of ``est``'s problem at its fitted weights (unpruned)."""
    featurizer, corpus, classes = pack(est, X, y)
    model = type(est.model_).from_corpus(corpus, featurizer.n_attributes, len(classes))
    obj = CRFObjective(model, corpus, est.c2)
    return model, obj


@pytest.mark.parametrize("k, tree", [(2, False), (3, False), (3, True)])
def test_more_partitions_reach_the_same_objective(client, k, tree, monkeypatch):
    # Up to cseq.distributed.crf._DIRECT_SHARDS shards the results are gathered on the driver;
    # the tree reduction (broadcast weights, pairwise sums) is forced here too.
    if tree:
        monkeypatch.setattr(cseq.distributed.crf, "_DIRECT_SHARDS", 1)
    X, y = _corpus(150, seed=1)
    Xte, _ = _corpus(100, seed=2)
    ref = cseq.CRF(c2=0.5, max_iter=200, tol=1e-7, period=5).fit(X, y)
    got = cd.fit(cseq.CRF(c2=0.5, max_iter=200, tol=1e-7, period=5), X, y, client=client,
                 npartitions=k)
    assert got.classes_ == ref.classes_
    assert got.featurizer_.attribute_names() == ref.featurizer_.attribute_names()
    model, obj = _objective(ref, X, y)
    assert np.array_equal(model.attr_labels, got.model_.attr_labels)
    f_ref, f_got = obj(ref.model_.params)[0], obj(got.model_.params)[0]
    assert abs(f_got - f_ref) <= 1e-5 * abs(f_ref)
    same = np.mean([a == b for p, q in zip(got.predict(Xte), ref.predict(Xte))
                    for a, b in zip(p, q)])
    assert same >= 0.999


def test_empty_partitions_are_fine(client):
    X, y = _corpus(3, seed=4)
    got = cd.fit(cseq.CRF(c2=1.0, max_iter=50, tol=1e-6), X, y, client=client, npartitions=6)
    single = cd.fit(cseq.CRF(c2=1.0, max_iter=50, tol=1e-6), X, y, client=client,
                    npartitions=1)
    assert np.allclose(got.model_.params, single.model_.params, atol=1e-6)
    bag_x = db.from_sequence(X, npartitions=1).repartition(3)
    bag_y = db.from_sequence(y, npartitions=1).repartition(3)
    assert cd.predict(single, bag_x, client=client).compute() == single.predict(X)
    assert bag_y.npartitions == bag_x.npartitions


def test_gather_goes_through_the_scheduler_when_workers_cannot_be_reached(client, monkeypatch):
    X, y = _corpus(30, seed=13)
    real = type(client).gather
    calls = []

    def gather(self, futures, *args, direct=None, **kwargs):
        calls.append(direct)
        if direct:
            raise OSError("cannot connect to the worker")
        return real(self, futures, *args, direct=direct, **kwargs)
    monkeypatch.setattr(type(client), "gather", gather)
    try:
        ref = cseq.CRF(c2=1.0, max_iter=50, tol=1e-3).fit(X, y)
        got = cd.fit(cseq.CRF(c2=1.0, max_iter=50, tol=1e-3), X, y, client=client,
                     npartitions=1)
        assert np.array_equal(got.model_.params, ref.model_.params)
        assert calls.count(True) == 1  # tried once, then through the scheduler
    finally:
        cluster._INDIRECT.discard(client)


def test_a_task_error_is_not_taken_for_unreachable_workers(client):
    future = client.submit(lambda: open("/nonexistent/cseq-test-file"), pure=False)
    with pytest.raises(FileNotFoundError):
        cluster._gather(client, [future])
    assert client not in cluster._INDIRECT


def test_shards_spread_over_the_workers(client):
    # Two shards on a two-worker cluster sit on two workers (the scheduler
    # weighs a shard by its arrays: sys.getsizeof(_Shard)), so that their
    # data terms run at the same time.
    X, y = _corpus(200, seed=14)
    for _ in range(3):
        setup = cseq.distributed.shards._Setup(cseq.CRF(), client, X, y, 2)
        holders = client.who_has(setup.shards)
        assert len({w for ws in holders.values() for w in ws}) == 2, holders
    shard = setup.shards[0].result()
    assert sys.getsizeof(shard) > shard.corpus.attr_ids.nbytes + shard.corpus.tok_ptr.nbytes


def test_tags_templates_train_as_in_fit(client):
    # The pos preset's ':tags' templates: the jackknifed dictionary by a
    # map-reduce over the partitions; one partition gives fit's weights, and
    # three give fit's attributes and tag dictionary.
    X = [["The", "dog", "runs"], ["a", "dog"], ["the", "cat", "saw", "x"], ["Dog"],
         ["saw", "the", "x"], ["a"], ["runs", "a", "cat"]] * 4
    y = [["D", "N", "V"], ["D", "N"], ["D", "N", "V", "X"], ["N"], ["V", "D", "X"], ["D"],
         ["V", "D", "N"]] * 4
    templates = "U0:%x[0,0:lower]\nU1:%x[0,0:tags]\nU2:%x[1,0:tags]/%x[0,0:lower]\n"

    def make():
        return cseq.StructuredPerceptron(max_iter=3, shuffle=False, all_states=True,
                                         features=cseq.TemplateFeaturizer(templates))
    ref = make().fit(X, y)
    one = cd.fit(make(), X, y, client=client, npartitions=1)
    assert np.array_equal(one.model_.params, ref.model_.params)
    three = cd.fit(make(), X, y, client=client, npartitions=3)
    assert three.featurizer_.attribute_names() == ref.featurizer_.attribute_names()
    assert three.featurizer_._tags.tables == ref.featurizer_._tags.tables
    assert cd.predict(three, X, client=client) == three.predict(X)


def test_predict_equals_model_predict(client):
    X, y = _corpus(60, seed=5)
    Xte, _ = _corpus(41, seed=6)
    model = cseq.CRF(c2=0.5, max_iter=20, tol=1e-3).fit(X, y)
    assert cd.predict(model, Xte, client=client) == model.predict(Xte)
    assert cd.predict(model, Xte, client=client, npartitions=7) == model.predict(Xte)
    bag = db.from_sequence(Xte, npartitions=4)
    out = cd.predict(model, bag, client=client)
    assert isinstance(out, db.Bag) and out.npartitions == 4
    assert out.compute() == model.predict(Xte)


def test_perceptron_one_shard_without_shuffle_is_the_serial_perceptron(client):
    X, y = _corpus(60, seed=7)
    params = dict(max_iter=4, shuffle=False, all_states=True)
    ref = cseq.StructuredPerceptron(**params).fit(X, y)
    got = cd.fit(cseq.StructuredPerceptron(**params), X, y, client=client, npartitions=1)
    assert [r["errors"] for r in got.history_] == [r["errors"] for r in ref.history_]
    assert np.allclose(got.model_.params, ref.model_.params, rtol=1e-12, atol=1e-12)


def test_perceptron_mixing_is_deterministic(client):
    X, y = _corpus(90, seed=8)
    runs = [cd.fit(cseq.StructuredPerceptron(max_iter=3, random_state=5), X, y, client=client,
                   npartitions=3) for _ in range(2)]
    assert np.array_equal(runs[0].model_.params, runs[1].model_.params)
    assert runs[0].score(X, y) > 0.9


def test_ssvm_one_shard_without_shuffle_is_the_serial_ssvm(client):
    X, y = _corpus(60, seed=9)
    params = dict(C=0.5, max_iter=4, shuffle=False, all_states=True)
    ref = cseq.StructuredSVM(**params).fit(X, y)
    got = cd.fit(cseq.StructuredSVM(**params), X, y, client=client, npartitions=1)
    assert [r["violations"] for r in got.history_] == [r["violations"] for r in ref.history_]
    assert np.allclose([r["loss"] for r in got.history_], [r["loss"] for r in ref.history_],
                       rtol=1e-9)
    assert np.allclose(got.model_.params, ref.model_.params, rtol=1e-9, atol=1e-12)


def test_ssvm_mixing_two_copies_of_a_corpus_is_the_serial_ssvm_with_twice_c(client):
    # Two shards holding the same sequences run the same epochs, and lambda =
    # 1 / (C * 2n) is the serial lambda of C' = 2C on one copy: the mixed
    # weights (and their average) are the serial ones.
    X, y = _corpus(40, seed=10)
    got = cd.fit(cseq.StructuredSVM(C=0.1, max_iter=3, shuffle=False, all_states=True),
                 X + X, y + y, client=client, npartitions=2)
    ref = cseq.StructuredSVM(C=0.2, max_iter=3, shuffle=False, all_states=True).fit(X, y)
    assert np.allclose(got.model_.params, ref.model_.params, rtol=1e-9, atol=1e-12)
    assert [r["violations"] for r in got.history_] == [2 * r["violations"]
                                                       for r in ref.history_]


def test_ssvm_mixing_is_deterministic_and_learns(client):
    X, y = _corpus(90, seed=11)
    runs = [cd.fit(cseq.StructuredSVM(C=0.1, max_iter=3, random_state=5), X, y, client=client,
                   npartitions=3) for _ in range(2)]
    assert np.array_equal(runs[0].model_.params, runs[1].model_.params)
    assert runs[0].score(X, y) > 0.9
    losses = [r["loss"] for r in runs[0].history_]
    assert losses[-1] < losses[0]


def test_the_perceptron_warm_start_reaches_the_same_objective(client):
    X, y = _corpus(150, seed=12)
    ref = cseq.CRF(c2=0.5, max_iter=200, tol=1e-7, period=5).fit(X, y)
    warm = cd.fit(cseq.CRF(c2=0.5, max_iter=200, tol=1e-7, period=5, random_state=1), X, y,
                  client=client, npartitions=2, warm_start="perceptron")
    model, obj = _objective(ref, X, y)
    f_ref, f_warm = obj(ref.model_.params)[0], obj(warm.model_.params)[0]
    assert abs(f_warm - f_ref) <= 1e-5 * abs(f_ref)
    # The start was not zero: the first iteration's loss is below the cold run's.
    assert warm.history_[0]["loss"] < ref.history_[0]["loss"]


def test_bad_calls_are_refused(client):
    X, y = _corpus(5)
    with pytest.raises(cseq.InputError, match="warm_start"):
        cd.fit(cseq.CRF(), X, y, client=client, warm_start="sgd")
    with pytest.raises(cseq.InputError, match="applies to the CRF"):
        cd.fit(cseq.StructuredPerceptron(), X, y, client=client, warm_start="perceptron")
    with pytest.raises(cseq.InputTypeError, match="a StructuredPerceptron or a StructuredSVM, not"):
        cd.fit(cseq.HMM(), X, y, client=client)
    with pytest.raises(cseq.InputError, match="lbfgs"):
        cd.fit(cseq.CRF(algorithm="sgd"), X, y, client=client)
    with pytest.raises(cseq.InputError, match="npartitions"):
        cd.fit(cseq.CRF(), X, y, client=client, npartitions=0)
    with pytest.raises(cseq.InputError, match="5 sequences but y has 4"):
        cd.fit(cseq.CRF(), X, y[:4], client=client)
    with pytest.raises(cseq.InputError, match="empty corpus"):
        cd.fit(cseq.CRF(), [], [], client=client)


def test_early_stopping_on_a_dev_set_scored_on_the_driver(client):
    X, y = _corpus(80, seed=14)
    Xd, yd = _corpus(30, seed=15)
    make = lambda: cseq.CRF(c2=0.5, max_iter=40, early_stopping=True,  # noqa: E731
                            patience=2)
    ref = make().fit(X, y, Xd, yd)
    got = cd.fit(make(), X, y, client=client, npartitions=1, X_dev=Xd, y_dev=yd)
    assert got.best_iteration_ == ref.best_iteration_ is not None
    assert [r["dev_accuracy"] for r in got.history_] == [r["dev_accuracy"]
                                                         for r in ref.history_]
    assert np.array_equal(got.model_.params, ref.model_.params)


class _StopAt:
    """A callback that presses Ctrl-C after iteration ``n``."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, record) -> None:
        if record["iteration"] == self.n:
            raise KeyboardInterrupt


@pytest.mark.parametrize("make", [
    lambda n: cseq.CRF(c2=0.5, max_iter=n, tol=0.0),
    lambda n: cseq.StructuredPerceptron(max_iter=n, random_state=2),
    lambda n: cseq.StructuredSVM(max_iter=n, random_state=2),
], ids=["crf", "perceptron", "ssvm"])
@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_ctrl_c_hands_back_the_last_completed_iteration(client, make):
    """The fit frame is the in-process one: on Ctrl-C the estimator stays unfitted and
    TrainingInterrupted holds a fitted copy at the last completed iteration."""
    X, y = _corpus(40, seed=21)
    est = make(20)
    with pytest.raises(cseq.TrainingInterrupted) as info:
        cd.fit(est, X, y, client=client, npartitions=2, callback=_StopAt(2))
    assert est.model_ is None
    partial = info.value.estimator
    assert partial.n_iter_ == 2 and len(partial.history_) == 2
    two = cd.fit(make(2), X, y, client=client, npartitions=2)
    np.testing.assert_array_equal(partial.model_.params, two.model_.params)
    assert partial.predict(X) == two.predict(X)


def test_the_max_iter_warning_names_the_callers_line(client):
    X, y = _corpus(20, seed=22)
    with pytest.warns(cseq.ConvergenceWarning, match="max_iter=2") as record:
        cd.fit(cseq.CRF(max_iter=2, tol=0.0), X, y, client=client, npartitions=2)
    assert [w.filename for w in record] == [__file__]


def test_hashing_featurizer_over_partitions(client):
    X, y = _corpus(60, seed=16)
    X = [[(tok[0][2:], tok[1][2:]) for tok in seq] for seq in X]
    features = cseq.TemplateFeaturizer("U0:%x[0,0]\nU1:%x[-1,0]/%x[0,1]", n_buckets=97)
    make = lambda: cseq.StructuredPerceptron(max_iter=3, shuffle=False,  # noqa: E731
                                             all_states=True, features=features)
    ref = make().fit(X, y)
    got = cd.fit(make(), X, y, client=client, npartitions=1)
    assert got.featurizer_.n_attributes == 97
    assert np.allclose(got.model_.params, ref.model_.params, rtol=1e-12, atol=1e-12)
    mixed = cd.fit(make(), X, y, client=client, npartitions=3)
    assert mixed.score(X, y) > 0.9


def _write_conll(path, X, y):
    with open(path, "w") as f:
        for xs, ys in zip(X, y):
            for tok, lab in zip(xs, ys):
                f.write(f"{tok[0]} {tok[1]} {lab}\n")
            f.write("\n")


def test_training_from_conll_files_read_on_the_workers(client, tmp_path):
    X, y = _corpus(90, seed=9)
    X = [[(tok[0][2:], tok[1][2:]) for tok in seq] for seq in X]
    paths = []
    for i, (a, b) in enumerate([(0, 30), (30, 55), (55, 90)]):
        paths.append(tmp_path / f"part{i}.txt")
        _write_conll(paths[-1], X[a:b], y[a:b])
    Xb, yb = cd.read_conll(paths)
    assert Xb.npartitions == 3
    assert Xb.compute() == X and yb.compute() == y
    features = cseq.TemplateFeaturizer("U0:%x[0,0]\nU1:%x[0,1]\nU2:%x[-1,0]")
    got = cd.fit(cseq.CRF(c2=0.5, max_iter=200, tol=1e-7, period=5, features=features), Xb, yb,
                 client=client)
    ref = cseq.CRF(c2=0.5, max_iter=200, tol=1e-7, period=5, features=features).fit(X, y)
    assert got.featurizer_.attribute_names() == ref.featurizer_.attribute_names()
    model, obj = _objective(ref, X, y)
    f_ref, f_got = obj(ref.model_.params)[0], obj(got.model_.params)[0]
    assert abs(f_got - f_ref) <= 1e-5 * abs(f_ref)
    out = cd.tag_files(got, paths[:2], tmp_path / "out", client=client)
    assert out == [str(tmp_path / "out" / "part0.txt"), str(tmp_path / "out" / "part1.txt")]
    tagged, _ = read_conll(out[1], label_column=None)
    assert [[row[-1] for row in s] for s in tagged] == got.predict(X[30:55])


def test_a_malformed_file_names_file_and_line(client, tmp_path):
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("a D X\n\n")
    bad.write_text("a D X\nb N\n\n")
    Xb, yb = cd.read_conll([good, bad])
    with pytest.raises(cseq.InputError, match=r"bad\.txt:2"):
        cd.fit(cseq.CRF(), Xb, yb, client=client)


def test_another_cseq_version_on_a_worker_is_refused(client):
    worker = sorted(client.scheduler_info()["workers"])[0]

    def set_version(v):
        import cseq
        old, cseq.__version__ = cseq.__version__, v
        return old

    X, y = _corpus(10)
    old = client.run(set_version, "0.0.1.other", workers=[worker])[worker]
    try:
        with pytest.raises(cd.ClusterError) as info:
            cd.fit(cseq.CRF(), X, y, client=client)
        msg = str(info.value)
        assert worker in msg and "0.0.1.other" in msg and cseq.__version__ in msg
    finally:
        client.run(set_version, old, workers=[worker])
    assert set(cd.check_workers(client).values()) == {cseq.__version__}


# -- the command line ---------------------------------------------------------------

@pytest.mark.slow
def test_cli_trains_and_tags_on_a_local_cluster(tmp_path):
    from support.cli_run import TRAIN, run
    train = tmp_path / "train.txt"
    train.write_text(TRAIN * 4)
    here = run("train", train, "--template", "chunk", "-o", tmp_path / "a.cseq", "--quiet")
    there = run("train", train, "--template", "chunk", "-o", tmp_path / "b.cseq", "--quiet",
                "--local-workers", "2")
    assert here.returncode == 0 and there.returncode == 0, there.stderr
    assert "trained CRF" in there.stdout
    a, b = cseq.load(tmp_path / "a.cseq"), cseq.load(tmp_path / "b.cseq")
    assert a.featurizer_.attribute_names() == b.featurizer_.attribute_names()
    assert np.allclose(a.model_.params, b.model_.params, rtol=1e-4, atol=1e-4)
    tag_here = run("tag", tmp_path / "a.cseq", train, "--labeled")
    tag_there = run("tag", tmp_path / "a.cseq", train, "--labeled", "--local-workers", "1")
    assert tag_there.returncode == 0, tag_there.stderr
    assert tag_there.stdout == tag_here.stdout
    hmm = run("train", train, "--algorithm", "hmm", "-o", tmp_path / "c.cseq",
              "--local-workers", "1")
    assert hmm.returncode == 1 and "a StructuredPerceptron or a StructuredSVM, not HMM" in hmm.stderr


# -- faults (last: they replace a worker) -------------------------------------------

def _kill_one_worker(client):
    pids = client.run(os.getpid)
    os.kill(sorted(pids.values())[0], signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_a_worker_killed_during_fit_does_not_change_the_result(client):
    X, y = _corpus(120, seed=10)
    make = lambda: cseq.CRF(c2=0.5, max_iter=12, tol=1e-3)  # noqa: E731
    calm = cd.fit(make(), X, y, client=client, npartitions=2)
    killed = []

    def kill(record):
        if record["iteration"] == 3:
            _kill_one_worker(client)
            killed.append(True)
    hurt = cd.fit(make(), X, y, client=client, npartitions=2, callback=kill)
    assert killed
    assert np.array_equal(hurt.model_.params, calm.model_.params)
    client.wait_for_workers(2, timeout=60)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
def test_a_worker_killed_during_tagging_does_not_change_the_result(client):
    X, y = _corpus(60, seed=11)
    model = cseq.CRF(c2=0.5, max_iter=10, tol=1e-3).fit(X, y)
    client.wait_for_workers(2, timeout=60)
    out = cd.predict(model, db.from_sequence(X, npartitions=4), client=client)
    _kill_one_worker(client)  # after the model was sent to both workers
    assert out.compute() == model.predict(X)
    client.wait_for_workers(2, timeout=60)


# Last: it hides cseq from a worker (restored after), which is best kept away from
# the tests that replace a worker.
def test_a_worker_without_cseq_is_refused(client):
    worker = sorted(client.scheduler_info()["workers"])[-1]

    def hide():
        import sys

        import cseq  # noqa: F401  (a restarted worker may not have imported it yet)
        sys._cseq_hidden = sys.modules["cseq"]
        sys.modules["cseq"] = None  # `import cseq` now fails there

    def unhide():
        import sys
        sys.modules["cseq"] = sys._cseq_hidden
        del sys._cseq_hidden

    client.run(hide, workers=[worker])
    try:
        with pytest.raises(cd.ClusterError) as info:
            cd.check_workers(client)
        msg = str(info.value)
        assert f"worker {worker} cannot import cseq (ModuleNotFoundError" in msg
        assert cseq.__version__ in msg
    finally:
        client.run(unhide, workers=[worker])
    assert set(cd.check_workers(client).values()) == {cseq.__version__}
