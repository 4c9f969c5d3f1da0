"""``cseq serve``: the service (:mod:`cseq.serve.app`) run by uvicorn, in one or N processes.

HTTP is uvicorn's, with its httptools parser (llhttp, strict: a bare CR or LF,
a NUL or another control byte in a header, conflicting lengths are refused).
What ``cseq serve`` adds, in a subclass of uvicorn's protocol
(:class:`_Protocol`), is what uvicorn leaves to the deployment: every error
answered in JSON, a bound on the request head (32 KiB, 100 headers), a bound
on open connections answered 503, a deadline for a whole request (``timeout``
seconds from its first byte, and for a new connection's first byte, so that a
slow client holds no slot), and half a second's grace for idle connections at
a graceful stop (a request already on its way is answered, not reset).

``workers`` processes (``--workers N``) are forked by :func:`serve` after the
model is loaded and checked once, so they share its pages until a reload;
each runs its own event loop, tagging threads and model on one listening
socket.  Written here rather than taken from uvicorn's supervisor, which
restarts the processes on SIGHUP: a file that fails to load would take the
service down, where here each process loads it and keeps its model on
failure.  SIGHUP to the supervisor, or ``POST /reload`` to any process, reloads
them all; SIGTERM stops them all gracefully.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
from typing import Any

from cseq.exceptions import CSeqError
from cseq.serve.app import SERVE_DEFAULTS, Loaded, Service, load_model
from cseq.serve.batching import error_body

__all__ = ["serve", "MAX_HEAD_BYTES", "SERVER_DEFAULTS"]

#: Limits of the server around the service (``cseq serve``'s options override them).
SERVER_DEFAULTS: dict[str, Any] = {
    "max_connections": 512,   # open connections per process
    "processes": 1,           # worker processes (--workers)
}
#: The largest request head (request line and headers), and the most headers.
MAX_HEAD_BYTES = 32 * 1024
_MAX_HEADERS = 100
#: Seconds an idle connection stays open once the server stops.
_DRAIN_GRACE = 0.5

_INSTALL = ('cseq serve needs the "serve" extra (uvicorn, httptools, prometheus-client): '
            'pip install "cseq-labeling[serve]"')


def _protocol_class(timeout: float, max_connections: int) -> type:
    """uvicorn's httptools protocol with cseq's bounds (the module's text)."""
    import httptools
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class _Protocol(HttpToolsProtocol):
        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            self._deadline: asyncio.TimerHandle | None = None
            self._in_head = False
            self._head_bytes = 0
            self._n_headers = 0
            self._draining = False
            self._stuck: asyncio.TimerHandle | None = None
            self._refusal: tuple[int, str] | None = None
            self._head_size = 0
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                self._refuse(503, f"too many connections ({max_connections}, "
                             "--max-connections)")
                return
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._stuck is not None:
                self._stuck.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()  # the request did not come whole in time

        def _refuse(self, status: int, message: str) -> None:
            """Answer ``status`` in JSON and close: the request cannot be read on."""
            from http import HTTPStatus
            body = error_body(message)
            self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\n"
                                 b"content-length: %d\r\nconnection: close\r\n\r\n%s"
                                 % (status, HTTPStatus(status).phrase.encode(), len(body), body))
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            self._unset_keepalive_if_required()
            if self._in_head:
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEAD_BYTES + 65536:
                    self._refuse(431, f"the request head is over {MAX_HEAD_BYTES} bytes")
                    return
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError as exc:
                refusal, self._refusal = self._refusal, None
                self._refuse(*(refusal or (400, f"malformed HTTP request: {exc}")))
            except httptools.HttpParserUpgrade:
                pass  # no protocol upgrades: the request is answered as a plain one

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head, self._head_bytes, self._n_headers = True, 0, 0
            self._head_size = 0
            self._arm()

        def _stop_parsing(self, status: int, message: str) -> None:
            self._refusal = (status, message)
            raise ValueError(message)  # the parser stops: data_received answers

        def on_url(self, url: bytes) -> None:
            self._head_size += len(url)
            if self._head_size > MAX_HEAD_BYTES:
                self._stop_parsing(431, f"the request head is over {MAX_HEAD_BYTES} bytes")
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._n_headers += 1
            self._head_size += len(name) + len(value) + 4
            if self._n_headers > _MAX_HEADERS:
                self._stop_parsing(431, f"more than {_MAX_HEADERS} headers")
            if self._head_size > MAX_HEAD_BYTES:
                self._stop_parsing(431, f"the request head is over {MAX_HEAD_BYTES} bytes")
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()
            if self._draining and self.cycle is not None:
                self.cycle.keep_alive = False

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def shutdown(self) -> None:
            self._draining = True
            if self.cycle is None or self.cycle.response_complete:
                # Idle: a request may be on its way; it is answered if it comes in time.
                self.loop.call_later(_DRAIN_GRACE, self._close_if_idle)
            else:
                self.cycle.keep_alive = False

        def pause_writing(self) -> None:
            # A client that sends but does not read: its answers pile up until it
            # reads them within the timeout, or it is cut.
            super().pause_writing()
            self._stuck = self.loop.call_later(timeout, self.transport.abort)

        def resume_writing(self) -> None:
            stuck, self._stuck = self._stuck, None
            if stuck is not None:
                stuck.cancel()
            super().resume_writing()

        def _close_if_idle(self) -> None:
            if (self.cycle is None or self.cycle.response_complete) and not self.pipeline:
                self.transport.close()

    return _Protocol


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket (IPv4 or IPv6 by ``host``); OSError if it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto named: asyncio sets TCP_NODELAY only on sockets that say IPPROTO_TCP, and
    # without it an answer's body waits ~40 ms behind its head (Nagle, delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def _run(service: Service, sock: socket.socket, timeout: float,
         max_connections: int) -> None:
    """Serve ``service`` on ``sock`` in this process until SIGTERM or SIGINT."""
    import uvicorn
    config = uvicorn.Config(service, http=_protocol_class(timeout, max_connections),
                            lifespan="on", ws="none", interface="asgi3", access_log=False,
                            log_config=None, server_header=False,
                            timeout_keep_alive=max(1, math.ceil(timeout)),
                            timeout_graceful_shutdown=max(1, math.ceil(timeout)))
    server = uvicorn.Server(config)
    # uvicorn handles SIGTERM and SIGINT, then raises the signal again once it has
    # stopped gracefully: these handlers take it then, so the process exits 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        reloads: set[asyncio.Task] = set()

        def on_hup() -> None:
            task = loop.create_task(service.reload("SIGHUP"))
            reloads.add(task)
            task.add_done_callback(reloads.discard)
        if hasattr(signal, "SIGHUP"):
            loop.add_signal_handler(signal.SIGHUP, on_hup)
        await server.serve(sockets=[sock])
        for task in list(reloads):
            await task
    asyncio.run(main())


