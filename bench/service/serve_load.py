"""Load test of ``cseq serve``: requests/s and latency at 1, 8 and 64 keep-alive clients.

    python bench/service/serve_load.py                       # the default run (about a minute)
    python bench/service/serve_load.py --requests 3000       # requests per client count
    python bench/service/serve_load.py --long                # memory over 100,000 requests
    python bench/service/serve_load.py --model m.cseq        # a model of your own (words in)
    python bench/service/serve_load.py --unbatched           # also 8 clients without micro-batching
    python bench/service/serve_load.py --workers 0           # without the --workers 2 row

Starts ``cseq serve`` on a free loopback port (the model: ``--model``, or the
perceptron ``cseq demo -o`` trains on the bundled EWT sentences in a few
seconds), then, from this process, runs N clients at once, each on one
keep-alive connection, each request one sentence of EWT dev (``POST /tag
{"tokens": [...]}``).  The clients are asyncio coroutines over raw sockets,
so the load generator costs the shared CPU as little as it can.  Every
answer is checked against ``predict`` of the same model in this process.

Printed per client count: requests/s, p50 and p99 latency, failed requests
(an error, a wrong answer or a status other than 200), and the server's RSS
before and after.  Then the same at 8 clients with 5% malformed requests
mixed in (each must get a 4xx, every good one the right labels); with
``--long``, 100,000 requests at 8 clients with the RSS every 10,000.

Bounded: ``--requests`` per run and ``--max-seconds`` per run; loopback only;
the server is stopped by SIGTERM at the end and its exit code printed.  A
measuring tool, not a test: it asserts nothing about speed.  The targets
(#41): at 8 clients, one process, at least 5,000 requests/s with p99 under
25 ms and none failed; ``--workers 2`` at least 1.6x one worker's requests/s.
The load generator is one Python process on the same machine: on 2 cores it
takes part of the CPU the workers would use.
"""

from __future__ import annotations

import sys  # noqa: E402
from pathlib import Path as _Path  # noqa: E402

sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))  # bench/, for `common`
from common.paths import SHARED_DATA  # noqa: E402

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import cseq
from cseq.conll import read_conllu

DATA = SHARED_DATA

#: Malformed bodies, one of which replaces 5% of the requests of the mixed run.
BAD_BODIES = [b'{"tokens": ["a"', b'{"tokens": "a b"}', b'{"tokens": [1]}', b"[]",
              b'{"tokens": ["a"], "nbest": 0}', b'{"tokens": ["a"], "unknown": 1}',
              b"\xff\xfe", b'{"tokens": [["a", "b"]]}']


