"""python-crfsuite as the peer the compat tests compare with."""

from __future__ import annotations


def train_tagger(pycrfsuite, X, y, path, algorithm="lbfgs", **params):
    """Train python-crfsuite on ``X``, ``y`` into the model file ``path``; its opened Tagger."""
    trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
    trainer.set_params(params)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.train(str(path))
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    return tagger
