"""``cseq serve``: a tagging service over HTTP/1.1, JSON in and out.

An application on the public estimator API (:func:`cseq.load`, ``predict``,
``predict_nbest``, :func:`cseq.probability.annotate` as ``cseq tag
--marginals`` uses it, constraints), with the command line's input handling
(:mod:`cseq._tagging`, :mod:`cseq.io._streams`).  The endpoints, limits and figures are
in ``docs/production.md``.

Design, and why:

- **Standard library only.**  An asyncio server speaks a strict subset of
  HTTP/1.1 (``Content-Length`` bodies, keep-alive, pipelining, ``Expect:
  100-continue``); every connection is a coroutine, so 64 keep-alive clients
  cost 64 small objects rather than 64 threads, and ``pip install
  cseq-labeling`` gains no dependency.  Put a reverse proxy (nginx, a load
  balancer) in front for TLS and the open internet.
- **Tagging off the event loop, micro-batched.**  Requests become jobs in one
  bounded queue; ``workers`` threads take, at a time, the jobs with the same
  options queued behind the first (up to ``max_batch_tokens`` tokens) and tag
  them in one call.  A call has a fixed cost of hundreds of microseconds on a
  template model, so batching what queued while the previous call ran gives
  several times the throughput under load and costs nothing alone: no job
  waits for a timer, so a request waits at most for the batch being tagged
  and its own.  The answers are those of tagging each request alone (a
  sentence's labels do not depend on the others in the call).
- **One model reference.**  A batch reads :attr:`Service.model` once, so it
  is tagged by one model whole; a reload loads the file fully in another
  thread, then assigns the reference; a failed load keeps the old model.
- **Bounded.**  Request bodies (``max_bytes``), request heads, the queue of
  jobs (``max_queue``: more gets 503 at once), open connections
  (``max_connections``) and the time a client has to send a request
  (``timeout``); bad requests get a 4xx JSON message and touch nobody else.
"""

from __future__ import annotations

import asyncio
import collections
import json
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

from cseq._tagging import check_tag_options, load_fitted, model_columns
from cseq.exceptions import CSeqError

__all__ = ["Service", "serve", "SERVE_DEFAULTS"]

#: Limits of ``cseq serve`` (the command line's options override them).
SERVE_DEFAULTS: dict[str, Any] = {
    "max_bytes": 1 << 20,        # request body
    "max_queue": 256,            # requests queued or being tagged
    "max_connections": 512,      # open connections
    "workers": 1,                # tagging threads (docs/production.md: why one)
    "max_batch_tokens": 1000,    # tokens tagged in one call
    "timeout": 30.0,             # seconds to send a whole request; idle keep-alive
}

#: The largest ``nbest`` a request may ask: the n-best search costs O(k) per label.
MAX_NBEST = 100
#: The largest request head (request line and headers).
MAX_HEAD_BYTES = 32 * 1024
_MAX_HEADERS = 100
#: Bytes of answers a connection may hold unread before it waits for the client.
_WRITE_BUFFER = 256 * 1024
#: Seconds an idle connection stays open once the server stops (see ``_stop_idle``).
_DRAIN_GRACE = 0.5
_CONSTRAINTS = ("bio", "iob2", "iob1", "bioes")
_OPTIONS = ("marginals", "nbest", "constraints")
_FIELDS = ("tokens", "sentences") + _OPTIONS


class _BadRequest(Exception):
    """A request answered with ``status`` and ``message`` (JSON ``{"error": ...}``)."""

    def __init__(self, status: int, message: str, *, close: bool = False,
                 headers: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.close = close  # the rest of the request was not read: the connection ends
        self.headers = headers


@dataclass(frozen=True)
class Loaded:
    """A model as the service holds it: the estimator and what ``/health`` says of it."""

    est: Any
    info: dict[str, Any]
    #: :func:`cseq._tagging.model_columns` of the model: columns it was trained on,
    #: fewest it reads.
    columns: tuple[int | None, int]


def load_model(path: str) -> Loaded:
    """Load ``path`` fully (``cseq tag``'s checks); raises CSeqError or OSError."""
    from cseq.registry import command_of
    t = time.perf_counter()
    est = load_fitted(path)
    seconds = time.perf_counter() - t
    command = command_of(est)
    info = {"file": path, "learner": command.name if command is not None else None,
            "estimator": type(est).__name__,
            "labels": list(est.classes_),
            "loaded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_seconds": round(seconds, 4)}
    return Loaded(est, info, model_columns(est))


# ----------------------------------------------------------------------------
# requests


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "?")


