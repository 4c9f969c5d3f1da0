"""``GET /metrics``: the service's counters in the Prometheus text format.

Kept with ``prometheus_client`` (part of the ``serve`` extra) rather than
written here: it has the exposition format right, and its multiprocess mode
sums the counters of every worker process of ``cseq serve --workers N``
(each writes its own memory-mapped file under ``PROMETHEUS_MULTIPROC_DIR``,
which the supervisor sets before the workers start), so that a scrape, which
reaches one worker, reports the whole service.

The series (docs/production.md lists them with their labels):
``cseq_requests_total``, ``cseq_request_duration_seconds``,
``cseq_tokens_total``, ``cseq_batch_sentences``, ``cseq_batch_tokens``,
``cseq_pending_requests``, ``cseq_reloads_total`` and ``cseq_model_info``.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["Metrics", "CONTENT_TYPE"]

#: The Prometheus text exposition format, version 0.0.4.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_LATENCY = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_SENTENCES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
_TOKENS = (1, 4, 16, 64, 128, 256, 512, 1000, 2000, 5000)


class Metrics:
    """The service's metrics, in a registry of their own (several services may
    live in one process), or in the multiprocess files when
    ``PROMETHEUS_MULTIPROC_DIR`` is set."""

    def __init__(self) -> None:
        import prometheus_client as pc
        self._pc = pc
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        registry = None if self.multiprocess else pc.CollectorRegistry()
        self._registry = registry
        kw: dict[str, Any] = {"registry": registry}
        self.requests = pc.Counter("cseq_requests", "HTTP requests answered, by endpoint "
                                   "and status", ["endpoint", "status"], **kw)
        self.latency = pc.Histogram("cseq_request_duration_seconds", "Seconds from a "
                                    "request's body read to its answer, by endpoint",
                                    ["endpoint"], buckets=_LATENCY, **kw)
        self.tokens = pc.Counter("cseq_tokens", "Tokens tagged", **kw)
        self.batch_sentences = pc.Histogram("cseq_batch_sentences", "Sentences tagged in "
                                            "one call (micro-batching)", buckets=_SENTENCES,
                                            **kw)
        self.batch_tokens = pc.Histogram("cseq_batch_tokens", "Tokens tagged in one call",
                                         buckets=_TOKENS, **kw)
        self.pending = pc.Gauge("cseq_pending_requests", "/tag requests queued or being "
                                "tagged", multiprocess_mode="livesum", **kw)
        self.reloads = pc.Counter("cseq_reloads", "Model reloads, by result", ["result"], **kw)
        self.model = pc.Gauge("cseq_model_info", "The model in service (1) and those it "
                              "replaced (0)", ["file", "learner", "estimator", "labels",
                                               "loaded_at"],
                              multiprocess_mode="liveall", **kw)
        self._model_labels: tuple[str, ...] | None = None

    def set_model(self, info: dict[str, Any]) -> None:
        """The model now in service (the one before it drops to 0)."""
        labels = (str(info["file"]), str(info["learner"]), str(info["estimator"]),
                  str(len(info["labels"])), str(info["loaded_at"]))
        if self._model_labels is not None:
            self.model.labels(*self._model_labels).set(0)
        self.model.labels(*labels).set(1)
        self._model_labels = labels

    def batch(self, sentences: int, tokens: int) -> None:
        self.batch_sentences.observe(sentences)
        self.batch_tokens.observe(tokens)
        self.tokens.inc(tokens)

    def answered(self, endpoint: str, status: int, seconds: float | None) -> None:
        self.requests.labels(endpoint, str(status)).inc()
        if seconds is not None:
            self.latency.labels(endpoint).observe(seconds)

    def exposition(self) -> bytes:
        """The text a scrape gets: this process's series, or every worker's summed."""
        pc = self._pc
        if self.multiprocess:
            from prometheus_client import multiprocess
            registry = pc.CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return pc.generate_latest(registry)
        return pc.generate_latest(self._registry)
