"""A client-side request-rate limit: a token bucket whose rate adapts to 429s (AIMD)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


class RateLimiter:
    """Spend one token per request; tokens refill at the current rate, up to `burst`.

    The rate halves when the server answers 429 (at most once per `decrease_interval_s`,
    never below the floor) and grows back by a fixed step per success, up to the
    configured rate: additive increase, multiplicative decrease. `clock` and `sleep` are
    injectable so tests run without waiting.

    >>> limiter = RateLimiter(600)           # 10 requests per second, burst of 10
    >>> limiter.throttled(); limiter.rate_per_minute
    300.0
    """

    def __init__(
        self,
        rate_per_minute: float,
        *,
        burst: int = 10,
        floor_per_minute: float | None = None,
        step_per_minute: float | None = None,
        decrease_interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if rate_per_minute <= 0 or burst < 1:
            raise ValueError("rate_per_minute must be > 0 and burst >= 1")
        self._max = rate_per_minute / 60.0
        floor = floor_per_minute if floor_per_minute is not None else max(1.0, rate_per_minute / 20)
        self._floor = min(self._max, floor / 60.0)
        self._step = (step_per_minute or rate_per_minute / 20) / 60.0
        self._rate = self._max
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._updated = clock()
        self._decrease_interval = decrease_interval_s
        self._last_decrease = -float("inf")
        self._lock = asyncio.Lock()

    @property
    def rate_per_minute(self) -> float:
        """The current allowed rate, in requests per minute."""
        return self._rate * 60.0

    async def acquire(self) -> float:
        """Wait for a token; return how many seconds were spent waiting."""
        waited = 0.0
        async with self._lock:
            while True:
                self._refill()
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return waited
                pause = (1.0 - self._tokens) / self._rate
                await self._sleep(pause)
                waited += pause

    def throttled(self) -> None:
        """The server said 429: halve the rate and drop any saved-up burst."""
        self._refill()
        now = self._clock()
        if now - self._last_decrease < self._decrease_interval:
            return
        self._last_decrease = now
        self._rate = max(self._floor, self._rate / 2.0)
        self._tokens = min(self._tokens, 0.0)

    def succeeded(self) -> None:
        """A request succeeded: raise the rate by one step, up to the configured rate."""
        self._refill()
        self._rate = min(self._max, self._rate + self._step)

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(self._burst, self._tokens + elapsed * self._rate)
        self._updated = now