def _sentence(value: Any, where: str) -> list[tuple[str, ...]]:
    """One sentence of a request as ``cseq tag`` gives it to the model: a token is a
    string (the word, one column) or a list of column strings."""
    if not isinstance(value, list):
        raise _BadRequest(400, f"{where} must be a list of tokens, not {_json_type(value)}")
    rows: list[tuple[str, ...]] = []
    for i, tok in enumerate(value):
        if type(tok) is str:
            rows.append((tok,))
        elif type(tok) is list and all(type(c) is str for c in tok):
            rows.append(tuple(tok))
        else:
            raise _BadRequest(400, f"{where}, token {i}: a token is a string or a list of "
                              f"column strings, not {_json_type(tok)}"
                              + (" holding other values" if type(tok) is list else ""))
    return rows


@dataclass(frozen=True)
class TagRequest:
    """A parsed ``POST /tag``: the options (the batching key), sentences, one or many."""

    key: tuple[bool, int | None, str | None]
    X: list[list[tuple[str, ...]]]
    single: bool

    @property
    def n_tokens(self) -> int:
        return sum(map(len, self.X))


def parse_tag_request(body: bytes) -> TagRequest:
    """Check a ``POST /tag`` body; a bad one raises ``_BadRequest`` naming what is wrong."""
    if not body.strip():
        raise _BadRequest(400, "the request has no body: send a JSON object with 'tokens' "
                          "(one sentence) or 'sentences' (a list of them)")
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise _BadRequest(400, f"malformed JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise _BadRequest(400, f"the body must be a JSON object, not {_json_type(doc)}")
    unknown = [k for k in doc if k not in _FIELDS]
    if unknown:
        raise _BadRequest(400, f"unknown field(s) {', '.join(map(repr, unknown))}; the fields "
                          f"are {', '.join(_FIELDS)}")
    if ("tokens" in doc) == ("sentences" in doc):
        raise _BadRequest(400, "give either 'tokens' (one sentence) or 'sentences' (a list "
                          "of them)")
    marginals = doc.get("marginals", False)
    if type(marginals) is not bool:
        raise _BadRequest(400, f"'marginals' must be true or false, not {_json_type(marginals)}")
    nbest = doc.get("nbest")
    if nbest is not None and (type(nbest) is not int or not 1 <= nbest <= MAX_NBEST):
        raise _BadRequest(400, f"'nbest' must be an integer from 1 to {MAX_NBEST}, got "
                          f"{json.dumps(nbest)}")
    constraints = doc.get("constraints")
    if constraints is not None and constraints not in _CONSTRAINTS:
        raise _BadRequest(400, f"'constraints' must be one of {', '.join(_CONSTRAINTS)} or "
                          f"null, got {json.dumps(constraints)}")
    if "tokens" in doc:
        X = [_sentence(doc["tokens"], "'tokens'")]
    else:
        sentences = doc["sentences"]
        if not isinstance(sentences, list):
            raise _BadRequest(400, f"'sentences' must be a list of sentences, not "
                              f"{_json_type(sentences)}")
        X = [_sentence(s, f"sentence {i}") for i, s in enumerate(sentences)]
    return TagRequest((marginals, nbest, constraints), X, "tokens" in doc)


def _check_widths(columns: tuple[int | None, int], X: list[list[tuple[str, ...]]],
                  single: bool) -> None:
    """Refuse tokens whose number of columns the model does not read (``cseq tag``'s
    column check, for every token, since a request's tokens need not agree)."""
    trained, need = columns
    for s, rows in enumerate(X):
        for i, row in enumerate(rows):
            width = len(row)
            if (trained is None or width == trained) and width >= need:
                continue
            where = f"token {i}" if single else f"sentence {s}, token {i}"
            wanted = (f"{trained} column(s)" if trained is not None
                      else f"at least {need} column(s)")
            hint = "a string (the word)" if wanted == "1 column(s)" else "a list of columns"
            raise _BadRequest(400, f"{where} has {width} column(s); the model reads {wanted}: "
                              f"send each token as {hint}")


# ----------------------------------------------------------------------------
# tagging: a bounded queue of jobs, micro-batched by worker threads


class _Job:
    __slots__ = ("request", "future", "loop")

    def __init__(self, request: TagRequest, future: asyncio.Future, loop: Any) -> None:
        self.request = request
        self.future = future
        self.loop = loop


def _deliver(future: asyncio.Future, result: tuple[int, bytes]) -> None:
    if not future.done():  # the client may have gone
        future.set_result(result)


def _encode(obj: Any) -> bytes:
    # ASCII with \u escapes: valid JSON for any string a request brought, even a
    # lone surrogate (which UTF-8 cannot encode) in a span's text.
    return json.dumps(obj).encode("ascii")


def _error(message: str) -> bytes:
    return _encode({"error": message})


class _Tagger:
    """Worker threads tagging the queued jobs, those with one set of options together."""

    def __init__(self, service: Service, workers: int, max_batch_tokens: int) -> None:
        self._service = service
        self._max_tokens = max_batch_tokens
        self._jobs: collections.deque[_Job] = collections.deque()
        self._ready = threading.Condition()
        self._closing = False
        self._threads = [threading.Thread(target=self._work, name=f"cseq-serve-{i}")
                         for i in range(workers)]
        for t in self._threads:
            t.start()

    def submit(self, job: _Job) -> None:
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

    def _take(self) -> list[_Job] | None:
        with self._ready:
            while not self._jobs and not self._closing:
                self._ready.wait()
            if not self._jobs:
                return None
            batch = [self._jobs.popleft()]
            key, n = batch[0].request.key, batch[0].request.n_tokens
            # FIFO: the jobs right behind the first, while they share its options.
            while self._jobs and self._jobs[0].request.key == key:
                more = self._jobs[0].request.n_tokens
                if n + more > self._max_tokens:
                    break
                batch.append(self._jobs.popleft())
                n += more
            return batch

    def _work(self) -> None:
        while (batch := self._take()) is not None:
            try:
                self._tag_batch(batch)
            except Exception:  # noqa: BLE001 - a worker must outlive any one batch
                traceback.print_exc(file=sys.stderr)
                for job in batch:
                    job.loop.call_soon_threadsafe(
                        _deliver, job.future, (500, _error("internal error: see the "
                                                           "server's log")))

    def _tag_batch(self, batch: list[_Job]) -> None:
        loaded = self._service.model  # read once: the whole batch sees one model
        ready = []
        for job in batch:
            r = job.request
            try:
                check_tag_options(loaded.est, r.key[0], r.key[1], "")
                _check_widths(loaded.columns, r.X, r.single)
            except (_BadRequest, CSeqError) as exc:
                job.loop.call_soon_threadsafe(_deliver, job.future, (400, _error(str(exc))))
                continue
            ready.append(job)
        if not ready:
            return
        try:
            records = _tag(loaded.est, ready[0].request.key,
                           [x for job in ready for x in job.request.X])
        except CSeqError as exc:
            if len(ready) == 1:
                ready[0].loop.call_soon_threadsafe(_deliver, ready[0].future,
                                                   (400, _error(str(exc))))
                return
            for job in ready:  # alone, the request at fault gets the error, no other
                self._tag_batch([job])
            return
        k = 0
        for job in ready:
            n = len(job.request.X)
            mine = records[k:k + n]
            k += n
            body = _encode(mine[0] if job.request.single else {"sentences": mine})
            job.loop.call_soon_threadsafe(_deliver, job.future, (200, body))


def _tag(est: Any, key: tuple[bool, int | None, str | None],
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


# ----------------------------------------------------------------------------
# HTTP


_date_cache: tuple[int, str] = (0, "")


def _date() -> str:
    global _date_cache
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache = (now, formatdate(now, usegmt=True))
    return _date_cache[1]


def _response(status: int, body: bytes, *, close: bool, keep_alive_10: bool = False,
              headers: tuple[str, ...] = (), head_only: bool = False) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", f"Date: {_date()}",
             "Content-Type: application/json", f"Content-Length: {len(body)}", *headers]
    if close:
        lines.append("Connection: close")
    elif keep_alive_10:
        lines.append("Connection: keep-alive")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body)


