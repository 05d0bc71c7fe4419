"""A real server's product words and shapes read as the specification's, and configured renames.

Each test maps the same record twice, once as the specification writes it and once as the
platform's public source sends it (api-facts.md, "The real platform"), through
`FieldAliases.normalise` and the collector, and compares the rows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolkit.api import AsyncPlatformClient, ClientConfig, DeploymentPage, VariableList
from toolkit.collect import (
    Owner,
    crawl_async,
    map_replica_health,
    map_services,
    map_teams,
    map_variables,
)
from toolkit.collect.aliases import KINDS, FieldAliases
from toolkit.collect.deployments import map_deployment_page
from toolkit.errors import ConfigError
from toolkit.snapshot.redaction import Fingerprinter

T, P, E, S = (f"{n}0000000-0000-4000-8000-000000000000" for n in "1234")
EVENT = {"type": "oom_killed", "count": 2, "reason": "OOMKilled", "message": "killed"}


def _deployment(real: bool) -> dict[str, Any]:
    words = ("instance", "docker", "railpack") if real else ("replica", "container", "buildpack")
    return {
        "id": "d1",
        "status": "active",
        "builder": words[2],
        f"{words[0]}_events": [EVENT],
        f"{words[0]}_restarts": 3,
        f"{words[1]}_builder_dockerfile_path": "Dockerfile",
    }


def _service(real: bool) -> dict[str, Any]:
    return {
        "id": S,
        "name": "api",
        "type": "github" if real else "gitprovider",
        ("github_installation_id" if real else "gitprovider_installation_id"): 4242,
        ("kubernetes_name" if real else "runtime_name"): "api-1234",
        "config": {
            "builder": "docker" if real else "container",
            ("docker_builder_dockerfile_path" if real else "container_builder_dockerfile_path"): (
                "Dockerfile"
            ),
            ("railpack_builder_build_command" if real else "buildpack_builder_build_command"): (
                "make"
            ),
            "resources": {"memory_limits_megabytes": 512},
        },
        "current_deployment": _deployment(real),
    }


def _services(payload: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    normalised = FieldAliases().normalise("services.list", payload)
    return map_services(normalised, team_id=T, project_id=P, environment_id=E)


def test_a_real_service_maps_to_the_same_rows_as_the_specified_one() -> None:
    real, spec = _services([_service(real=True)]), _services([_service(real=False)])
    assert real == spec
    (service,) = real["services"]
    assert service["type"] == "gitprovider" and service["builder"] == "container"
    assert service["runtime_name"] == "api-1234"
    assert service["gitprovider_installation_id"] == 4242
    assert service["extra"] is None  # no product-word field left over as unknown
    (deployment,) = real["deployments"]
    assert deployment["builder"] == "buildpack" and deployment["replica_restarts"] == 3
    assert [e["type"] for e in real["replica_events"]] == ["oom_killed"]
    assert real["collection_errors"] == []


def test_real_replica_health_reads_as_the_specified_shape() -> None:
    pod = {"status": "running", "restart_count": 1, "events": [EVENT]}
    real = {
        "health": "active",
        "expected_instances": 2,
        "instances": [{**pod, "kubernetes_name": "api-0"}],
    }
    spec = {
        "health": "active",
        "expected_replicas": 2,
        "replicas": [{**pod, "runtime_name": "api-0"}],
    }
    owner = Owner(T, P, E, S)
    aliases = FieldAliases()
    rows = map_replica_health(aliases.normalise("replicas.health", real), owner=owner)
    assert rows == map_replica_health(spec, owner=owner)
    assert rows["replica_health"][0]["expected_replicas"] == 2
    assert [r["runtime_name"] for r in rows["replicas"]] == ["api-0"]
    assert rows["collection_errors"] == []


def test_a_deployment_page_and_a_variable_list_keep_their_types() -> None:
    aliases = FieldAliases()
    page = DeploymentPage([_deployment(real=True)], _deployment(real=True), False, None, None)
    normalised = aliases.normalise("deployments.list", page)
    assert isinstance(normalised, DeploymentPage)
    assert normalised.current_deployment == _deployment(real=False)
    rows = map_deployment_page(normalised.deployments, owner=Owner(T, P, E, S))
    assert rows["deployments"][0]["replica_restarts"] == 3
    variables = VariableList(False, [{"type": "team", "name": "A", "value": "x"}])
    assert aliases.normalise("variables.list", variables) == variables


def test_the_real_variable_envelope_is_read_without_values_redacted() -> None:
    payload = {
        "variables": [{"type": "team", "name": "A", "value": "x"}],
        "variable_references": [],
    }
    rows = map_variables(
        payload, level="team", owner=Owner(T), fingerprints=Fingerprinter(b"k" * 16)
    )
    (row,) = rows["variables"]
    assert row["values_redacted"] is False and row["value_length"] == 1


def test_when_both_forms_come_the_specifications_wins() -> None:
    record = {"id": "x", "runtime_name": "spec", "kubernetes_name": "product"}
    assert FieldAliases().record("replicas", record) == record


def test_configured_renames_apply_before_the_product_words() -> None:
    aliases = FieldAliases(
        {"teams": {"team_name": "name"}, "services": {"kubernetes_name": "name"}}
    )
    rows = map_teams(aliases.normalise("teams.list", [{"id": "t", "team_name": "Core"}]))
    assert rows["teams"][0]["name"] == "Core"
    (service,) = aliases.normalise("services.list", [{"id": S, "kubernetes_name": "api"}])
    assert service == {"id": S, "name": "api"}


def test_other_endpoints_and_shapes_pass_through() -> None:
    aliases = FieldAliases()
    assert aliases.normalise("api_keys.list", [{"kubernetes_name": 1}]) == [{"kubernetes_name": 1}]
    assert aliases.normalise("teams.list", "not a list") == "not a list"
    assert aliases.normalise("teams.list", [1, None]) == [1, None]


@pytest.mark.parametrize(
    ("renames", "message"),
    [
        ({"servicez": {"a": "b"}}, "unknown kind of record 'servicez'; known kinds: credentials"),
        ({"services": "name"}, r"\[fields.services\] must be a table of renames"),
        ({"services": {"svc": 1}}, r"\[fields.services\] svc must name the specification's"),
        ({"services": {"svc": " "}}, r"\[fields.services\] svc must name the specification's"),
    ],
)
def test_bad_renames_are_refused_with_what_to_write(renames: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FieldAliases(renames)


def test_every_kind_is_documented() -> None:
    guide = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"
    section = guide.read_text("utf-8").split("`[fields.KIND]` renames", 1)[1].split("\n\n", 1)[0]
    for kind in KINDS:
        assert f"`{kind}`" in section, kind


def test_a_required_field_no_record_has_names_the_endpoint_and_the_setting() -> None:
    rows = _services([{"service_name": "api", "kind": "github"}])
    assert rows["services"] == []
    (error,) = rows["collection_errors"]
    assert error["error_type"] == "missing_field"
    assert error["table_name"] == "services" and error["column_name"] == "id"
    assert error["message"] == (
        "services.list: 1 record without `id`, which services.id requires, left out; if the "
        'server names this field differently, map it: [fields.services] <its name> = "id"'
    )


def _crawl_of_a_server_naming_ids_differently(aliases: FieldAliases | None) -> Any:
    """A crawl of a server whose teams carry `team_uuid` instead of `id`."""
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        data: Any = []
        if request.url.path == "/users/me":
            data = {"id": "u1", "email": "a@example.com"}
        elif request.url.path == "/teams/list":
            data = [{"team_uuid": T, "name": "Core"}]
        elif request.url.path == "/variables/list":
            data = {"variables": []}
        return httpx.Response(200, json={"data": data})

    async def main() -> Any:
        config = ClientConfig(base_url="http://platform.test", token="plat_x", rate_per_minute=None)
        async with AsyncPlatformClient(config, transport=httpx.MockTransport(answer)) as client:
            return await crawl_async(
                client, fingerprints=Fingerprinter(b"k" * 16), quiet=True, aliases=aliases
            )

    rows, result = asyncio.run(main())
    return rows, result, asked


def test_the_crawl_applies_configured_renames_and_names_what_is_missing_without_them() -> None:
    rows, result, asked = _crawl_of_a_server_naming_ids_differently(None)
    assert result.status == "partial" and "/projects/list" not in asked
    (error,) = [e for e in result.errors if e["error_type"] == "missing_field"]
    assert error["endpoint"] == "teams.list"
    assert '[fields.teams] <its name> = "id"' in error["message"]

    aliases = FieldAliases({"teams": {"team_uuid": "id"}})
    rows, result, asked = _crawl_of_a_server_naming_ids_differently(aliases)
    assert result.status == "complete", result.errors
    assert [team["id"] for team in rows["teams"]] == [T]
    assert "/projects/list" in asked
