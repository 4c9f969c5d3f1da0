"""``cseq serve``: every endpoint, every class of bad request, the model swap and the
graceful stop, against the service run as a subprocess on a free loopback port.

Each test starts its own server when it changes the server's state (the swap, the
stop, small limits) and shares one otherwise; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

import cseq
from cseq.conll import read_conll
from cseq.data import train_path
from cseq.exceptions import InputError
from support.cli_run import TRAIN, run

SENTENCES = [["The", "dog", "barks", "."], ["A", "cat", "sleeps", "on", "the", "mat", "."],
             ["Stocks", "fell", "sharply", "today"], ["I", "saw", "her"]]


# ----------------------------------------------------------------------------
# models and servers


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """A POS perceptron (words) and a chunking CRF (word and POS columns, BIO labels)."""
    d = tmp_path_factory.mktemp("serve")
    X, y = read_conll(train_path(), sep="\t")
    pos = cseq.StructuredPerceptron(max_iter=2, random_state=0,
                                    features=cseq.TemplateFeaturizer("pos"))
    pos.fit([[(row[0],) for row in x] for x in X[:600]], y[:600])
    pos.save(d / "pos.cseq")
    train = d / "chunk.txt"
    train.write_text(TRAIN)
    Xc, yc = read_conll(train)
    chunk = cseq.CRF(max_iter=20, features=cseq.TemplateFeaturizer("chunk"))
    chunk.fit(Xc, yc)
    chunk.save(d / "chunk.cseq")
    return {"pos": d / "pos.cseq", "chunk": d / "chunk.cseq"}


class Server:
    """A running ``cseq serve`` subprocess and clients of it."""

    def __init__(self, proc: subprocess.Popen, port: int) -> None:
        self.proc = proc
        self.port = port

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def request(self, method: str, path: str, body: object = None,
                conn: http.client.HTTPConnection | None = None) -> tuple[int, dict]:
        """One request (on ``conn`` if given, kept open); the status and the JSON answer."""
        c = conn or self.connect()
        data = body if body is None or isinstance(body, (bytes, str)) else json.dumps(body)
        c.request(method, path, body=data)
        r = c.getresponse()
        out = json.loads(r.read())
        if conn is None:
            c.close()
        return r.status, out

    def tag(self, body: object, conn: http.client.HTTPConnection | None = None) -> dict:
        status, out = self.request("POST", "/tag", body, conn)
        assert status == 200, out
        return out

    def raw(self, data: bytes) -> tuple[int, bytes]:
        """Send bytes on a new socket; the status and the body of the answer."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall(data)
            got = b""
            while b"\r\n\r\n" not in got:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            head, _, body = got.partition(b"\r\n\r\n")
            length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), b"0"))
            while len(body) < length:
                chunk = s.recv(65536)
                if not chunk:
                    break
                body += chunk
            return int(head.split(b" ")[1]), body

    def stop(self) -> int:
        """SIGTERM, and the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=10)


@contextmanager
def serving(model: Path, *options: str):
    """``cseq serve MODEL --port 0 OPTIONS``, its port read from its first line."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "cseq", "serve", str(model), "--port", "0",
                             *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "cseq serve printed no address"
        line = proc.stdout.readline().decode()
        assert "http://127.0.0.1:" in line, (line, proc.stderr.read().decode()
                                             if proc.poll() is not None else "")
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        yield Server(proc, port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


@pytest.fixture(scope="module")
def pos_server(models):
    with serving(models["pos"], "--max-bytes", "20000") as server:
        yield server
        assert server.stop() == 0


@pytest.fixture(scope="module")
def chunk_server(models):
    with serving(models["chunk"]) as server:
        yield server
        assert server.stop() == 0


# ----------------------------------------------------------------------------
# endpoints


def test_health_names_the_model(pos_server, models):
    status, out = pos_server.request("GET", "/health")
    assert status == 200 and out["status"] == "ok"
    model = out["model"]
    assert model["file"] == str(models["pos"])
    assert model["learner"] == "perceptron" and model["estimator"] == "StructuredPerceptron"
    assert model["labels"] == cseq.load(models["pos"]).classes_
    assert model["loaded_at"].endswith("Z") and model["load_seconds"] >= 0
    assert out["reloads"] == 0 and out["last_reload_error"] is None


def test_tag_one_sentence_and_a_batch_as_predict(pos_server, models):
    est = cseq.load(models["pos"])
    expected = est.predict(SENTENCES)
    assert pos_server.tag({"tokens": SENTENCES[0]}) == {"labels": expected[0]}
    assert pos_server.tag({"sentences": SENTENCES}) == {
        "sentences": [{"labels": labels} for labels in expected]}
    assert pos_server.tag({"sentences": []}) == {"sentences": []}
    assert pos_server.tag({"tokens": []}) == {"labels": []}


def test_nbest_as_predict_nbest(pos_server, models):
    found = cseq.load(models["pos"]).predict_nbest(SENTENCES[:2], k=3)
    out = pos_server.tag({"sentences": SENTENCES[:2], "nbest": 3})
    for record, nb in zip(out["sentences"], found):
        assert record["labels"] == nb.labels[0]
        assert [e["labels"] for e in record["nbest"]] == nb.labels
        assert [e["score"] for e in record["nbest"]] == [round(float(s), 6) for s in nb.scores]


def test_keep_alive_serves_many_requests_on_one_connection(pos_server, models):
    expected = cseq.load(models["pos"]).predict(SENTENCES)
    conn = pos_server.connect()
    try:
        pos_server.tag({"tokens": SENTENCES[0]}, conn)
        sock = conn.sock
        for _ in range(3):
            for s, labels in zip(SENTENCES, expected):
                assert pos_server.tag({"tokens": s}, conn) == {"labels": labels}
        assert conn.sock is sock  # never reconnected
    finally:
        conn.close()
    # HTTP/1.0 without keep-alive: answered, then closed.
    body = json.dumps({"tokens": SENTENCES[0]}).encode()
    status, out = pos_server.raw(b"POST /tag HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s"
                                 % (len(body), body))
    assert status == 200 and json.loads(out) == {"labels": expected[0]}


def _read_answers(sock: socket.socket, n: int) -> list[tuple[bytes, bytes]]:
    """``n`` answers (head, body) read from ``sock``."""
    got, out = b"", []
    while len(out) < n:
        while b"\r\n\r\n" not in got:
            chunk = sock.recv(65536)
            assert chunk, "closed early"
            got += chunk
        head, _, got = got.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")))
        while len(got) < length:
            got += sock.recv(65536)
        out.append((head, got[:length]))
        got = got[length:]
    return out


def test_pipelining_expect_continue_and_a_chunked_body(pos_server, models):
    expected = cseq.load(models["pos"]).predict(SENTENCES)
    bodies = [json.dumps({"tokens": s}).encode() for s in SENTENCES]
    with socket.create_connection(("127.0.0.1", pos_server.port), timeout=10) as s:
        # Pipelined: all requests sent before any answer is read; answered in order.
        s.sendall(b"".join(_http("POST", "/tag", b) for b in bodies))
        answers = _read_answers(s, len(bodies))
        assert [json.loads(b)["labels"] for _, b in answers] == expected
        # Expect: 100-continue gets its interim answer before the body is sent.
        s.sendall(b"POST /tag HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: %d\r\n"
                  b"\r\n" % len(bodies[0]))
        assert s.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        s.sendall(bodies[0])
        assert json.loads(_read_answers(s, 1)[0][1])["labels"] == expected[0]
        # A chunked body, in three pieces.
        b = bodies[1]
        s.sendall(b"POST /tag HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                  + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (b[:5], b[5:9], b[9:]))
                  + b"0\r\n\r\n")
        assert json.loads(_read_answers(s, 1)[0][1])["labels"] == expected[1]


def test_marginals_constraints_and_columns_as_cseq_tag(chunk_server, models):
    est = cseq.load(models["chunk"])
    x = [("The", "DT"), ("cat", "NN"), ("barks", "VBZ"), (".", ".")]
    tagged = cseq.probability.annotate(est, [x], constraints="bio")[0]
    out = chunk_server.tag({"tokens": [list(t) for t in x], "marginals": True,
                            "constraints": "bio"})
    assert out["labels"] == tagged.labels
    assert out["confidence"] == [round(float(c), 4) for c in tagged.confidence]
    assert out["entropy"] == round(float(tagged.entropy), 6)
    assert {s["text"] for s in out["spans"]} >= {"The cat"}
    assert chunk_server.tag({"tokens": [list(t) for t in x], "constraints": "iob2"}) == {
        "labels": est.predict([x], constraints="iob2")[0]}
    # A one-column token for a model of two columns: cseq tag's column check.
    status, err = chunk_server.request("POST", "/tag", {"tokens": ["The", "cat"]})
    assert status == 400 and "the model reads 2 column(s)" in err["error"]


def test_concurrent_requests_are_batched_without_mixing_answers(pos_server, models):
    """Many clients at once (so the worker batches them): each gets its own answer."""
    est = cseq.load(models["pos"])
    X, _ = read_conll(train_path(), sep="\t")
    sentences = [[row[0] for row in x] for x in X[1000:1160]]
    expected = est.predict(sentences)
    nbest = [nb.labels[:2] for nb in est.predict_nbest(sentences[:40], k=2)]
    failures: list[str] = []

    def client(k: int) -> None:
        conn = pos_server.connect()
        try:
            for i in range(k, len(sentences), 8):
                if i < 40 and i % 3 == 0:  # other options in the same queue
                    out = pos_server.tag({"tokens": sentences[i], "nbest": 2}, conn)
                    got = [e["labels"] for e in out["nbest"]]
                    if got != nbest[i]:
                        failures.append(f"nbest {i}")
                elif pos_server.tag({"tokens": sentences[i]}, conn)["labels"] != expected[i]:
                    failures.append(f"sentence {i}")
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(repr(exc))
        finally:
            conn.close()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not failures


# ----------------------------------------------------------------------------
# bad requests


_GOOD = {"tokens": SENTENCES[1]}

BAD_JSON = [
    (b"", 400, "no body"),
    (b'{"tokens": ["The"', 400, "malformed JSON"),
    (b"\xff\xfe\x00", 400, "malformed JSON"),
    (b"[" * 15_000, 400, "malformed JSON"),
    (b'["The"]', 400, "must be a JSON object"),
    (b'{"tokens": "The dog"}', 400, "must be a list of tokens"),
    (b'{"tokens": [1, 2]}', 400, "a token is a string or a list of column strings"),
    (b'{"tokens": [["a", 1]]}', 400, "a token is a string or a list of column strings"),
    (b'{"sentences": [["a"], "b"]}', 400, "sentence 1 must be a list of tokens"),
    (b'{"sentences": {"a": 1}}', 400, "'sentences' must be a list"),
    (b'{"tokens": ["a"], "sentences": [["a"]]}', 400, "either 'tokens'"),
    (b'{}', 400, "either 'tokens'"),
    (b'{"tokens": ["a"], "model": "/etc/passwd"}', 400, "unknown field(s) 'model'"),
    (b'{"tokens": ["a"], "nbest": 0}', 400, "'nbest' must be an integer"),
    (b'{"tokens": ["a"], "nbest": true}', 400, "'nbest' must be an integer"),
    (b'{"tokens": ["a"], "nbest": 1000}', 400, "'nbest' must be an integer"),
    (b'{"tokens": ["a"], "marginals": "yes"}', 400, "'marginals' must be true or false"),
    (b'{"tokens": ["a"], "constraints": "xyz"}', 400, "'constraints' must be one of"),
    (b'{"tokens": ["a"], "constraints": "bio"}', 400, "needs chunk labels"),
    (b'{"tokens": ["a"], "marginals": true}', 400, "give no marginals"),
    (b'{"tokens": [["a", "b"]]}', 400, "the model reads 1 column(s)"),
    (b'{"tokens": ["a"]}' + b" " * 20_000, 413, "the limit is 20000"),
]


def _http(method: str, path: str, body: bytes, extra: bytes = b"") -> bytes:
    return (b"%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n%s"
            % (method.encode(), path.encode(), len(body), extra, body))


BAD_HTTP = [
    (_http("GET", "/tag", b""), 405, "/tag takes POST"),
    (_http("DELETE", "/health", b""), 405, "/health takes GET"),
    (_http("GET", "/reload", b""), 405, "/reload takes POST"),
    (_http("POST", "/metrics", b""), 405, "/metrics takes GET"),
    (_http("GET", "/nothing", b""), 404, "no endpoint '/nothing'"),
    (_http("POST", "/tag?nbest=2", b'{"tokens": ["a"]}'), 400, "no query parameters"),
    (_http("POST", "/reload", b'{"path": "/tmp/other.cseq"}'), 400, "takes no fields"),
    (b"POST /tag HTTP/1.1\r\nContent-Length: ten\r\n\r\n", 400, "malformed HTTP request"),
    (b"POST /tag HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400,
     "malformed HTTP request"),
    (b"POST /tag HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     400, "malformed HTTP request"),
    (b"NONSENSE\r\n\r\n", 400, "malformed HTTP request"),
    (b"GET /health HTTP/2.0\r\n\r\n", 505, "not supported"),
    (b"GET /health HTTP/1.1\r\nBad header line\r\n\r\n", 400, "malformed HTTP request"),
    # RFC 9110 5.5 / RFC 9112 2.2: a bare CR, a NUL or a bare LF in a header is refused
    # (a bare LF kept in a value would hide the Content-Length after it).
    (b"GET /health HTTP/1.1\r\nX: a\rb\r\n\r\n", 400, "malformed HTTP request"),
    (b"GET /health HTTP/1.1\r\nX: a\x00b\r\n\r\n", 400, "malformed HTTP request"),
    (b"POST /tag HTTP/1.1\r\nX: a\nContent-Length: 17\r\n\r\n" + b'{"tokens": ["a"]}', 400,
     "malformed HTTP request"),
    (b"GET /health HTTP/1.1\r\nX: \x7f\r\n\r\n", 400, "malformed HTTP request"),
    (b"GET /health HTTP/1.1\r\nX: " + b"a" * 40_000 + b"\r\n\r\n", 431, "request head"),
    (b"GET /health HTTP/1.1\r\n" + b"X: a\r\n" * 101 + b"\r\n", 431, "more than 100 headers"),
]


class GoodClient(threading.Thread):
    """Tags one sentence over and over on one keep-alive connection, checking each answer."""

    def __init__(self, server: Server, expected: list[str]) -> None:
        super().__init__()
        self.server, self.expected = server, expected
        self.done = threading.Event()
        self.answered = 0
        self.failures: list[str] = []

    def run(self) -> None:
        conn = self.server.connect()
        try:
            while not self.done.is_set():
                if self.server.tag(_GOOD, conn) != {"labels": self.expected}:
                    self.failures.append("wrong answer")
                self.answered += 1
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.failures.append(repr(exc))
        finally:
            conn.close()


@pytest.fixture
def good_client(pos_server, models):
    client = GoodClient(pos_server, cseq.load(models["pos"]).predict([_GOOD["tokens"]])[0])
    client.start()
    yield client
    client.done.set()
    client.join(timeout=10)
    assert client.answered > 0 and not client.failures


@pytest.mark.parametrize("body, status, message", BAD_JSON,
                         ids=[f"json{i}" for i in range(len(BAD_JSON))])
def test_bad_json_gets_4xx_and_a_message(pos_server, good_client, body, status, message):
    got, out = pos_server.raw(_http("POST", "/tag", body))
    assert got == status and message in json.loads(out)["error"]


@pytest.mark.parametrize("data, status, message", BAD_HTTP,
                         ids=[f"http{i}" for i in range(len(BAD_HTTP))])
def test_bad_http_gets_4xx_and_a_message(pos_server, good_client, data, status, message):
    got, out = pos_server.raw(data)
    assert got == status and message in json.loads(out)["error"]


def test_a_bad_request_keeps_the_connection_when_its_body_was_read(pos_server, models):
    expected = cseq.load(models["pos"]).predict([SENTENCES[0]])[0]
    conn = pos_server.connect()
    try:
        status, out = pos_server.request("POST", "/tag", {"tokens": 5}, conn)
        assert status == 400
        sock = conn.sock
        assert pos_server.tag({"tokens": SENTENCES[0]}, conn) == {"labels": expected}
        assert conn.sock is sock
    finally:
        conn.close()


def test_a_request_that_fails_in_a_batch_fails_alone(models):
    """The model refusing one sentence of a batch answers 400 to its request only."""
    from cseq.serve import SERVE_DEFAULTS, Loaded
    from cseq.serve.batching import Job, Tagger
    from cseq.serve.requests import TagRequest

    class Picky:
        classes_ = ["A"]

        class model_:  # noqa: N801 - the estimator's attribute
            order = 1

        def predict(self, X, constraints=None):
            if any("BAD" in row for x in X for row in x):
                raise InputError("a BAD token")
            return [["A"] * len(x) for x in X]

    class Holder:
        model = Loaded(Picky(), {}, (None, 1))
        limits = SERVE_DEFAULTS

    async def run():
        loop = asyncio.get_running_loop()
        tagger = Tagger(Holder(), 1, 1000)
        jobs = [Job(TagRequest((False, None, None), [[(w,)]], True), loop.create_future(),
                    loop) for w in ["ok", "BAD", "fine"]]
        for job in jobs:
            job.loaded = Holder.model
            job.cursor = 1
        tagger._tag_batch([(job, 0, 1) for job in jobs])  # one batch, as a worker takes it
        tagger.close()
        return [await asyncio.wait_for(j.future, 5) for j in jobs]
    results = asyncio.run(run())
    assert [status for status, _ in results] == [200, 400, 200]
    assert json.loads(results[0][1]) == {"labels": ["A"]}
    assert "a BAD token" in json.loads(results[1][1])["error"]


#: Limits that let a request of 3,000 sentences through (the tests that need one busy).
_LARGE = ("--max-request-tokens", "200000", "--max-request-cost", "100000000", "--max-bytes",
          "10000000")


def test_queue_and_connection_limits_answer_503(models):
    X, _ = read_conll(train_path(), sep="\t")
    # A long job (most of a second): the queue stays full while the test looks.
    big = {"sentences": [[row[0] for row in x] for x in X[:3000]], "nbest": 20}
    with serving(models["pos"], "--max-queue", "1", "--max-connections", "3",
                 *_LARGE) as server:
        slow = server.connect()
        health = server.connect()
        try:
            slow.request("POST", "/tag", body=json.dumps(big))
            deadline = time.monotonic() + 10
            while server.request("GET", "/health", conn=health)[1]["pending"] < 1:
                assert time.monotonic() < deadline
            status, out = server.request("POST", "/tag", _GOOD)
            assert status == 503 and "--max-queue" in out["error"]
            # Two connections open, the third fills the limit, a fourth is refused.
            third = server.connect()
            server.request("GET", "/health", conn=third)
            status, body = server.raw(b"GET /health HTTP/1.1\r\n\r\n")
            assert status == 503 and b"--max-connections" in body
            third.close()
            r = slow.getresponse()
            assert r.status == 200 and len(json.loads(r.read())["sentences"]) == 3000
        finally:
            slow.close()
            health.close()
        assert server.stop() == 0


def test_a_slow_client_is_cut_after_the_timeout(models):
    with serving(models["pos"], "--timeout", "0.5") as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            s.sendall(b"POST /tag HTTP/1.1\r\nContent-Len")
            t = time.monotonic()
            assert s.recv(100) == b""  # closed by the server
            assert time.monotonic() - t < 4
        assert server.tag(_GOOD)["labels"]
        assert server.stop() == 0


# ----------------------------------------------------------------------------
# the model swap


def _replace(src: Path, dst: Path, data: bytes | None = None) -> None:
    """Replace ``dst`` atomically, by ``src``'s bytes or ``data``."""
    tmp = dst.with_suffix(".tmp")
    tmp.write_bytes(src.read_bytes() if data is None else data)
    os.replace(tmp, dst)


def test_reload_swaps_the_model_and_a_bad_file_keeps_the_old(models, tmp_path):
    path = tmp_path / "model.cseq"
    _replace(models["pos"], path)
    pos_labels = cseq.load(models["pos"]).classes_
    chunk = cseq.load(models["chunk"])
    x = [["The", "DT"], ["cat", "NN"]]
    with serving(path) as server:
        assert server.request("GET", "/health")[1]["model"]["labels"] == pos_labels
        _replace(models["chunk"], path)
        status, out = server.request("POST", "/reload")
        assert status == 200 and out["model"]["labels"] == chunk.classes_
        assert server.tag({"tokens": x}) == {"labels": chunk.predict([x])[0]}
        # A corrupt replacement: refused, the model in service stays.
        _replace(models["chunk"], path, data=b"CSEQ" + os.urandom(200))
        status, out = server.request("POST", "/reload")
        assert status == 500 and "still serving" in out["error"]
        assert out["model"]["labels"] == chunk.classes_
        health = server.request("GET", "/health")[1]
        assert health["reloads"] == 1 and "still serving" in health["last_reload_error"]
        assert server.tag({"tokens": x}) == {"labels": chunk.predict([x])[0]}
        # SIGHUP reloads too.
        _replace(models["pos"], path)
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while server.request("GET", "/health")[1]["reloads"] < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        health = server.request("GET", "/health")[1]
        assert health["model"]["labels"] == pos_labels and health["last_reload_error"] is None
        assert server.stop() == 0


# ----------------------------------------------------------------------------
# stopping


def test_sigterm_answers_the_requests_in_flight_then_exits_0(models):
    """Requests being tagged, and one sent on an idle connection just after the
    signal, are answered; then the server exits 0."""
    X, _ = read_conll(train_path(), sep="\t")
    batches = [[[row[0] for row in x] for x in X[k:k + 3000]] for k in (0, 3000, 6000)]
    with serving(models["pos"], *_LARGE) as server:
        conns = [server.connect() for _ in batches]
        idle = server.connect()
        server.request("GET", "/health", conn=idle)
        for conn, batch in zip(conns, batches):
            conn.request("POST", "/tag", body=json.dumps({"sentences": batch, "nbest": 3}))
        deadline = time.monotonic() + 10
        while server.request("GET", "/health", conn=idle)[1]["pending"] < 1:
            assert time.monotonic() < deadline
        server.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
        while True:  # until the server has stopped listening, i.e. has seen the signal
            try:
                socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            except ConnectionRefusedError:
                break
            assert time.monotonic() < deadline
            time.sleep(0.01)
        # A request on a connection idle when the signal came, sent right after it,
        # is answered (not reset), and the connection then closed.
        idle.request("GET", "/health")
        r = idle.getresponse()
        assert r.status == 200 and json.loads(r.read())["status"] == "ok"
        if r.getheader("Connection") != "close":  # sent before the server saw the signal
            assert idle.sock.recv(1) == b""       # then closed once idle
        for conn, batch in zip(conns, batches):
            r = conn.getresponse()
            out = json.loads(r.read())
            assert r.status == 200 and len(out["sentences"]) == len(batch)
            assert r.getheader("Connection") == "close"
            conn.close()
        assert server.proc.wait(timeout=10) == 0
        assert b"stopping" in server.proc.stderr.read()
        idle.close()


def test_a_bad_model_or_a_busy_port_stops_at_start_with_a_message(models, tmp_path):
    r = run("serve", tmp_path / "missing.cseq", "--port", "0", timeout=60)
    assert r.returncode == 1 and "cseq serve: error:" in r.stderr and "missing.cseq" in r.stderr
    with serving(models["pos"]) as server:
        r = run("serve", models["pos"], "--port", str(server.port), timeout=60)
        assert r.returncode == 1 and "cseq serve: error:" in r.stderr
        assert server.stop() == 0


def test_a_client_that_does_not_read_is_cut_after_the_timeout(models):
    """Pipelined requests whose answers are never read hold the connection only
    until --timeout, and nobody else waits for them."""
    body = json.dumps({"sentences": [SENTENCES[1]] * 200}).encode()
    with serving(models["pos"], "--timeout", "1") as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.setblocking(False)
            sent, t = 0, time.monotonic()
            while time.monotonic() - t < 8:
                try:
                    sent += s.send(_http("POST", "/tag", body))
                except BlockingIOError:
                    time.sleep(0.05)
                except OSError:  # reset: the server cut the connection
                    break
                assert server.tag(_GOOD)["labels"]  # others are served meanwhile
            assert time.monotonic() - t < 8, "the connection was never cut"
        assert server.stop() == 0


# ----------------------------------------------------------------------------
# what one request may cost


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_one_huge_request_is_refused_at_once_and_stalls_nobody(models):
    """The audit's reproducer (200,000 tokens, nbest 100, inside the 1 MiB body limit)
    gets 413 at once naming the limit; a large request within the limits is cut into
    batches, so 2-token requests sent meanwhile are each answered within the bound
    docs/production.md states, and the server's memory stays within +200 MB."""
    est = cseq.load(models["pos"])
    huge = json.dumps({"tokens": ["a"] * 200_000, "nbest": 100})
    assert len(huge) < 1 << 20
    with serving(models["pos"]) as server:
        before = _rss_mib(server.proc.pid)
        t = time.monotonic()
        status, out = server.request("POST", "/tag", huge)
        assert status == 413 and "--max-request-tokens" in out["error"]
        assert time.monotonic() - t < 2
        status, out = server.request("POST", "/tag", {"tokens": ["a"] * 15_000, "nbest": 100})
        assert status == 413 and "--max-request-cost" in out["error"]
        # Within the limits: 19 sentences of 1,000 tokens, 5-best (1.6M cells).
        X, _ = read_conll(train_path(), sep="\t")
        words = [row[0] for x in X for row in x]
        large = {"sentences": [words[k:k + 1000] for k in range(0, 19_000, 1000)], "nbest": 5}
        small = ["The", "dog"]
        expected = est.predict([small])[0]
        waits: list[float] = []
        big = server.connect()
        try:
            big.request("POST", "/tag", body=json.dumps(large))
            conn = server.connect()
            for _ in range(40):
                t = time.monotonic()
                assert server.tag({"tokens": small}, conn) == {"labels": expected}
                waits.append(time.monotonic() - t)
            conn.close()
            r = big.getresponse()
            out = json.loads(r.read())
            assert r.status == 200 and len(out["sentences"]) == 19
            assert out["sentences"][3]["labels"] == est.predict_nbest(
                [large["sentences"][3]], k=5)[0].labels[0]
        finally:
            big.close()
        assert max(waits) < 1.0, max(waits)
        assert _rss_mib(server.proc.pid) - before < 200
        assert server.stop() == 0


def test_an_oversize_body_is_answered_413_before_the_client_finishes_sending(models):
    """Declared over --max-bytes: 413 in JSON, which the client still sending reads
    (the server reads on and drops the rest, rather than resetting the connection)."""
    with serving(models["pos"], "--max-bytes", "1000") as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"POST /tag HTTP/1.1\r\nContent-Length: 4000000\r\n\r\n")
            for _ in range(40):  # 2.6 MB of the body, while the answer is already there
                s.sendall(b" " * 65536)
            body = b""
            got = b""
            while b"\r\n\r\n" not in got:
                got += s.recv(65536)
            head, _, body = got.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 413 ")
            while not body.endswith(b"}"):
                body += s.recv(65536)
            assert "the limit is 1000 (--max-bytes)" in json.loads(body)["error"]
            s.sendall(b" " * (4_000_000 - 40 * 65536))  # the rest: the connection lives on
            s.sendall(_http("GET", "/health", b""))
            assert b'"status": "ok"' in _read_answers(s, 1)[0][1]
        # With Expect: 100-continue, the body is never asked for: 413, then closed.
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"POST /tag HTTP/1.1\r\nExpect: 100-continue\r\n"
                      b"Content-Length: 4000000\r\n\r\n")
            head, body = _read_answers(s, 1)[0]
            assert head.startswith(b"HTTP/1.1 413 ") and b"connection: close" in head.lower()
            assert s.recv(100) == b""
        assert server.stop() == 0


