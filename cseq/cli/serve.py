"""``cseq serve``: its options, checked, handed to :func:`cseq.serve.serve`."""

from __future__ import annotations

import argparse

from cseq.cli.common import _int_at_least
from cseq.exceptions import InputError


def _cmd_serve(args: argparse.Namespace) -> int:
    from cseq.serve import serve
    if args.port > 65535:
        raise InputError(f"--port must be at most 65535, got {args.port}")
    if not 0 < args.timeout < 1e6:  # also NaN and inf, which no timer takes
        raise InputError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    return serve(args.model, args.host, args.port, max_bytes=args.max_bytes,
                 max_queue=args.max_queue, max_connections=args.max_connections,
                 processes=args.workers, threads=args.threads,
                 max_batch_tokens=args.max_batch_tokens,
                 max_request_tokens=args.max_request_tokens,
                 max_request_cost=args.max_request_cost, timeout=args.timeout)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``serve`` command and its options."""
    v = sub.add_parser(
        "serve", help="a tagging service over HTTP (JSON in and out)",
        description="Serve a model over HTTP/1.1 (an ASGI application under uvicorn; needs "
        "the serve extra: pip install \"cseq-labeling[serve]\"): POST /tag with {\"tokens\": [...]} or "
        "{\"sentences\": [[...], ...]} and the options of cseq tag (\"marginals\", "
        "\"nbest\", \"constraints\"); GET /health; GET /metrics (Prometheus text); POST "
        "/reload (or SIGHUP) loads MODEL again and swaps it in whole, in every worker. SIGTERM or Ctrl-C answers the requests in flight, "
        "then exits 0. The first line on standard output gives the address (--port 0: a "
        "free port). See docs/production.md.")
    v.add_argument("model")
    v.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    v.add_argument("--port", type=_int_at_least(0), default=8080,
                   help="port (default 8080; 0: a free port, printed)")
    v.add_argument("--max-bytes", type=_int_at_least(1), default=1 << 20,
                   help="largest request body (default 1048576): larger gets 413")
    v.add_argument("--max-queue", type=_int_at_least(1), default=256,
                   help="requests queued or being tagged (default 256): more get 503 at once")
    v.add_argument("--max-connections", type=_int_at_least(1), default=512,
                   help="open connections per worker (default 512): more get 503 and are "
                   "closed")
    v.add_argument("--workers", type=_int_at_least(1), default=1,
                   help="worker processes, each with its model, on one port (default 1; "
                   "one per core)")
    v.add_argument("--threads", type=_int_at_least(1), default=1,
                   help="tagging threads per worker (default 1: with the GIL, more rarely "
                   "helps)")
    v.add_argument("--max-batch-tokens", type=_int_at_least(1), default=1000,
                   help="tokens tagged in one call, of queued requests or of one cut "
                   "between sentences (default 1000): a small request waits for at most "
                   "one such call per thread")
    v.add_argument("--max-request-tokens", type=_int_at_least(1), default=20_000,
                   help="tokens in one request (default 20000): more get 413 at once")
    v.add_argument("--max-request-cost", type=_int_at_least(1), default=4_000_000,
                   help="decoding-lattice cells of one request: tokens x labels (x labels "
                   "at order 2) x nbest (x 3 with marginals) (default 4000000, about 64 MB "
                   "of n-best scratch): more get 413 at once")
    v.add_argument("--timeout", type=float, default=30.0,
                   help="seconds a client has to send a whole request, and that an idle "
                   "kept-alive connection stays open (default 30)")
    v.set_defaults(func=_cmd_serve)
