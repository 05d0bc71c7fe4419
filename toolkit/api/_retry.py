"""When to retry and how long to wait (spec part 7, rules 3 to 5).

Retried: 429, 502, 503, 504 and network errors, and on reads a success whose body does
not parse (a body cut off is a network error that the connection did not show). Never:
400, 401, 403, 404, 409, 422, 500, an answer over `max_response_bytes`, or a call past its
deadline. A change that may have reached the server (a network error after the request was
sent) is never repeated; a connect error sent nothing and is safe to repeat.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

import httpx

from toolkit.api._exceptions import (
    ApiError,
    DeadlineExceeded,
    MalformedResponse,
    NetworkError,
    RequestError,
    UnreadableBody,
)

if TYPE_CHECKING:
    from collections.abc import Callable

RETRY_STATUSES = frozenset({429, 502, 503, 504})
NOTHING_SENT = frozenset({"connect", "pool"})
"""Network error kinds raised before any byte of the request left the client."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Attempts, deadline and full-jitter exponential backoff.

    The wait before attempt n+1 is uniform in [0, min(cap_s, base_s * 2**(n-1))], and at
    least what `Retry-After` asked for. `rng` returns a float in [0, 1).

    >>> policy = RetryPolicy(max_attempts=3, deadline_s=10, base_s=1, cap_s=4, rng=lambda: 0.5)
    >>> [policy.backoff(n) for n in (1, 2, 3, 4)]
    [0.5, 1.0, 2.0, 2.0]
    """

    max_attempts: int
    deadline_s: float
    base_s: float
    cap_s: float
    retry_malformed: bool = False
    rng: Callable[[], float] = field(default=random.random, compare=False)

    def backoff(self, attempt: int) -> float:
        """The jittered wait after failed attempt number `attempt` (1-based)."""
        ceiling = min(self.cap_s, self.base_s * 2.0 ** min(attempt - 1, 60))
        return self.rng() * ceiling

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The wait before the next attempt: the backoff, but never less than Retry-After."""
        return max(self.backoff(attempt), retry_after or 0.0)

    def cause(self, error: RequestError, *, idempotent: bool) -> str | None:
        """Why `error` may be retried (`"429"`, `"network:connect"`, ...), or None."""
        if isinstance(error, ApiError):
            return str(error.status) if error.status in RETRY_STATUSES else None
        if isinstance(error, DeadlineExceeded):
            return None
        if isinstance(error, NetworkError):
            return f"network:{error.kind}"
        if isinstance(error, UnreadableBody):
            return "unreadable_body" if idempotent else None
        if isinstance(error, MalformedResponse):
            return "malformed" if self.retry_malformed and idempotent else None
        return None


def may_have_arrived(error: RequestError) -> bool:
    """True when a failed request may still have been processed by the server."""
    return isinstance(error, NetworkError) and error.kind not in NOTHING_SENT


def network_kind(exc: httpx.TransportError) -> str:
    """Name the kind of an httpx transport failure: connect, pool, read, write, protocol."""
    kinds: tuple[tuple[type[httpx.TransportError], str], ...] = (
        (httpx.ConnectError, "connect"),
        (httpx.ConnectTimeout, "connect"),
        (httpx.ProxyError, "connect"),
        (httpx.PoolTimeout, "pool"),
        (httpx.ReadError, "read"),
        (httpx.ReadTimeout, "read"),
        (httpx.WriteError, "write"),
        (httpx.WriteTimeout, "write"),
        (httpx.ProtocolError, "protocol"),
    )
    for cls, kind in kinds:
        if isinstance(exc, cls):
            return kind
    return "transport"


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header: delta-seconds or an HTTP date.

    >>> parse_retry_after("7")
    7.0
    >>> when = datetime(2026, 1, 1, tzinfo=UTC)
    >>> parse_retry_after("Thu, 01 Jan 2026 00:00:30 GMT", now=when)
    30.0
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())
