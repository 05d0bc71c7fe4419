"""The OpenAPI 3.1 document of what the simulator serves, built from one endpoint table.

The simulator publishes it at `GET {prefix}/openapi.json`; tests feed it to schemathesis,
and a person reads it to see which assumptions of docs/spec/api-facts.md the simulator makes.

    doc = openapi_document(prefix="/api/go")
    doc["servers"]            # [{"url": "/api/go"}]: paths themselves never carry the prefix
    sorted(doc["paths"])      # ["/api_keys/list", "/deployments/list", ...]

The prefix lives in `servers` (a relative URL, resolved against the document's own
address), so the paths read exactly as spec part 4 writes them. Every operation answers
`application/json`: 200 with the `{data: ...}` envelope, or the error object of part 7
with any of its statuses (spec part 4: "the error statuses in part 7 apply to all of
them"), and every response carries `X-Request-Id`. Record schemas come from
`openapi_schemas`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolkit.sim.openapi_schemas import COMPONENT_SCHEMAS, field_schema, record

__all__ = ["ENDPOINTS", "ERROR_STATUSES", "Endpoint", "openapi_document"]

ERROR_STATUSES = {
    400: "The request makes no sense as sent (bad_request).",
    401: "Key or token missing, invalid, expired or revoked (unauthorized).",
    403: "The credential may not do this, e.g. `This API key is read only` (forbidden).",
    404: "Does not exist, or the credential cannot see it (not_found).",
    409: "Conflict, e.g. deleting a project's last environment (conflict).",
    422: "A field is missing or invalid (validation_error); `details` says which.",
    429: "Too many requests (rate_limited); wait as `Retry-After` says.",
    500: "Fault inside the service (internal_error).",
    502: "The underlying servers did not answer properly (error).",
    503: "The underlying servers did not answer properly (error).",
    504: "The underlying servers did not answer properly (error).",
}
_ID_NAMES = ("team_id", "project_id", "environment_id", "service_id")
_IDS = tuple(f"{name}:uuid!" for name in _ID_NAMES)
_IDS_BELOW_TEAM = "project_id:uuid environment_id:uuid service_id:uuid"
_LEVEL = "type:team|project|environment|service!"
_FACTS = "docs/spec/api-facts.md"
_PAGE_SIZE = {"minimum": 1, "maximum": 100, "default": 50}


@dataclass(frozen=True)
class Endpoint:
    """One operation of the table below.

    `fields` lists the query parameters of a GET, the JSON body fields otherwise, as
    space-separated `name:code` pairs: a type code of `openapi_schemas` (`!` = required)
    or allowed values joined by `|` (e.g. `type:team|project!`). `data` is the type code
    of the envelope's `data`.
    """

    route: str  # "GET /services/list"
    data: str
    fields: str = ""
    summary: str = ""
    source: str = "spec part 4"
    body: str = ""  # a component schema for the JSON body, instead of `fields`

    @property
    def method(self) -> str:
        return self.route.split()[0]

    @property
    def path(self) -> str:
        return self.route.split()[1]


def _ids(count: int) -> str:
    return " ".join(_IDS[:count])


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET /users/me", "Me!", "", "The caller, with its API key's role and scope"),
    Endpoint("GET /teams/list", "[Team]!", "", "Teams the caller can see", _FACTS),
    Endpoint("GET /projects/list", "[Project]!", _ids(1), "Projects of a team", _FACTS),
    Endpoint(
        "GET /environments/list", "[Environment]!", _ids(2), "Environments of a project", _FACTS
    ),
    Endpoint("GET /services/list", "[Service]!", _ids(3), "Services of an environment"),
    Endpoint(
        "GET /service_groups/list", "[ServiceGroup]!", _ids(3), "Groups of an environment", _FACTS
    ),
    Endpoint(
        "GET /deployments/list",
        "DeploymentPage!",
        f"{_ids(4)} per_page:int cursor:time",
        "Deployment history of a service, newest first; `cursor` is `metadata.next`",
        _FACTS,
    ),
    Endpoint("GET /replicas/health", "ReplicaHealth!", _ids(4), "Health of a service's pods"),
    Endpoint(
        "GET /replicas/list",
        "[Replica]!",
        f"{_LEVEL} {_ids(1)} {_IDS_BELOW_TEAM}",
        "Replicas of a level: the id of that level and of every level above it",
        _FACTS,
    ),
    Endpoint("PUT /replicas/restart", "ReplicasRestarted!", _ids(4), "Roll the pods", _FACTS),
    Endpoint(
        "GET /volumes/list",
        "[Volume]!",
        f"type:team|project|environment! {_ids(1)} project_id:uuid environment_id:uuid",
        "Volumes of a level: the id of that level and of every level above it",
        _FACTS,
    ),
    Endpoint(
        "GET /variables/list",
        "VariableList!",
        f"{_LEVEL} {_ids(1)} {_IDS_BELOW_TEAM}",
        "Variables of a level; values are null for a viewer (`values_redacted`)",
        _FACTS,
    ),
    Endpoint(
        "POST /variables/update",
        "VariableList!",
        summary="Create or update variables by name; protected variables are refused",
        source=_FACTS,
        body="VariablesUpdate",
    ),
    Endpoint(
        "DELETE /variables/delete",
        "VariableList!",
        summary="Delete variables by name; protected variables are refused",
        body="VariablesDelete",
    ),
    Endpoint("GET /storage/s3/list", "[S3Bucket]!", _ids(1), "S3 buckets of a team", _FACTS),
    Endpoint("GET /storage/s3/get", "S3Bucket!", f"id:uuid! {_ids(1)}", "One S3 bucket"),
    Endpoint(
        "GET /webhooks/list",
        "[Webhook]!",
        f"type:team|project! {_ids(1)} project_id:uuid",
        "Webhooks of a team or project",
    ),
    Endpoint("GET /templates/list", "[Template]!", "", "Templates that can be deployed"),
    Endpoint(
        "DELETE /environments/delete",
        "EnvironmentDeleted!",
        _ids(3),
        "Delete an environment with its services and volumes; the last one is refused",
    ),
    Endpoint(
        "GET /api_keys/list",
        "[ApiKey]!",
        "",
        "The signed-in user's API keys; browser sessions only, an API key gets 403",
        "simulator extension (docs/contracts.md)",
    ),
)


def _variables_body(item: str) -> dict[str, Any]:
    """The body of the variable operations (spec part 4): `type` names the level, and the
    ids of that level and of every level above it are required; one variant per level."""
    variants = []
    for depth, level in enumerate(("team", "project", "environment", "service"), start=1):
        ids = _ID_NAMES[:depth]
        properties: dict[str, Any] = {"type": {"const": level}}
        properties |= dict.fromkeys(ids, field_schema("uuid!"))
        properties["variables"] = {"type": "array", "minItems": 1, "items": field_schema(item)}
        required = ["type", *ids, "variables"]
        variants.append({"type": "object", "properties": properties, "required": required})
    return {"oneOf": variants}


_VARIABLE_NAME = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_.-]{0,255}$"}
_REQUEST_SCHEMAS = {
    "VariableValue": {
        "type": "object",
        "properties": {"name": _VARIABLE_NAME, "value": {"type": "string"}},
        "required": ["name", "value"],
    },
    "VariableName": {
        "type": "object",
        "properties": {"name": _VARIABLE_NAME},
        "required": ["name"],
    },
    "VariablesUpdate": _variables_body("VariableValue!"),
    "VariablesDelete": _variables_body("VariableName!"),
}


def _fields(endpoint: Endpoint) -> dict[str, str]:
    return dict(pair.split(":", 1) for pair in endpoint.fields.split())


def _schema(code: str) -> dict[str, Any]:
    """A request value's schema: never null; `a|b` is an enumeration."""
    code = code.rstrip("!")
    if "|" in code:
        return {"type": "string", "enum": code.split("|")}
    return field_schema(code + "!")


