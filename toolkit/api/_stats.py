"""Call statistics for a run: requests, retries by cause, errors by type, latency."""

from __future__ import annotations

import math
import threading
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class EndpointStats:
    """Latency of one endpoint's attempts, in seconds."""

    count: int
    failures: int
    total_s: float
    max_s: float
    p50_s: float
    p95_s: float


@dataclass(frozen=True, slots=True)
class CallStats:
    """A snapshot of the client's statistics; `as_dict()` gives plain JSON-able values.

    `requests` counts attempts sent (retries included), `retries` counts them by cause
    (`"429"`, `"503"`, `"network:read"`, ...), `errors` counts the errors raised to
    callers by type (`"not_found"`, `"network_error"`, ...). `throttle_wait_s` is the time
    requests waited on the client's rate limiter; `retry_wait_s` the time slept before
    retries, by cause (a 429's `Retry-After` counts under `"429"`).
    """

    requests: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    throttle_wait_s: float = 0.0
    retry_wait_s: dict[str, float] = field(default_factory=dict)
    endpoints: dict[str, EndpointStats] = field(default_factory=dict)

    @property
    def retries_total(self) -> int:
        return sum(self.retries.values())

    @property
    def retry_wait_total_s(self) -> float:
        return sum(self.retry_wait_s.values())

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _percentile(ordered: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list (0.0 when empty)."""
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


class StatsRecorder:
    """Collects statistics as the client runs; thread-safe, resettable."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests = 0
        self._retries: Counter[str] = Counter()
        self._retry_wait: defaultdict[str, float] = defaultdict(float)
        self._errors: Counter[str] = Counter()
        self._throttle_wait = 0.0
        self._latency: dict[str, list[float]] = {}
        self._failures: Counter[str] = Counter()

    def attempt(self, endpoint: str, latency_s: float, *, ok: bool) -> None:
        with self._lock:
            self._requests += 1
            self._latency.setdefault(endpoint, []).append(latency_s)
            if not ok:
                self._failures[endpoint] += 1

    def retry(self, cause: str, *, waited_s: float = 0.0) -> None:
        with self._lock:
            self._retries[cause] += 1
            self._retry_wait[cause] += waited_s

    def error(self, error_type: str) -> None:
        with self._lock:
            self._errors[error_type] += 1

    def throttle_wait(self, seconds: float) -> None:
        with self._lock:
            self._throttle_wait += seconds

    def reset(self) -> None:
        with self._lock:
            self._requests = 0
            self._throttle_wait = 0.0
            self._retry_wait.clear()
            for counter in (self._retries, self._errors, self._failures):
                counter.clear()
            self._latency.clear()

    def snapshot(self) -> CallStats:
        with self._lock:
            endpoints = {
                name: self._endpoint(name, values) for name, values in self._latency.items()
            }
            return CallStats(
                requests=self._requests,
                retries=dict(self._retries),
                errors=dict(self._errors),
                throttle_wait_s=self._throttle_wait,
                retry_wait_s=dict(self._retry_wait),
                endpoints=endpoints,
            )

    def _endpoint(self, name: str, values: list[float]) -> EndpointStats:
        ordered = sorted(values)
        return EndpointStats(
            count=len(ordered),
            failures=self._failures[name],
            total_s=sum(ordered),
            max_s=ordered[-1],
            p50_s=_percentile(ordered, 0.50),
            p95_s=_percentile(ordered, 0.95),
        )
