"""The tagging service as an ASGI application: :class:`Service`, made by :func:`app`.

An application on the public estimator API (:func:`cseq.load`, ``predict``,
``predict_nbest``, :func:`cseq.probability.annotate` as ``cseq tag
--marginals`` uses it, constraints), with the command line's input handling
(:mod:`cseq._tagging`, :mod:`cseq.io._streams`).  Any ASGI server runs it
(``cseq serve`` runs it under uvicorn, :mod:`cseq.serve.server`); the
endpoints, limits and figures are in ``docs/production.md``.

- **One model reference.**  A job reads :attr:`Service.model` once
  (:mod:`cseq.serve.batching`), so it is tagged by one model whole; a reload
  loads the file fully in another thread, then assigns the reference; a failed
  load keeps the old model.
- **Bounded.**  Request bodies (``max_bytes``, read in pieces and refused
  once over, never buffered whole), the tokens and the decoding cost of one
  request (:mod:`cseq.serve.requests`), the queue of jobs (``max_queue``: more
  gets 503 at once), and the time a client has to send its body
  (``timeout``).  Bad requests get a 4xx JSON message and touch nobody else.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cseq._tagging import load_fitted, model_columns
from cseq.exceptions import CSeqError
from cseq.serve.batching import Job, Tagger, encode, error_body
from cseq.serve.metrics import CONTENT_TYPE, Metrics
from cseq.serve.requests import REQUEST_LIMITS, BadRequest, check_size, parse_tag_request

__all__ = ["Service", "Loaded", "load_model", "app", "SERVE_DEFAULTS"]

#: Limits of the service (``cseq serve``'s options override them).
SERVE_DEFAULTS: dict[str, Any] = {
    "max_bytes": 1 << 20,        # request body
    "max_queue": 256,            # requests queued or being tagged
    "threads": 1,                # tagging threads in a process (processes: cseq serve --workers)
    "max_batch_tokens": 1000,    # tokens tagged in one call
    "timeout": 30.0,             # seconds to send a request body
    **REQUEST_LIMITS,            # tokens and lattice cells of one request
}

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Loaded:
    """A model as the service holds it: the estimator and what ``/health`` says of it."""

    est: Any
    info: dict[str, Any]
    #: :func:`cseq._tagging.model_columns` of the model: columns it was trained on,
    #: fewest it reads.
    columns: tuple[int | None, int]

    @property
    def n_labels(self) -> int:
        return len(self.est.classes_)

    @property
    def order(self) -> int:
        return int(self.est.model_.order)


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


_ENDPOINTS = {"/tag": "POST", "/health": "GET", "/reload": "POST", "/metrics": "GET"}
_JSON = [(b"content-type", b"application/json")]


class Service:
    """The service: the model, the tagging queue, the endpoints; an ASGI application.

    Parameters
    ----------
    path : str
        The model file; ``POST /reload`` (and SIGHUP under ``cseq serve``) loads
        it again, never another path.
    loaded : Loaded, optional
        ``path`` already loaded (the ``cseq serve`` supervisor loads it once,
        before its worker processes start).
    log : callable
        Where messages go (a line each; stderr by default).
    limits
        Any of :data:`SERVE_DEFAULTS`.
    """

    def __init__(self, path: str, *, loaded: Loaded | None = None,
                 log: Callable[[str], None] | None = None, **limits: Any) -> None:
        unknown = set(limits) - set(SERVE_DEFAULTS)
        if unknown:
            raise TypeError(f"unknown limits: {', '.join(sorted(unknown))}")
        self.path = path
        self.limits = {**SERVE_DEFAULTS, **limits}
        self.log = log or (lambda line: print(f"cseq serve: {line}", file=sys.stderr,
                                              flush=True))
        #: The model every job reads once; replaced whole by a reload.
        self.model = loaded if loaded is not None else load_model(path)
        self.metrics = Metrics()
        self.metrics.set_model(self.model.info)
        self.reloads = 0
        self.last_reload_error: str | None = None
        self.pending = 0
        #: Called after a reload asked by ``POST /reload`` succeeded (the supervisor
        #: of ``cseq serve --workers`` reloads the other processes then).
        self.on_reload: Callable[[], None] | None = None
        self._tagger: Tagger | None = None
        self._reload_lock: asyncio.Lock | None = None

    # -- lifetime

    def start(self) -> None:
        """Start the tagging threads (at the ASGI lifespan's start, or the first request)."""
        if self._tagger is None:
            self._tagger = Tagger(self, self.limits["threads"], self.limits["max_batch_tokens"],
                                  on_batch=self.metrics.batch)

    def close(self) -> None:
        """Tag what is queued, then stop the tagging threads."""
        if self._tagger is not None:
            self._tagger.close()
            self._tagger = None

    # -- the ASGI interface

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        # Other scopes (websocket) are not served: returning closes them.

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.log("stopping: answered the requests in flight")
                await asyncio.get_running_loop().run_in_executor(None, self.close)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        endpoint = path if path in _ENDPOINTS else "other"
        t0 = None
        extra: tuple[tuple[str, str], ...] = ()
        close = False
        try:
            method = self._route(scope)
            body = await self._body(scope, receive)
            t0 = time.perf_counter()
            status, out, content_type = await method(body)
        except BadRequest as exc:
            status, out, content_type = exc.status, error_body(str(exc)), None
            extra, close = exc.headers, exc.close
        except Exception:  # noqa: BLE001 - a defect answers 500 and is logged
            traceback.print_exc(file=sys.stderr)
            status, out, content_type = 500, error_body("internal error: see the server's "
                                                        "log"), None
        headers = [(b"content-type", content_type.encode()) if content_type else _JSON[0],
                   (b"content-length", str(len(out)).encode())]
        headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra]
        if close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": out})
        self.metrics.answered(endpoint, status,
                              None if t0 is None else time.perf_counter() - t0)

    def _route(self, scope: Scope) -> Callable[[bytes], Awaitable[tuple[int, bytes, Any]]]:
        if scope.get("http_version") not in ("1.0", "1.1"):
            raise BadRequest(505, f"HTTP version {scope.get('http_version')!r} is not "
                             "supported (HTTP/1.1 is)", close=True)
        path, method = scope["path"], scope["method"]
        allowed = _ENDPOINTS.get(path)
        if allowed is None:
            raise BadRequest(404, f"no endpoint {path[:80]!r}; the endpoints are POST /tag, "
                             "GET /health, POST /reload and GET /metrics")
        if method != allowed and not (method == "HEAD" and allowed == "GET"):
            raise BadRequest(405, f"{path} takes {allowed}, not {method[:20]}",
                             headers=(("Allow", allowed),))
        if scope.get("query_string"):
            raise BadRequest(400, "no query parameters: options go in the JSON body")
        return {"/tag": self._tag, "/health": self._health, "/reload": self._reload,
                "/metrics": self._metrics}[path]

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        """The request body, read in pieces within ``timeout`` seconds.

        One declared or found over ``max_bytes`` is refused with 413 as soon as
        that is known.  What is left of it unread then is the server's to
        discard (uvicorn reads and drops the rest of a request it has answered,
        so the client reads its 413 rather than a reset); with ``Expect:
        100-continue`` it was never sent, and the connection closes.
        """
        limit = self.limits["max_bytes"]
        declared = None
        expect = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                declared = int(value) if value.isdigit() else None
            elif name == b"expect":
                expect = value.lower() == b"100-continue"
        if declared is not None and declared > limit:
            raise BadRequest(413, f"the request body has {declared} bytes; the limit is "
                             f"{limit} (--max-bytes)", close=expect)
        chunks: list[bytes] = []
        size = 0
        more = True

        async def read() -> None:
            nonlocal size, more
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise BadRequest(400, "the client went away")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise BadRequest(413, f"the request body has over {limit} bytes; the "
                                     f"limit is {limit} (--max-bytes)")
                chunks.append(chunk)
                more = message.get("more_body", False)
        if declared is not None and declared <= 65536:
            # A small body the server has, or will have as soon as it is sent: read
            # without a timer task (the server's request deadline bounds the wait:
            # under cseq serve, --timeout from the request's first byte).
            await read()
            return b"".join(chunks)
        try:
            await asyncio.wait_for(read(), self.limits["timeout"])
        except asyncio.TimeoutError:
            raise BadRequest(408, f"the request body took over {self.limits['timeout']} s "
                             "(--timeout)", close=True) from None
        return b"".join(chunks)

    # -- endpoints

    async def _tag(self, body: bytes) -> tuple[int, bytes, None]:
        request = parse_tag_request(body)
        if not request.X:
            return 200, encode({"sentences": []}), None
        loaded = self.model
        # Checked here so that an oversized request is refused at once; a worker
        # checks again against the model the request is tagged by.
        check_size(request, loaded.n_labels, loaded.order, self.limits)
        if self.pending >= self.limits["max_queue"]:
            raise BadRequest(503, f"busy: {self.pending} requests queued (--max-queue); "
                             "retry later", headers=(("Retry-After", "1"),))
        self.start()
        assert self._tagger is not None
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.pending += 1
        self.metrics.pending.inc()
        try:
            self._tagger.submit(Job(request, future, loop))
            status, out = await future
        finally:
            self.pending -= 1
            self.metrics.pending.dec()
        return status, out, None

    def health(self) -> dict[str, Any]:
        """What ``GET /health`` answers."""
        return {"status": "ok", "model": self.model.info, "reloads": self.reloads,
                "last_reload_error": self.last_reload_error, "pending": self.pending,
                "pid": os.getpid()}

    async def _health(self, body: bytes) -> tuple[int, bytes, None]:
        return 200, encode(self.health()), None

    async def _metrics(self, body: bytes) -> tuple[int, bytes, str]:
        return 200, self.metrics.exposition(), CONTENT_TYPE

    async def _reload(self, body: bytes) -> tuple[int, bytes, None]:
        if body.strip() not in (b"", b"{}"):
            raise BadRequest(400, "POST /reload takes no fields: it loads the file the "
                             f"server was started with ({self.path}) again")
        ok, message = await self.reload("POST /reload")
        if ok:
            if self.on_reload is not None:
                self.on_reload()
            return 200, encode({"status": "reloaded", "model": self.model.info}), None
        return 500, encode({"error": message, "model": self.model.info}), None

    async def reload(self, why: str) -> tuple[bool, str]:
        """Load the model file again and swap it in whole; on failure keep the old one."""
        if self._reload_lock is None:
            self._reload_lock = asyncio.Lock()
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
                self.metrics.reloads.labels("failed").inc()
                self.log(message)
                return False, message
            self.model = loaded
            self.reloads += 1
            self.last_reload_error = None
            self.metrics.reloads.labels("ok").inc()
            self.metrics.set_model(loaded.info)
            message = (f"reloaded {self.path} ({why}): {len(loaded.info['labels'])} labels, "
                       f"{loaded.info['load_seconds']:.3f}s")
            self.log(message)
            return True, message


def app(model_path: str, **limits: Any) -> Service:
    """The tagging service for ``model_path`` as an ASGI application, to run under
    any ASGI server or mount in an ASGI stack (``cseq serve`` runs it under uvicorn).

    ``limits`` are any of :data:`SERVE_DEFAULTS`.  The model is loaded now (a bad
    file raises here, not at the first request).  The tagging threads start at the
    ASGI lifespan's start, or at the first request of a server that sends no
    lifespan events; ``POST /reload`` loads ``model_path`` again.

    >>> import cseq, cseq.serve, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.cseq")
    >>> model = cseq.StructuredPerceptron(max_iter=1).fit([[["w=a"], ["w=b"]]], [["X", "Y"]])
    >>> model.save(path)
    >>> service = cseq.serve.app(path, max_request_tokens=1000)
    >>> service.health()["model"]["labels"]
    ['X', 'Y']
    """
    return Service(model_path, **limits)