def serve(path: str, host: str = "127.0.0.1", port: int = 8080, **limits: Any) -> int:
    """Run ``cseq serve``: load ``path``, print the address, serve until SIGTERM or
    Ctrl-C; returns 0 once the requests in flight are answered.

    ``limits`` are any of :data:`cseq.serve.SERVE_DEFAULTS` and
    :data:`SERVER_DEFAULTS` (``processes``: worker processes).  Raises
    CSeqError (a bad model, uvicorn missing) or OSError (the port) before
    anything is served.
    """
    # Found, not imported: prometheus_client fixes at import whether it writes the
    # multiprocess files, and the supervisor sets their folder first.
    missing = [name for name in ("uvicorn", "httptools", "prometheus_client")
               if importlib.util.find_spec(name) is None]
    if missing:
        raise CSeqError(f"{_INSTALL} (missing: {', '.join(missing)})")
    server_limits = {k: limits.pop(k, v) for k, v in SERVER_DEFAULTS.items()}
    unknown = set(limits) - set(SERVE_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown limits: {', '.join(sorted(unknown))}")
    timeout = float(limits.get("timeout", SERVE_DEFAULTS["timeout"]))
    loaded = load_model(path)
    sock = _bind(host, port)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    info = loaded.info
    processes = server_limits["processes"]
    print(f"cseq serve: {info['file']} ({info['learner'] or info['estimator']}, "
          f"{len(info['labels'])} labels) on http://{shown}:{bound[1]}/ "
          f"(POST /tag, GET /health, POST /reload, GET /metrics; {processes} process"
          f"{'es' if processes > 1 else ''}; Ctrl-C stops)", flush=True)
    try:
        if processes == 1:
            service = Service(path, loaded=loaded, **limits)
            _run(service, sock, timeout, server_limits["max_connections"])
            service.log("stopped")
            return 0
        return _Supervisor(path, loaded, sock, limits, server_limits, timeout).run()
    finally:
        sock.close()


def _stop_with(parent: int) -> None:
    """Have this worker get SIGTERM when the supervisor dies, even by SIGKILL
    (Linux's PR_SET_PDEATHSIG), so that no worker outlives it."""
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the call
        os._exit(1)


class _Supervisor:
    """``processes`` forked workers on one socket: reloaded together, stopped together,
    a worker that dies replaced (loading the file itself)."""

    def __init__(self, path: str, loaded: Loaded, sock: socket.socket, limits: dict[str, Any],
                 server_limits: dict[str, Any], timeout: float) -> None:
        self.path, self.loaded, self.sock = path, loaded, sock
        self.limits, self.server_limits, self.timeout = limits, server_limits, timeout
        self.children: dict[int, int] = {}  # pid -> read end of its reload pipe
        self.parent = os.getpid()
        self.stop = False
        self.hup = False

    def log(self, line: str) -> None:
        print(f"cseq serve: {line}", file=sys.stderr, flush=True)

    def _spawn(self, loaded: Loaded | None) -> None:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                os.close(r)
                for fd in self.children.values():
                    os.close(fd)
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                _stop_with(self.parent)
                service = Service(self.path, loaded=loaded, **self.limits)
                service.on_reload = lambda: os.write(w, b"r")
                _run(service, self.sock, self.timeout, self.server_limits["max_connections"])
                code = 0
            except BaseException as exc:  # noqa: BLE001 - reported; the supervisor replaces it
                print(f"cseq serve: worker {os.getpid()} failed: {exc}", file=sys.stderr,
                      flush=True)
            finally:
                os._exit(code)
        os.close(w)
        self.children[pid] = r

    def _signal_all(self, sig: int, but: int | None = None) -> None:
        for pid in self.children:
            if pid != but:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass

    def _reap(self) -> list[tuple[int, int]]:
        gone = []
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            fd = self.children.pop(pid, None)
            if fd is not None:
                os.close(fd)
            gone.append((pid, os.waitstatus_to_exitcode(status)))
        return gone

    def run(self) -> int:
        metrics_dir = tempfile.mkdtemp(prefix="cseq-serve-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        from prometheus_client import multiprocess  # after: it reads the folder at import
        previous = {}

        def on_stop(*_: Any) -> None:
            self.stop = True

        def on_hup(*_: Any) -> None:
            self.hup = True
        for sig, handler in ((signal.SIGTERM, on_stop), (signal.SIGINT, on_stop),
                             (signal.SIGHUP, on_hup)):
            previous[sig] = signal.signal(sig, handler)
        try:
            for _ in range(self.server_limits["processes"]):
                self._spawn(self.loaded)
            last_spawn = time.monotonic()
            while not self.stop:
                fds = list(self.children.values())
                ready, _, _ = select.select(fds, [], [], 0.2)
                by_fd = {fd: pid for pid, fd in self.children.items()}
                for fd in ready:
                    if os.read(fd, 64):  # a worker reloaded on POST /reload
                        self._signal_all(signal.SIGHUP, but=by_fd[fd])
                if self.hup:
                    self.hup = False
                    self._signal_all(signal.SIGHUP)
                for pid, code in self._reap():
                    multiprocess.mark_process_dead(pid)
                    if not self.stop:
                        self.log(f"worker {pid} exited ({code}); starting another")
                        time.sleep(max(0.0, 1.0 - (time.monotonic() - last_spawn)))
                        self._spawn(None)
                        last_spawn = time.monotonic()
            self.log("stopping: answering the requests in flight")
            self._signal_all(signal.SIGTERM)
            deadline = time.monotonic() + self.timeout + 5
            codes = []
            while self.children and time.monotonic() < deadline:
                codes += [code for _, code in self._reap()]
                time.sleep(0.05)
            if self.children:
                self.log(f"{len(self.children)} worker(s) cut after {self.timeout}s")
                self._signal_all(signal.SIGKILL)
                codes += [1 for _ in self.children]
                for pid in list(self.children):
                    os.waitpid(pid, 0)
            self.log("stopped")
            return 0 if all(code == 0 for code in codes) else 1
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
            shutil.rmtree(metrics_dir, ignore_errors=True)