def test_a_bad_header_is_answered_in_json_then_closed_in_order(pos_server):
    """A bare CR in a header: 400 in JSON, then an orderly close (the answer is read
    whole, no reset)."""
    with socket.create_connection(("127.0.0.1", pos_server.port), timeout=10) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nX: a\rb\r\n\r\n")
        head, body = _read_answers(s, 1)[0]
        assert head.startswith(b"HTTP/1.1 400 ") and b"connection: close" in head.lower()
        assert "malformed HTTP request" in json.loads(body)["error"]
        assert s.recv(100) == b""


# ----------------------------------------------------------------------------
# metrics, worker processes, the application itself


def _metrics(server: Server) -> dict[tuple[str, tuple], float]:
    from prometheus_client.parser import text_string_to_metric_families
    c = server.connect()
    c.request("GET", "/metrics")
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/plain; version=0.0.4")
    text = r.read().decode()
    c.close()
    return {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "pid"))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_count_requests_tokens_batches_and_reloads(models, tmp_path):
    path = tmp_path / "model.cseq"
    _replace(models["pos"], path)
    with serving(path) as server:
        for s in SENTENCES:
            server.tag({"tokens": s})
        server.request("POST", "/tag", {"tokens": 5})
        server.request("POST", "/reload")
        m = _metrics(server)
        assert m[("cseq_requests_total", (("endpoint", "/tag"), ("status", "200")))] == 4
        assert m[("cseq_requests_total", (("endpoint", "/tag"), ("status", "400")))] == 1
        assert m[("cseq_tokens_total", ())] == sum(map(len, SENTENCES))
        assert m[("cseq_batch_sentences_count", ())] == 4
        assert m[("cseq_request_duration_seconds_count", (("endpoint", "/tag"),))] == 5
        assert m[("cseq_reloads_total", (("result", "ok"),))] == 1
        info = {k: v for k, v in m.items() if k[0] == "cseq_model_info"}
        assert list(info.values()).count(1.0) == 1  # the one before (if another) is 0
        assert dict(next(k for k, v in info.items() if v == 1)[1])["learner"] == "perceptron"
        assert server.stop() == 0


