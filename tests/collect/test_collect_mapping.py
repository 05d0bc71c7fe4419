"""Collectors on hand-made payloads: drift becomes null plus a row, never a crash or a value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolkit.collect import (
    Owner,
    conform,
    map_buckets,
    map_deployment_page,
    map_replica_health,
    map_services,
    map_teams,
    map_templates,
    map_variables,
    map_webhooks,
    parse_references,
)
from toolkit.snapshot.redaction import Fingerprinter
from toolkit.snapshot.schema_tables import TABLES

T, P, E, S = (f"{n}0000000-0000-4000-8000-000000000000" for n in "1234")
KEY = Fingerprinter(b"unit-test-key-0123456789")
SECRET = "CANARYdeadbeefdeadbeef"


def _service(**changes: Any) -> dict[str, Any]:
    service: dict[str, Any] = {
        "id": S,
        "name": "api",
        "type": "gitprovider",
        "environment_id": E,
        "git_repository": f"https://bot:{SECRET}@git.example.com/acme/api.git",
        "config": {
            "resources": {"memory_limits_megabytes": 512, "cpu_limits_millicores": -1},
            "protected_variables": ["DATABASE_URL"],
            "init_containers": [{"command": f"echo {SECRET}", "image": "busybox:1"}],
            "ports": [{"port": 8080, "protocol": "TCP"}],
            "hosts": [{"host": "api.example.com", "path": "/"}],
        },
        "last_deployment": {"id": "d1", "status": "active", "crashing_reasons": []},
    }
    service.update(changes)
    return service


def _map(*services: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return map_services(list(services), team_id=T, project_id=P, environment_id=E)


def test_a_service_is_flattened() -> None:
    rows = _map(_service())
    (service,) = rows["services"]
    assert service["memory_limits_megabytes"] == 512 and service["cpu_limits_millicores"] == -1
    assert service["protected_variables"] == ["DATABASE_URL"]
    assert service["init_container_images"] == ["busybox:1"]
    assert service["git_repository"] == "https://git.example.com/acme/api.git"
    assert service["last_deployment_id"] == "d1" and service["current_deployment_id"] is None
    assert rows["service_ports"][0]["source"] == "config"
    assert rows["deployments"][0]["is_last"] is True
    assert rows["deployments"][0]["is_current"] is False
    assert rows["collection_errors"] == []
    assert SECRET not in json.dumps(rows, default=str)


def test_a_wrong_type_becomes_null_and_a_drift_row() -> None:
    config = _service()["config"]
    config["resources"]["memory_limits_megabytes"] = "512Mi"
    config["replicas"] = True
    rows = _map(_service(config=config, name=["not", "a", "string"]))
    (service,) = rows["services"]
    assert service["memory_limits_megabytes"] is None and service["name"] is None
    assert service["replicas"] is None
    messages = sorted(r["message"] for r in rows["collection_errors"])
    assert all(r["error_type"] == "schema_drift" for r in rows["collection_errors"])
    assert all(
        r["service_id"] is None and r["environment_id"] == E for r in rows["collection_errors"]
    )
    assert any("services.memory_limits_megabytes" in m and "got str" in m for m in messages)
    assert any("services.replicas" in m and "got bool" in m for m in messages)
    assert not any("512Mi" in m for m in messages)


def test_a_nested_object_of_the_wrong_kind_is_skipped() -> None:
    rows = _map(_service(config="oops", detected_ports={"port": 1}))
    assert rows["services"][0]["memory_limits_megabytes"] is None
    assert rows["service_ports"] == []
    assert {r["message"].split(" should")[0] for r in rows["collection_errors"]} == {
        "schema drift: services.config",
        "schema drift: services.detected_ports",
    }


def test_a_record_without_its_id_is_left_out() -> None:
    rows = map_teams([{"name": "no id"}, {"id": "t", "name": "ok", "plan": {"seats": 5}}])
    assert [r["id"] for r in rows["teams"]] == ["t"]
    assert json.loads(rows["teams"][0]["extra"]) == {"plan": {"seats": 5}}
    assert "teams.id" in rows["collection_errors"][0]["message"]


def test_unknown_fields_named_like_secrets_lose_their_values() -> None:
    rows = map_buckets(
        [{"id": "b", "name": "x", "secret_key": SECRET, "access_key": "AK1", "tier": "cold"}],
        team_id=T,
    )
    (bucket,) = rows["s3_buckets"]
    assert bucket["access_key_id"] == "AK1"
    assert json.loads(bucket["extra"]) == {"secret_key": "***", "tier": "cold"}


def test_unknown_enum_values_are_stored_as_they_come() -> None:
    page = [{"id": "d9", "status": "quantum-tunnelling", "created_at": "2026-01-01T00:00:00Z"}]
    rows = map_deployment_page(page, owner=Owner(T, P, E, S), current_id="d9")
    (row,) = rows["deployments"]
    assert row["status"] == "quantum-tunnelling" and row["is_current"] is True
    assert row["created_at"].isoformat() == "2026-01-01T00:00:00+00:00"
    rows = map_deployment_page([{"id": "d", "created_at": "yesterday"}], owner=Owner(T, P, E, S))
    assert rows["deployments"][0]["created_at"] is None
    assert "deployments.created_at" in rows["collection_errors"][0]["message"]


def test_variables_keep_no_value() -> None:
    payload = {
        "values_redacted": False,
        "variables": [
            {"name": "DATABASE_URL", "value": f"postgres://u:{SECRET}@db/app", "updates": []},
            {"name": "API", "value": f"${{{{service.{S}.URL}}}}/v1?k=${{{{team.KEY}}}}"},
            {"name": "ODD", "value": 42},
        ],
    }
    rows = map_variables(
        payload,
        level="service",
        owner=Owner(T, P, E, S),
        fingerprints=KEY,
        protected=frozenset({"DATABASE_URL"}),
    )
    by_name = {r["name"]: r for r in rows["variables"]}
    assert by_name["DATABASE_URL"]["is_protected"] is True
    assert by_name["DATABASE_URL"]["value_length"] == len(f"postgres://u:{SECRET}@db/app")
    assert by_name["DATABASE_URL"]["fingerprint"] == KEY.of(f"postgres://u:{SECRET}@db/app")
    assert by_name["API"]["reference_count"] == 2 and by_name["API"]["is_protected"] is False
    assert by_name["ODD"]["fingerprint"] is None
    refs = {r["token"]: r for r in rows["variable_references"]}
    assert refs[f"${{{{service.{S}.URL}}}}"]["source_id"] == S
    assert refs["${{team.KEY}}"]["source_type"] == "team"
    assert "variables.value" in rows["collection_errors"][0]["message"]
    assert SECRET not in json.dumps(rows, default=str)


@pytest.mark.parametrize(
    ("value", "writes"),
    [
        # a password written beside references: the reference used to hide it (is_reference)
        (f"postgres://app:{SECRET}@${{{{service.{S}.HOST}}}}:5432/app", True),
        (f"redis://:{SECRET}@${{{{environment.CACHE_HOST}}}}", True),
        (f"${{{{service.{S}.URL}}}}?api_key={SECRET}", True),
        (f"--db-password {SECRET} --host ${{{{environment.HOST}}}}", True),
        (f"Authorization: Bearer {SECRET}", True),
        # every credential a reference; a user name is none
        (f"postgres://app:${{{{service.{S}.DB_PASSWORD}}}}@${{{{service.{S}.HOST}}}}/app", False),
        (f"postgres://${{{{service.{S}.USER}}}}:${{{{service.{S}.PASS}}}}@db/app", False),
        ("token: ${{environment.TOKEN}} expires: 3600", False),
        ("https://app@git.example.org/repo.git", False),
        (f"https://{SECRET}@o4501.ingest.sentry.example/42", False),  # a DSN's public key
        ("exit code=137, see https://docs.example.org/oom", False),
        ("postgres://db.internal:5432/app", False),
    ],
)
def test_a_credential_written_beside_references_is_flagged(value: str, writes: bool) -> None:
    payload = {"values_redacted": False, "variables": [{"name": "URL", "value": value}]}
    rows = map_variables(payload, level="service", owner=Owner(T, P, E, S), fingerprints=KEY)
    (row,) = rows["variables"]
    assert row["writes_credential"] is writes
    assert SECRET not in json.dumps(rows, default=str)


def test_an_unread_value_is_not_judged_for_credentials() -> None:
    for payload in (
        {"values_redacted": True, "variables": [{"name": "URL", "value": None}]},
        {"values_redacted": False, "variables": [{"name": "URL", "value": 42}]},
    ):
        rows = map_variables(payload, level="service", owner=Owner(T, P, E, S), fingerprints=KEY)
        assert rows["variables"][0]["writes_credential"] is None


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("sk_" + f"live_{SECRET}", "payment_live_key"),  # an innocent name, a live key
        (f"ghp_{SECRET}{SECRET[:14]}", "github_token"),
        (f"${{{{service.{S}.HOST}}}}:443?key=AKIAQ3EGRVKL7ZN2MH5T", "cloud_access_key"),
        ("pk_" + f"live_{SECRET}", "none"),  # publishable
        (f"${{{{service.{S}.PAYMENT_KEY}}}}", "none"),  # a reference holds no secret itself
        ("0123456789abcdef0123456789abcdef01234567", "none"),  # a commit SHA
    ],
)
def test_a_secret_its_value_gives_away_is_stored_as_its_kind(value: str, kind: str) -> None:
    payload = {"values_redacted": False, "variables": [{"name": "SETTINGS", "value": value}]}
    rows = map_variables(payload, level="service", owner=Owner(T, P, E, S), fingerprints=KEY)
    (row,) = rows["variables"]
    assert row["value_kind"] == kind
    assert SECRET not in json.dumps(rows, default=str)


def test_an_unread_value_has_no_kind() -> None:
    for payload in (
        {"values_redacted": True, "variables": [{"name": "NOTES", "value": None}]},
        {"values_redacted": True, "variables": [{"name": "NOTES", "value": "sk_" + "live_x"}]},
        {"values_redacted": False, "variables": [{"name": "NOTES", "value": 42}]},
    ):
        rows = map_variables(payload, level="service", owner=Owner(T, P, E, S), fingerprints=KEY)
        assert rows["variables"][0]["value_kind"] is None


def test_redacted_variables_take_references_from_the_api() -> None:
    payload = {
        "values_redacted": True,
        "variables": [
            {
                "name": "DB",
                "value": None,
                "references": [
                    {
                        "token": "${{project.DB}}",
                        "key": "DB",
                        "resolved": False,
                        "source_type": "project",
                        "resolved_value": SECRET,
                    },
                    {"token": SECRET, "key": "X", "resolved": True},
                ],
            }
        ],
    }
    rows = map_variables(payload, level="environment", owner=Owner(T, P, E), fingerprints=KEY)
    (row,) = rows["variables"]
    assert row["values_redacted"] is True and row["value_length"] is None
    assert row["reference_count"] == 2
    tokens = sorted(str(r["token"]) for r in rows["variable_references"])
    assert tokens == ["${{project.DB}}", "None"]
    assert SECRET not in json.dumps(rows, default=str)


def test_parse_references_reads_every_form() -> None:
    found = parse_references(
        "${{team.A}} ${{ project.B }} ${{environment.C}} ${{service.0a-1b.D_E}} ${{other.F}}"
    )
    assert [(r.source_type, r.source_id, r.key) for r in found] == [
        ("team", None, "A"),
        ("project", None, "B"),
        ("environment", None, "C"),
        ("service", "0a-1b", "D_E"),
    ]


def test_webhooks_lose_credentials() -> None:
    rows = map_webhooks(
        [
            {
                "id": "w",
                "type": "team",
                "url": f"https://u:{SECRET}@h.example/x?sig={SECRET}",
                "events": ["project.created", "deployment.failed"],
            }
        ],
        level="team",
        owner=Owner(T),
    )
    (hook,) = rows["webhooks"]
    assert hook["url"] == "https://h.example/x?sig=***" and hook["url_host"] == "h.example"
    assert [e["event"] for e in rows["webhook_events"]] == ["project.created", "deployment.failed"]
    assert SECRET not in json.dumps(rows, default=str)


def test_a_webhook_path_parameter_never_reaches_the_row() -> None:
    """A token passed as a path parameter (`;token=`) is masked as a query value is."""
    url = f"https://hooks.example.com/notify;token={SECRET}"
    rows = map_webhooks([{"id": "w", "type": "team", "url": url}], level="team", owner=Owner(T))
    (hook,) = rows["webhooks"]
    assert hook["url"] == "https://hooks.example.com/notify;token=***"
    assert hook["has_credentials_in_url"] is True
    assert SECRET not in json.dumps(hook, default=str)


@pytest.mark.parametrize(
    ("url", "credentials"),
    [
        (f"https://deploy:{SECRET}@hooks.example.com:99999/x", True),  # port out of range
        (f"https://deploy:{SECRET}@[fd00::1/notify", True),  # a broken IPv6 literal
        (f"https://hooks.example.com:99999/x?token={SECRET}", None),  # no userinfo shows
    ],
)
def test_a_webhook_url_that_cannot_be_parsed_is_stored_masked(
    url: str, credentials: bool | None
) -> None:
    """Nothing of it but its scheme is stored, `***` marks that it was there, and it is not
    called clean: has_credentials_in_url is true where userinfo shows, else unknown."""
    rows = map_webhooks([{"id": "w", "type": "team", "url": url}], level="team", owner=Owner(T))
    (hook,) = rows["webhooks"]
    assert (hook["url"], hook["url_scheme"], hook["url_host"], hook["url_port"]) == (
        "***", "https", None, None
    )  # fmt: skip
    assert hook["has_credentials_in_url"] is credentials
    assert SECRET not in json.dumps(rows, default=str)


def test_templates_keep_no_variable_values() -> None:
    template = {
        "id": "tpl",
        "name": "Postgres",
        "resource_recommendations": {"minimum_recommended_cpu": 0.5},
        "definition": {
            "services": [{"variables": [{"name": "PASSWORD", "value": SECRET}]}],
            "required_capabilities": ["NET_ADMIN"],
        },
    }
    (row,) = map_templates([template])["templates"]
    assert row["service_count"] == 1 and row["required_capabilities"] == ["NET_ADMIN"]
    assert row["minimum_recommended_cpu"] == 0.5
    assert SECRET not in json.dumps(row, default=str)


def test_replica_health_counts_its_replicas() -> None:
    payload = {
        "expected_replicas": 2,
        "health": "crashing",
        "replicas": [
            {
                "runtime_name": "api-0",
                "status": "crashing",
                "restart_count": 4,
                "events": [
                    {"type": "oom_killed", "count": 2, "first_seen": "2026-01-01T00:00:00Z"}
                ],
            },
            {"status": "running"},
        ],
    }
    rows = map_replica_health(payload, owner=Owner(T, P, E, S))
    assert rows["replica_health"][0]["replica_count"] == 2
    assert [r["runtime_name"] for r in rows["replicas"]] == ["api-0"]
    assert rows["replica_events"][0]["replica_name"] == "api-0"
    assert "replicas.runtime_name" in rows["collection_errors"][0]["message"]


_SAMPLES: dict[type, Any] = {str: "text", bool: True, int: 7, float: 2.5}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_value_of_a_columns_exact_type_is_its_own_conversion(table: str) -> None:
    """The conformer skips the converter for such a value: it must be what it would return."""
    columns, _ = conform._columns(table)
    for name, exact, convert, _nullable in columns:
        if exact is not None:
            sample = _SAMPLES[exact]
            assert convert(sample) is sample, f"{table}.{name}"
