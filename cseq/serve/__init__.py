"""``cseq serve``: a tagging service over HTTP, JSON in and out.

- :func:`app` makes the service, an ASGI application (:class:`Service`), for
  any ASGI server or stack;
- :func:`serve` runs it under uvicorn, in one process or several
  (``cseq serve``, :mod:`cseq.serve.server`).

Both need the ``serve`` extra: ``pip install "cseq-labeling[serve]"``.  The
pieces: :mod:`cseq.serve.requests` (a request checked and its cost bounded),
:mod:`cseq.serve.batching` (tagging threads, micro-batching),
:mod:`cseq.serve.metrics` (``GET /metrics``), :mod:`cseq.serve.app` (the
endpoints).  ``docs/production.md`` has the endpoints, limits and figures.
"""

from cseq.serve.app import SERVE_DEFAULTS, Loaded, Service, app, load_model
from cseq.serve.requests import MAX_NBEST, REQUEST_LIMITS
from cseq.serve.server import MAX_HEAD_BYTES, SERVER_DEFAULTS, serve

__all__ = ["app", "serve", "Service", "Loaded", "load_model", "SERVE_DEFAULTS",
           "SERVER_DEFAULTS", "REQUEST_LIMITS", "MAX_NBEST", "MAX_HEAD_BYTES"]
