"""Tagging off the event loop, micro-batched and cut into bounded pieces.

Requests become jobs in one queue; worker threads take, at a time, a *batch*:
sentences of the jobs at the head of the queue that ask for the same options
and are tagged by the same model, up to ``max_batch_tokens`` tokens, and tag
them in one call.  No job waits for a timer, so one client alone gets its
answer as soon as it is tagged.  A job larger than the budget is cut between
sentences: its first piece is tagged, and its rest goes behind the jobs that
were waiting meanwhile, so a small request queued behind a large one waits for
at most one batch per worker, never for the whole large request.

A job reads the service's model once, when its first piece is taken, and
every piece of it is tagged by that model: an answer comes from one model
whole, even when a reload lands between two of its pieces.  The answers are
those of tagging each request alone (a sentence's labels do not depend on the
other sentences of the call); a request the model refuses inside a batch is
tried alone, so it fails alone.
"""

from __future__ import annotations

import asyncio
import collections
import json
import sys
import threading
import traceback
from typing import Any, Protocol

from cseq._tagging import check_tag_options
from cseq.exceptions import CSeqError
from cseq.serve.requests import BadRequest, TagRequest, check_size, check_widths

__all__ = ["Job", "Tagger", "encode", "error_body"]


def encode(obj: Any) -> bytes:
    """JSON as ASCII with \\u escapes: valid for any string a request brought, even a
    lone surrogate (which UTF-8 cannot encode) in a span's text."""
    return json.dumps(obj).encode("ascii")


def error_body(message: str) -> bytes:
    return encode({"error": message})


class _Holder(Protocol):
    model: Any
    limits: dict[str, Any]


class Job:
    """One ``POST /tag`` request in the queue: its sentences, and their answers as the
    pieces of it are tagged."""

    __slots__ = ("request", "future", "loop", "loaded", "cursor", "records", "left",
                 "failed")

    def __init__(self, request: TagRequest, future: asyncio.Future, loop: Any) -> None:
        self.request = request
        self.future = future
        self.loop = loop
        self.loaded: Any = None     # the model that tags every piece (set at the first)
        self.cursor = 0             # the first sentence not yet taken
        self.records: list[Any] = [None] * len(request.X)
        self.left = len(request.X)  # sentences taken but not yet answered, or not taken
        self.failed = False

    def deliver(self, status: int, body: bytes) -> None:
        self.loop.call_soon_threadsafe(_deliver, self.future, (status, body))


def _deliver(future: asyncio.Future, result: tuple[int, bytes]) -> None:
    if not future.done():  # the client may have gone
        future.set_result(result)


