"""The two tasks every learner is benchmarked on, and the machine's load."""

from __future__ import annotations

import os

from cseq.conll import read_conll, read_conllu
from cseq.metrics import accuracy, chunk_f1


def load_task(task: str, data: str):
    """(X_train, y_train, X_test, y_test, metric name, metric function)."""
    if task == "ewt":
        d = os.path.join(data, "ud_en_ewt")
        Xtr, ytr = read_conllu(os.path.join(d, "en_ewt-ud-train.conllu"))
        Xte, yte = read_conllu(os.path.join(d, "en_ewt-ud-dev.conllu"))
        return Xtr, ytr, Xte, yte, "accuracy", accuracy
    if task == "conll2000":
        X, y = read_conll(os.path.join(data, "conll2000", "train.txt"))
        return X[:-1000], y[:-1000], X[-1000:], y[-1000:], "span F1", chunk_f1
    raise SystemExit(f"unknown task {task!r}")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (the machine may be shared: timings under load)."""
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"
