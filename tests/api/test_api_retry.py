"""The retry matrix of spec part 7: what is retried, how long it waits, when it gives up."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from toolkit.api import (
    ApiError,
    MalformedResponse,
    NetworkError,
    OutcomeUnknown,
    RateLimited,
    UnreadableBody,
    UpstreamError,
)
from toolkit.api._retry import RetryPolicy, parse_retry_after

pytestmark = pytest.mark.anyio

OK = {"data": []}


class Script:
    """Answer requests from a list of responses or exceptions; count the calls."""

    def __init__(self, *steps: httpx.Response | Exception) -> None:
        self.steps = list(steps)
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        step = self.steps[min(self.calls, len(self.steps) - 1)]
        self.calls += 1
        if isinstance(step, Exception):
            raise step
        return step


TYPES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
}


def failure(status: int, **headers: str) -> httpx.Response:
    body = {"type": TYPES.get(status, "error"), "status": status, "message": "nope"}
    return httpx.Response(status, json=body, headers=headers)


@pytest.mark.parametrize("status", [429, 502, 503, 504])
async def test_retryable_statuses_are_retried(make_client, status) -> None:
    script = Script(failure(status), failure(status), httpx.Response(200, json=OK))
    client = make_client(script, max_attempts=5)
    assert await client.list_teams() == []
    assert script.calls == 3
    assert client.stats().retries == {str(status): 2}


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 500])
async def test_other_statuses_are_never_retried(make_client, fake_time, status) -> None:
    script = Script(failure(status), httpx.Response(200, json=OK))
    client = make_client(script, max_attempts=5)
    with pytest.raises(ApiError):
        await client.list_teams()
    assert script.calls == 1
    assert fake_time.sleeps == []


async def test_attempt_cap(make_client) -> None:
    script = Script(failure(503))
    client = make_client(script, max_attempts=4)
    with pytest.raises(UpstreamError) as caught:
        await client.list_teams()
    assert script.calls == 4
    assert caught.value.attempts == 4
    assert "gave up after 4 attempts" in str(caught.value)


async def test_deadline_is_never_slept_past(make_client, fake_time) -> None:
    script = Script(failure(503))
    client = make_client(
        script,
        rng=lambda: 1.0,
        max_attempts=50,
        deadline_s=10.0,
        backoff_base_s=1.0,
        backoff_cap_s=100.0,
    )
    start = fake_time.now
    with pytest.raises(UpstreamError) as caught:
        await client.list_teams()
    assert fake_time.now - start <= 10.0
    assert fake_time.sleeps == [1.0, 2.0, 4.0]  # the next wait, 8 s, would pass the deadline
    assert script.calls == 4
    assert "deadline" in str(caught.value)


async def test_retry_after_seconds_is_a_minimum_wait(make_client, fake_time) -> None:
    script = Script(failure(429, **{"Retry-After": "7"}), httpx.Response(200, json=OK))
    client = make_client(script, rng=lambda: 0.0)
    await client.list_teams()
    assert fake_time.sleeps == [7.0]


async def test_backoff_wins_when_longer_than_retry_after(make_client, fake_time) -> None:
    script = Script(failure(429, **{"Retry-After": "1"}), httpx.Response(200, json=OK))
    client = make_client(script, rng=lambda: 1.0, backoff_base_s=3.0)
    await client.list_teams()
    assert fake_time.sleeps == [3.0]


async def test_retry_after_http_date(make_client, fake_time) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    script = Script(failure(503, **{"Retry-After": when}), httpx.Response(200, json=OK))
    client = make_client(script, rng=lambda: 0.0)
    await client.list_teams()
    assert len(fake_time.sleeps) == 1
    assert 27.0 <= fake_time.sleeps[0] <= 30.0


async def test_retry_after_past_the_deadline_gives_up_at_once(make_client, fake_time) -> None:
    script = Script(failure(429, **{"Retry-After": "600"}), httpx.Response(200, json=OK))
    client = make_client(script, deadline_s=60.0)
    with pytest.raises(RateLimited) as caught:
        await client.list_teams()
    assert caught.value.retry_after == 600.0
    assert fake_time.sleeps == []
    assert script.calls == 1
    assert "deadline" in str(caught.value)


async def test_change_is_not_repeated_after_a_read_error(make_client, ids) -> None:
    script = Script(httpx.ReadError("connection reset"), httpx.Response(200, json=OK))
    client = make_client(script, max_attempts=5)
    with pytest.raises(OutcomeUnknown) as caught:
        await client.upsert_variables("team", team_id=ids["team_id"], variables={"A": "1"})
    assert script.calls == 1
    assert isinstance(caught.value, NetworkError)
    assert "may have succeeded" in str(caught.value)
    assert "list the resource" in str(caught.value)
    assert client.stats().errors == {"outcome_unknown": 1}


@pytest.mark.parametrize(
    "exc", [httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("gone"), httpx.WriteError("x")]
)
async def test_restart_is_not_repeated_after_it_may_have_arrived(make_client, ids, exc) -> None:
    script = Script(exc, httpx.Response(200, json={"data": {"restarted": True}}))
    client = make_client(script, max_attempts=5)
    with pytest.raises(OutcomeUnknown):
        await client.restart_replicas(**ids)
    assert script.calls == 1


async def test_change_is_repeated_after_a_connect_error(make_client, ids) -> None:
    script = Script(httpx.ConnectError("refused"), httpx.Response(200, json={"data": {"a": 1}}))
    client = make_client(script, max_attempts=5)
    assert await client.restart_replicas(**ids) == {"a": 1}
    assert script.calls == 2
    assert client.stats().retries == {"network:connect": 1}


async def test_change_is_repeated_after_503(make_client, ids) -> None:
    body = {"data": {"values_redacted": False, "variables": []}}
    script = Script(failure(503), httpx.Response(200, json=body))
    client = make_client(script, max_attempts=5)
    result = await client.upsert_variables("team", team_id=ids["team_id"], variables={"A": "1"})
    assert result.variables == []
    assert script.calls == 2


async def test_read_is_repeated_after_a_read_error(make_client) -> None:
    script = Script(httpx.ReadError("reset"), httpx.Response(200, json=OK))
    client = make_client(script)
    assert await client.list_templates() == []
    assert script.calls == 2
    assert client.stats().retries == {"network:read": 1}


async def test_a_success_without_envelope_is_not_retried_by_default(make_client) -> None:
    script = Script(httpx.Response(200, json={"items": []}), httpx.Response(200, json=OK))
    client = make_client(script)
    with pytest.raises(MalformedResponse) as caught:
        await client.list_teams()
    assert not isinstance(caught.value, UnreadableBody)
    assert script.calls == 1


async def test_a_success_without_envelope_is_retried_on_reads_when_asked(make_client, ids) -> None:
    script = Script(httpx.Response(200, json={"items": []}), httpx.Response(200, json=OK))
    client = make_client(script, retry_malformed=True)
    assert await client.list_teams() == []
    assert script.calls == 2
    post = Script(httpx.Response(200, json={"items": []}), httpx.Response(200, json=OK))
    client = make_client(post, retry_malformed=True)
    with pytest.raises(MalformedResponse):
        await client.restart_replicas(**ids)
    assert post.calls == 1


@pytest.mark.parametrize(
    "body",
    [b'{"data": [', b"<html>bad gateway</html>", b'{"data": "\xff\xfe"}', b""],
)
async def test_a_body_that_does_not_parse_is_retried_on_reads(make_client, body) -> None:
    script = Script(httpx.Response(200, content=body), httpx.Response(200, json=OK))
    client = make_client(script)
    assert await client.list_teams() == []
    assert script.calls == 2
    assert client.stats().retries == {"unreadable_body": 1}


async def test_a_body_that_never_parses_fails_after_the_attempt_budget(make_client) -> None:
    script = Script(*(httpx.Response(200, content=b'{"data": [{"id"') for _ in range(3)))
    client = make_client(script, max_attempts=3)
    with pytest.raises(UnreadableBody) as caught:
        await client.list_teams()
    assert script.calls == 3 and caught.value.attempts == 3
    assert caught.value.type == "malformed_response"
    assert "does not parse" in str(caught.value)


async def test_a_change_whose_answer_does_not_parse_is_not_repeated(make_client, ids) -> None:
    post = Script(httpx.Response(200, content=b'{"data": '), httpx.Response(200, json=OK))
    client = make_client(post)
    with pytest.raises(UnreadableBody):
        await client.restart_replicas(**ids)
    assert post.calls == 1


def test_backoff_is_full_jitter_within_bounds() -> None:
    rng = random.Random(7)
    policy = RetryPolicy(max_attempts=10, deadline_s=60, base_s=0.5, cap_s=8.0, rng=rng.random)
    for attempt in range(1, 10):
        ceiling = min(8.0, 0.5 * 2 ** (attempt - 1))
        waits = [policy.backoff(attempt) for _ in range(200)]
        assert all(0.0 <= w <= ceiling for w in waits)
        assert max(waits) > ceiling * 0.9  # the whole range is used
    fixed = RetryPolicy(max_attempts=3, deadline_s=9, base_s=1, cap_s=4, rng=lambda: 1.0)
    assert [fixed.backoff(n) for n in (1, 2, 3, 4, 50)] == [1.0, 2.0, 4.0, 4.0, 4.0]
    assert fixed.delay(1, retry_after=3.5) == 3.5


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", 7.0),
        (" 2.5 ", 2.5),
        ("-3", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
        ("inf", None),
        ("Thu, 01 Jan 2026 00:01:00 GMT", 60.0),
        ("Wed, 31 Dec 2025 23:59:00 GMT", 0.0),
    ],
)
def test_parse_retry_after(value, expected) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after(value, now=now) == expected
