"""Running a fitted model over a user's ``X``, block by block, in threads.

Every reader of a fitted estimator (``predict``, ``score``, the marginals,
the probability methods, :mod:`cseq.decoding`, :mod:`cseq.probability`)
featurizes ``X`` and hands consecutive blocks of it to a ``work`` function
through :func:`map_blocks`; :func:`map_decoded` adds each block's decoded
label ids.  They read only the snapshot they are given
(:class:`cseq.fitted.Fitted`), never the estimator, so that a
``partial_fit`` committing meanwhile changes nothing of the result.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from cseq.chain import _labels
from cseq.exceptions import CSeqError
from cseq.chain.fitted import Fitted
from cseq._core.threads import resolve_n_jobs
from cseq.chain.sequences import Sequences

__all__ = ["gold_ids", "map_blocks", "map_decoded", "split"]

# Blocks of sequences per thread in predict/score: enough that a thread's
# reading of the user's lists overlaps the others' decoding, few enough that
# per-block costs stay small.
_BLOCKS_PER_THREAD = 8
# Most memory the summed emission rows of the word memo may take
# (_word_rows); beyond, tagging looks every attribute up per token.
_WORD_ROWS_BYTES = 1 << 27
# Most distinct words a call may have for its word rows to go through the
# thread's cache (_row_cache): a larger input sums each of its words once
# anyway, and would only churn the cache.
_CACHED_WORDS = 512
# Snapshots whose caches one thread keeps at most (a thread tagging with
# more models in turn starts its caches afresh).
_CACHES_PER_THREAD = 8
_thread_caches = threading.local()


def map_decoded(fitted: Fitted, X: Any, n_jobs: int, work: Callable) -> list:
    """``[work(corpus, block, ids), ...]``: :func:`map_blocks` with each block's labels.

    ``ids`` are the model's label ids for ``corpus`` (``model.decode``).
    For a model that takes word rows (``decodes_word_rows``: Viterbi on a
    linear chain) and a featurizer with word memos (``transform_chunks``),
    the emissions of the attributes that read one word come from one summed
    row per word and window offset, computed once for all of ``X``
    (``LinearChain.word_rows``), and ``corpus`` lacks those attributes.  The
    labels are those of the plain path up to the order of floating-point
    additions.
    """
    model = fitted.model

    def decoded(corpus, block, rows=None):
        ids = model.decode(corpus) if rows is None else model.decode(corpus, word_rows=rows)
        return work(corpus, block, ids)
    return map_blocks(fitted, X, n_jobs, decoded, word_rows=model.decodes_word_rows)


def _word_rows(fitted: Fitted, chunks) -> tuple[np.ndarray, Any] | None:
    """``(rows, groups)`` for ``chunks`` (``LinearChain.word_rows``), or None.

    None when the featurizer memoizes nothing, or when the rows would
    take more than ``_WORD_ROWS_BYTES`` (many distinct words times many
    labels): then every attribute is looked up per token, as before.  The
    words of a small input (one sentence) go through this thread's cache
    for ``fitted`` (:func:`_row_cache`).
    """
    memo = chunks.memo_attributes()
    if memo is None:
        return None
    model = fitted.model
    ids, group, groups = memo
    if len(groups) * len(ids) * model.n_labels * 8 > _WORD_ROWS_BYTES:
        return None
    cache = _row_cache(fitted, group, len(groups)) if len(ids) <= _CACHED_WORDS else None
    return model.word_rows(ids, group, len(groups), cache), groups


def _row_cache(fitted: Fitted, group: np.ndarray, n_groups: int):
    """This thread's word-row cache (``LinearChain.word_row_cache``) for the snapshot ``fitted``.

    Kept per snapshot (weakly: it goes with the snapshot), so a
    ``partial_fit`` commit, which publishes a new snapshot, starts a new
    cache and no cache ever mixes two models; per thread, so that no
    cache is written by two threads at once.
    """
    caches = getattr(_thread_caches, "by_snapshot", None)
    if caches is None:
        caches = _thread_caches.by_snapshot = weakref.WeakKeyDictionary()
    cache = caches.get(fitted)
    if cache is None:
        if len(caches) >= _CACHES_PER_THREAD:
            caches.clear()
        cache = caches[fitted] = fitted.model.word_row_cache(group, n_groups)
    return cache


def map_blocks(fitted: Fitted, X: Any, n_jobs: int, work: Callable, *,
               word_rows: bool = False) -> list:
    """``[work(corpus, block), ...]`` over consecutive blocks of sequences of ``X``.

    ``fitted`` is the snapshot the caller took (``_check_fitted``): ``X`` is
    featurized by its featurizer, and ``work`` must read its model and
    labels, never the estimator's.  ``corpus`` is the featurized
    ``X[block]`` (``block`` a slice), or all of ``X`` when ``block`` is
    None.  With one thread all of ``X`` is one block.  With more, the blocks
    go to ``n_jobs`` Python threads: featurizing a block holds the GIL only
    while it reads the user's lists and then looks attributes up and
    decodes without it, so one thread's reading overlaps the others' lookups
    and decoding.  Results do not depend on the blocks.  An error in a block
    is raised again from one pass over all of ``X``, so its indices refer to
    ``X``.
    """
    n_jobs = resolve_n_jobs(n_jobs)
    transform = fitted.featurizer.transform
    if hasattr(fitted.featurizer, "transform_chunks"):
        return _map_chunks(fitted, X, n_jobs, work, word_rows)
    n_blocks = 1
    if n_jobs > 1 and (type(X) is list or type(X) is tuple):
        n_blocks = min(len(X), _BLOCKS_PER_THREAD * n_jobs)
    if n_blocks <= 1:
        return [work(transform(X), None)]
    bounds = np.linspace(0, len(X), n_blocks + 1).astype(np.int64).tolist()

    def run(k: int):
        block = slice(bounds[k], bounds[k + 1])
        return work(transform(X[block]), block)
    try:
        with ThreadPoolExecutor(min(n_jobs, n_blocks)) as pool:
            return list(pool.map(run, range(n_blocks)))
    except CSeqError:
        return [work(transform(X), None)]


def _map_chunks(fitted: Fitted, X: Any, n_jobs: int, work: Callable,
                word_rows: bool = False) -> list:
    """:func:`map_blocks` for a featurizer that interns ``X`` once (``transform_chunks``).

    The word-level work is done once for all of ``X``; the chunks are then
    looked up and given to ``work`` in turn (their arrays stay in the
    cache), or by ``n_jobs`` Python threads, which look up and decode
    without the GIL.  With ``word_rows`` (see :func:`map_decoded`),
    ``work(corpus, block, (rows, words, groups))`` gets chunks without their
    memo attributes and the word rows that stand for them, when there are
    any.
    """
    chunks = fitted.featurizer.transform_chunks(
        X, n_jobs=n_jobs, max_tokens=None,
        min_chunks=_BLOCKS_PER_THREAD * n_jobs if n_jobs > 1 else 1)
    rows = _word_rows(fitted, chunks) if word_rows else None

    def run(k: int):
        if rows is None:
            return work(chunks.sequences(k), chunks.block(k))
        return work(chunks.sequences(k, without_memo=True), chunks.block(k),
                    (rows[0], chunks.words(k), rows[1]))
    try:
        if n_jobs == 1 or len(chunks) == 1:
            return [run(k) for k in range(len(chunks))]
        with ThreadPoolExecutor(min(n_jobs, len(chunks))) as pool:
            return list(pool.map(run, range(len(chunks))))
    except CSeqError:
        if len(chunks) == 1:
            raise
        return [work(fitted.featurizer.transform(X), None)]


def split(flat: np.ndarray, corpus: Sequences) -> list[np.ndarray]:
    """``flat`` (one row per token of ``corpus``) cut into one array per sequence."""
    bounds = corpus.seq_ptr
    return [flat[bounds[s]:bounds[s + 1]] for s in range(corpus.n_sequences)]


def gold_ids(y: Any, corpus: Sequences, label_ids: dict[str, int]) -> np.ndarray:
    """The label ids of ``y`` for the tokens of ``corpus``, -1 for labels the model does not know."""
    extended = dict(label_ids)
    ids = _labels.pack_labels(y, corpus.seq_ptr, extended, True)
    ids[ids >= len(label_ids)] = -1
    return ids
