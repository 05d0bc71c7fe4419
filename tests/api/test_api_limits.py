"""The request-rate limit (token bucket with AIMD) and the concurrency limit."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from toolkit.api._ratelimit import RateLimiter

pytestmark = pytest.mark.anyio


def limiter_on(fake_time, rate: float, **kwargs) -> RateLimiter:
    return RateLimiter(rate, clock=fake_time.clock, sleep=fake_time.sleep, **kwargs)


async def test_bucket_allows_a_burst_then_paces(fake_time) -> None:
    limiter = limiter_on(fake_time, 60, burst=3)  # one request per second
    start = fake_time.now
    waits = [await limiter.acquire() for _ in range(6)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert waits[3:] == pytest.approx([1.0, 1.0, 1.0])
    assert fake_time.now - start == pytest.approx(3.0)


async def test_bucket_refills_while_idle_up_to_the_burst(fake_time) -> None:
    limiter = limiter_on(fake_time, 60, burst=2)
    for _ in range(2):
        await limiter.acquire()
    fake_time.now += 100.0
    assert [await limiter.acquire() for _ in range(2)] == [0.0, 0.0]
    assert await limiter.acquire() == pytest.approx(1.0)


async def test_default_rate_is_600_per_minute(fake_time) -> None:
    limiter = limiter_on(fake_time, 600, burst=1)
    start = fake_time.now
    for _ in range(11):
        await limiter.acquire()
    assert fake_time.now - start == pytest.approx(1.0)


def test_aimd_halves_on_429_and_recovers_additively(fake_time) -> None:
    limiter = limiter_on(fake_time, 600, floor_per_minute=60, step_per_minute=30)
    limiter.throttled()
    assert limiter.rate_per_minute == pytest.approx(300)
    limiter.throttled()  # same instant: one decrease per interval
    assert limiter.rate_per_minute == pytest.approx(300)
    for _ in range(5):
        fake_time.now += 1.0
        limiter.throttled()
    assert limiter.rate_per_minute == pytest.approx(60)  # never below the floor
    limiter.succeeded()
    limiter.succeeded()
    assert limiter.rate_per_minute == pytest.approx(120)
    for _ in range(100):
        limiter.succeeded()
    assert limiter.rate_per_minute == pytest.approx(600)  # never above the configured rate


async def test_throttle_drops_the_saved_burst(fake_time) -> None:
    limiter = limiter_on(fake_time, 60, burst=5)
    limiter.throttled()  # now 30 per minute, bucket empty
    assert await limiter.acquire() == pytest.approx(2.0)


async def test_client_slows_down_when_429s_arrive(make_client, fake_time) -> None:
    answers = iter([429, 429, 200])

    def handler(request: httpx.Request) -> httpx.Response:
        status = next(answers)
        if status == 429:
            body = {"type": "rate_limited", "status": 429, "message": "slow down"}
            return httpx.Response(429, json=body, headers={"Retry-After": "1"})
        return httpx.Response(200, json={"data": []})

    client = make_client(handler, rate_per_minute=600.0, max_attempts=5)
    limiter = client._runner.limiter
    assert limiter is not None
    await client.list_teams()
    assert limiter.rate_per_minute < 600.0
    assert limiter.rate_per_minute >= 150.0  # halved at most once per second, then recovered


def test_rate_limit_none_disables_it(make_client) -> None:
    client = make_client(lambda request: httpx.Response(200, json={"data": []}))
    assert client._runner.limiter is None


async def test_concurrency_limit_holds(make_client) -> None:
    in_flight = 0
    peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.002)
        in_flight -= 1
        return httpx.Response(200, json={"data": []})

    client = make_client(handler, concurrency=3)
    await asyncio.gather(*(client.list_templates() for _ in range(25)))
    assert peak == 3
    assert client.stats().requests == 25
