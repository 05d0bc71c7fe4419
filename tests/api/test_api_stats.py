"""Call statistics: requests, retries by cause, errors by type, latency per endpoint."""

from __future__ import annotations

import json

import httpx
import pytest

from toolkit.api import CallStats, EndpointMissing
from toolkit.api._stats import _percentile

pytestmark = pytest.mark.anyio


async def test_stats_count_requests_retries_errors_and_latency(make_client, fake_time) -> None:
    answers = iter([503, 200, 404, 200])

    def handler(request: httpx.Request) -> httpx.Response:
        fake_time.now += 0.25 if request.url.path == "/teams/list" else 0.5
        status = next(answers)
        if status == 200:
            return httpx.Response(200, json={"data": []})
        body = {"type": "not_found" if status == 404 else "error", "status": status, "message": "x"}
        return httpx.Response(status, json=body)

    client = make_client(handler)
    await client.list_teams()
    with pytest.raises(EndpointMissing):  # a 404 to a call naming no resource
        await client.list_templates()
    await client.list_templates()
    stats = client.stats()
    assert isinstance(stats, CallStats)
    assert stats.requests == 4
    assert stats.retries == {"503": 1}
    assert stats.retries_total == 1
    assert stats.errors == {"endpoint_missing": 1}
    teams = stats.endpoints["teams.list"]
    assert (teams.count, teams.failures) == (2, 1)
    assert teams.total_s == pytest.approx(0.5)
    assert teams.max_s == pytest.approx(0.25)
    templates = stats.endpoints["templates.list"]
    assert (templates.count, templates.failures, templates.p50_s) == (2, 1, 0.5)
    as_dict = stats.as_dict()
    assert as_dict["endpoints"]["teams.list"]["count"] == 2
    json.dumps(as_dict)  # plain values only


async def test_stats_snapshot_is_a_copy_and_reset_clears(make_client) -> None:
    client = make_client(lambda request: httpx.Response(200, json={"data": []}))
    await client.list_teams()
    before = client.stats()
    await client.list_teams()
    assert before.requests == 1
    assert client.stats().requests == 2
    client.reset_stats()
    assert client.stats() == CallStats()


def test_percentiles_use_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert _percentile(values, 0.50) == 50.0
    assert _percentile(values, 0.95) == 95.0
    assert _percentile([3.0], 0.95) == 3.0
    assert _percentile([], 0.5) == 0.0
