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


async def test_without_a_ceiling_nothing_waits_until_the_platform_pushes_back(
    fake_time,
) -> None:
    limiter = limiter_on(fake_time, None)
    waits = []
    for _ in range(500):  # 100 a second for five seconds
        waits.append(await limiter.acquire())
        fake_time.now += 0.01
    assert waits == [0.0] * 500
    assert limiter.rate_per_minute is None and not limiter.pacing


async def test_a_429_paces_at_half_the_sending_rate_then_pacing_stops(fake_time) -> None:
    limiter = limiter_on(fake_time, None)
    for _ in range(500):  # 100 requests a second
        await limiter.acquire()
        fake_time.now += 0.01
    limiter.throttled()
    assert limiter.pacing
    assert limiter.rate_per_minute == pytest.approx(50 * 60, rel=0.05)
    before = fake_time.now
    for _ in range(60):
        await limiter.acquire()
    assert fake_time.now - before > 0.5  # paced: 60 requests at about 50 a second
    for _ in range(100):  # additive recovery, 5 a second per success
        limiter.succeeded()
    assert not limiter.pacing  # back where the platform objected: unpaced again
    assert await limiter.acquire() == 0.0


def test_clustered_server_errors_slow_the_client_down(fake_time) -> None:
    limiter = limiter_on(fake_time, None)
    for _ in range(4):
        limiter.server_error()
        limiter.succeeded()
    assert not limiter.pacing  # scattered 5xx answers are retried, not a reason to pace
    limiter.server_error()
    assert limiter.pacing


async def test_client_default_sends_unpaced_and_counts_429_waits(make_client, fake_time) -> None:
    answers = iter([429, 200, *([200] * 30)])

    def handler(request: httpx.Request) -> httpx.Response:
        if next(answers) == 429:
            body = {"type": "rate_limited", "status": 429, "message": "slow down"}
            return httpx.Response(429, json=body, headers={"Retry-After": "2"})
        return httpx.Response(200, json={"data": []})

    client = make_client(handler, max_attempts=3)  # rate_per_minute=None, as by default
    await client.list_teams()
    stats = client.stats()
    assert stats.retry_wait_s["429"] >= 2.0  # the Retry-After was honoured and counted
    for _ in range(30):
        await client.list_teams()
    assert stats.throttle_wait_s == 0.0
    assert not client._runner.limiter.pacing  # recovered after the one 429


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
