"""cseq.compat.pycrfsuite against python-crfsuite itself, and cseq.to_crfsuite back to it.

Every test that has a python-crfsuite counterpart runs the same calls on
both modules (the test extra installs python-crfsuite) and compares: labels,
probabilities and marginals of models opened by both, parameters, items, the
exceptions.  The program of ``_address_program`` is the kind most
python-crfsuite users run (short strings, a dict of about ten values per
token with nested dicts for the neighbours, one ``tag`` per string); it runs
with only its import changed.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

import cseq
from cseq.compat import pycrfsuite as drop_in
from cseq.compat.crfsuite_model import crfsuite_bytes, hashlittle, to_crfsuite
from support.cli_run import run

peer = pytest.importorskip("pycrfsuite")

STREETS = ["Main", "Oak", "Elm", "Pine", "Maple", "Cedar", "Lake", "Hill", "Park", "Mill"]
KINDS = ["St", "Ave", "Rd", "Blvd", "Ln", "Dr"]
CITIES = ["Springfield", "Riverton", "Fairview", "Salem", "Georgetown", "Madison"]


def _token(words: list[str], i: int) -> dict:
    """A featurizer as python-crfsuite users write them: values of every kind, nested dicts."""
    w = words[i]
    item = {"bias": 1.0, "lower": w.lower(), "suffix": w[-3:], "is_title": w.istitle(),
            "is_digit": w.isdigit(), "length": len(w), "has_comma": "," in w,
            "shape": "".join("d" if c.isdigit() else "a" for c in w)[:4]}
    if i:
        item["previous"] = {"lower": words[i - 1].lower(), "is_title": words[i - 1].istitle()}
    else:
        item["BOS"] = True
    if i + 1 < len(words):
        item["next"] = {"lower": words[i + 1].lower(), "is_digit": words[i + 1].isdigit()}
    else:
        item["EOS"] = True
    return item


def _addresses(n: int, seed: int) -> tuple[list[list[dict]], list[list[str]]]:
    rng = random.Random(seed)
    X, y = [], []
    for _ in range(n):
        words = [str(rng.randint(1, 9999)), *rng.sample(STREETS, rng.randint(1, 2)),
                 rng.choice(KINDS)]
        labels = ["NUMBER"] + ["STREET"] * (len(words) - 2) + ["KIND"]
        if rng.random() < 0.6:
            words.append(rng.choice(CITIES))
            labels.append("CITY")
        X.append([_token(words, i) for i in range(len(words))])
        y.append(labels)
    return X, y


def _address_program(pycrfsuite, path: str) -> list[list[str]]:
    """Train on addresses and tag new ones, one string per call (only ``pycrfsuite`` varies)."""
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(*_addresses(300, seed=1)):
        trainer.append(xseq, yseq)
    trainer.set_params({"c1": 0.1, "c2": 0.01, "max_iterations": 100,
                        "feature.possible_transitions": True})
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    return [tagger.tag(xseq) for xseq in _addresses(200, seed=2)[0]]


def test_a_python_crfsuite_program_runs_with_only_its_import_changed(tmp_path):
    theirs = _address_program(peer, str(tmp_path / "model.crfsuite"))
    ours = _address_program(drop_in, str(tmp_path / "model.cseq"))
    gold = _addresses(200, seed=2)[1]
    assert ours == gold == theirs


@pytest.fixture(scope="module")
def crfsuite_model(tmp_path_factory):
    """A python-crfsuite model of the address strings, and its path."""
    path = str(tmp_path_factory.mktemp("peer") / "address.crfsuite")
    trainer = peer.Trainer(verbose=False)
    X, y = _addresses(150, seed=3)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    # A weak model: its labels and marginals are not all certain.
    trainer.set_params({"c2": 5.0, "max_iterations": 30})
    trainer.train(path)
    return path


def _both(path):
    ours, theirs = drop_in.Tagger(), peer.Tagger()
    ours.open(path)
    theirs.open(path)
    return ours, theirs


def test_a_crfsuite_model_tags_as_in_python_crfsuite(crfsuite_model):
    ours, theirs = _both(crfsuite_model)
    assert ours.labels() == theirs.labels()
    X, y = _addresses(60, seed=4)
    rng = random.Random(0)
    for xseq, yseq in zip(X, y):
        assert ours.tag(xseq) == theirs.tag(xseq)
        for labels in (yseq, [rng.choice(theirs.labels()) for _ in yseq]):
            assert ours.probability(labels) == pytest.approx(theirs.probability(labels),
                                                             abs=1e-6)
        for pos in range(len(xseq)):
            for label in theirs.labels():
                assert ours.marginal(label, pos) == pytest.approx(theirs.marginal(label, pos),
                                                                  abs=1e-6)


def test_an_item_sequence_and_set_then_tag_are_the_same_sequence(crfsuite_model):
    ours, theirs = _both(crfsuite_model)
    xseq = _addresses(1, seed=5)[0][0]
    for tagger, module in ((ours, drop_in), (theirs, peer)):
        items = module.ItemSequence(xseq)
        tagger.set(items)
        assert tagger.tag() == tagger.tag(items) == tagger.tag(xseq)
    assert drop_in.ItemSequence(xseq).items() == peer.ItemSequence(xseq).items()
    assert len(drop_in.ItemSequence(xseq)) == len(xseq)
    assert repr(drop_in.ItemSequence(xseq)) == repr(peer.ItemSequence(xseq))


@pytest.mark.parametrize("items", [
    [["a", "b"], {"x": 1, "y": 0.5, "z": False}],
    [{"p": {"q": ["r", "s"], "t": 2.5}, "u": "v"}],
    [{"n": {"m": {"deep": True, "s": "w"}}}],
    [[], {}],
])
def test_items_are_read_by_python_crfsuites_rules(items):
    assert drop_in.ItemSequence(items).items() == peer.ItemSequence(items).items()


def test_model_info_and_dump_match_python_crfsuite(crfsuite_model, tmp_path):
    ours, theirs = _both(crfsuite_model)
    a, b = ours.info(), theirs.info()
    assert a.header == b.header
    assert a.labels == b.labels and a.attributes == b.attributes
    # python-crfsuite reads the weights back from its text dump (six decimals).
    assert a.transitions.keys() == b.transitions.keys()
    assert a.state_features.keys() == b.state_features.keys()
    for mine, peers in ((a.transitions, b.transitions), (a.state_features, b.state_features)):
        assert max(abs(mine[k] - v) for k, v in peers.items()) < 1e-6
    ours.dump(tmp_path / "ours.txt")
    theirs.dump(str(tmp_path / "theirs.txt"))
    mine = (tmp_path / "ours.txt").read_text().splitlines()
    peers = (tmp_path / "theirs.txt").read_text().splitlines()
    assert sorted(mine) == sorted(peers)


@pytest.mark.parametrize("algorithm", ["lbfgs", "l2sgd", "ap", "pa", "arow",
                                       "averaged-perceptron", "passive-aggressive"])
def test_parameters_and_defaults_match_python_crfsuite(algorithm):
    ours, theirs = drop_in.Trainer(algorithm, verbose=False), peer.Trainer(algorithm,
                                                                          verbose=False)
    assert ours.params() == theirs.params()
    assert ours.get_params() == theirs.get_params()
    for name in theirs.params():
        assert ours.help(name)
    ours.set("max_iterations", "7")
    theirs.set("max_iterations", "7")
    ours.set("feature.possible_states", True)
    theirs.set("feature.possible_states", True)
    assert ours.get_params() == theirs.get_params()


def _error(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc)
    return None


@pytest.mark.parametrize("call", [
    lambda m, t, g: t.set("no_such_parameter", 1),
    lambda m, t, g: t.get("no_such_parameter"),
    lambda m, t, g: t.help("no_such_parameter"),
    lambda m, t, g: t.set("c", 1.0),                  # a parameter of pa, not of lbfgs
    lambda m, t, g: t.append([["a"]], ["A", "B"]),
    lambda m, t, g: g.labels(),
    lambda m, t, g: g.tag([["a"]]),
    lambda m, t, g: g.open("/no/such/model.file"),
    lambda m, t, g: g.open_inmemory(b"not a model at all, but long enough to hold a header"),
])
def test_errors_are_python_crfsuites(call):
    kinds = []
    for module in (drop_in, peer):
        kinds.append(_error(lambda m=module: call(m, m.Trainer(verbose=False), m.Tagger())))
    assert kinds[0] is not None
    assert issubclass(kinds[0], kinds[1]) or kinds[0] is kinds[1]


@pytest.mark.parametrize("call", [
    lambda g: g.probability(["NUMBER"]),                 # a length that differs
    lambda g: g.probability(["NUMBER", "NO-SUCH", "KIND"]),
    lambda g: g.marginal("NO-SUCH", 0),
    lambda g: g.marginal("NUMBER", 3),
])
def test_errors_on_an_opened_model_are_python_crfsuites(call, crfsuite_model):
    xseq = [_token(["12", "Oak", "St"], i) for i in range(3)]
    kinds = []
    for tagger in _both(crfsuite_model):
        tagger.set(xseq)
        kinds.append(_error(lambda g=tagger: call(g)))
    assert kinds[0] is not None and issubclass(kinds[0], kinds[1])


def test_select_refuses_an_unknown_algorithm_or_model_type():
    trainer = drop_in.Trainer(verbose=False)
    with pytest.raises(ValueError, match="Bad arguments"):
        trainer.select("no-such-algorithm")
    with pytest.raises(ValueError, match="Bad arguments"):
        trainer.select("lbfgs", type="crf2d")


def test_a_value_crfsuite_would_read_as_zero_is_refused():
    trainer = drop_in.Trainer(verbose=False)
    with pytest.raises(ValueError, match="c2"):
        trainer.set("c2", "a lot")
    assert trainer.get("c2") == 1.0


def test_select_resets_the_parameters_as_crfsuite_does():
    for module in (drop_in, peer):
        trainer = module.Trainer(verbose=False)
        trainer.set("c2", 0.5)
        trainer.select("lbfgs")
        assert trainer.get("c2") == 1.0


@pytest.mark.parametrize("algorithm", ["lbfgs", "l2sgd", "ap", "pa", "arow"])
def test_every_algorithm_trains_a_model_its_tagger_opens(algorithm, tmp_path):
    X, y = _addresses(120, seed=6)
    trainer = drop_in.Trainer(algorithm, params={"max_iterations": 20}, verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.train(str(tmp_path / "m"))
    tagger = drop_in.Tagger()
    with tagger.open(str(tmp_path / "m")) as opened:
        assert opened is tagger
        accuracy = np.mean([a == b for xseq, yseq in zip(X, y)
                            for a, b in zip(tagger.tag(xseq), yseq)])
        assert accuracy > 0.95
        probs = [tagger.marginal(label, 0) for label in tagger.labels()]
        assert sum(probs) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not opened"):
        tagger.tag(X[0])
    learner = {"lbfgs": cseq.CRF, "l2sgd": cseq.CRF, "ap": cseq.StructuredPerceptron,
               "pa": cseq.PassiveAggressive, "arow": cseq.AROW}[algorithm]
    assert type(cseq.load(tmp_path / "m")) is learner


def test_threads_train_the_same_labels(tmp_path):
    X, y = _addresses(200, seed=11)
    tagged = []
    for n_jobs in (1, 2):
        trainer = drop_in.Trainer(verbose=False, n_jobs=n_jobs)
        for xseq, yseq in zip(X, y):
            trainer.append(xseq, yseq)
        trainer.set_params({"c2": 1.0, "max_iterations": 30})
        trainer.train(str(tmp_path / f"m{n_jobs}"))
        tagger = drop_in.Tagger()
        tagger.open(str(tmp_path / f"m{n_jobs}"))
        assert cseq.load(tmp_path / f"m{n_jobs}").n_jobs == n_jobs
        tagged.append([tagger.tag(xseq) for xseq in _addresses(100, seed=12)[0]])
    assert tagged[0] == tagged[1]


def test_holdout_groups_are_scored_and_logged(tmp_path):
    X, y = _addresses(100, seed=7)

    class Recording(drop_in.Trainer):
        seen: list = []

        def on_iteration(self, log, info):
            self.seen.append(info)

    trainer = Recording(verbose=True)
    for k, (xseq, yseq) in enumerate(zip(X, y)):
        trainer.append(xseq, yseq, group=k % 4 == 0)
    trainer.set_params({"max_iterations": 15})
    trainer.train(str(tmp_path / "m"), holdout=1)
    log = trainer.logparser
    assert len(log.iterations) == len(Recording.seen) > 0
    assert log.last_iteration is log.iterations[-1]
    assert {"num", "loss", "time", "item_accuracy_float"} <= log.last_iteration.keys()
    assert log.training_seconds is not None and log.training_seconds >= 0
    assert log.events[0] == "start" and log.events[-1] == "end"


def test_messages_go_to_message_and_train_of_no_name_writes_nothing(tmp_path, capsys):
    X, y = _addresses(20, seed=8)
    got = []

    class Quiet(drop_in.BaseTrainer):
        def message(self, message):
            got.append(message)

    trainer = Quiet("ap", params={"max_iterations": 3}, verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(drop_in.ItemSequence(xseq), yseq)
    trainer.train("")
    assert got and "Iteration" in "".join(got)
    assert capsys.readouterr().out == ""
    trainer.clear()
    with pytest.raises(drop_in.CRFSuiteError):
        trainer.train(str(tmp_path / "m"))
    assert not (tmp_path / "m").exists()


def test_a_bare_string_item_is_refused_not_read_per_character():
    with pytest.raises(TypeError, match="string"):
        drop_in.ItemSequence(["dog"])


def test_the_tagger_opens_a_cseq_model_with_its_own_featurizer(tmp_path):
    words = [["The", "dog"], ["A", "cat"]] * 5
    est = cseq.StructuredPerceptron(max_iter=5, features=cseq.TemplateFeaturizer("pos"))
    est.fit(words, [["DET", "NOUN"]] * 10)
    est.save(tmp_path / "m")
    tagger = drop_in.Tagger()
    tagger.open(str(tmp_path / "m"))
    assert tagger.tag(["The", "cat"]) == est.predict([["The", "cat"]])[0]
    assert tagger.labels() == est.classes_
    probs = [tagger.marginal(label, 1) for label in tagger.labels()]
    assert sum(probs) == pytest.approx(1.0)


def test_module_attributes():
    for name in ("Trainer", "BaseTrainer", "Tagger", "ItemSequence", "CRFSuiteError",
                 "CRFSUITE_VERSION"):
        assert hasattr(peer, name) and hasattr(drop_in, name)
    assert drop_in.CRFSuiteError(-2).code == -2
    assert str(drop_in.CRFSuiteError(-2)) == "Insufficient memory"


# -- going back: cseq.to_crfsuite --------------------------------------------------------------

def test_lookup3_test_vectors():
    # Bob Jenkins' published values of hashlittle (lookup3.c's driver2).
    assert hashlittle(b"") == 0xDEADBEEF
    assert hashlittle(b"", 0xDEADBEEF) == 0xBD5B7DDE
    assert hashlittle(b"Four score and seven years ago") == 0x17770551
    assert hashlittle(b"Four score and seven years ago", 1) == 0xCD628161


def test_an_imported_model_is_written_back_byte_for_byte(crfsuite_model, tmp_path):
    est = cseq.from_crfsuite(crfsuite_model)
    to_crfsuite(est, tmp_path / "back.crfsuite")
    with open(crfsuite_model, "rb") as f:
        assert (tmp_path / "back.crfsuite").read_bytes() == f.read()


@pytest.mark.parametrize("make", [
    lambda: cseq.CRF(c2=0.1, max_iter=40),
    lambda: cseq.StructuredPerceptron(max_iter=5, random_state=0),
    lambda: cseq.StructuredSVM(max_iter=5, random_state=0),
    lambda: cseq.CRF(c2=0.1, max_iter=40, features=cseq.compat.crfsuite_items
                     .CRFsuiteVocabulary()),
])
def test_python_crfsuite_tags_an_exported_model_as_cseq_does(make, tmp_path):
    X, y = _addresses(150, seed=9)
    plain = make().features is None
    if plain:  # the plain vocabulary reads lists of strings as python-crfsuite does
        X = [[[f"{k}={v}" for k, v in sorted(tok.items()) if not isinstance(v, dict)]
              for tok in xseq] for xseq in X]
    est = make().fit(X, y)
    path = tmp_path / "m.crfsuite"
    with pytest.raises(cseq.InputError, match="start and end weights"):
        to_crfsuite(est, path)
    assert not path.exists()
    to_crfsuite(est, path, boundaries="drop")
    # Without its start and end weights, the cseq model tags as python-crfsuite does.
    model = est.model_
    model.params[model.layout["start"]:model.layout["start"] + 2 * model.n_labels] = 0.0
    tagger = peer.Tagger()
    tagger.open(str(path))
    X_test = _addresses(80, seed=10)[0]
    if plain:
        X_test = [[[f"{k}={v}" for k, v in sorted(tok.items()) if not isinstance(v, dict)]
                   for tok in xseq] for xseq in X_test]
    assert [tagger.tag(xseq) for xseq in X_test] == est.predict(X_test)
    assert tagger.labels() == est.classes_


@pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")
@pytest.mark.parametrize("make, fit_words, why", [
    (lambda: cseq.CRF(max_iter=5, features=cseq.TemplateFeaturizer("pos")), True,
     "TemplateFeaturizer"),
    (lambda: cseq.CRF(max_iter=5, order=2), False, "second-order"),
    (lambda: cseq.MEMM(max_iter=5), False, "sum of its weights"),
    (lambda: cseq.GreedyTagger(max_iter=2), False, "sum of its weights"),
])
def test_what_the_format_cannot_hold_is_refused(make, fit_words, why, tmp_path):
    X = [["The", "dog"], ["A", "cat"]] * 3 if fit_words else [[["w=the"], ["w=dog"]]] * 6
    est = make().fit(X, [["DET", "NOUN"]] * 6)
    with pytest.raises(cseq.InputError, match=why):
        crfsuite_bytes(est, boundaries="drop")


def test_a_label_with_a_nul_is_refused():
    est = cseq.StructuredPerceptron(max_iter=2).fit([[["a"], ["b"]]], [["X\0Y", "Z"]])
    with pytest.raises(cseq.InputError, match="NUL"):
        crfsuite_bytes(est, boundaries="drop")


def test_an_unfitted_model_and_a_bad_boundaries_value_are_refused():
    with pytest.raises(cseq.NotFittedError):
        crfsuite_bytes(cseq.CRF())
    est = cseq.StructuredPerceptron(max_iter=2).fit([[["a"], ["b"]]], [["X", "Z"]])
    with pytest.raises(cseq.InputError, match="boundaries"):
        crfsuite_bytes(est, boundaries="keep")


def test_the_export_command(crfsuite_model, tmp_path):
    cseq.from_crfsuite(crfsuite_model).save(tmp_path / "m.cseq")
    done = run("export", "crfsuite", str(tmp_path / "m.cseq"), "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_bytes()[:4] == b"lCRF"
    size = struct.unpack_from("<I", (tmp_path / "out").read_bytes(), 4)[0]
    assert size == (tmp_path / "out").stat().st_size
    X = [[["a"], ["b"]]] * 3
    cseq.CRF(max_iter=5).fit(X, [["A", "B"]] * 3).save(tmp_path / "c.cseq")
    refused = run("export", "crfsuite", str(tmp_path / "c.cseq"), "-o", str(tmp_path / "x"))
    assert refused.returncode == 1 and "--drop-boundaries" in refused.stderr
    assert not (tmp_path / "x").exists()
    done = run("export", "crfsuite", str(tmp_path / "c.cseq"), "-o", str(tmp_path / "x"),
               "--drop-boundaries")
    assert done.returncode == 0, done.stderr
    tagger = peer.Tagger()
    tagger.open(str(tmp_path / "x"))
    assert tagger.tag([["a"], ["b"]]) == ["A", "B"]
