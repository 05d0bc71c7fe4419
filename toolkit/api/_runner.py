"""The request engine: auth, limits, retries, decoding, statistics and logging.

It knows endpoints by catalogue name and nothing about teams or services.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import httpx

from toolkit.api._endpoints import Endpoint, resolve_endpoints
from toolkit.api._exceptions import (
    DeadlineExceeded,
    NetworkError,
    OutcomeUnknown,
    RequestError,
    ResponseTooLarge,
)
from toolkit.api._http_client import Requests, http_client
from toolkit.api._ratelimit import RateLimiter
from toolkit.api._responses import (
    Answer,
    Reply,
    decode_error,
    decode_success,
    read_capped,
    request_id_of,
)
from toolkit.api._retry import RetryPolicy, may_have_arrived, network_kind, parse_retry_after
from toolkit.api._stats import StatsRecorder

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from toolkit.api._config import ClientConfig

T = TypeVar("T")
logger = logging.getLogger("toolkit.api")


class RequestRunner:
    """Send catalogue requests with retries, limits and statistics.

    `sleep`, `rng` and `clock` are injectable so tests are fast and deterministic.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.endpoints = resolve_endpoints(config.endpoints)
        self.stats = StatsRecorder()
        self._policy = RetryPolicy(
            max_attempts=config.max_attempts,
            deadline_s=config.deadline_s,
            base_s=config.backoff_base_s,
            cap_s=config.backoff_cap_s,
            retry_malformed=config.retry_malformed,
            rng=rng,
        )
        self._sleep = sleep
        self._clock = clock
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self.limiter = RateLimiter(config.rate_per_minute, clock=clock, sleep=sleep)
        self._http = http_client(config, transport)
        self._requests = Requests(self._http, config.base_url)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def call(self, name: str, params: Mapping[str, Any], parse: Callable[[Reply], T]) -> T:
        """Run one catalogue request until it succeeds, may not be retried, or gives up."""
        endpoint = self.endpoints[name]
        deadline = self._clock() + self.config.deadline_s
        attempt = 0
        while True:
            attempt += 1
            try:
                return parse(await self._attempt(endpoint, params, attempt, deadline))
            except RequestError as error:
                await self._after_failure(endpoint, error, attempt, deadline)

    async def _after_failure(
        self, endpoint: Endpoint, error: RequestError, attempt: int, deadline: float
    ) -> None:
        """Sleep before the next attempt, or raise the error that ends the call."""
        error.attempts = attempt
        cause = self._policy.cause(error, idempotent=endpoint.idempotent)
        if not endpoint.idempotent and may_have_arrived(error):
            self._give_up(_outcome_unknown(endpoint, error), cause=error)
        if cause is None:
            self._give_up(error)
        if attempt >= self._policy.max_attempts:
            error.gave_up = (
                f"gave up after {attempt} attempts (max_attempts={self._policy.max_attempts})"
            )
            self._give_up(error)
        delay = self._policy.delay(attempt, error.retry_after)
        if self._clock() + delay > deadline:
            error.gave_up = (
                f"gave up after {attempt} attempt(s): waiting {delay:.1f}s more would pass "
                f"the {self.config.deadline_s:g}s deadline (deadline_s)"
            )
            self._give_up(error)
        self.stats.retry(cause, waited_s=delay)
        logger.debug(
            "retry %s after %s in %.3fs (attempt %d)", endpoint.name, cause, delay, attempt
        )
        await self._sleep(delay)

    def _give_up(self, error: RequestError, cause: BaseException | None = None) -> NoReturn:
        self.stats.error(error.type)
        logger.debug("%s failed: %s", error.endpoint, error.type)
        if cause is not None:
            raise error from cause
        raise error

    async def _attempt(
        self, endpoint: Endpoint, params: Mapping[str, Any], attempt: int, deadline: float
    ) -> Reply:
        async with self._semaphore:
            self.stats.throttle_wait(await self.limiter.acquire())
            started = self._clock()
            left = max(deadline - started, 0.001)
            try:
                # timeout_s bounds each read; the deadline bounds the whole answer, body too
                async with asyncio.timeout(left):
                    response = await self._exchange(
                        endpoint, params, min(self.config.timeout_s, left)
                    )
            except TimeoutError:
                self._record(endpoint, attempt, started, None, None)
                raise self._deadline_exceeded(endpoint) from None
            except httpx.TransportError as exc:
                self._record(endpoint, attempt, started, None, None)
                lost = self._network_error(endpoint, exc)
                # keep the httpx error as the cause unless its text would show the token
                leaks = self.config.token.reveal() in str(exc)
                raise lost from (None if leaks else exc)
            except ResponseTooLarge as too_large:
                self._record(endpoint, attempt, started, too_large.status, too_large.request_id)
                raise
        self._record(endpoint, attempt, started, response.status, request_id_of(response))
        if response.is_success:
            self.limiter.succeeded()
            return decode_success(response, endpoint.name, scrub=self.config.token.scrub)
        if response.status == 429:
            self.limiter.throttled()
        elif response.status >= 500:
            self.limiter.server_error()
        error = decode_error(
            response, endpoint.name, scrub=self.config.token.scrub, names_resource=bool(params)
        )
        error.retry_after = parse_retry_after(response.headers.get("retry-after"))
        raise error

    async def _exchange(
        self, endpoint: Endpoint, params: Mapping[str, Any], read_timeout_s: float
    ) -> Answer:
        """Send the request and read its answer as a stream, at most max_response_bytes."""
        request = self._requests.build(
            endpoint.method, endpoint.path, params, timeout_s=read_timeout_s
        )
        response = await self._requests.send(request)
        try:
            return await read_capped(response, self.config.max_response_bytes, endpoint.name)
        finally:
            await response.aclose()

    def _deadline_exceeded(self, endpoint: Endpoint) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"the answer did not finish within the {self.config.deadline_s:g}s deadline "
            "(deadline_s), body included",
            endpoint=endpoint.name,
            kind="deadline",
        )

    def _network_error(self, endpoint: Endpoint, exc: httpx.TransportError) -> NetworkError:
        kind = network_kind(exc)
        detail = self.config.token.scrub(str(exc)) or "no detail"
        return NetworkError(
            f"{kind} error: {type(exc).__name__}: {detail}", endpoint=endpoint.name, kind=kind
        )

    def _record(
        self,
        endpoint: Endpoint,
        attempt: int,
        started: float,
        status: int | None,
        request_id: str | None,
    ) -> None:
        latency = max(0.0, self._clock() - started)
        ok = status is not None and 200 <= status < 300
        self.stats.attempt(endpoint.name, latency, ok=ok)
        logger.debug(
            "%s %s -> %s attempt=%d latency=%.3fs request_id=%s",
            endpoint.method,
            endpoint.name,
            status if status is not None else "network-error",
            attempt,
            latency,
            request_id,
        )


def _outcome_unknown(endpoint: Endpoint, error: RequestError) -> OutcomeUnknown:
    kind = error.kind if isinstance(error, NetworkError) else "unknown"
    unknown = OutcomeUnknown(
        f"{endpoint.method} {endpoint.path} was sent but no answer arrived ({error.message}); "
        "it was not repeated because it changes something",
        endpoint=endpoint.name,
        kind=kind,
    )
    unknown.attempts = error.attempts
    return unknown
