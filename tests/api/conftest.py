"""Fixtures for the API client tests: a fake clock, and clients on an httpx.MockTransport."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from toolkit.api import AsyncPlatformClient, ClientConfig, PlatformClient, Secret

TOKEN = "plat_CANARY0secret0token0do0not0leak"
BASE_URL = "http://platform.test"

Handler = Callable[[httpx.Request], Any]


class FakeTime:
    """A monotonic clock that only moves when someone sleeps (or a test moves it)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


def make_config(**overrides: Any) -> ClientConfig:
    values: dict[str, Any] = {
        "base_url": BASE_URL,
        "token": Secret(TOKEN),
        "rate_per_minute": None,
        "max_attempts": 3,
    }
    values.update(overrides)
    return ClientConfig(**values)


@pytest.fixture
def make_client(fake_time: FakeTime) -> Callable[..., AsyncPlatformClient]:
    """Build an async client whose requests go to `handler`; keywords override the config."""

    def build(handler: Handler, *, rng: Callable[[], float] = lambda: 0.5, **config: Any):
        return AsyncPlatformClient(
            make_config(**config),
            transport=httpx.MockTransport(handler),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
            rng=rng,
        )

    return build


@pytest.fixture
def make_sync_client(fake_time: FakeTime) -> Iterator[Callable[..., PlatformClient]]:
    """Build blocking clients on a MockTransport; they are closed after the test."""
    made: list[PlatformClient] = []

    def build(handler: Handler, **config: Any) -> PlatformClient:
        client = PlatformClient(
            make_config(**config),
            transport=httpx.MockTransport(handler),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
        )
        made.append(client)
        return client

    yield build
    for client in made:
        client.close()


@pytest.fixture
def ids() -> dict[str, str]:
    """One UUID per level, as keyword arguments."""
    return {
        "team_id": "11111111-1111-4111-8111-111111111111",
        "project_id": "22222222-2222-4222-8222-222222222222",
        "environment_id": "33333333-3333-4333-8333-333333333333",
        "service_id": "44444444-4444-4444-8444-444444444444",
    }


@pytest.fixture
def token() -> str:
    """The canary token every test client sends."""
    return TOKEN
