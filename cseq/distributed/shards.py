"""What every distributed fit prepares: the corpus learnt and packed by parts, on the workers.

The featurizer learns each partition's attributes on its worker and the
driver merges them (``featurizer.merge``); each partition is then packed
once into a :class:`~cseq.chain.sequences.Sequences` that stays on its
worker as a :class:`_Shard` for the whole fit, and the (attribute, label)
pairs of the shards make the model's state index.  Results are summed by a
tree of pairwise tasks on the workers (:func:`_tree_sum`).
"""

from __future__ import annotations

import numpy as np
from distributed import Client

from cseq.chain import _labels, _chain
from cseq.chain.model import LinearChain
from cseq.chain.sequences import Sequences
from cseq.distributed.cluster import _gather, _partitions, _placement, _share, check_workers
from cseq.exceptions import InputError
from cseq.features.protocol import (PartsFeaturizer, featurizer_from_config, featurizer_from_state,
                                    implements)
from cseq.learners.base import ChainEstimator
from cseq.learners.objectives import CRFObjective


def _n_sequences(pair) -> int:
    return len(pair[0])


def _tag_counts_part(pair, config, first: int):
    """Map step of the ``tags`` dictionary: a partition's label counts per word and fold."""
    X_part, y_part = pair
    if not X_part:
        return None
    return featurizer_from_config(config).tag_counts(X_part, y_part, first)


def _learn_part(pair, config, tags=None, first: int = 0) -> dict:
    """Map step: a partition's attributes (featurizer part), labels and sizes.

    ``tags``: the whole corpus's tag folds, for templates with ``:tags``
    (the partition starts at sentence ``first``)."""
    X_part, y_part = pair
    featurizer = featurizer_from_config(config)
    part = None
    if X_part:
        part = featurizer.fit_part(X_part, tags, first) if tags is not None else \
            featurizer.fit_part(X_part)
    labels = sorted({lab for seq in y_part for lab in seq if lab is not None})
    meta_arrays = part.get_state() if part is not None else None
    return {"part": meta_arrays, "counts": getattr(part, "counts_", None), "labels": labels,
            "n_sequences": len(X_part)}


def _featurizer_from_part(info: dict):
    meta, arrays = info["part"]
    part = featurizer_from_state(meta, arrays)
    if info["counts"] is not None:
        part.counts_ = info["counts"]
    return part


class _Shard:
    """One packed partition on its worker: its corpus, then its objective."""

    def __init__(self, corpus: Sequences | None) -> None:
        self.corpus = corpus
        self._objective: CRFObjective | None = None
        self._structure = None

    def __sizeof__(self) -> int:
        # What Dask's scheduler weighs when it places the tasks that read a
        # shard: its arrays (object.__sizeof__ alone made a shard look
        # smaller than the weights, and both shards of a fit could follow the
        # weights to one worker and run one after the other).
        c = self.corpus
        arrays = () if c is None else (c.seq_ptr, c.tok_ptr, c.attr_ids, c.values, c.labels)
        return object.__sizeof__(self) + sum(a.nbytes for a in arrays if a is not None)

    def __getstate__(self):
        # Moving a shard moves its arrays; the objective is rebuilt where it lands.
        return {"corpus": self.corpus, "structure": self._structure}

    def __setstate__(self, state) -> None:
        self.corpus, self._structure, self._objective = state["corpus"], state["structure"], None

    def model(self) -> LinearChain:
        return _model_of(self._structure)

    def objective(self, n_jobs: int) -> CRFObjective:
        if self._objective is None:
            self._objective = CRFObjective(self.model(), self.corpus, 0.0, n_jobs)
        return self._objective


def _pack_part(pair, state, classes, unknown: bool, tags=None, first: int = 0) -> _Shard:
    """Pack one partition with the merged featurizer and labels (once, on its worker).

    With ``unknown`` (a learner that trains on partially labelled
    sequences), a None label becomes -1, as in ``fit``.  With ``tags`` (the
    tag folds), the ``:tags`` cells get the jackknifed classes ``fit`` gives
    the partition's sentences (it starts at sentence ``first``).
    """
    X_part, y_part = pair
    if not X_part:
        return _Shard(None)
    featurizer = featurizer_from_state(*state)
    corpus = featurizer.transform_part(X_part, tags[1], first) if tags is not None else \
        featurizer.transform(X_part)
    label_ids = {name: i for i, name in enumerate(classes)}
    labels = _labels.pack_labels(y_part, corpus.seq_ptr, label_ids, False, unknown)
    return _Shard(Sequences(corpus.seq_ptr, corpus.tok_ptr, corpus.attr_ids, corpus.values,
                            labels))


def _state_pairs(shard: _Shard, n_attrs: int, n_labels: int) -> np.ndarray:
    """The shard's (attribute, label) pairs as sorted codes ``attr * L + label``."""
    c = shard.corpus
    if c is None:
        return np.zeros(0, dtype=np.int64)
    ptr, labels = _chain.build_state_index(c.tok_ptr, c.attr_ids, c.labels, n_attrs, n_labels)
    attrs = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    return attrs * n_labels + labels


