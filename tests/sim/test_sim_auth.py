"""Authentication, roles and scope (spec part 5, docs/contracts.md) as a client sees them."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import pytest
from live_api import service_ids

if TYPE_CHECKING:
    from live_api import ApiFactory, Fresh

    from toolkit.sim import Simulator


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("revoked", "The API key has been revoked"),
        ("expired", "The API key has expired"),
        (
            "plat_0000000000000000000000000000000000000000",
            "The API key or access token is not valid",
        ),
    ],
)
def test_bad_keys_are_unauthorized(api: ApiFactory, key: str, message: str) -> None:
    response = api(key).get("/users/me")
    assert response.status_code == 401
    assert response.json()["type"] == "unauthorized"
    assert response.json()["message"] == message


def test_missing_token_is_unauthorized(api: ApiFactory) -> None:
    client = api("admin").client
    response = client.get("/teams/list", headers={"Authorization": ""})
    assert response.status_code == 401 and response.json()["type"] == "unauthorized"


def test_world_keeps_only_hashes(sim: Simulator) -> None:
    stored = {key.token_sha256 for key in sim.world.keys.values()}
    for token in sim.keys.values():
        assert token.startswith("plat_")
        assert hashlib.sha256(token.encode()).hexdigest() in stored
    assert not any(token in repr(sim.world.keys) for token in sim.keys.values())


def test_users_me_describes_the_key(api: ApiFactory, sim: Simulator) -> None:
    me = api("limited").data("/users/me")
    assert set(me) == {"id", "email", "name", "created_at", "api_key"}
    key = me["api_key"]
    assert set(key) == {
        "id", "name", "role", "access", "resources", "created_at", "expires_at", "last_used_at",
    }  # fmt: skip
    assert (key["role"], key["access"]) == ("editor", "limited")
    assert key["resources"] == [{"type": "project", "id": sim.planted["project"]}]
    assert key["last_used_at"] == "2026-01-01T00:00:00Z"
    assert api("session").data("/users/me")["api_key"] is None
    assert api("admin").data("/users/me")["api_key"]["expires_at"] is None


def test_api_keys_list_is_for_browser_sessions_only(api: ApiFactory) -> None:
    refused = api("admin").get("/api_keys/list")
    assert refused.status_code == 403
    assert refused.json()["message"] == "This endpoint cannot be used with an API key"
    keys = api("session").data("/api_keys/list")
    by_status = {k["name"]: k["status"] for k in keys}
    assert by_status["revoked key"] == "revoked" and by_status["expired key"] == "expired"
    assert {k["role"] for k in keys} == {"viewer", "editor", "admin"}
    assert {k["access"] for k in keys} == {"all", "limited"}


def test_limited_key_sees_only_its_project(api: ApiFactory, sim: Simulator) -> None:
    limited, team = api("limited"), sim.planted["team"]
    projects = limited.data("/projects/list", team_id=team)
    assert [p["id"] for p in projects] == [sim.planted["project"]]
    other = service_ids(sim, sim.planted["service_html"])
    hidden = limited.get("/environments/list", team_id=team, project_id=other["project_id"])
    assert hidden.status_code == 404 and hidden.json()["type"] == "not_found"
    assert limited.get("/replicas/health", **other).status_code == 404
    # The team is navigable for the project key, but its own objects stay hidden (404).
    team_hooks = limited.get("/webhooks/list", type="team", team_id=team)
    assert team_hooks.status_code == 404 and team_hooks.json()["type"] == "not_found"
    assert limited.get("/variables/list", type="team", team_id=team).status_code == 404
    assert limited.get("/storage/s3/list", team_id=team).status_code == 404
    visible = limited.data(
        "/webhooks/list", type="project", team_id=team, project_id=projects[0]["id"]
    )
    assert visible
    pods = limited.data("/replicas/list", type="team", team_id=team)
    assert {p["project_id"] for p in pods} == {sim.planted["project"]}


def test_environment_limited_viewer_navigates_to_its_environment(
    api: ApiFactory, sim: Simulator
) -> None:
    viewer, team, project = api("viewer_env"), sim.planted["team"], sim.planted["project"]
    envs = viewer.data("/environments/list", team_id=team, project_id=project)
    assert [e["id"] for e in envs] == [sim.planted["env_staging"]]
    variables = viewer.get("/variables/list", type="project", team_id=team, project_id=project)
    assert variables.status_code == 404  # the project is only navigable for this key
    prod = {"team_id": team, "project_id": project, "environment_id": sim.planted["env_production"]}
    assert viewer.get("/services/list", **prod).status_code == 404


def test_viewer_values_are_redacted_editor_sees_them(api: ApiFactory, sim: Simulator) -> None:
    ids = service_ids(sim, sim.planted["service_no_limits"])
    redacted = api("viewer").data("/variables/list", **ids, type="service")
    assert redacted["values_redacted"] is True
    assert redacted["variables"]
    for variable in redacted["variables"]:
        assert variable["value"] is None and variable["resolved_value"] is None
        assert all(ref["resolved_value"] is None for ref in variable["references"])
    shown = api("editor").data("/variables/list", **ids, type="service")
    assert shown["values_redacted"] is False
    assert all("CANARY" in v["resolved_value"] for v in shown["variables"])


def test_viewer_change_is_read_only(api: ApiFactory, sim: Simulator) -> None:
    ids = service_ids(sim, sim.planted["service_no_limits"])
    body = {**ids, "type": "service", "variables": [{"name": "X", "value": "y"}]}
    for method, path in (("POST", "/variables/update"), ("DELETE", "/variables/delete")):
        response = api("viewer").send(method, path, body)
        assert response.status_code == 403
        assert response.json()["message"] == "This API key is read only"
    assert api("viewer").send("PUT", "/replicas/restart", ids).status_code == 403


def test_editor_cannot_delete(api: ApiFactory, sim: Simulator) -> None:
    env = service_ids(sim, sim.planted["service_html"])
    body = {k: env[k] for k in ("team_id", "project_id", "environment_id")}
    response = api("editor").send("DELETE", "/environments/delete", body)
    assert response.status_code == 403 and response.json()["type"] == "forbidden"
    assert response.json()["message"] != "This API key is read only"


def test_limited_editor_cannot_change_outside_its_scope(fresh: Fresh) -> None:
    other = service_ids(fresh.sim, fresh.sim.planted["service_html"])
    body = {**other, "type": "service", "variables": [{"name": "X", "value": "y"}]}
    response = fresh.api("limited").send("POST", "/variables/update", body)
    assert response.status_code == 404
    inside = service_ids(fresh.sim, fresh.sim.planted["service_no_limits"])
    body = {**inside, "type": "service", "variables": [{"name": "X", "value": "y"}]}
    assert fresh.api("limited").send("POST", "/variables/update", body).status_code == 200


def test_expiry_follows_the_simulated_clock(fresh: Fresh) -> None:
    assert fresh.api("viewer_env").get("/users/me").status_code == 200
    fresh.sim.advance(hours=31 * 24)
    response = fresh.api("viewer_env").get("/users/me")
    assert response.status_code == 401
    assert response.json()["message"] == "The API key has expired"