def _parameters(endpoint: Endpoint) -> list[dict[str, Any]]:
    parameters = []
    for name, code in _fields(endpoint).items():
        schema = _schema(code) | _PAGE_SIZE if name == "per_page" else _schema(code)
        parameters.append(
            {"name": name, "in": "query", "required": code.endswith("!"), "schema": schema}
        )
    return parameters


def _body(endpoint: Endpoint) -> dict[str, Any]:
    fields = _fields(endpoint)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: _schema(code) for name, code in fields.items()},
        "required": [name for name, code in fields.items() if code.endswith("!")],
    }
    if endpoint.body:  # a named component, e.g. the per-level variants of VariablesUpdate
        schema = {"$ref": f"#/components/schemas/{endpoint.body}"}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _operation(endpoint: Endpoint) -> dict[str, Any]:
    envelope = record({"data": endpoint.data}, "The success envelope: the payload is `data`.")
    success = {
        "description": "Success.",
        "headers": {"X-Request-Id": {"$ref": "#/components/headers/RequestId"}},
        "content": {"application/json": {"schema": envelope}},
    }
    errors = {
        str(status): {"$ref": f"#/components/responses/Error{status}"} for status in ERROR_STATUSES
    }
    operation: dict[str, Any] = {
        "operationId": endpoint.path.strip("/").replace("/", "_"),
        "summary": endpoint.summary,
        "description": f"Source: {endpoint.source}.",
        "tags": [endpoint.path.split("/")[1]],
        "responses": {"200": success} | errors,
    }
    if endpoint.method == "GET":
        operation["parameters"] = _parameters(endpoint)
    else:
        operation["requestBody"] = _body(endpoint)
    return operation


