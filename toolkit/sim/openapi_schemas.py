"""The component schemas of the simulator's OpenAPI document, declared as a table.

Each record of spec part 2 (and of docs/spec/api-facts.md) is a mapping of field name to a short
type code, turned into JSON Schema (OpenAPI 3.1 dialect) by `record`:

| code | schema |
|---|---|
| `str`, `int`, `num`, `bool` | string, integer, number, boolean |
| `uuid`, `time` | string with format `uuid` / `date-time` |
| `Name` | `$ref` to the component `Name` |
| `[code]` | array of that |
| `{}` | any object (loose, e.g. a template's `definition`) |
| trailing `!` | required and never null |

The specification does not say which response fields are required or may be null, so a
field without `!` is optional and nullable, and every record allows properties it does not
list (a real server may add fields). What IS promised is exact: the `{data}` envelope, the
error object of part 7, ids as strings. Enumerated response fields are plain strings with
their known values in the description: docs/spec/api-facts.md asks clients to accept any string.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COMPONENT_SCHEMAS", "field_schema", "record"]

Schema = dict[str, Any]
_SCALARS: dict[str, Schema] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "num": {"type": "number"},
    "bool": {"type": "boolean"},
    "uuid": {"type": "string", "format": "uuid"},
    "time": {"type": "string", "format": "date-time"},
    "{}": {"type": "object"},
}


def field_schema(code: str) -> Schema:
    """The schema of one type code (see the module docstring), nullable unless `!`."""
    required = code.endswith("!")
    code = code.rstrip("!")
    if code.startswith("["):
        schema: Schema = {"type": "array", "items": field_schema(code[1:-1] + "!")}
    elif code in _SCALARS:
        schema = dict(_SCALARS[code])
    else:
        schema = {"$ref": f"#/components/schemas/{code}"}
    if required:
        return schema
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    return {**schema, "type": [schema["type"], "null"]}


def record(fields: dict[str, str], description: str = "", **notes: str) -> Schema:
    """An object schema from `{field: code}`; `notes` describe fields (e.g. known values)."""
    properties = {name: field_schema(code) for name, code in fields.items()}
    for name, note in notes.items():
        properties[name]["description"] = note
    schema: Schema = {"type": "object", "properties": properties}
    required = [name for name, code in fields.items() if code.endswith("!")]
    if required:
        schema["required"] = required
    if description:
        schema["description"] = description
    return schema


def _known(values: str) -> str:
    return "Known values (any other string may appear): " + ", ".join(values.split())


def _each(code: str, names: str) -> dict[str, str]:
    """`{name: code}` for every space-separated name: a compact way to list alike fields."""
    return dict.fromkeys(names.split(), code)


_BUILD_FIELDS = (
    "container_builder_build_context container_builder_dockerfile_path "
    "buildpack_builder_build_command buildpack_builder_install_command"
)
_TEMPLATE_SUMMARY = (
    {"id": "uuid!", "created_at": "time", "immutable": "bool", "keywords": "[str]"}
    | _each("str", "name description icon")
    | _each("int", "display_rank version")
    | {"resource_recommendations": "ResourceRecommendations"}
)
_REPLICA_STATUS = {"runtime_name": "str", "status": "str", "pod_created_at": "time"}
_REPLICA_STATUS |= {"restart_count": "int", "events": "[ReplicaEvent]"}
_OWNER_IDS = _each("uuid", "team_id project_id environment_id")
_REPLICA_STATES = _known(
    "running waiting terminated terminating crashing not_ready image_pull_error starting"
)
_LEVELS = _known("team project environment service")

COMPONENT_SCHEMAS: dict[str, Schema] = {
    "Error": record(
        _each("str!", "type message request_id") | {"status": "int!", "details": "[str]"},
        "The error object of spec part 7; `request_id` is also the X-Request-Id header.",
        type=_known(
            "bad_request unauthorized forbidden not_found conflict validation_error "
            "rate_limited internal_error error"
        ),
    ),
    "Port": record(
        {"is_nodeport": "bool", "node_port": "int", "port": "int", "protocol": "str"},
        protocol=_known("TCP UDP SCTP"),
    ),
    "Resources": record(
        _each("int", "cpu_limits_millicores cpu_requests_millicores")
        | _each("int", "memory_limits_megabytes memory_requests_megabytes"),
        "Requests and limits; -1 occurs in the shape (no value set).",
    ),
    "Host": record(
        _each("str", "description display_name host path prev_host protocol template_input_id")
        | {"target_port": "int"}
    ),
    "HealthCheck": record(
        _each("str", "command path type")
        | _each("int", "port health_failure_threshold health_period_seconds")
        | _each("int", "health_timeout_seconds startup_failure_threshold")
        | _each("int", "startup_period_seconds startup_timeout_seconds"),
        type=_known("http"),
    ),
    "DatabaseConfig": record(
        _each("str", "default_database_name storage version wal_level")
        | _each("int", "innodb_buffer_pool_size_mb max_replication_slots")
        | _each("int", "max_slot_wal_keep_size_mb max_wal_senders shared_buffers_mb"),
        wal_level=_known("replica"),
    ),
    "SecurityContext": record({"capabilities": "Capabilities", "privileged": "bool"}),
    "Capabilities": record({"add": "[str]", "drop": "[str]"}),
    "InitContainer": record({"command": "str", "image": "str"}),
    "VariableMount": record({"name": "str", "path": "str"}),
    "Volume": record(
        {"id": "str!", "created_at": "time", "mounted_on_service_id": "uuid"}
        | _each("str", "name description type status mount_status mount_path")
        | _OWNER_IDS
        | _each("num", "capacity_gb requested_gb used_gb")
        | _each("bool", "can_delete is_available is_database is_deleting is_pending_resize"),
        type=_known("team project environment"),
        status=_known("Pending"),
        mount_status=_known("unattached"),
    ),
    "ServiceConfig": record(
        _each("bool", "auto_deploy is_public")
        | _each("int", "backup_retention_count replicas")
        | _each("str", f"backup_schedule builder git_branch git_tag icon image {_BUILD_FIELDS}")
        | {"run_command": "str", "database_config": "DatabaseConfig"}
        | {"health_check": "HealthCheck", "hosts": "[Host]", "ports": "[Port]"}
        | {"init_containers": "[InitContainer]", "protected_variables": "[str]"}
        | {"resources": "Resources", "s3_backup_bucket_id": "uuid"}
        | {"security_context": "SecurityContext", "variable_mounts": "[VariableMount]"}
        | {"volumes": "[Volume]", "watch_paths": "[str]"},
        builder=_known("buildpack container database"),
        protected_variables="Variable names managed by the service; callers cannot change them.",
    ),
    "ServiceGroup": record(
        {"id": "uuid!", "created_at": "time"}
        | _each("str", "name description icon")
        | _each("uuid", "environment_id template_id")
    ),
    "ResourceRecommendations": record(
        _each("num", "minimum_recommended_cpu minimum_recommended_ram_gb")
    ),
    "TemplateSummary": record(_TEMPLATE_SUMMARY),
    "Template": record(
        _TEMPLATE_SUMMARY | {"definition": "{}"},
        "A deployable blueprint; `definition` (spec 2.6) is kept loose on purpose.",
    ),
    "ReplicaEvent": record(
        {"count": "int"} | _each("str", "first_seen last_seen message reason timestamp type"),
        type=_known(
            "oom_killed crash_loop_back_off container_created container_started "
            "container_stopped image_pull_back_off node_not_ready scheduling_failed unknown"
        ),
    ),
    "CommitAuthor": record({"avatar_url": "str", "name": "str"}),
    "Deployment": record(
        {"id": "uuid!", "service_id": "uuid", "commit_author": "CommitAuthor"}
        | _each("int", "attempts replica_restarts")
        | _each("time", "created_at queued_at started_at completed_at updated_at")
        | _each("str", "builder commit_message commit_sha error status_message status")
        | _each("str", f"git_branch image job_name run_command {_BUILD_FIELDS}")
        | {"crashing_reasons": "[str]", "replica_events": "[ReplicaEvent]"},
        status=_known(
            "build-pending build-queued build-running build-succeeded build-cancelled "
            "build-failed active launching launch-error crashing removed"
        ),
    ),
    "Service": record(
        {"id": "uuid!", "gitprovider_installation_id": "int", "permissions": "[str]"}
        | _each("str", "name description type git_repository git_repository_owner")
        | _each("str", "runtime_name database_type database_version")
        | _each("time", "created_at updated_at")
        | _each("uuid", "environment_id template_instance_id")
        | {"detected_ports": "[Port]", "config": "ServiceConfig"}
        | _each("Deployment", "current_deployment last_deployment last_successful_deployment")
        | {"service_group": "ServiceGroup", "template": "TemplateSummary"},
        type=_known("gitprovider container-image database"),
    ),
    "ReplicaStatus": record(_REPLICA_STATUS, status=_REPLICA_STATES),
    "ReplicaHealth": record(
        {"expected_replicas": "int", "health": "str", "replicas": "[ReplicaStatus]"},
        health=_known("pending crashing active terminating"),
    ),
    "Replica": record(
        _REPLICA_STATUS | _OWNER_IDS | {"service_id": "uuid"},
        "A replica of spec 2.9 with the ids of its owners (api-facts).",
        status=_REPLICA_STATES,
    ),
    "S3Bucket": {
        **record(
            {"id": "uuid!"}
            | _each("str", "name endpoint region bucket access_key")
            | _each("time", "created_at updated_at"),
            "The secret key is never returned (spec 2.7).",
        ),
        "not": {"anyOf": [{"required": ["secret_key"]}, {"required": ["secret_access_key"]}]},
    },
    "VariableReference": record(
        {"resolved": "bool", "source_id": "uuid"}
        | _each("str", "key resolved_value source_icon source_name source_type token"),
        source_type=_LEVELS,
    ),
    "Variable": record(
        {"name": "str!", "provided": "bool", "updates": "[str]"}
        | _each("str", "type value resolved_value")
        | {"references": "[VariableReference]"},
        "`value` and `resolved_value` are null when the envelope says values_redacted.",
        type=_LEVELS,
    ),
    "VariableList": record({"values_redacted": "bool!", "variables": "[Variable]!"}),
    "Webhook": record(
        {"id": "uuid!", "team_id": "uuid", "project_id": "uuid", "events": "[str]"}
        | {"type": "str", "url": "str", "created_at": "time"},
        type=_known("team project"),
        events=_known("project.created project.updated project.deleted service.created ..."),
    ),
    "Team": record({"id": "uuid!", "created_at": "time"} | _each("str", "name description")),
    "Project": record(
        {"id": "uuid!", "team_id": "uuid", "created_at": "time"} | _each("str", "name description")
    ),
    "Environment": record(
        {"id": "uuid!", "created_at": "time"}
        | _each("uuid", "team_id project_id")
        | _each("str", "name description")
    ),
    "KeyResource": record({"type": "str!", "id": "str!"}, type=_LEVELS),
    "ApiKey": record(
        {"id": "str!", "resources": "[KeyResource]"}
        | _each("str", "name role access")
        | _each("time", "created_at expires_at last_used_at"),
        role=_known("viewer editor admin"),
        access=_known("all limited"),
    ),
    "Me": record(
        {"id": "str!", "created_at": "time", "api_key": "ApiKey"} | _each("str", "email name"),
        "The caller; `api_key` is null for an access token (api-facts).",
    ),
    "PageMetadata": record({"has_next": "bool"} | _each("time", "next previous")),
    "DeploymentPage": record(
        {"deployments": "[Deployment]!", "current_deployment": "Deployment"}
        | {"metadata": "PageMetadata"},
    ),
    "EnvironmentDeleted": record({"deleted": "bool!", "id": "str!"}),
    "ReplicasRestarted": record({"restarted": "bool!"}),
}