def request_bytes(port: int, body: bytes) -> bytes:
    return (b"POST /tag HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (port, len(body), body))


def rss_kib(pid: int) -> int:
    """The RSS of ``pid`` and its children (the worker processes of --workers)."""
    total = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            total += sum(rss_kib(int(c)) for c in f.read().split())
    except OSError:
        pass
    return total


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.failed = 0
        self.bad_ok = 0       # malformed requests answered 4xx
        self.bad_wrong = 0    # malformed requests answered otherwise
        self.first_failure = ""

    def fail(self, why: str) -> None:
        self.failed += 1
        self.first_failure = self.first_failure or why


async def client(port: int, jobs: list[tuple[bytes, list[str] | None]], stats: Stats,
                 deadline: float) -> None:
    """One keep-alive connection sending ``jobs`` in turn (reconnecting when closed)."""
    reader = writer = None
    for data, expected in jobs:
        if time.perf_counter() > deadline:
            break
        if writer is None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        t = time.perf_counter()
        try:
            writer.write(data)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            lower = head.lower()
            length = int(lower.split(b"content-length: ")[1].split(b"\r\n")[0])
            body = await reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
            stats.fail(f"{type(exc).__name__}: {exc}")
            writer.close()
            reader = writer = None
            continue
        stats.latencies.append(time.perf_counter() - t)
        if expected is None:  # a malformed request
            if 400 <= status < 500:
                stats.bad_ok += 1
            else:
                stats.bad_wrong += 1
        elif status != 200:
            stats.fail(f"status {status}: {body[:200]!r}")
        elif json.loads(body)["labels"] != expected:
            stats.fail("wrong labels")
        if b"connection: close" in head.lower():
            writer.close()
            reader = writer = None
    if writer is not None:
        writer.close()


def run_load(port: int, sentences: list[bytes], expected: list[list[str]], n_clients: int,
             n_requests: int, max_seconds: float, bad_share: float = 0.0,
             seed: int = 0) -> tuple[Stats, float, int]:
    """``n_requests`` requests from ``n_clients`` clients; stats, seconds, requests sent."""
    rng = random.Random(seed)
    jobs: list[list[tuple[bytes, list[str] | None]]] = [[] for _ in range(n_clients)]
    for i in range(n_requests):
        k = i % len(sentences)
        if bad_share and rng.random() < bad_share:
            job = (request_bytes(port, rng.choice(BAD_BODIES)), None)
        else:
            job = (request_bytes(port, sentences[k]), expected[k])
        jobs[i % n_clients].append(job)
    stats = Stats()

    async def main() -> None:
        deadline = time.perf_counter() + max_seconds
        await asyncio.gather(*(client(port, j, stats, deadline) for j in jobs))
    t = time.perf_counter()
    asyncio.run(main())
    seconds = time.perf_counter() - t
    return stats, seconds, len(stats.latencies) + stats.failed


def line(label: str, stats: Stats, seconds: float, sent: int, rss: tuple[int, int]) -> str:
    lat = sorted(stats.latencies)
    p50 = 1000 * lat[len(lat) // 2] if lat else float("nan")
    p99 = 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan")
    return (f"{label:<24} {sent:>8,} {sent / seconds:>10,.0f} {p50:>8.2f} {p99:>8.2f} "
            f"{stats.failed:>7} {rss[0] / 1024:>9.1f} {rss[1] / 1024:>9.1f}")


def start_server(model: str, options: list[str], env: dict) -> tuple[subprocess.Popen, int, str]:
    """``cseq serve MODEL --port 0 OPTIONS``: the process, its port, its first line."""
    proc = subprocess.Popen([sys.executable, "-m", "cseq", "serve", model, "--port", "0",
                             *options], stdout=subprocess.PIPE, env=env)
    first = proc.stdout.readline().decode()
    return proc, int(first.split("http://127.0.0.1:")[1].split("/")[0]), first.strip()


def stop_server(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=60)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="model file (default: cseq demo -o, a perceptron on words)")
    p.add_argument("--clients", default="1,8,64", help="client counts (default 1,8,64)")
    p.add_argument("--requests", type=int, default=4000, help="requests per run (4000)")
    p.add_argument("--max-seconds", type=float, default=20.0,
                   help="a run stops after this many seconds (20)")
    p.add_argument("--long", action="store_true",
                   help="also 100,000 requests at 8 clients, the server's RSS every 10,000")
    p.add_argument("--unbatched", action="store_true",
                   help="also 8 clients against a server with --max-batch-tokens 1 (no "
                   "micro-batching), to see what batching buys")
    p.add_argument("--workers", type=int, default=2,
                   help="also 8 clients against cseq serve --workers N (default 2; 0: not)")
    p.add_argument("--serve-option", action="append", default=[],
                   help="an option passed to cseq serve (repeatable), e.g. "
                   "--serve-option=--max-batch-tokens=1")
    p.add_argument("--data", default=str(DATA / "ud_en_ewt" / "en_ewt-ud-dev.conllu"))
    args = p.parse_args()

    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            model = os.path.join(tmp, "demo.cseq")
            subprocess.run([sys.executable, "-m", "cseq", "demo", "--max-iter", "5", "-o",
                            model], check=True, stdout=subprocess.DEVNULL, env=env)
        est = cseq.load(model)
        X, _ = read_conllu(args.data)
        words = [[row[0] for row in x] for x in X]
        expected = est.predict(words)
        bodies = [json.dumps({"tokens": w}).encode() for w in words]
        proc, port, first = start_server(model, args.serve_option, env)
        try:
            print(f"# cseq {cseq.__version__}, Python {sys.version.split()[0]}, "
                  f"{os.cpu_count()} CPUs, load average "
                  f"{' '.join(f'{v:.2f}' for v in os.getloadavg())} (the CPU is shared)")
            print(f"# server: {first}")
            print(f"# {len(words)} EWT dev sentences, {sum(map(len, words)) / len(words):.1f} "
                  f"tokens on average, one per request; options {args.serve_option or 'none'}")
            print(f"\n{'run':<24} {'requests':>8} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
                  f"{'failed':>7} {'RSS0 MiB':>9} {'RSS1 MiB':>9}")
            for n in (int(c) for c in args.clients.split(",")):
                before = rss_kib(proc.pid)
                stats, seconds, sent = run_load(port, bodies, expected, n, args.requests,
                                                args.max_seconds)
                print(line(f"{n} client(s)", stats, seconds, sent, (before, rss_kib(proc.pid))),
                      flush=True)
                if stats.first_failure:
                    print(f"#   first failure: {stats.first_failure}")
            before = rss_kib(proc.pid)
            stats, seconds, sent = run_load(port, bodies, expected, 8, args.requests,
                                            args.max_seconds, bad_share=0.05)
            print(line("8 clients, 5% malformed", stats, seconds, sent,
                       (before, rss_kib(proc.pid))))
            print(f"#   malformed: {stats.bad_ok} answered 4xx, {stats.bad_wrong} otherwise; "
                  f"good requests failed or wrong: {stats.failed}")
            if args.long:
                print("\n# --long: 100,000 requests at 8 clients; server RSS (MiB) every 10,000")
                rss = [rss_kib(proc.pid)]
                failed = 0
                t = time.perf_counter()
                for _ in range(10):
                    stats, _, _ = run_load(port, bodies, expected, 8, 10_000, 600)
                    failed += stats.failed
                    rss.append(rss_kib(proc.pid))
                print(f"#   {100_000 / (time.perf_counter() - t):,.0f} req/s, failed {failed}, "
                      f"RSS {' '.join(f'{r / 1024:.1f}' for r in rss)}")
        finally:
            code = stop_server(proc)
        print(f"\n# server stopped by SIGTERM: exit code {code}")
        if args.workers > 1:
            # The same at 8 clients with N worker processes: what more cores buy.
            proc, port, _ = start_server(model, args.serve_option
                                         + [f"--workers={args.workers}"], env)
            try:
                run_load(port, bodies, expected, 8, 400, args.max_seconds)  # all started
                before = rss_kib(proc.pid)
                stats, seconds, sent = run_load(port, bodies, expected, 8, args.requests,
                                                args.max_seconds)
                print(line(f"8 clients, {args.workers} workers", stats, seconds, sent,
                           (before, rss_kib(proc.pid))))
            finally:
                code = stop_server(proc)
            print(f"# {args.workers} workers stopped by SIGTERM: exit code {code}")
        if args.unbatched:
            # The same at 8 clients with micro-batching off: what batching buys.
            proc, port, _ = start_server(model, args.serve_option + ["--max-batch-tokens=1"],
                                         env)
            try:
                before = rss_kib(proc.pid)
                stats, seconds, sent = run_load(port, bodies, expected, 8, args.requests,
                                                args.max_seconds)
                print(line("8 clients, unbatched", stats, seconds, sent,
                           (before, rss_kib(proc.pid))))
            finally:
                code = stop_server(proc)
        print(f"# load average at the end {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