def _error_response(status: int, description: str) -> dict[str, Any]:
    headers: dict[str, Any] = {"X-Request-Id": {"$ref": "#/components/headers/RequestId"}}
    if status == 429:
        headers["Retry-After"] = {
            "description": "Seconds (or an HTTP date) to wait before trying again.",
            "required": True,
            "schema": {"type": "string"},
        }
    schema = {"$ref": "#/components/schemas/Error"}
    return {
        "description": description,
        "headers": headers,
        "content": {"application/json": {"schema": schema}},
    }


def openapi_document(prefix: str = "") -> dict[str, Any]:
    """The OpenAPI 3.1 document for a simulator served under `prefix` (e.g. `/api/go`).

    >>> doc = openapi_document("/api/go")
    >>> doc["servers"], doc["paths"]["/services/list"]["get"]["operationId"]
    ([{'url': '/api/go'}], 'services_list')
    """
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in ENDPOINTS:
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = _operation(endpoint)
    paths["/openapi.json"] = {
        "get": {
            "operationId": "openapi_json",
            "summary": "This document",
            "tags": ["meta"],
            "security": [],
            "responses": {
                "200": {
                    "description": "The OpenAPI document.",
                    "content": {
                        "application/json": {"schema": {"type": "object", "required": ["openapi"]}}
                    },
                }
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Deployment platform API (simulator)",
            "version": "1",
            "description": "What toolkit.sim serves: docs/spec/platform-api.md part 4, the "
            "assumptions of docs/spec/api-facts.md, and `GET /api_keys/list`.",
        },
        "servers": [{"url": prefix.rstrip("/") or "/"}],
        "security": [{"bearerAuth": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key `plat_<secret>` or an access token (spec part 5).",
                }
            },
            "headers": {
                "RequestId": {
                    "description": "Identifies the request; equals the error's `request_id`.",
                    "required": True,
                    "schema": {"type": "string", "minLength": 1},
                }
            },
            "responses": {
                f"Error{status}": _error_response(status, text)
                for status, text in ERROR_STATUSES.items()
            },
            "schemas": COMPONENT_SCHEMAS | _REQUEST_SCHEMAS,
        },
    }