def test_workers_are_processes_reloaded_together_and_counted_together(models, tmp_path):
    path = tmp_path / "model.cseq"
    _replace(models["pos"], path)
    chunk = cseq.load(models["chunk"])
    with serving(path, "--workers", "2") as server:
        pids = set()
        deadline = time.monotonic() + 20
        while len(pids) < 2:  # each new connection may reach either worker
            pids.add(server.request("GET", "/health")[1]["pid"])
            assert time.monotonic() < deadline, pids
        assert server.proc.pid not in pids
        for s in SENTENCES:
            server.tag({"tokens": s})
        _replace(models["chunk"], path)
        status, out = server.request("POST", "/reload")
        assert status == 200 and out["model"]["labels"] == chunk.classes_
        seen: dict[int, list[str]] = {}
        deadline = time.monotonic() + 20
        while len(seen) < 2 or any(v != chunk.classes_ for v in seen.values()):
            health = server.request("GET", "/health")[1]
            seen[health["pid"]] = health["model"]["labels"]
            assert time.monotonic() < deadline, seen
        m = _metrics(server)
        assert m[("cseq_requests_total", (("endpoint", "/tag"), ("status", "200")))] == 4
        assert m[("cseq_reloads_total", (("result", "ok"),))] == 2
        # SIGHUP to the supervisor reloads every worker.
        _replace(models["pos"], path)
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while _metrics(server)[("cseq_reloads_total", (("result", "ok"),))] < 4:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert server.stop() == 0
        assert b"stopped" in server.proc.stderr.read()