def _model_of(structure) -> LinearChain:
    n_labels, attr_ptr, attr_labels, order, n_params = structure
    return LinearChain(n_labels, attr_ptr, attr_labels, np.zeros(n_params), order=order)


def _attach(shard: _Shard, structure) -> _Shard:
    out = _Shard(shard.corpus)
    out._structure = structure
    return out


def _shard_sizes(shard: _Shard) -> tuple[int, int]:
    c = shard.corpus
    return (0, 0) if c is None else (c.n_sequences, c.n_tokens)


class _Setup:
    """What every distributed fit prepares: featurizer, labels, shards, model."""

    def __init__(self, est: ChainEstimator, client: Client, X, y, npartitions) -> None:
        check_workers(client)
        featurizer = est._new_featurizer()
        if not implements(featurizer, PartsFeaturizer):
            raise InputError(f"{type(featurizer).__name__} has no fit_part and merge: "
                             "cseq.distributed needs them to learn the attributes by parts")
        pairs = _partitions(client, X, y, npartitions)
        config = featurizer.get_config()
        tags, firsts = None, [0] * len(pairs)
        if getattr(featurizer, "needs_labels", False):
            # Templates with ':tags': the tag dictionary and the jackknifed
            # classes by a map-reduce of label counts per word and fold (a
            # sentence's fold is its index in the whole corpus mod FOLDS).
            sizes = client.gather([client.submit(_n_sequences, p, pure=False) for p in pairs])
            firsts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
            counts = client.gather([client.submit(_tag_counts_part, p, config, a, pure=False)
                                    for p, a in zip(pairs, firsts)])
            tags = _share(client, featurizer.tag_folds([c for c in counts if c is not None]))
        infos = client.gather([client.submit(_learn_part, p, config, tags, a, pure=False)
                               for p, a in zip(pairs, firsts)])
        n_sequences = sum(i["n_sequences"] for i in infos)
        if n_sequences == 0:
            raise InputError("cannot fit on an empty corpus (X has no sequences)")
        parts = [_featurizer_from_part(i) for i in infos if i["part"] is not None]
        self.featurizer = featurizer.merge(parts)
        self.classes = sorted(set().union(*(i["labels"] for i in infos)))
        if not self.classes:
            raise InputError("cannot fit on a corpus without tokens (every sequence is empty)")
        state = _share(client, self.featurizer.get_state())
        unknown = bool(est._partial_labels)
        # Each shard is packed on its own worker thread (another one if that
        # worker is gone) and stays there.
        shards = [client.submit(_pack_part, p, state, self.classes, unknown, tags, a,
                                pure=False, workers=where or None, allow_other_workers=True)
                  for p, a, where in zip(pairs, firsts, _placement(client, len(pairs)))]
        del pairs  # the raw partitions go; each shard keeps its lineage to its source
        L, n_attrs = len(self.classes), self.featurizer.n_attributes
        order = est._chain_order()
        if est.all_states:
            attr_ptr = np.arange(n_attrs + 1, dtype=np.int64) * L
            attr_labels = np.tile(np.arange(L, dtype=np.int32), n_attrs)
        else:
            codes = client.gather([client.submit(_state_pairs, s, n_attrs, L, pure=False)
                                   for s in shards])
            codes = np.unique(np.concatenate(codes)) if codes else np.zeros(0, np.int64)
            attr_ptr = np.searchsorted(codes // L, np.arange(n_attrs + 1)).astype(np.int64)
            attr_labels = (codes % L).astype(np.int32)
        chain = est._model_class  # the learner's model class reads the weights
        model = chain(L, attr_ptr, attr_labels,
                      np.zeros(chain._layout_of(len(attr_labels), L, order)["n_params"]),
                      order=order)
        self.model = model
        structure = _share(client, (L, attr_ptr, attr_labels, order, len(model.params)))
        self.shards = [client.submit(_attach, s, structure, pure=False) for s in shards]
        sizes = client.gather([client.submit(_shard_sizes, s, pure=False) for s in self.shards])
        self.n_sequences = sum(s for s, _ in sizes)
        self.n_tokens = sum(t for _, t in sizes)
        if self.n_tokens == 0:
            raise InputError("cannot fit on a corpus without tokens (every sequence is empty)")


def _add(a, b):
    """Sum two ``(value, gradient-or-None, ...)`` results (a None gradient is zero)."""
    if a[1] is None:
        return b
    if b[1] is None:
        return a
    grad = a[1]
    grad += b[1]
    return (a[0] + b[0], grad) + tuple(x + y for x, y in zip(a[2:], b[2:]))


def _tree_sum(client: Client, futures: list):
    """The sum of the results of ``futures`` by pairwise tasks on the workers, gathered."""
    level = list(futures)
    while len(level) > 1:
        nxt = [client.submit(_add, level[i], level[i + 1], pure=False)
               for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return _gather(client, [level[0]])[0]
