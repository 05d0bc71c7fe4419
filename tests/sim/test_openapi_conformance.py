"""The simulator's OpenAPI document: valid, complete, and honoured by the live simulator.

The last test is a bounded property-based run (schemathesis): for every operation it sends
generated valid and invalid input to a simulator on loopback and checks that no answer is
a 5xx and that status, content type, headers and body match the document. Ids come from
the world (schemathesis dictionaries) often enough that real records are checked, not
only 404s.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import httpx
import hypothesis
import pytest
import schemathesis
from jsonschema import Draft202012Validator, ValidationError
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.result import Err

from toolkit.sim.faults import UNKNOWN_ENUM_VALUE, UNKNOWN_FIELD
from toolkit.sim.openapi import ERROR_STATUSES, openapi_document

if TYPE_CHECKING:
    from collections.abc import Iterator

    from toolkit.sim import Simulator

PREFIX = "/api/go"
LEVELS = ("team", "project", "environment", "service")
OLD_CURSOR = "0638-01-24T12:34:22Z"  # a valid RFC 3339 date-time before the year 1000
# Every operation of spec part 4, api-facts.md and docs/contracts.md: written out here, on
# purpose, instead of read from the endpoint table under test.
EXPECTED_OPERATIONS = {
    ("GET", "/users/me"),
    ("GET", "/services/list"),
    ("GET", "/storage/s3/get"),
    ("DELETE", "/variables/delete"),
    ("POST", "/variables/update"),
    ("GET", "/volumes/list"),
    ("GET", "/templates/list"),
    ("GET", "/replicas/health"),
    ("GET", "/replicas/list"),
    ("PUT", "/replicas/restart"),
    ("DELETE", "/environments/delete"),
    ("GET", "/webhooks/list"),
    ("GET", "/teams/list"),
    ("GET", "/projects/list"),
    ("GET", "/environments/list"),
    ("GET", "/deployments/list"),
    ("GET", "/variables/list"),
    ("GET", "/storage/s3/list"),
    ("GET", "/service_groups/list"),
    ("GET", "/api_keys/list"),
}
MAX_EXAMPLES = 25
FUZZ_VARIABLES = ("FUZZ_ONE", "FUZZ_TWO")  # planted at every level, so deletes can succeed
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def _operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(m.upper(), path) for path, item in document["paths"].items() for m in item}


def _validator(document: dict[str, Any], name: str) -> Draft202012Validator:
    schema = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


# --- the document itself -------------------------------------------------------------------


def test_document_is_valid_openapi() -> None:
    document = openapi_document(PREFIX)
    loaded = schemathesis.openapi.from_dict(document)
    loaded.validate()  # against the OpenAPI 3.1 meta-schema schemathesis ships
    results = list(loaded.get_all_operations())
    assert [result.err() for result in results if isinstance(result, Err)] == []
    for schema in document["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)


def test_document_has_every_operation_and_only_those() -> None:
    document = openapi_document()
    assert _operations(document) == EXPECTED_OPERATIONS | {("GET", "/openapi.json")}
    assert document["paths"]["/openapi.json"]["get"]["security"] == []


def test_prefix_lives_in_servers_not_in_paths() -> None:
    assert openapi_document()["servers"] == [{"url": "/"}]
    prefixed = openapi_document("/api/go/")
    assert prefixed["servers"] == [{"url": "/api/go"}]
    assert _operations(prefixed) == _operations(openapi_document())


def test_parameters_say_what_is_required_and_allowed() -> None:
    paths = openapi_document()["paths"]

    def params(path: str) -> dict[str, dict[str, Any]]:
        return {p["name"]: p for p in paths[path]["get"]["parameters"]}

    services = params("/services/list")
    assert {n: (p["required"], p["schema"]["format"]) for n, p in services.items()} == {
        "team_id": (True, "uuid"),
        "project_id": (True, "uuid"),
        "environment_id": (True, "uuid"),
    }
    webhooks = params("/webhooks/list")
    assert webhooks["type"]["schema"]["enum"] == ["team", "project"]
    assert webhooks["project_id"]["required"] is False
    assert params("/volumes/list")["type"]["schema"]["enum"] == ["team", "project", "environment"]
    page = params("/deployments/list")["per_page"]["schema"]
    assert (page["minimum"], page["maximum"], page["default"]) == (1, 100, 50)
    body = paths["/environments/delete"]["delete"]["requestBody"]["content"]["application/json"]
    assert set(body["schema"]["required"]) == {"team_id", "project_id", "environment_id"}
    schemas = openapi_document()["components"]["schemas"]
    variants = schemas["VariablesUpdate"]["oneOf"]
    assert [(v["properties"]["type"]["const"], v["required"]) for v in variants] == [
        ("team", ["type", "team_id", "variables"]),
        ("project", ["type", "team_id", "project_id", "variables"]),
        ("environment", ["type", "team_id", "project_id", "environment_id", "variables"]),
        ("service", ["type", *(f"{level}_id" for level in LEVELS), "variables"]),
    ]
    validator = Draft202012Validator(schemas["VariableName"])
    assert validator.is_valid({"name": "API_KEY"})
    assert not validator.is_valid({"name": "9 lives"})


def test_every_operation_has_envelope_errors_request_id_and_bearer_auth() -> None:
    document = openapi_document()
    assert document["security"] == [{"bearerAuth": []}]
    assert document["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    for method, path in EXPECTED_OPERATIONS:
        responses = document["paths"][path][method.lower()]["responses"]
        envelope = responses["200"]["content"]["application/json"]["schema"]
        assert envelope["required"] == ["data"], path
        assert "X-Request-Id" in responses["200"]["headers"]
        assert set(responses) == {"200"} | {str(s) for s in ERROR_STATUSES}, path
    errors = document["components"]["responses"]
    assert errors["Error429"]["headers"]["Retry-After"]["required"] is True
    assert errors["Error503"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }


def test_records_are_permissive_where_the_spec_is_silent_and_exact_where_it_promises() -> None:
    document = openapi_document()
    service = {
        "id": "0b6f3c1e-8a37-4f55-9a52-3f1f7d1b2c01",
        "name": None,
        "type": UNKNOWN_ENUM_VALUE,
        "config": {"builder": UNKNOWN_ENUM_VALUE, "ports": [{"port": 80, UNKNOWN_FIELD: {}}]},
        "current_deployment": None,
        UNKNOWN_FIELD: {"since": "2099"},
    }
    _validator(document, "Service").validate(service)
    for broken in ({**service, "id": 42}, {**service, "config": {"replicas": "two"}}):
        with pytest.raises(ValidationError):
            _validator(document, "Service").validate(broken)
    error = {"type": "not_found", "status": 404, "message": "gone", "request_id": "r-1"}
    _validator(document, "Error").validate(error)
    with pytest.raises(ValidationError, match="'type' is a required property"):
        _validator(document, "Error").validate({k: v for k, v in error.items() if k != "type"})
    bucket = {"id": "5d0c1a7e-2b6f-4c9d-8e3a-1f2b3c4d5e6f", "name": "b"}
    _validator(document, "S3Bucket").validate(bucket)
    with pytest.raises(ValidationError):
        _validator(document, "S3Bucket").validate({**bucket, "secret_key": "x"})


# --- the live simulator --------------------------------------------------------------------


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[Simulator, str]]:
    from toolkit.sim import Simulator, SimulatorServer

    sim = Simulator(seed=11, services=12)
    with SimulatorServer(sim, host="127.0.0.1", port=0, prefix=PREFIX) as server:
        yield sim, server.base_url


def _get(base_url: str, token: str, path: str, **query: str) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    response = httpx.get(f"{base_url}{path}", params=query, headers=headers, timeout=10)
    response.raise_for_status()
    return response.json()["data"]


def _world_ids(base_url: str, admin: str) -> dict[str, str]:
    """A consistent chain team > project > environment > service, a bucket of that team and
    a second environment of the same project (the one the random run may delete)."""
    for team in _get(base_url, admin, "/teams/list"):
        for project in _get(base_url, admin, "/projects/list", team_id=team["id"]):
            ids = {"team_id": team["id"], "project_id": project["id"]}
            envs = _get(base_url, admin, "/environments/list", **ids)
            buckets = _get(base_url, admin, "/storage/s3/list", team_id=team["id"])
            if len(envs) < 2 or not buckets:
                continue
            for env in envs:
                services = _get(base_url, admin, "/services/list", **ids, environment_id=env["id"])
                if services:
                    spare = next(e["id"] for e in envs if e["id"] != env["id"])
                    return ids | {
                        "environment_id": env["id"],
                        "service_id": services[0]["id"],
                        "id": buckets[0]["id"],
                        "spare_environment_id": spare,
                    }
    raise AssertionError("the world has no project with two environments, services, buckets")


def test_every_served_route_is_documented(live: tuple[Simulator, str]) -> None:
    from toolkit.sim.app import ROUTES

    served = {(method, path) for path, methods in ROUTES.items() for method in methods}
    assert served == EXPECTED_OPERATIONS
    _, base_url = live
    document = httpx.get(f"{base_url}/openapi.json", timeout=10).json()
    assert document == openapi_document(PREFIX)
    assert _operations(document) == served | {("GET", "/openapi.json")}


def test_drifted_responses_still_conform(live: tuple[Simulator, str]) -> None:
    sim, base_url = live
    admin = sim.keys["admin"]
    ids = _world_ids(base_url, admin)
    document = openapi_document(PREFIX)
    sim.set_faults("drift")
    try:
        query = {k: ids[k] for k in ("team_id", "project_id", "environment_id")}
        services = _get(base_url, admin, "/services/list", **query)
    finally:
        sim.set_faults("none")
    assert services and all(s[UNKNOWN_FIELD] and s["type"] == UNKNOWN_ENUM_VALUE for s in services)
    validator = _validator(document, "Service")
    for service in services:
        validator.validate(service)


def test_deployment_cursor_is_echoed_as_a_date_time(live: tuple[Simulator, str]) -> None:
    """Found by the property-based run below (the year was not zero-padded); kept as an
    exact regression test."""
    sim, base_url = live
    ids = _world_ids(base_url, sim.keys["admin"])
    query = {f"{level}_id": ids[f"{level}_id"] for level in LEVELS}
    page = _get(base_url, sim.keys["admin"], "/deployments/list", **query, cursor=OLD_CURSOR)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", page["metadata"]["previous"])


def test_deleting_a_variable_listed_twice_is_not_a_server_error(
    live: tuple[Simulator, str],
) -> None:
    """Found by the property-based run below (a KeyError answered 500); the exact reproduction."""
    sim, base_url = live
    headers = {"Authorization": f"Bearer {sim.keys['admin']}"}
    team_id = _world_ids(base_url, sim.keys["admin"])["team_id"]
    target = {"type": "team", "team_id": team_id}
    created = {**target, "variables": [{"name": "TWICE", "value": "1"}]}
    httpx.post(f"{base_url}/variables/update", json=created, headers=headers).raise_for_status()
    twice = {**target, "variables": [{"name": "TWICE"}, {"name": "TWICE"}]}
    response = httpx.request("DELETE", f"{base_url}/variables/delete", json=twice, headers=headers)
    assert response.status_code < 500, response.text


def _config(ids: dict[str, str]) -> schemathesis.Config:
    """Real ids with probability 0.8 per field, so that most requests name real records
    and the rest probe 404 and 422 answers; `/environments/delete` aims at the spare
    environment, so the random run never empties the chain the other operations use."""
    chain = ("team_id", "project_id", "environment_id", "service_id", "id")
    bindings = {
        f"{where}.{name}": {"dictionary": name, "probability": 0.8}
        for name in chain
        for where in ("query", "body")
    }
    bindings["body.variables[*].name"] = {"dictionary": "variable_name", "probability": 0.7}
    spare = {"dictionary": "spare_environment_id", "probability": 0.8}
    return schemathesis.Config.from_dict(
        {
            "seed": 20260101,
            "dictionaries": {name: {"values": [value]} for name, value in ids.items()}
            | {"variable_name": {"values": list(FUZZ_VARIABLES)}},
            "parameters": bindings,
            "operations": [
                {
                    "include-path": "/environments/delete",
                    "parameters": bindings | {"body.environment_id": spare},
                }
            ],
        }
    )


def _plant_variables(base_url: str, admin: str, ids: dict[str, str]) -> None:
    for depth, level in enumerate(LEVELS, start=1):
        body = {"type": level, "variables": [{"name": n, "value": "x"} for n in FUZZ_VARIABLES]}
        body |= {f"{name}_id": ids[f"{name}_id"] for name in LEVELS[:depth]}
        headers = {"Authorization": f"Bearer {admin}"}
        url = f"{base_url}/variables/update"
        httpx.post(url, json=body, headers=headers, timeout=10).raise_for_status()


@pytest.fixture(scope="module")
def api_schema(live: tuple[Simulator, str]) -> schemathesis.BaseSchema:
    sim, base_url = live
    ids = _world_ids(base_url, sim.keys["admin"])
    _plant_variables(base_url, sim.keys["admin"], ids)
    config = _config(ids)
    return schemathesis.openapi.from_url(f"{base_url}/openapi.json", config=config)


def _fuzz(
    operation: schemathesis.APIOperation[Any, Any, Any, Any], mode: GenerationMode, token: str
) -> None:
    """At most `MAX_EXAMPLES` derandomised cases of one operation, every check on each."""

    @hypothesis.settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(case=operation.as_strategy(mode))
    def run(case: schemathesis.Case[Any]) -> None:
        case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)

    run()


def _cases() -> list[Any]:
    """(method, path, mode) for every operation; negative input only where there is input."""
    document = openapi_document()
    cases = []
    for method, path in sorted(_operations(document)):
        operation = document["paths"][path][method.lower()]
        modes = [GenerationMode.POSITIVE]
        if operation.get("parameters") or "requestBody" in operation:
            modes.append(GenerationMode.NEGATIVE)
        for mode in modes:
            cases.append(pytest.param(method, path, mode, id=f"{method} {path} {mode.value}"))
    return cases


@pytest.mark.parametrize(("method", "path", "mode"), _cases())
def test_simulator_conforms_to_its_document(
    api_schema: schemathesis.BaseSchema,
    live: tuple[Simulator, str],
    method: str,
    path: str,
    mode: GenerationMode,
) -> None:
    """Valid (positive) or invalid (negative) input: no 5xx, and status, content type,
    headers and body as documented. schemathesis' own pytest plugin
    (`schemathesis.pytest.from_fixture`) fails on pytest 9, hence the explicit loop."""
    sim, _ = live
    token = sim.keys["session" if path == "/api_keys/list" else "admin"]
    _fuzz(api_schema[path][method], mode, token)
