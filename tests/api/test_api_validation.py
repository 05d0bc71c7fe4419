"""Local validation: a bad call fails before any request and names its field."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from toolkit.api import InvalidRequest, Scope

if TYPE_CHECKING:
    import httpx

pytestmark = pytest.mark.anyio

BAD = "not-a-uuid"


def refuse(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"no request should be sent, got {request.url}")


def scope_ids(ids: dict[str, str], *names: str) -> dict[str, str]:
    return {name: ids[name] for name in names}


@pytest.mark.parametrize(
    ("level", "given", "field"),
    [
        ("service", ("team_id", "environment_id", "service_id"), "project_id"),
        ("service", ("team_id", "project_id", "service_id"), "environment_id"),
        ("service", ("team_id", "project_id", "environment_id"), "service_id"),
        ("environment", ("team_id", "environment_id"), "project_id"),
        ("environment", ("team_id", "project_id"), "environment_id"),
        ("project", ("team_id",), "project_id"),
        ("environment", ("team_id", "project_id", "environment_id", "service_id"), "service_id"),
        ("team", ("team_id", "project_id"), "project_id"),
    ],
)
async def test_variables_delete_rules(make_client, ids, level, given, field) -> None:
    client = make_client(refuse)
    kwargs = scope_ids(ids, *given)
    kwargs.setdefault("team_id", None)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest) as caught:
        await client.delete_variables(level, names=["A"], **kwargs)
    assert caught.value.field == field
    assert field in str(caught.value)


async def test_team_id_is_always_required(make_client) -> None:
    client = make_client(refuse)
    with pytest.raises(InvalidRequest) as caught:
        await client.list_variables("team", team_id=None)  # type: ignore[arg-type]
    assert caught.value.field == "team_id"


@pytest.mark.parametrize("field", ["team_id", "project_id", "environment_id", "service_id"])
async def test_ids_must_be_uuids(make_client, ids, field) -> None:
    client = make_client(refuse)
    with pytest.raises(InvalidRequest, match=field) as caught:
        await client.replica_health(**{**ids, field: BAD})
    assert caught.value.field == field
    assert BAD in str(caught.value)


async def test_bucket_id_is_named(make_client, ids) -> None:
    client = make_client(refuse)
    with pytest.raises(InvalidRequest) as caught:
        await client.get_bucket(ids["team_id"], "bucket-1")
    assert caught.value.field == "bucket_id"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda c, i: c.list_replicas("org", team_id=i["team_id"]), "level"),
        (lambda c, i: c.list_webhooks("service", team_id=i["team_id"]), "level"),
        (lambda c, i: c.list_webhooks("environment", team_id=i["team_id"]), "level"),
        (lambda c, i: c.list_volumes("service", team_id=i["team_id"]), "level"),
        (lambda c, i: c.list_deployments(*i.values(), per_page=0), "per_page"),
        (lambda c, i: c.list_deployments(*i.values(), per_page=101), "per_page"),
        (lambda c, i: c.list_deployments(*i.values(), per_page=True), "per_page"),
        (lambda c, i: c.list_deployments(*i.values(), cursor=""), "cursor"),
        (lambda c, i: c.delete_variables("team", team_id=i["team_id"], names="A"), "names"),
        (lambda c, i: c.delete_variables("team", team_id=i["team_id"], names=[]), "names"),
        (lambda c, i: c.upsert_variables("team", team_id=i["team_id"], variables={}), "variables"),
    ],
)
async def test_values_are_checked(make_client, ids, call, field) -> None:
    client = make_client(refuse)
    with pytest.raises(InvalidRequest) as caught:
        await call(client, ids)
    assert caught.value.field == field


async def test_variable_values_are_never_echoed(make_client, ids) -> None:
    client = make_client(refuse)
    with pytest.raises(InvalidRequest) as caught:
        await client.upsert_variables(
            "team",
            team_id=ids["team_id"],
            variables={"DB_PASSWORD": 12345},  # type: ignore[dict-item]
        )
    assert "DB_PASSWORD" in str(caught.value)
    assert "12345" not in str(caught.value)


async def test_iter_deployments_checks_its_limit(make_client, ids) -> None:
    client = make_client(refuse)
    with pytest.raises(InvalidRequest) as caught:
        async for _ in client.iter_deployments(*ids.values(), limit=0):
            pass
    assert caught.value.field == "limit"


def test_scope_params_follow_the_level(ids) -> None:
    scope = Scope.of("environment", **scope_ids(ids, "team_id", "project_id", "environment_id"))
    assert scope.params() == {
        "type": "environment",
        "team_id": ids["team_id"],
        "project_id": ids["project_id"],
        "environment_id": ids["environment_id"],
    }
