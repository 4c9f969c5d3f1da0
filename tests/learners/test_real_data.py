"""Smoke test on real data: part-of-speech tagging of the shipped EWT sample."""

from __future__ import annotations

import pytest

import cseq
from cseq.conll import read_conll
from cseq.data import sample_path

# Quick fits here stop at max_iter on purpose; ConvergenceWarning itself is tested in
# test_crf_options.py.
pytestmark = pytest.mark.filterwarnings("ignore::cseq.ConvergenceWarning")

N_TRAIN = 2000


def token_features(words: list[str]) -> list[list[str]]:
    feats = []
    for i, w in enumerate(words):
        low = w.lower()
        feats.append([
            "bias",
            f"w={low}",
            f"suf3={low[-3:]}",
            f"prev={words[i - 1].lower() if i else '<s>'}",
            f"next={words[i + 1].lower() if i + 1 < len(words) else '</s>'}",
        ])
    return feats


@pytest.fixture(scope="module")
def ewt():
    X_rows, y = read_conll(sample_path(), sep="\t")
    X = [token_features([row[0] for row in sent]) for sent in X_rows]
    assert len(X) == 2500
    return (X[:N_TRAIN], y[:N_TRAIN]), (X[N_TRAIN:], y[N_TRAIN:])


@pytest.mark.parametrize("estimator", [
    cseq.StructuredPerceptron(max_iter=5, random_state=0),
    cseq.CRF(max_iter=50),
], ids=["perceptron", "crf"])
def test_pos_tagging_accuracy(ewt, estimator):
    (X_train, y_train), (X_test, y_test) = ewt
    est = estimator.fit(X_train, y_train)
    accuracy = est.score(X_test, y_test)
    assert accuracy > 0.85, accuracy
    assert est.score(X_train, y_train) > accuracy
    assert len(est.classes_) == 17
    pred = est.predict(X_test)
    correct = sum(p == g for ps, gs in zip(pred, y_test) for p, g in zip(ps, gs))
    assert correct / sum(len(s) for s in y_test) == pytest.approx(accuracy)