@dataclass
class _Head:
    method: str
    target: str
    keep_alive: bool
    http10: bool
    length: int
    expect_continue: bool


def _parse_head(head: bytes, max_bytes: int) -> _Head:
    """The request line and headers; anything unusual is refused, never guessed."""
    try:
        text = head.decode("latin-1")
        request_line, *header_lines = text[:-4].split("\r\n")
        method, target, version = request_line.split(" ")
    except ValueError:
        raise _BadRequest(400, "malformed request line", close=True) from None
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise _BadRequest(505, f"HTTP version {version!r} is not supported (HTTP/1.1 is)",
                          close=True)
    if len(header_lines) > _MAX_HEADERS:
        raise _BadRequest(431, f"more than {_MAX_HEADERS} headers", close=True)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or line[0] in " \t":
            raise _BadRequest(400, f"malformed header line {line[:80]!r}", close=True)
        name = name.lower()
        value = value.strip()
        if name in headers and name in ("content-length", "transfer-encoding", "host"):
            if headers[name] != value:
                raise _BadRequest(400, f"conflicting {name} headers", close=True)
        headers[name] = value
    if "transfer-encoding" in headers:
        raise _BadRequest(411, "chunked request bodies are not supported: send "
                          "Content-Length", close=True)
    length_text = headers.get("content-length", "0")
    if not length_text.isdigit() or not length_text.isascii():
        raise _BadRequest(400, f"malformed Content-Length {length_text[:40]!r}", close=True)
    length = int(length_text)
    if length > max_bytes:
        raise _BadRequest(413, f"the request body has {length} bytes; the limit is "
                          f"{max_bytes} (--max-bytes)", close=True)
    tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
    http10 = version == "HTTP/1.0"
    keep = "keep-alive" in tokens if http10 else "close" not in tokens
    expect = headers.get("expect", "").lower()
    if expect and expect != "100-continue":
        raise _BadRequest(417, f"unsupported Expect: {expect[:40]!r}", close=True)
    return _Head(method, target, keep, http10, length, expect == "100-continue")


