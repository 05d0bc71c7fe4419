"""Every method sends the catalogue's method and path, ids in the query or the body."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from toolkit.api import CATALOGUE, AsyncPlatformClient, ConfigError
from toolkit.api._http_client import join_url

pytestmark = pytest.mark.anyio

T = "11111111-1111-4111-8111-111111111111"
P = "22222222-2222-4222-8222-222222222222"
E = "33333333-3333-4333-8333-333333333333"
S = "44444444-4444-4444-8444-444444444444"
B = "55555555-5555-4555-8555-555555555555"
VARS = {"data": {"values_redacted": False, "variables": []}}
PAGE = {"data": {"deployments": [], "current_deployment": None, "metadata": {"has_next": False}}}


class Recorder:
    """Record requests and answer each with `data`."""

    def __init__(self, body: Any) -> None:
        self.body = body
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json=self.body)


CASES = [
    ("me", (), {}, "GET", "/users/me", {}, {"data": {}}),
    ("list_teams", (), {}, "GET", "/teams/list", {}, {"data": []}),
    ("list_projects", (T,), {}, "GET", "/projects/list", {"team_id": T}, {"data": []}),
    ("list_environments", (T, P), {}, "GET", "/environments/list",
     {"team_id": T, "project_id": P}, {"data": []}),
    ("list_services", (T, P, E), {}, "GET", "/services/list",
     {"team_id": T, "project_id": P, "environment_id": E}, {"data": []}),
    ("list_service_groups", (T, P, E), {}, "GET", "/service_groups/list",
     {"team_id": T, "project_id": P, "environment_id": E}, {"data": []}),
    ("delete_environment", (T, P, E), {}, "DELETE", "/environments/delete",
     {"team_id": T, "project_id": P, "environment_id": E}, {"data": {"deleted": True, "id": E}}),
    ("list_deployments", (T, P, E, S), {"per_page": 10, "cursor": "2026-01-01T00:00:00Z"},
     "GET", "/deployments/list",
     {"team_id": T, "project_id": P, "environment_id": E, "service_id": S, "per_page": "10",
      "cursor": "2026-01-01T00:00:00Z"}, PAGE),
    ("list_replicas", ("project",), {"team_id": T, "project_id": P}, "GET", "/replicas/list",
     {"type": "project", "team_id": T, "project_id": P}, {"data": []}),
    ("replica_health", (T, P, E, S), {}, "GET", "/replicas/health",
     {"team_id": T, "project_id": P, "environment_id": E, "service_id": S}, {"data": {}}),
    ("restart_replicas", (T, P, E, S), {}, "PUT", "/replicas/restart",
     {"team_id": T, "project_id": P, "environment_id": E, "service_id": S},
     {"data": {"restarted": True}}),
    ("list_volumes", ("environment",), {"team_id": T, "project_id": P, "environment_id": E},
     "GET", "/volumes/list",
     {"type": "environment", "team_id": T, "project_id": P, "environment_id": E}, {"data": []}),
    ("list_variables", ("team",), {"team_id": T}, "GET", "/variables/list",
     {"type": "team", "team_id": T}, VARS),
    ("upsert_variables", ("project",), {"team_id": T, "project_id": P, "variables": {"A": "1"}},
     "POST", "/variables/update",
     {"type": "project", "team_id": T, "project_id": P,
      "variables": [{"name": "A", "value": "1"}]}, VARS),
    ("delete_variables", ("service",),
     {"team_id": T, "project_id": P, "environment_id": E, "service_id": S, "names": ["A", "B"]},
     "DELETE", "/variables/delete",
     {"type": "service", "team_id": T, "project_id": P, "environment_id": E, "service_id": S,
      "variables": [{"name": "A"}, {"name": "B"}]}, VARS),
    ("list_webhooks", ("project",), {"team_id": T, "project_id": P}, "GET", "/webhooks/list",
     {"type": "project", "team_id": T, "project_id": P}, {"data": []}),
    ("list_buckets", (T,), {}, "GET", "/storage/s3/list", {"team_id": T}, {"data": []}),
    ("get_bucket", (T, B), {}, "GET", "/storage/s3/get", {"id": B, "team_id": T}, {"data": {}}),
    ("list_templates", (), {}, "GET", "/templates/list", {}, {"data": []}),
    ("list_api_keys", (), {}, "GET", "/api_keys/list", {}, {"data": []}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "method", "path", "sent", "body"), CASES, ids=[c[0] for c in CASES]
)
async def test_method_sends_its_request(
    make_client, name, args, kwargs, method, path, sent, body
) -> None:
    recorder = Recorder(body)
    client = make_client(recorder)
    await getattr(client, name)(*args, **kwargs)
    (request,) = recorder.requests
    assert request.method == method
    assert request.url.path == path
    if method == "GET":
        assert dict(request.url.params) == sent
        assert request.content == b""
    else:
        assert json.loads(request.content) == sent
        assert not request.url.params


def test_every_public_method_is_covered() -> None:
    public = {
        name
        for name in vars(AsyncPlatformClient)
        if not name.startswith("_") and callable(getattr(AsyncPlatformClient, name))
    }
    covered = {case[0] for case in CASES} | {"iter_deployments"}
    assert public - {"aclose", "from_env", "stats", "reset_stats"} == covered


def test_catalogue_has_every_endpoint_once() -> None:
    paths = [e.path for e in CATALOGUE.values()]
    assert len(paths) == len(set(paths)) == 20
    assert all(name == e.name and e.path.startswith("/") for name, e in CATALOGUE.items())
    changes = {e.name for e in CATALOGUE.values() if not e.idempotent}
    assert changes == {
        "environments.delete",
        "replicas.restart",
        "variables.update",
        "variables.delete",
    }
    assert all((e.method == "GET") == e.idempotent for e in CATALOGUE.values())


@pytest.mark.parametrize(
    "base_url",
    ["http://platform.test/api/go", "http://platform.test/api/go/"],
)
async def test_base_url_prefix_is_kept(make_client, base_url) -> None:
    recorder = Recorder({"data": {}})
    client = make_client(recorder, base_url=base_url)
    await client.me()
    assert str(recorder.requests[0].url) == "http://platform.test/api/go/users/me"


def test_join_url() -> None:
    assert join_url("https://h", "/teams/list") == "https://h/teams/list"
    assert join_url("https://h/p/", "teams/list") == "https://h/p/teams/list"


async def test_endpoint_override(make_client) -> None:
    recorder = Recorder({"data": []})
    client = make_client(
        recorder, base_url="http://h/api/go", endpoints={"teams.list": "/v2/teams"}
    )
    await client.list_teams()
    assert recorder.requests[0].url.path == "/api/go/v2/teams"
    assert client.config.endpoints == {"teams.list": "/v2/teams"}


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"team.list": "/teams"}, "unknown endpoint name"),
        ({"teams.list": "teams/list"}, "starting with '/'"),
        ({"teams.list": "http://elsewhere/teams"}, "starting with '/'"),
    ],
)
def test_bad_overrides_are_refused(make_client, overrides, words) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        make_client(Recorder({}), endpoints=overrides)
    assert caught.value.setting == "endpoints"


async def test_auth_and_user_agent_headers(make_client, token) -> None:
    recorder = Recorder({"data": []})
    client = make_client(recorder, user_agent="audit-test/1")
    await client.list_teams()
    headers = recorder.requests[0].headers
    assert headers["authorization"] == f"Bearer {token}"
    assert headers["user-agent"] == "audit-test/1"
    assert headers["accept"] == "application/json"
