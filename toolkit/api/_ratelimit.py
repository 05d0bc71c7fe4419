"""A client-side request-rate limit that paces only when the platform asks it to.

The platform's HTTP API has no rate limit of its own (spec part 8), so by default the
client sends as fast as its concurrency allows. A 429, or 5xx answers clustering, start a
token bucket at half the rate the client was sending at; the rate then grows back by a
fixed step per success (AIMD: additive increase, multiplicative decrease), and pacing
stops once the rate is back where the platform first pushed back. A configured rate
(`rate_per_minute`, for the MCP endpoint's 600 a minute or a shared platform) is a
ceiling that always paces, with the same AIMD below it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["RateLimiter"]

_WINDOW_S = 5.0
"""How far back the sending rate is measured when the first 429 arrives."""
_OUTCOMES = 20
_SERVER_ERRORS = 5
"""At least this many 5xx among the last `_OUTCOMES` answers count as a request to slow down."""


class RateLimiter:
    """Spend one token per request while pacing; send freely while not.

    `rate_per_minute=None` (the default of the client) paces only after the platform
    pushed back; a number paces from the start and is never exceeded. The rate halves when
    the server answers 429 or its 5xx answers cluster (at most once per
    `decrease_interval_s`, never below the floor) and grows back by a fixed step per
    success. `clock` and `sleep` are injectable so tests run without waiting.

    >>> limiter = RateLimiter(600)           # 10 requests per second, burst of 10
    >>> limiter.throttled(); limiter.rate_per_minute
    300.0
    >>> RateLimiter(None).rate_per_minute is None   # not pacing until the platform says so
    True
    """

    def __init__(
        self,
        rate_per_minute: float | None,
        *,
        burst: int = 10,
        floor_per_minute: float | None = None,
        step_per_minute: float | None = None,
        decrease_interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if (rate_per_minute is not None and rate_per_minute <= 0) or burst < 1:
            raise ValueError("rate_per_minute must be > 0 (or None) and burst >= 1")
        self._ceiling = None if rate_per_minute is None else rate_per_minute / 60.0
        self._floor_setting = floor_per_minute
        self._step_setting = step_per_minute
        self._burst = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._decrease_interval = decrease_interval_s
        self._last_decrease = -float("inf")
        self._lock = asyncio.Lock()
        self._sent: deque[float] = deque()
        self._outcomes: deque[bool] = deque(maxlen=_OUTCOMES)
        self._pushed_back_at: float | None = None  # per second, while pacing without a ceiling
        self._rate = 0.0
        self._floor = self._step = 0.0
        self._tokens = self._burst
        self._updated = clock()
        if self._ceiling is not None:
            self._pace_at(self._ceiling, self._ceiling)

    @property
    def pacing(self) -> bool:
        """True while requests wait for tokens."""
        return self._ceiling is not None or self._pushed_back_at is not None

    @property
    def rate_per_minute(self) -> float | None:
        """The current allowed rate in requests per minute; None while not pacing."""
        return self._rate * 60.0 if self.pacing else None

    async def acquire(self) -> float:
        """Wait for a token while pacing; return how many seconds were spent waiting."""
        if not self.pacing:
            self._note_sent()
            return 0.0
        waited = 0.0
        async with self._lock:
            while self.pacing:
                self._refill()
                if self._tokens >= 1.0 - 1e-9:  # a sleep of exactly the pause earns the token
                    self._tokens = max(self._tokens - 1.0, 0.0)
                    break
                pause = (1.0 - self._tokens) / self._rate
                await self._sleep(pause)
                waited += pause
        self._note_sent()
        return waited

    def throttled(self) -> None:
        """The server said 429 (or 5xx answers cluster): halve the rate, drop any burst."""
        now = self._clock()
        if now - self._last_decrease < self._decrease_interval:
            return
        self._last_decrease = now
        if not self.pacing:
            sent = self._sending_rate(now)
            self._pace_at(sent, sent)
            self._pushed_back_at = sent
        self._refill()
        self._rate = max(self._floor, self._rate / 2.0)
        self._tokens = min(self._tokens, 0.0)

    def succeeded(self) -> None:
        """A request succeeded: raise the rate by one step; stop pacing once recovered."""
        self._outcomes.append(True)
        if not self.pacing:
            return
        self._refill()
        self._rate = min(self._ceiling or float("inf"), self._rate + self._step)
        if self._pushed_back_at is not None and self._rate >= self._pushed_back_at:
            self._pushed_back_at = None  # back at the rate the platform first objected to

    def server_error(self) -> None:
        """The server answered 5xx: slow down when such answers cluster."""
        self._outcomes.append(False)
        if self._outcomes.count(False) >= _SERVER_ERRORS:
            self._outcomes.clear()
            self.throttled()

    def _pace_at(self, rate: float, top: float) -> None:
        """Start a bucket at `rate` per second whose step and floor follow from `top`."""
        floor = self._floor_setting
        self._floor = min(top, (floor if floor is not None else max(1.0, top * 60 / 20)) / 60.0)
        self._step = (self._step_setting or top * 60 / 20) / 60.0
        self._rate = rate
        self._tokens = self._burst
        self._updated = self._clock()

    def _sending_rate(self, now: float) -> float:
        """Requests per second sent over the last few seconds (at least one a second)."""
        while self._sent and self._sent[0] < now - _WINDOW_S:
            self._sent.popleft()
        if not self._sent:
            return 1.0
        span = max(now - self._sent[0], 1.0)
        return max(1.0, len(self._sent) / span)

    def _note_sent(self) -> None:
        now = self._clock()
        self._sent.append(now)
        if len(self._sent) > 4096:
            self._sent.popleft()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(self._burst, self._tokens + elapsed * self._rate)
        self._updated = now
