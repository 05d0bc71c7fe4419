"""The API client against the live simulator over loopback: errors, retries, roles, scope."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.api import (
    AsyncPlatformClient,
    ClientConfig,
    Conflict,
    EndpointMissing,
    Forbidden,
    MalformedResponse,
    NetworkError,
    NotFound,
    OutcomeUnknown,
    PlatformClient,
    RateLimited,
    ReadOnlyKey,
    SessionOnlyEndpoint,
    Unauthorized,
    UpstreamError,
    ValidationFailed,
)
from toolkit.sim import FaultProfile, Simulator, SimulatorServer

if TYPE_CHECKING:
    from conftest import Fresh


def first_service(client: PlatformClient) -> tuple[str, str, str, str]:
    """Team, project, environment and service ids of the first service the client sees."""
    for team in client.list_teams():
        for project in client.list_projects(team["id"]):
            for env in client.list_environments(team["id"], project["id"]):
                services = client.list_services(team["id"], project["id"], env["id"])
                if services:
                    return team["id"], project["id"], env["id"], services[0]["id"]
    raise AssertionError("the world has no visible service")


def all_services(client: PlatformClient) -> dict[str, tuple[str, str, str]]:
    found: dict[str, tuple[str, str, str]] = {}
    for team in client.list_teams():
        for project in client.list_projects(team["id"]):
            for env in client.list_environments(team["id"], project["id"]):
                for svc in client.list_services(team["id"], project["id"], env["id"]):
                    found[svc["id"]] = (team["id"], project["id"], env["id"])
    return found


@pytest.mark.parametrize("key", ["revoked", "expired", "plat_not-a-real-key"])
def test_refused_keys_raise_unauthorized(client_for: Any, key: str) -> None:
    with pytest.raises(Unauthorized) as caught:
        client_for(key).me()
    assert caught.value.status == 401
    assert caught.value.request_id
    assert caught.value.attempts == 1  # 401 is never retried


def test_viewer_change_is_read_only(client_for: Any) -> None:
    viewer = client_for("viewer")
    team, project, env, svc = first_service(viewer)
    with pytest.raises(ReadOnlyKey) as caught:
        viewer.upsert_variables(
            "service",
            team_id=team,
            project_id=project,
            environment_id=env,
            service_id=svc,
            variables={"X": "1"},
        )
    assert caught.value.status == 403
    assert "read only" in caught.value.message


def test_api_key_on_session_only_endpoint(client_for: Any) -> None:
    with pytest.raises(SessionOnlyEndpoint):
        client_for("admin").list_api_keys()
    keys = client_for("session").list_api_keys()
    assert {k["role"] for k in keys} >= {"viewer", "editor", "admin"}


def test_editor_cannot_delete_and_last_environment_is_kept(fresh_sim: Fresh) -> None:
    admin = fresh_sim.client("admin")
    team = admin.list_teams()[0]["id"]
    project = admin.list_projects(team)[0]["id"]
    envs = admin.list_environments(team, project)
    with pytest.raises(Forbidden) as caught:
        fresh_sim.client("editor").delete_environment(team, project, envs[0]["id"])
    assert not isinstance(caught.value, ReadOnlyKey)
    for env in envs[:-1]:
        assert admin.delete_environment(team, project, env["id"])["deleted"] is True
    with pytest.raises(Conflict):
        admin.delete_environment(team, project, envs[-1]["id"])
    assert [e["id"] for e in admin.list_environments(team, project)] == [envs[-1]["id"]]


def test_protected_variable_cannot_change(fresh_sim: Fresh) -> None:
    admin = fresh_sim.client("admin")
    for svc_id, (team, project, env) in all_services(admin).items():
        svc = next(s for s in admin.list_services(team, project, env) if s["id"] == svc_id)
        protected = (svc.get("config") or {}).get("protected_variables") or []
        if protected:
            ids = {
                "team_id": team,
                "project_id": project,
                "environment_id": env,
                "service_id": svc_id,
            }
            with pytest.raises(Forbidden, match=protected[0]):
                admin.upsert_variables("service", **ids, variables={protected[0]: "x"})
            with pytest.raises(Forbidden):
                admin.delete_variables("service", **ids, names=[protected[0]])
            return
    pytest.fail("the world has no service with protected variables")


def test_values_redacted_for_viewer_not_for_editor(client_for: Any) -> None:
    team = client_for("admin").list_teams()[0]["id"]
    as_viewer = client_for("viewer").list_variables("team", team_id=team)
    as_editor = client_for("editor").list_variables("team", team_id=team)
    assert as_viewer.values_redacted is True
    assert as_editor.values_redacted is False
    assert as_viewer.variables and all(v.get("value") is None for v in as_viewer.variables)
    assert any(v.get("value") for v in as_editor.variables)


def test_limited_key_sees_one_project_and_404_elsewhere(client_for: Any) -> None:
    everything = all_services(client_for("admin"))
    limited = all_services(client_for("limited"))
    projects = {project for _, project, _ in limited.values()}
    assert len(projects) == 1 and limited
    assert set(limited) < set(everything)
    team, project, env = next(v for v in everything.values() if v[1] not in projects)
    with pytest.raises(NotFound):
        client_for("limited").list_services(team, project, env)
    with pytest.raises(NotFound):
        client_for("limited").list_variables("team", team_id=team)


def test_unknown_id_is_not_found(client_for: Any) -> None:
    team = client_for("admin").list_teams()[0]["id"]
    with pytest.raises(NotFound) as caught:
        client_for("admin").list_projects(
            team[:-4] + "0000" if not team.endswith("0000") else team[:-4] + "1111"
        )
    assert caught.value.status == 404


def test_server_side_validation_error_reaches_the_caller(
    shared_sim: Simulator, shared_server: SimulatorServer
) -> None:
    # Point projects.list at the environments path: the client's own check passes, the
    # server misses project_id and answers 422 with details in the form of rule 2.
    config = ClientConfig(
        base_url=shared_server.base_url,
        token=shared_sim.keys["admin"],
        endpoints={"projects.list": "/environments/list"},
    )
    with PlatformClient(config) as client:
        team = client.list_teams()[0]["id"]
        with pytest.raises(ValidationFailed) as caught:
            client.list_projects(team)
    assert caught.value.status == 422
    assert caught.value.details == (
        "expected required property project_id to be present (query.project_id: undefined)",
    )


def test_deployment_pages_cover_history_once(client_for: Any) -> None:
    client = client_for("viewer")
    ids = first_service(client)
    whole = client.list_deployments(*ids, per_page=100)
    assert not whole.has_next
    walked = [d["id"] for d in client.iter_deployments(*ids, per_page=2, limit=1000)]
    assert walked == [d["id"] for d in whole.deployments]
    assert len(walked) == len(set(walked)) >= 3


def test_retries_5xx_then_succeeds_and_counts_them(fresh_sim: Fresh) -> None:
    fresh_sim.sim.set_faults(FaultProfile(fail_first=2, fail_status=503))
    client = fresh_sim.client("admin")
    assert client.list_teams()
    stats = client.stats()
    assert stats.retries == {"503": 2}
    assert stats.requests == 3


def test_retry_after_is_honoured(fresh_sim: Fresh) -> None:
    fresh_sim.sim.set_faults(FaultProfile(fail_first=1, fail_status=429, retry_after_s=1))
    client = fresh_sim.client("admin")
    started = time.monotonic()
    assert client.list_teams()
    assert time.monotonic() - started >= 0.95
    assert client.stats().retries == {"429": 1}


@pytest.mark.parametrize(
    ("status", "error"),
    [(429, RateLimited), (502, UpstreamError), (503, UpstreamError), (504, UpstreamError)],
)
def test_attempts_are_capped(fresh_sim: Fresh, status: int, error: type[Exception]) -> None:
    fresh_sim.sim.set_faults(FaultProfile(fail_first=50, fail_status=status, retry_after_s=0))
    with pytest.raises(error) as caught:
        fresh_sim.client("admin", max_attempts=3).list_teams()
    assert getattr(caught.value, "attempts", None) == 3


def test_dropped_connection_read_is_retried_change_is_not(fresh_sim: Fresh) -> None:
    admin = fresh_sim.client("admin", max_attempts=3)
    team, project, env, svc = first_service(admin)
    fresh_sim.sim.set_faults(FaultProfile(rate_drop=1.0))
    with pytest.raises(NetworkError) as read_error:
        admin.list_teams()
    assert read_error.value.attempts == 3
    with pytest.raises(OutcomeUnknown) as change_error:
        admin.restart_replicas(team, project, env, svc)
    assert change_error.value.attempts == 1
    assert "list" in str(change_error.value)


def test_malformed_success_body(fresh_sim: Fresh) -> None:
    fresh_sim.sim.set_faults(FaultProfile(rate_malformed=1.0))
    with pytest.raises(MalformedResponse) as caught:
        fresh_sim.client("admin").list_teams()
    assert caught.value.status == 200


def test_prefix_in_base_url() -> None:
    sim = Simulator(seed=5, services=5)
    with SimulatorServer(sim, prefix="/api/go") as server:
        assert server.base_url.endswith("/api/go")
        with PlatformClient(
            ClientConfig(base_url=server.base_url, token=sim.keys["viewer"])
        ) as client:
            assert client.me()["api_key"]["role"] == "viewer"
        root = server.base_url.removesuffix("/api/go")
        with (
            PlatformClient(ClientConfig(base_url=root, token=sim.keys["viewer"])) as client,
            pytest.raises(EndpointMissing),  # a wrong prefix: no endpoint, never "not visible"
        ):
            client.me()


def test_sync_facade_inside_a_running_loop(client_for: Any) -> None:
    async def notebook_cell() -> list[dict[str, Any]]:
        return client_for("viewer").list_teams()  # blocking call while a loop runs

    assert asyncio.run(notebook_cell())


def test_async_client_concurrent_walk(
    shared_sim: Simulator, shared_server: SimulatorServer
) -> None:
    async def walk() -> int:
        config = ClientConfig(
            base_url=shared_server.base_url, token=shared_sim.keys["viewer"], concurrency=4
        )
        async with AsyncPlatformClient(config) as client:
            teams = await client.list_teams()
            projects = await asyncio.gather(*(client.list_projects(t["id"]) for t in teams))
            return sum(len(p) for p in projects)

    assert asyncio.run(walk()) >= 1


def test_token_never_logged_or_shown(
    client_for: Any, shared_sim: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = shared_sim.keys["viewer"]
    client = client_for("viewer")
    first_service(client)
    with pytest.raises(Unauthorized) as caught:
        client_for("revoked").me()
    assert caplog.records, "the client logs its requests at DEBUG"
    secret = token.split("_", 1)[1]
    texts = [caplog.text, repr(client), str(client.config), str(caught.value), repr(caught.value)]
    assert not any(secret in text for text in texts)
    assert not any(shared_sim.keys["revoked"].split("_", 1)[1] in text for text in texts)
