"""Verified scope (`scope_probe`) on a platform faked by an httpx transport: whose reach an
`all` key is judged against."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from toolkit.api import AsyncPlatformClient, ClientConfig, Secret
from toolkit.collect.scope_probe import probe_scopes

# Two teams, one environment and one service each; the key's creator is in team 1 only.
T1, T2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
P1, P2 = "00000000-0000-4000-8000-000000000011", "00000000-0000-4000-8000-000000000012"
E1, E2 = "00000000-0000-4000-8000-000000000021", "00000000-0000-4000-8000-000000000022"
S1, S2 = "00000000-0000-4000-8000-000000000031", "00000000-0000-4000-8000-000000000032"
INVENTORY = {
    "environments": [
        {"id": E1, "team_id": T1, "project_id": P1},
        {"id": E2, "team_id": T2, "project_id": P2},
    ],
    "services": [{"id": S1, "environment_id": E1}, {"id": S2, "environment_id": E2}],
}


def _platform(request: httpx.Request) -> httpx.Response:
    """`/services/list` as the platform answers a key whose creator is not in team 2."""
    if request.url.params["team_id"] == T2:
        body = {"type": "not_found", "status": 404, "message": "team not found"}
        return httpx.Response(404, json=body)
    return httpx.Response(200, json={"data": [{"id": S1, "name": "web"}]})


def _probe(collector_user: str | None, key_user: str | None) -> list[dict[str, Any]]:
    """Probe an editor key with access 'all', created by `key_user`, as the crawl does."""
    collected = {**INVENTORY, "credentials": [{"name": "default", "user_id": collector_user}]}
    key = {"name": "ci", "role": "editor", "access": "all", "user_id": key_user}
    config = ClientConfig(base_url="http://platform.test", token=Secret("plat_x"))

    async def run() -> list[dict[str, Any]]:
        transport = httpx.MockTransport(_platform)
        async with AsyncPlatformClient(config, transport=transport) as client:
            found = await probe_scopes(collected, [{"credentials": [key]}], {"ci": client})
        return found["credential_probes"]

    return asyncio.run(run())


def test_an_all_key_is_judged_against_its_creators_reach_only() -> None:
    """`all` is what the key's creator can access (spec 2.11), not what the collector sees:
    team 2's 404s are mismatches for a key of the collecting user, and may be exactly the
    claim for a key of another user (or of a user not known): nothing is expected there."""
    status = {r["resource_id"]: r["status"] for r in _probe("u1", "u1")}
    assert status == {E1: "match", S1: "match", E2: "mismatch", S2: "mismatch"}
    for collector_user, key_user in [("u1", "u2"), ("u1", None), (None, "u2"), (None, None)]:
        rows = _probe(collector_user, key_user)
        assert {r["resource_id"] for r in rows} == {E1, E2, S1, S2}
        assert {(r["expected_visible"], r["status"]) for r in rows} == {(None, "unknown")}
        assert {r["resource_id"] for r in rows if r["observed_visible"]} == {E1, S1}
