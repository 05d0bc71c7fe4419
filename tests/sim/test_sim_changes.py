"""Changing things: variables (incl. protected ones), replica restarts, environment deletion."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from live_api import service_ids

if TYPE_CHECKING:
    from live_api import Fresh

    from toolkit.sim import Simulator


def _env(sim: Simulator, env_key: str) -> dict[str, str]:
    env = sim.world.environments[sim.planted[env_key]]
    return {"team_id": env.team_id, "project_id": env.project_id, "environment_id": env.id}


def test_editor_upserts_variables_and_sees_the_result(fresh: Fresh) -> None:
    ids = service_ids(fresh.sim, fresh.sim.planted["service_no_limits"])
    body = {**ids, "type": "service", "variables": [{"name": "NEW_ONE", "value": "v1"}]}
    response = fresh.api("editor").send("POST", "/variables/update", body)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["values_redacted"] is False
    created = next(v for v in data["variables"] if v["name"] == "NEW_ONE")
    assert (created["value"], len(created["updates"])) == ("v1", 1)
    body["variables"] = [{"name": "NEW_ONE", "value": "v2"}]
    data = fresh.api("editor").send("POST", "/variables/update", body).json()["data"]
    changed = next(v for v in data["variables"] if v["name"] == "NEW_ONE")
    assert (changed["value"], len(changed["updates"])) == ("v2", 2)


def test_admin_deletes_variables(fresh: Fresh) -> None:
    team = fresh.sim.planted["team"]
    body = {"type": "team", "team_id": team, "variables": [{"name": "REGISTRY_TOKEN"}]}
    response = fresh.api("admin").send("DELETE", "/variables/delete", body)
    assert response.status_code == 200, response.text
    names = [v["name"] for v in response.json()["data"]["variables"]]
    assert "REGISTRY_TOKEN" not in names and names
    again = fresh.api("admin").send("DELETE", "/variables/delete", body)
    assert again.status_code == 404


def test_protected_variables_refuse_change_and_delete(fresh: Fresh) -> None:
    ids = service_ids(fresh.sim, fresh.sim.planted["service_database"])
    before = fresh.api("admin").data("/variables/list", **ids, type="service")
    update = {**ids, "type": "service", "variables": [{"name": "POSTGRES_PASSWORD", "value": "x"}]}
    for method, path, body in (
        ("POST", "/variables/update", update),
        ("DELETE", "/variables/delete", {**update, "variables": [{"name": "DATABASE_URL"}]}),
    ):
        response = fresh.api("admin").send(method, path, body)
        assert response.status_code == 403, response.text
        assert response.json()["type"] == "forbidden"
        assert body["variables"][0]["name"] in response.json()["message"]
    assert fresh.api("admin").data("/variables/list", **ids, type="service") == before
    protected = [v for v in before["variables"] if v["provided"]]
    assert {v["name"] for v in protected} == {"POSTGRES_PASSWORD", "DATABASE_URL"}


def test_references_resolve_or_say_they_do_not(fresh: Fresh) -> None:
    sim = fresh.sim
    api_ids = service_ids(sim, sim.planted["service_unresolved_refs"])
    variables = fresh.api("admin").data("/variables/list", **api_ids, type="service")
    by_name = {v["name"]: v for v in variables["variables"]}
    for name in ("BROKEN_REF", "LEGACY_DB_URL"):
        (reference,) = by_name[name]["references"]
        assert reference["resolved"] is False and reference["resolved_value"] is None
    web_ids = service_ids(sim, sim.planted["service_no_limits"])
    web = fresh.api("admin").data("/variables/list", **web_ids, type="service")
    url = next(v for v in web["variables"] if v["name"] == "DATABASE_URL")
    (reference,) = url["references"]
    assert reference["resolved"] is True
    assert reference["source_id"] == sim.planted["service_database"]
    assert url["value"].startswith("${{service.") and "CANARY" in url["resolved_value"]


def test_restart_rolls_the_pods(fresh: Fresh) -> None:
    ids = service_ids(fresh.sim, fresh.sim.planted["service_restarts"])
    before = fresh.api("editor").data("/replicas/health", **ids)
    assert sum(p["restart_count"] for p in before["replicas"]) == 27
    response = fresh.api("editor").send("PUT", "/replicas/restart", ids)
    assert response.json() == {"data": {"restarted": True}}
    after = fresh.api("editor").data("/replicas/health", **ids)
    assert sum(p["restart_count"] for p in after["replicas"]) == 0
    assert {p["pod_created_at"] for p in after["replicas"]} == {"2026-01-01T00:00:00Z"}


def test_last_environment_cannot_be_deleted(fresh: Fresh) -> None:
    body = _env(fresh.sim, "env_single")
    response = fresh.api("admin").send("DELETE", "/environments/delete", body)
    assert response.status_code == 409 and response.json()["type"] == "conflict"
    envs = fresh.api("admin").data(
        "/environments/list", team_id=body["team_id"], project_id=body["project_id"]
    )
    assert [e["id"] for e in envs] == [body["environment_id"]]


def test_environment_deletion_removes_services_and_volumes(fresh: Fresh) -> None:
    sim = fresh.sim
    body = _env(sim, "env_development")
    volumes = fresh.api("admin").data("/volumes/list", **body, type="environment")
    assert sim.planted["volume_unattached"] in {v["id"] for v in volumes}
    response = fresh.api("admin").send("DELETE", "/environments/delete", body)
    assert response.json() == {"data": {"deleted": True, "id": body["environment_id"]}}
    assert fresh.api("admin").get("/services/list", **body).status_code == 404
    team_volumes = fresh.api("admin").data("/volumes/list", type="team", team_id=body["team_id"])
    assert sim.planted["volume_unattached"] not in {v["id"] for v in team_volumes}


def test_a_name_listed_twice_is_deleted_once(fresh: Fresh) -> None:
    team = fresh.sim.planted["team"]
    body = {"type": "team", "team_id": team, "variables": [{"name": "REGISTRY_TOKEN"}] * 2}
    response = fresh.api("admin").send("DELETE", "/variables/delete", body)
    assert response.status_code == 200, response.text


def test_advancing_while_serving_never_breaks_a_request(fresh: Fresh) -> None:
    sim, admin = fresh.sim, fresh.api("admin")
    team = sim.planted["team"]
    failures: list[int] = []

    def clock() -> None:
        for _ in range(40):
            sim.advance(hours=6)

    ticking = threading.Thread(target=clock)
    ticking.start()
    while ticking.is_alive():
        for path, params in (
            ("/replicas/list", {"type": "team", "team_id": team}),
            ("/volumes/list", {"type": "team", "team_id": team}),
        ):
            status = admin.get(path, **params).status_code
            if status != 200:
                failures.append(status)
    ticking.join()
    assert failures == []
    assert sim.now.isoformat() == "2026-01-11T00:00:00+00:00"
