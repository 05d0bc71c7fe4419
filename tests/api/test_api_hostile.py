"""Hostile answers over real loopback HTTP: slow, endless, oversized, cut off, too deep.

Each case runs against `HostileServer` (tests/hostile_server.py) with tiny deadlines and
caps, so it takes well under a second once the client bounds it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hostile_server import HostileServer, cut_off, deep_json, drip, endless, whole

from toolkit.api import (
    AsyncPlatformClient,
    ClientConfig,
    DeadlineExceeded,
    MalformedResponse,
    OutcomeUnknown,
    ResponseTooLarge,
    Secret,
    UnreadableBody,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.anyio

TEAMS = json.dumps({"data": [{"id": "t1", "name": "core"}]}).encode()


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer() as server:
        yield server


def client_for(server: HostileServer, **overrides: Any) -> AsyncPlatformClient:
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "token": Secret("plat_hostile_test_token"),
        "rate_per_minute": None,
        "max_attempts": 3,
        "backoff_base_s": 0.01,
        "backoff_cap_s": 0.02,
        **overrides,
    }
    return AsyncPlatformClient(ClientConfig(**values))


async def test_a_slow_drip_ends_at_the_deadline(hostile: HostileServer) -> None:
    sent = hostile.route("/teams/list", drip(TEAMS, every_s=0.05))
    async with client_for(hostile, timeout_s=1.0, deadline_s=0.5) as client:
        with pytest.raises(DeadlineExceeded) as caught:
            await client.list_teams()
    assert sent.requests == 1  # the deadline is spent: no second attempt
    assert sent.body_bytes < len(TEAMS)
    error = caught.value
    assert error.endpoint == "teams.list" and error.type == "deadline_exceeded"
    assert "deadline_s" in str(error) and "body included" in str(error)


async def test_a_change_cut_by_the_deadline_has_an_unknown_outcome(hostile: HostileServer) -> None:
    sent = hostile.route("/replicas/restart", drip(b'{"data": {}}', every_s=0.05))
    ids = {k: f"{n}1111111-1111-4111-8111-111111111111" for n, k in enumerate("tpes", 1)}
    async with client_for(hostile, timeout_s=1.0, deadline_s=0.3) as client:
        with pytest.raises(OutcomeUnknown):
            await client.restart_replicas(ids["t"], ids["p"], ids["e"], ids["s"])
    assert sent.requests == 1


async def test_an_endless_body_stops_at_the_size_cap(hostile: HostileServer) -> None:
    sent = hostile.route("/teams/list", endless(limit_bytes=64 * 1024 * 1024))
    async with client_for(hostile, max_response_bytes=256 * 1024) as client:
        with pytest.raises(ResponseTooLarge) as caught:
            await client.list_teams()
    assert sent.requests == 1  # never retried
    assert sent.body_bytes < 32 * 1024 * 1024  # the client left long before the end
    assert caught.value.status == 200 and caught.value.type == "response_too_large"
    assert "max_response_bytes" in str(caught.value)


async def test_a_declared_length_over_the_cap_is_refused_unread(hostile: HostileServer) -> None:
    hostile.route("/teams/list", whole(b'{"data": "' + b"x" * 300_000 + b'"}'))
    async with client_for(hostile, max_response_bytes=100_000) as client:
        with pytest.raises(ResponseTooLarge, match="declares 300,012 bytes"):
            await client.list_teams()


@pytest.mark.parametrize("framed", [True, False], ids=["with-length", "until-close"])
async def test_a_body_cut_off_is_retried(hostile: HostileServer, framed: bool) -> None:
    cut = hostile.route("/teams/list", cut_off(TEAMS, framed=framed), times=1)
    good = hostile.route("/teams/list", whole(TEAMS))
    async with client_for(hostile) as client:
        assert await client.list_teams() == [{"id": "t1", "name": "core"}]
        retried = client.stats().retries
    assert (cut.requests, good.requests) == (1, 1)
    assert retried == ({"network:protocol": 1} if framed else {"unreadable_body": 1})


async def test_a_body_cut_off_every_time_fails_within_the_attempts(hostile: HostileServer) -> None:
    cut = hostile.route("/teams/list", cut_off(TEAMS, framed=False))
    async with client_for(hostile, max_attempts=3) as client:
        with pytest.raises(UnreadableBody) as caught:
            await client.list_teams()
    assert cut.requests == 3 and caught.value.attempts == 3


async def test_a_deeply_nested_body_is_a_malformed_answer(hostile: HostileServer) -> None:
    sent = hostile.route("/teams/list", deep_json(200_000))
    async with client_for(hostile) as client:
        with pytest.raises(MalformedResponse) as caught:
            await client.list_teams()
    assert sent.requests == 1  # the same answer would come again
    assert "nests deeper" in str(caught.value)
    assert not isinstance(caught.value, UnreadableBody)