class Tagger:
    """Worker threads tagging the queued jobs in batches (see the module's text).

    ``holder.model`` is the :class:`~cseq.serve.app.Loaded` model a job reads when
    its first piece is taken; ``holder.limits`` has ``max_request_tokens`` and
    ``max_request_cost``, checked then against that model.  ``on_batch(sentences,
    tokens)``, if given, is told each batch's size.
    """

    def __init__(self, holder: _Holder, workers: int, max_batch_tokens: int,
                 on_batch: Any = None) -> None:
        self._holder = holder
        self._max_tokens = max_batch_tokens
        self._on_batch = on_batch
        self._jobs: collections.deque[Job] = collections.deque()
        self._ready = threading.Condition()
        self._lock = threading.Lock()  # a job's records and count, across workers
        self._closing = False
        self._threads = [threading.Thread(target=self._work, name=f"cseq-serve-{i}",
                                          daemon=True) for i in range(workers)]
        for t in self._threads:
            t.start()

    def submit(self, job: Job) -> None:
        with self._ready:
            self._jobs.append(job)
            self._ready.notify()

    def close(self) -> None:
        """Tag what is queued, then stop the threads."""
        with self._ready:
            self._closing = True
            self._ready.notify_all()
        for t in self._threads:
            t.join()

    # -- taking a batch

    def _pin(self, job: Job) -> bool:
        """Give a job its model and check it against that model; False (and the
        job answered) when it is refused."""
        loaded = self._holder.model
        r = job.request
        try:
            check_tag_options(loaded.est, r.key[0], r.key[1], "")
            check_widths(loaded.columns, r.X, r.single)
            check_size(r, loaded.n_labels, loaded.order, self._holder.limits)
        except BadRequest as exc:
            job.deliver(exc.status, error_body(str(exc)))
            return False
        except CSeqError as exc:
            job.deliver(400, error_body(str(exc)))
            return False
        job.loaded = loaded
        return True

    def _take(self) -> list[tuple[Job, int, int]] | None:
        """The next batch: (job, first sentence, end) pieces; None once closed and empty."""
        with self._ready:
            while True:
                while not self._jobs and not self._closing:
                    self._ready.wait()
                if not self._jobs:
                    return None
                if self._jobs[0].cursor and len(self._jobs) > 1:
                    # A job already under way yields to those that waited meanwhile.
                    self._jobs.rotate(-1)
                if self._jobs[0].loaded is not None or self._pin(self._jobs[0]):
                    break
                self._jobs.popleft()
            head = self._jobs[0]
            key, loaded = head.request.key, head.loaded
            batch: list[tuple[Job, int, int]] = []
            n = 0
            while self._jobs:
                job = self._jobs[0]
                if job.request.key != key:
                    break
                if job.loaded is None:
                    if loaded is not self._holder.model:
                        break  # it would be tagged by the new model: another batch
                    if not self._pin(job):
                        self._jobs.popleft()
                        continue
                if job.loaded is not loaded:
                    break
                X, start = job.request.X, job.cursor
                stop = start
                while stop < len(X) and (n == 0 or n + len(X[stop]) <= self._max_tokens):
                    n += len(X[stop])
                    stop += 1
                if stop == start:
                    break  # its next sentence does not fit: this batch is full
                job.cursor = stop
                batch.append((job, start, stop))
                if stop < len(X):
                    break  # the rest of it is taken later
                self._jobs.popleft()
            return batch

    # -- tagging it

    def _work(self) -> None:
        while (batch := self._take()) is not None:
            try:
                self._tag_batch(batch)
            except Exception:  # noqa: BLE001 - a worker must outlive any one batch
                traceback.print_exc(file=sys.stderr)
                for job, _, _ in batch:
                    self._fail(job, 500, "internal error: see the server's log")

    def _fail(self, job: Job, status: int, message: str) -> None:
        with self._lock:
            if job.failed:
                return
            job.failed = True
        job.deliver(status, error_body(message))

    def _tag_batch(self, batch: list[tuple[Job, int, int]]) -> None:
        batch = [piece for piece in batch if not piece[0].failed]
        if not batch:
            return
        job0 = batch[0][0]
        sentences = [x for job, a, b in batch for x in job.request.X[a:b]]
        if self._on_batch is not None:
            self._on_batch(len(sentences), sum(map(len, sentences)))
        try:
            records = tag_records(job0.loaded.est, job0.request.key, sentences)
        except CSeqError as exc:
            if len(batch) == 1:
                self._fail(job0, 400, str(exc))
                return
            for piece in batch:  # alone, the request at fault gets the error, no other
                self._tag_batch([piece])
            return
        k = 0
        for job, a, b in batch:
            with self._lock:
                job.records[a:b] = records[k:k + b - a]
                job.left -= b - a
                done = job.left == 0 and not job.failed
            k += b - a
            if done:
                r = job.request
                job.deliver(200, encode(job.records[0] if r.single
                                        else {"sentences": job.records}))


def tag_records(est: Any, key: tuple[bool, int | None, str | None],
                X: list[list[tuple[str, ...]]]) -> list[dict[str, Any]]:
    """One record per sentence, as ``cseq tag --output-format jsonl`` writes it
    without ``tokens`` (the client has them)."""
    from cseq.io._streams import json_record, nbest_record
    marginals, nbest, constraints = key
    if marginals:
        from cseq.chain.probability import annotate
        out = []
        for x, t in zip(X, annotate(est, X, spans=True, constraints=constraints)):
            record = json_record([row[0] for row in x], t.labels, t.confidence, t)
            del record["tokens"]
            out.append(record)
        return out
    if nbest is not None:
        out = []
        for x, found in zip(X, est.predict_nbest(X, k=nbest, constraints=constraints)):
            record = nbest_record([row[0] for row in x], found)
            del record["tokens"]
            out.append(record)
        return out
    return [{"labels": labels} for labels in est.predict(X, constraints=constraints)]
