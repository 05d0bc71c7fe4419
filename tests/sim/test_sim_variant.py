"""`Simulator(variant="real")`: the same world, served as the platform's public source serves it.

Each test reads one thing the real platform does differently (api-facts.md, "The real
platform") from a small world served both ways, with plain httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
from live_api import service_ids

from toolkit.sim import Simulator, SimulatorServer

if TYPE_CHECKING:
    from collections.abc import Iterator

SEED, SERVICES = 4, 12


class Both:
    """The world of one seed served as specified and as the real platform serves it."""

    def __init__(self, spec: httpx.Client, real: httpx.Client, sim: Simulator) -> None:
        self.spec, self.real, self.sim = spec, real, sim

    def data(self, client: httpx.Client, path: str, **params: str) -> Any:
        response = client.get(path, params=params)
        assert response.status_code == 200, response.text
        return response.json()["data"]


@pytest.fixture(scope="module")
def both() -> Iterator[Both]:
    spec_sim = Simulator(seed=SEED, services=SERVICES)
    real_sim = Simulator(seed=SEED, services=SERVICES, variant="real")
    with SimulatorServer(spec_sim) as spec_server, SimulatorServer(real_sim) as real_server:
        clients = [
            httpx.Client(
                base_url=server.base_url,
                headers={"Authorization": f"Bearer {sim.keys['admin']}"},
                timeout=10,
            )
            for sim, server in ((spec_sim, spec_server), (real_sim, real_server))
        ]
        yield Both(clients[0], clients[1], real_sim)
        for client in clients:
            client.close()


def _a_service(sim: Simulator, kind: str) -> str:
    return next(s.id for s in sim.world.services.values() if s.kind == kind)


def test_an_unknown_path_is_a_plain_text_404_without_a_request_id(both: Both) -> None:
    for path in (
        "/nowhere",
        "/replicas/list",
        "/volumes/list",
        "/webhooks/list",
        "/api/go/teams/list",
    ):
        response = both.real.get(path)
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/plain")
        assert response.text == "404 page not found"
        assert "x-request-id" not in response.headers
    spec = both.spec.get("/nowhere")
    assert spec.json()["type"] == "not_found" and "x-request-id" in spec.headers


def test_errors_carry_no_request_id(both: Both) -> None:
    response = both.real.get("/projects/list")  # team_id missing: 422
    assert response.status_code == 422
    body = response.json()
    assert set(body) == {"type", "status", "message", "details"}
    assert "x-request-id" not in response.headers
    assert "x-request-id" not in both.real.get("/teams/list").headers


def test_services_carry_product_words(both: Both) -> None:
    team = both.data(both.real, "/teams/list")[0]["id"]
    service_id = _a_service(both.sim, "gitprovider")
    ids = service_ids(both.sim, service_id)
    ids.pop("service_id")
    real = next(s for s in both.data(both.real, "/services/list", **ids) if s["id"] == service_id)
    spec = next(s for s in both.data(both.spec, "/services/list", **ids) if s["id"] == service_id)
    assert ids["team_id"] == team or team
    assert real["type"] == "github" and spec["type"] == "gitprovider"
    assert real["kubernetes_name"] == spec["runtime_name"] and "runtime_name" not in real
    assert real["github_installation_id"] == spec["gitprovider_installation_id"]
    config = real["config"]
    assert "docker_builder_dockerfile_path" in config and "railpack_builder_build_command" in config
    assert config["builder"] == {"buildpack": "railpack", "container": "docker"}.get(
        spec["config"]["builder"], spec["config"]["builder"]
    )
    deployment = real["last_deployment"]
    assert "instance_events" in deployment and "instance_restarts" in deployment
    assert "replica_events" not in deployment


def test_container_image_services_are_docker_images(both: Both) -> None:
    kinds = {s.kind for s in both.sim.world.services.values()}
    assert "container-image" in kinds
    service_id = _a_service(both.sim, "container-image")
    ids = service_ids(both.sim, service_id)
    ids.pop("service_id")
    real = next(s for s in both.data(both.real, "/services/list", **ids) if s["id"] == service_id)
    assert real["type"] == "docker-image"


def test_replicas_volumes_and_webhooks_are_served_at_their_real_paths(both: Both) -> None:
    ids = service_ids(both.sim, _a_service(both.sim, "gitprovider"))
    health = both.data(both.real, "/instances/health", **ids)
    spec_health = both.data(both.spec, "/replicas/health", **ids)
    assert set(health) == {"health", "expected_instances", "instances"}
    assert health["expected_instances"] == spec_health["expected_replicas"]
    assert [p["kubernetes_name"] for p in health["instances"]] == [
        p["runtime_name"] for p in spec_health["replicas"]
    ]
    level = {k: ids[k] for k in ("team_id", "project_id", "environment_id")}
    pods = both.data(both.real, "/instances/list", type="environment", **level)
    assert pods and all("kubernetes_name" in p for p in pods)
    volumes = both.data(both.real, "/storage/pvc/list", type="environment", **level)
    assert volumes == both.data(both.spec, "/volumes/list", type="environment", **level)
    team = {"team_id": ids["team_id"]}
    hooks = both.data(both.real, "/unbindwebhooks/list", type="team", **team)
    assert hooks == both.data(both.spec, "/webhooks/list", type="team", **team)
    restart = both.real.put("/instances/restart", json=ids)
    assert restart.status_code == 200, restart.text


def test_variables_users_me_and_buckets_have_the_real_shapes(both: Both) -> None:
    team = {"team_id": next(iter(both.sim.world.teams))}
    variables = both.data(both.real, "/variables/list", type="team", **team)
    assert set(variables) == {"variables", "variable_references"}
    assert variables["variables"]
    assert all(set(v) == {"type", "name", "value"} for v in variables["variables"])
    me = both.data(both.real, "/users/me")
    assert set(me) == {"id", "email", "created_at", "updated_at"}
    buckets = both.data(both.real, "/storage/s3/list", **team)
    assert buckets
    for bucket in buckets:
        assert bucket["secret_key"] == both.sim.world.buckets[bucket["id"]].secret_key
    got = both.data(both.real, "/storage/s3/get", id=buckets[0]["id"], **team)
    assert "secret_key" in got
    assert all("secret_key" not in b for b in both.data(both.spec, "/storage/s3/list", **team))


def test_an_unknown_variant_is_refused() -> None:
    with pytest.raises(
        ValueError, match="unknown simulator variant 'fake': choose one of spec, real"
    ):
        Simulator(seed=1, services=5, variant="fake")


def test_sim_serve_refuses_an_unknown_variant_before_serving() -> None:
    from typer.testing import CliRunner

    from toolkit.cli import ExitCode, app

    result = CliRunner().invoke(app, ["sim", "serve", "--services", "5", "--variant", "fake"])
    assert result.exit_code == ExitCode.CONFIG
    assert "unknown simulator variant 'fake': choose one of spec, real" in result.output