class _Connection:
    __slots__ = ("writer", "busy", "task")

    def __init__(self, writer: asyncio.StreamWriter, task: asyncio.Task | None) -> None:
        self.writer = writer
        self.busy = False
        self.task = task


class Service:
    """The service: the model, the tagging queue, the HTTP endpoints.

    Parameters
    ----------
    path : str
        The model file; ``POST /reload`` and SIGHUP load it again (never
        another path).
    limits
        Any of :data:`SERVE_DEFAULTS`.
    log : callable
        Where messages go (a line each; stderr by default).
    """

    def __init__(self, path: str, *, log: Callable[[str], None] | None = None,
                 **limits: Any) -> None:
        unknown = set(limits) - set(SERVE_DEFAULTS)
        if unknown:
            raise TypeError(f"unknown limits: {', '.join(sorted(unknown))}")
        self.path = path
        self.limits = {**SERVE_DEFAULTS, **limits}
        self.log = log or (lambda line: print(f"cseq serve: {line}", file=sys.stderr,
                                              flush=True))
        #: The model every batch reads once; replaced whole by a reload.
        self.model = load_model(path)
        self.reloads = 0
        self.last_reload_error: str | None = None
        self.pending = 0
        self.draining = False
        self._connections: set[_Connection] = set()
        self._reload_lock: asyncio.Lock | None = None
        self._tagger: _Tagger | None = None
        self._routes: dict[str, dict[str, Callable[[bytes], Any]]] = {
            "/tag": {"POST": self._tag},
            "/health": {"GET": self._health},
            "/reload": {"POST": self._reload_endpoint},
        }

    # -- endpoints

    async def _tag(self, body: bytes) -> tuple[int, bytes, tuple[str, ...]]:
        request = parse_tag_request(body)
        if not request.X:
            return 200, _encode({"sentences": []}), ()
        if self.pending >= self.limits["max_queue"]:
            return 503, _error(f"busy: {self.pending} requests queued (--max-queue); retry "
                               "later"), ("Retry-After: 1",)
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        assert self._tagger is not None
        self.pending += 1
        try:
            self._tagger.submit(_Job(request, future, loop))
            status, out = await future
        finally:
            self.pending -= 1
        return status, out, ()

    def health(self) -> dict[str, Any]:
        """What ``GET /health`` answers."""
        return {"status": "ok", "model": self.model.info, "reloads": self.reloads,
                "last_reload_error": self.last_reload_error, "pending": self.pending}

    async def _health(self, body: bytes) -> tuple[int, bytes, tuple[str, ...]]:
        return 200, _encode(self.health()), ()

    async def _reload_endpoint(self, body: bytes) -> tuple[int, bytes, tuple[str, ...]]:
        if body.strip() not in (b"", b"{}"):
            raise _BadRequest(400, "POST /reload takes no fields: it loads the file the "
                              f"server was started with ({self.path}) again")
        ok, message = await self.reload("POST /reload")
        if ok:
            return 200, _encode({"status": "reloaded", "model": self.model.info}), ()
        return 500, _encode({"error": message, "model": self.model.info}), ()

    async def reload(self, why: str) -> tuple[bool, str]:
        """Load the model file again and swap it in whole; on failure keep the old one."""
        assert self._reload_lock is not None
        async with self._reload_lock:  # one load at a time
            loop = asyncio.get_running_loop()
            try:
                loaded = await loop.run_in_executor(None, load_model, self.path)
            except Exception as exc:  # noqa: BLE001 - any failure keeps the old model
                if not isinstance(exc, (CSeqError, OSError)):
                    traceback.print_exc(file=sys.stderr)
                message = (f"reload ({why}) failed: {exc}; still serving the model loaded at "
                           f"{self.model.info['loaded_at']}")
                self.last_reload_error = message
                self.log(message)
                return False, message
            self.model = loaded
            self.reloads += 1
            self.last_reload_error = None
            message = (f"reloaded {self.path} ({why}): {len(loaded.info['labels'])} labels, "
                       f"{loaded.info['load_seconds']:.3f}s")
            self.log(message)
            return True, message

    # -- HTTP

    async def _dispatch(self, head: _Head, body: bytes) -> tuple[int, bytes, tuple[str, ...]]:
        path, _, query = head.target.partition("?")
        methods = self._routes.get(path)
        if methods is None:
            raise _BadRequest(404, f"no endpoint {path[:80]!r}; the endpoints are POST /tag, "
                              "GET /health and POST /reload")
        handler = methods.get(head.method)
        if handler is None:
            allow = ", ".join(methods)
            raise _BadRequest(405, f"{path} takes {allow}, not {head.method[:20]}",
                              headers=(f"Allow: {allow}",))
        if query:
            raise _BadRequest(400, "no query parameters: options go in the JSON body")
        return await handler(body)

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        if len(self._connections) >= self.limits["max_connections"] or self.draining:
            writer.write(_response(503, _error("too many connections (--max-connections)"
                                               if not self.draining else "shutting down"),
                                   close=True))
            writer.close()
            return
        conn = _Connection(writer, asyncio.current_task())
        self._connections.add(conn)
        timer = None
        try:
            while not self.draining:
                # The client has `timeout` seconds to send a whole request (also the
                # idle time of a kept-alive connection): no slow client holds a slot.
                timer = loop.call_later(self.limits["timeout"], writer.transport.abort)
                try:
                    raw = await reader.readuntil(b"\r\n\r\n")
                except asyncio.LimitOverrunError:
                    conn.busy = True
                    writer.write(_response(431, _error(f"the request head is over "
                                                       f"{MAX_HEAD_BYTES} bytes"), close=True))
                    break
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                conn.busy = True
                keep = False
                head_only = raw.startswith(b"HEAD ")
                try:
                    head = _parse_head(raw, self.limits["max_bytes"])
                    if head.expect_continue and head.length:
                        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    body = await reader.readexactly(head.length) if head.length else b""
                    timer.cancel()
                    keep = head.keep_alive
                    status, out, extra = await self._dispatch(head, body)
                except _BadRequest as exc:
                    status, out, extra = exc.status, _error(str(exc)), exc.headers
                    keep = keep and not exc.close
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                except Exception:  # noqa: BLE001 - a defect answers 500 and is logged
                    traceback.print_exc(file=sys.stderr)
                    status, out, extra = 500, _error("internal error: see the server's log"), ()
                    keep = False
                keep = keep and not self.draining
                writer.write(_response(status, out, close=not keep,
                                       keep_alive_10=keep and head.http10,
                                       headers=extra, head_only=head_only))
                if writer.transport.get_write_buffer_size() > _WRITE_BUFFER:
                    # A client that sends but does not read: its answers pile up here
                    # until it reads them within the timeout, or it is cut.
                    try:
                        await asyncio.wait_for(writer.drain(), self.limits["timeout"])
                    except asyncio.TimeoutError:
                        writer.transport.abort()  # close() would wait to flush them
                        break
                conn.busy = False
                if not keep:
                    break
        except ConnectionError:
            pass
        finally:
            if timer is not None:
                timer.cancel()
            self._connections.discard(conn)
            writer.close()

    def _stop_idle(self) -> None:
        """Close the connections that wait for a request; the busy ones close after
        their answer.

        A client may have sent a request that the server has not read yet (it is in
        the socket's buffer, or on its way): closing at once would lose it, and the
        unread bytes turn the close into a reset.  So a connection idle now is
        closed after a grace of ``_DRAIN_GRACE`` seconds if it is still idle; a
        request that arrives meanwhile is answered, with ``Connection: close``.
        """
        loop = asyncio.get_running_loop()

        def close_if_idle(conn: _Connection) -> None:
            if not conn.busy:
                conn.writer.close()
        for conn in list(self._connections):
            if not conn.busy:
                loop.call_later(_DRAIN_GRACE, close_if_idle, conn)

    async def run(self, host: str, port: int,
                  ready: Callable[[str, int], None] | None = None) -> None:
        """Serve until SIGTERM or SIGINT, then answer the requests in flight and return."""
        loop = asyncio.get_running_loop()
        self._reload_lock = asyncio.Lock()
        self._tagger = _Tagger(self, self.limits["workers"], self.limits["max_batch_tokens"])
        stop = asyncio.Event()
        handled: list[int] = []
        try:
            server = await asyncio.start_server(self._connection, host, port,
                                                limit=MAX_HEAD_BYTES, backlog=512)
            reloads: set[asyncio.Task] = set()

            def on_hup() -> None:
                task = loop.create_task(self.reload("SIGHUP"))
                reloads.add(task)
                task.add_done_callback(reloads.discard)
            for name, handler in (("SIGTERM", stop.set), ("SIGINT", stop.set),
                                  ("SIGHUP", on_hup)):
                try:
                    loop.add_signal_handler(getattr(signal, name), handler)
                    handled.append(getattr(signal, name))
                except (AttributeError, NotImplementedError):
                    pass  # Windows: no SIGHUP (POST /reload), Ctrl-C stops without draining
            bound = server.sockets[0].getsockname()
            if ready is not None:
                ready(bound[0], bound[1])
            await stop.wait()
            self.log("stopping: answering the requests in flight")
            server.close()
            self.draining = True
            self._stop_idle()
            tasks = [c.task for c in self._connections if c.task is not None]
            if tasks:
                _, late = await asyncio.wait(tasks, timeout=self.limits["timeout"])
                if late:
                    self.log(f"{len(late)} connection(s) cut after {self.limits['timeout']}s")
                    for task in late:
                        task.cancel()
            for task in list(reloads):
                await task
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)
            self._tagger.close()


def serve(path: str, host: str = "127.0.0.1", port: int = 8080, **limits: Any) -> int:
    """Run ``cseq serve``: load ``path``, print the address, serve until SIGTERM or
    Ctrl-C; returns 0 once the requests in flight are answered."""
    service = Service(path, **limits)

    def ready(bound_host: str, bound_port: int) -> None:
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        info = service.model.info
        print(f"cseq serve: {info['file']} ({info['learner'] or info['estimator']}, "
              f"{len(info['labels'])} labels) on http://{shown}:{bound_port}/ "
              "(POST /tag, GET /health, POST /reload; Ctrl-C stops)", flush=True)
    asyncio.run(service.run(host, port, ready))
    service.log("stopped")
    return 0