def test_the_application_runs_under_any_asgi_server(models):
    """cseq.serve.app driven by hand, as an ASGI server would (no lifespan events)."""
    from cseq.serve import app
    service = app(str(models["pos"]), max_request_tokens=10)
    expected = cseq.load(models["pos"]).predict([SENTENCES[0]])[0]

    async def call(method, path, body=b""):
        sent = []
        chunks = [body[:3], body[3:]]

        async def receive():
            chunk = chunks.pop(0) if chunks else b""
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

        async def send(message):
            sent.append(message)
        await service({"type": "http", "http_version": "1.1", "method": method, "path": path,
                       "query_string": b"", "headers": []}, receive, send)
        return sent[0]["status"], json.loads(sent[1]["body"])
    try:
        status, out = asyncio.run(call("POST", "/tag", json.dumps({"tokens": SENTENCES[0]})
                                       .encode()))
        assert status == 200 and out == {"labels": expected}
        status, out = asyncio.run(call("POST", "/tag", json.dumps({"tokens": ["a"] * 11})
                                       .encode()))
        assert status == 413 and "the limit is 10" in out["error"]
    finally:
        service.close()
    with pytest.raises(TypeError, match="unknown limits"):
        app(str(models["pos"]), max_tokens=5)


def test_workers_do_not_outlive_a_killed_supervisor(models):
    with serving(models["pos"], "--workers", "2") as server:
        pids = set()
        deadline = time.monotonic() + 20
        while len(pids) < 2:
            pids.add(server.request("GET", "/health")[1]["pid"])
            assert time.monotonic() < deadline
        server.proc.kill()
        server.proc.wait(timeout=10)
        def alive(pid: int) -> bool:
            try:
                return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
            except OSError:  # gone
                return False
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in pids):
            assert time.monotonic() < deadline, "a worker outlived its supervisor"
            time.sleep(0.05)
