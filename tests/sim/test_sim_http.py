"""The wire format: envelope, request ids, error object, validation details, record shapes."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from live_api import ApiFactory, service_ids

if TYPE_CHECKING:
    from toolkit.sim import Simulator, SimulatorServer

SERVICE_FIELDS = {
    "id", "name", "description", "type", "created_at", "updated_at", "environment_id",
    "git_repository", "git_repository_owner", "gitprovider_installation_id", "runtime_name",
    "database_type", "database_version", "template_instance_id", "permissions",
    "detected_ports", "config", "current_deployment", "last_deployment",
    "last_successful_deployment", "service_group", "template",
}  # fmt: skip
CONFIG_FIELDS = {
    "auto_deploy", "backup_retention_count", "backup_schedule", "builder", "database_config",
    "container_builder_build_context", "container_builder_dockerfile_path",
    "buildpack_builder_build_command", "buildpack_builder_install_command", "git_branch",
    "git_tag", "health_check", "hosts", "icon", "image", "run_command", "init_containers",
    "is_public", "ports", "protected_variables", "replicas", "resources",
    "s3_backup_bucket_id", "security_context", "variable_mounts", "volumes", "watch_paths",
}  # fmt: skip
DEPLOYMENT_FIELDS = {
    "id", "service_id", "attempts", "builder", "commit_author", "commit_message", "commit_sha",
    "created_at", "queued_at", "started_at", "completed_at", "updated_at", "crashing_reasons",
    "container_builder_build_context", "container_builder_dockerfile_path",
    "buildpack_builder_build_command", "buildpack_builder_install_command", "error",
    "status_message", "git_branch", "image", "job_name", "run_command", "replica_events",
    "replica_restarts", "status",
}  # fmt: skip
VOLUME_FIELDS = {
    "can_delete", "capacity_gb", "created_at", "description", "environment_id", "id",
    "is_available", "is_database", "is_deleting", "is_pending_resize", "mount_path",
    "mount_status", "mounted_on_service_id", "name", "project_id", "requested_gb", "status",
    "team_id", "type", "used_gb",
}  # fmt: skip
VARIABLE_FIELDS = {"name", "type", "value", "resolved_value", "provided", "updates", "references"}
REFERENCE_FIELDS = {
    "key", "resolved", "resolved_value", "source_icon", "source_id", "source_name",
    "source_type", "token",
}  # fmt: skip
BUCKET_FIELDS = {"id", "name", "endpoint", "region", "bucket", "access_key", "created_at"}
BUCKET_FIELDS |= {"updated_at"}
WEBHOOK_FIELDS = {"id", "type", "team_id", "project_id", "url", "events", "created_at"}
TEMPLATE_FIELDS = {"created_at", "description", "display_rank", "icon", "id", "immutable"}
TEMPLATE_FIELDS |= {"keywords", "name", "resource_recommendations", "version", "definition"}
GROUP_FIELDS = {"created_at", "description", "environment_id", "icon", "id", "name"}
GROUP_FIELDS |= {"template_id"}
POD_FIELDS = {"events", "runtime_name", "pod_created_at", "restart_count", "status"}


def _reads(sim: Simulator) -> list[tuple[str, dict[str, str]]]:
    """One valid call of every reading endpoint, naming planted resources."""
    ids = service_ids(sim, sim.planted["service_crashing"])
    env = {k: ids[k] for k in ("team_id", "project_id", "environment_id")}
    team = ids["team_id"]
    bucket = next(iter(sim.world.buckets_of[team]))
    return [
        ("/users/me", {}),
        ("/teams/list", {}),
        ("/projects/list", {"team_id": team}),
        ("/environments/list", {"team_id": team, "project_id": ids["project_id"]}),
        ("/services/list", env),
        ("/deployments/list", ids),
        ("/replicas/health", ids),
        ("/replicas/list", {**ids, "type": "service"}),
        ("/volumes/list", {**env, "type": "environment"}),
        ("/variables/list", {**ids, "type": "service"}),
        ("/storage/s3/list", {"team_id": team}),
        ("/storage/s3/get", {"team_id": team, "id": bucket}),
        ("/webhooks/list", {"type": "team", "team_id": team}),
        ("/templates/list", {}),
        ("/service_groups/list", env),
    ]


def test_every_read_answers_an_envelope_with_a_request_id(sim: Simulator, api: ApiFactory) -> None:
    admin = api("admin")
    for path, params in _reads(sim):
        response = admin.get(path, **params)
        assert response.status_code == 200, (path, response.text)
        assert response.headers["content-type"].startswith("application/json")
        assert list(response.json()) == ["data"], path
        assert uuid.UUID(response.headers["x-request-id"])


@pytest.mark.parametrize(
    ("method", "path", "status", "error_type"),
    [
        ("GET", "/no/such/path", 404, "not_found"),
        ("POST", "/teams/list", 405, "method_not_allowed"),
        ("GET", "/variables/update", 405, "method_not_allowed"),
        ("GET", "/services/list", 422, "validation_error"),
    ],
)
def test_errors_carry_the_error_object_and_matching_request_id(
    api: ApiFactory, method: str, path: str, status: int, error_type: str
) -> None:
    response = api("admin").client.request(method, path)
    body = response.json()
    assert response.status_code == status
    assert body["type"] == error_type and body["status"] == status
    assert body["request_id"] == response.headers["x-request-id"]
    assert isinstance(body["message"], str) and body["message"]


def test_unauthenticated_and_unknown_paths_still_get_request_ids(server: SimulatorServer) -> None:
    for path in ("/users/me", "/nothing"):
        response = httpx.get(server.base_url + path)
        assert response.json()["request_id"] == response.headers["x-request-id"]


def test_validation_details_follow_rule_two(api: ApiFactory, sim: Simulator) -> None:
    team = sim.planted["team"]
    response = api("admin").get("/services/list", team_id="not-a-uuid", project_id=team)
    body = response.json()
    assert response.status_code == 422
    assert body["message"] == "validation failed"
    assert body["details"] == [
        'expected property team_id to be a valid uuid (query.team_id: "not-a-uuid")',
        "expected required property environment_id to be present (query.environment_id: undefined)",
    ]
    response = api("admin").get("/webhooks/list", type="org", team_id=team)
    assert response.json()["details"] == [
        'expected property type to be one of team, project (query.type: "org")'
    ]


def test_body_validation_names_body_fields(api: ApiFactory, sim: Simulator) -> None:
    response = api("admin").send("POST", "/variables/update", {"type": "team"})
    details = response.json()["details"]
    assert response.status_code == 422
    assert "expected required property variables to be present (body.variables: undefined)" in (
        details
    )
    assert "expected required property team_id to be present (body.team_id: undefined)" in details
    body = {"type": "team", "team_id": sim.planted["team"], "variables": [{"value": "x"}]}
    response = api("admin").send("POST", "/variables/update", body)
    assert response.json()["details"] == [
        "expected required property name to be present (body.variables[0].name: undefined)"
    ]


def test_malformed_json_is_a_bad_request_not_a_crash(api: ApiFactory) -> None:
    client = api("admin").client
    for content in (b'{"type": "team",', b"[1, 2]", b"\xff\xfe"):
        response = client.post(
            "/variables/update", content=content, headers={"content-type": "application/json"}
        )
        assert response.status_code == 400, content
        assert response.json()["type"] == "bad_request"


def test_unknown_but_valid_ids_are_not_found(api: ApiFactory, sim: Simulator) -> None:
    ids = service_ids(sim, sim.planted["service_crashing"])
    missing = str(uuid.UUID(int=1, version=4))
    for key in ids:
        response = api("admin").get("/replicas/health", **{**ids, key: missing})
        assert response.status_code == 404, key
        assert response.json()["type"] == "not_found"
    bucket = api("admin").get("/storage/s3/get", team_id=ids["team_id"], id=missing)
    assert bucket.status_code == 404


def _keys(record: dict[str, Any]) -> set[str]:
    return set(record)


def test_service_shape_is_the_spec_s(api: ApiFactory, sim: Simulator) -> None:
    ids = service_ids(sim, sim.planted["service_crashing"])
    params = {k: ids[k] for k in ("team_id", "project_id", "environment_id")}
    services = api("admin").data("/services/list", **params)
    worker = next(s for s in services if s["id"] == ids["service_id"])
    assert _keys(worker) >= SERVICE_FIELDS
    assert _keys(worker["config"]) >= CONFIG_FIELDS
    assert _keys(worker["current_deployment"]) >= DEPLOYMENT_FIELDS
    assert worker["current_deployment"]["status"] == "crashing"
    for service in services:
        for volume in service["config"]["volumes"]:
            assert _keys(volume) >= VOLUME_FIELDS


def test_other_shapes_are_the_spec_s(api: ApiFactory, sim: Simulator) -> None:
    admin = api("admin")
    ids = service_ids(sim, sim.planted["service_unresolved_refs"])
    team = ids["team_id"]
    variables = admin.data("/variables/list", **ids, type="service")
    assert variables["values_redacted"] is False
    for variable in variables["variables"]:
        assert _keys(variable) == VARIABLE_FIELDS
        for reference in variable["references"]:
            assert _keys(reference) == REFERENCE_FIELDS
    for bucket in admin.data("/storage/s3/list", team_id=team):
        assert _keys(bucket) == BUCKET_FIELDS
    for hook in admin.data("/webhooks/list", type="team", team_id=team):
        assert _keys(hook) == WEBHOOK_FIELDS and hook["type"] == "team"
    templates = admin.data("/templates/list")
    assert templates and all(_keys(t) == TEMPLATE_FIELDS for t in templates)
    assert {"inputs", "services"} <= set(templates[0]["definition"])
    health = admin.data("/replicas/health", **ids)
    assert set(health) == {"expected_replicas", "health", "replicas"}
    assert all(_keys(p) == POD_FIELDS for p in health["replicas"])
    pods = admin.data("/replicas/list", type="project", team_id=team, project_id=ids["project_id"])
    assert pods and all(_keys(p) == POD_FIELDS | {"team_id", "project_id"} | {
        "environment_id", "service_id"} for p in pods)  # fmt: skip


def test_service_groups_have_their_shape(api: ApiFactory, sim: Simulator) -> None:
    group = next(iter(sim.world.groups.values()))
    params = {"team_id": group.team_id, "project_id": group.project_id}
    groups = api("admin").data(
        "/service_groups/list", **params, environment_id=group.environment_id
    )
    assert any(g["id"] == group.id for g in groups)
    assert all(_keys(g) == GROUP_FIELDS for g in groups)
