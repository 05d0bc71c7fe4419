"""Declared tables of what runs and who sees it: deployments, replicas, variables, access.

``variables`` holds no value column and no ``extra`` on purpose: an unknown field of a
variable could carry its value. A variable is identified by name, level and owners, and
its value by length and a keyed fingerprint only.
"""

from __future__ import annotations

from toolkit.snapshot.schema import (
    BOOL,
    EXTRA,
    ID,
    INT,
    SERVICE_SCOPE,
    STR,
    STRS,
    TS,
    Kind,
    col,
    declare,
    required,
    text,
)

__all__ = [
    "COLLECTION_ERRORS",
    "CREDENTIALS",
    "CREDENTIAL_PROBES",
    "CREDENTIAL_RESOURCES",
    "DEPLOYMENTS",
    "REPLICAS",
    "REPLICA_EVENTS",
    "REPLICA_HEALTH",
    "VARIABLES",
    "VARIABLE_REFERENCES",
]

DEPLOYMENTS = declare(
    "deployments",
    "Deployment history of each service, newest first by history_rank.",
    [
        ID,
        *SERVICE_SCOPE,
        col("status", STR, kind=Kind.ENUM),
        text("status_message"),
        col("attempts", INT),
        col("builder", STR, kind=Kind.ENUM),
        col("image", STR, kind=Kind.IMAGE),
        col("git_branch", STR, kind=Kind.NAME),
        col("commit_sha", STR, kind=Kind.ID),
        text("commit_message"),
        col("commit_author_name", STR, kind=Kind.NAME),
        col("job_name", STR, kind=Kind.NAME),
        text("run_command"),
        text("error"),
        col("created_at", TS),
        col("queued_at", TS),
        col("started_at", TS),
        col("completed_at", TS),
        col("updated_at", TS),
        col("crashing_reasons", STRS, kind=Kind.TEXT),
        col("replica_restarts", INT),
        col("history_rank", INT, "0 for the newest deployment of the service"),
        col("is_current", BOOL, "the service's current_deployment"),
        col("is_last", BOOL, "the service's last_deployment"),
        col("is_last_successful", BOOL, "the service's last_successful_deployment"),
        EXTRA,
    ],
)

REPLICA_EVENTS = declare(
    "replica_events",
    "Replica events, from deployments (deployment_id set) or replica health (replica_name).",
    [
        *SERVICE_SCOPE,
        required("source", STR, "deployment or replica", kind=Kind.TOOLKIT),
        col("deployment_id", STR, kind=Kind.ID),
        col("replica_name", STR, kind=Kind.ID),
        col("type", STR, "oom_killed, crash_loop_back_off, ... or another string", kind=Kind.ENUM),
        text("reason"),
        text("message"),
        col("count", INT),
        col("first_seen", TS),
        col("last_seen", TS),
        col("timestamp", TS),
    ],
    # `reason` too: under drift two events of one replica can share an unknown `type` and a
    # start (an OOM kill and the crash loop it began), and are still two events.
    keys=("service_id", "source", "deployment_id", "replica_name", "type", "reason", "first_seen"),
)

REPLICA_HEALTH = declare(
    "replica_health",
    "Aggregated replica health of each service (/replicas/health).",
    [
        *SERVICE_SCOPE,
        col("expected_replicas", INT),
        col("health", STR, kind=Kind.ENUM),
        col("replica_count", INT),
        EXTRA,
    ],
    keys=("service_id",),
)

REPLICAS = declare(
    "replicas",
    "Replicas (pods) of each service.",
    [
        *SERVICE_SCOPE,
        required("runtime_name", STR, kind=Kind.ID),
        col("status", STR, kind=Kind.ENUM),
        col("restart_count", INT),
        col("pod_created_at", TS),
        EXTRA,
    ],
    keys=("service_id", "runtime_name"),
)

VARIABLES = declare(
    "variables",
    "Variables WITHOUT values: name, level, owners, reference and protection flags, the "
    "value's length and a keyed fingerprint (HMAC-SHA256, key kept outside the store).",
    [
        required("name", STR, kind=Kind.NAME),
        required("level", STR, "team, project, environment or service", kind=Kind.TOOLKIT),
        *SERVICE_SCOPE,
        col("is_reference", BOOL, "the value holds at least one ${{...}} reference"),
        col("reference_count", INT),
        col("is_protected", BOOL, "listed in the service's protected_variables"),
        col("provided", BOOL),
        col("values_redacted", BOOL, "the API withheld values (viewer key): no fingerprint"),
        col("value_length", INT),
        col(
            "fingerprint",
            STR,
            "HMAC-SHA256 hex of the value; null when redacted",
            kind=Kind.TOOLKIT,
        ),
        col("updates", STRS, kind=Kind.TEXT),
        col(
            "writes_credential",
            BOOL,
            "the value writes out a credential beside its ${{...}} references (a URL's "
            "password, Bearer or Basic, a password=... pair or --password flag); null when "
            "the value was not read, or was collected before schema version 4",
        ),
        col(
            "value_kind",
            STR,
            "the kind of secret the value itself gives away (jwt, private_key, "
            "payment_live_key, cloud_access_key, chat_token, github_token, gitlab_token: "
            "toolkit.snapshot.secret_kinds), 'none' when it is none of them; null when the "
            "value was not read, or was collected before schema version 5",
            kind=Kind.TOOLKIT,
        ),
    ],
    keys=("level", "team_id", "project_id", "environment_id", "service_id", "name"),
)

VARIABLE_REFERENCES = declare(
    "variable_references",
    "References made by variable values (no resolved values).",
    [
        required("variable_name", STR, kind=Kind.NAME),
        required("level", STR, kind=Kind.TOOLKIT),
        *SERVICE_SCOPE,
        required("position", INT, "order of the reference within the variable"),
        col("key", STR, kind=Kind.NAME),
        col("token", STR, "the reference expression, e.g. ${{team.KEY}}", kind=Kind.NAME),
        col("resolved", BOOL),
        col("source_type", STR, kind=Kind.ENUM),
        col("source_id", STR, kind=Kind.ID),
        col("source_name", STR, kind=Kind.NAME),
    ],
    keys=(
        "level",
        "team_id",
        "project_id",
        "environment_id",
        "service_id",
        "variable_name",
        "position",
    ),
)

CREDENTIALS = declare(
    "credentials",
    "One row per configured credential: identity, role, access, expiry, last use.",
    [
        required("name", STR, "configured name of the credential", kind=Kind.NAME),
        col(
            "token_fingerprint",
            STR,
            "HMAC-SHA256 of the token (hex), never the token",
            kind=Kind.TOOLKIT,
        ),
        col("is_api_key", BOOL),
        col("key_id", STR, kind=Kind.ID),
        col("key_name", STR, kind=Kind.NAME),
        col("role", STR, kind=Kind.ENUM),
        col("access", STR, "all or limited", kind=Kind.ENUM),
        col("user_id", STR, kind=Kind.ID),
        col("created_at", TS),
        col("expires_at", TS),
        col("last_used_at", TS),
        col("problems", STRS, "what could not be determined, in plain words", kind=Kind.TEXT),
        EXTRA,
    ],
    keys=("name",),
)

CREDENTIAL_RESOURCES = declare(
    "credential_resources",
    "Resources an API key is limited to (access = limited).",
    [
        required("credential_name", STR, kind=Kind.NAME),
        col("key_id", STR, kind=Kind.ID),
        required("resource_type", STR, "team, project, environment or service", kind=Kind.ENUM),
        required("resource_id", STR, kind=Kind.ID),
    ],
    keys=("credential_name", "resource_type", "resource_id"),
)

CREDENTIAL_PROBES = declare(
    "credential_probes",
    "Verified scope (CrawlOptions(verify_scope=True)): what an audited key was expected to "
    "see and what it saw, per probed environment and service.",
    [
        required("credential_name", STR, kind=Kind.NAME),
        required("resource_type", STR, "environment or service", kind=Kind.TOOLKIT),
        required("resource_id", STR, kind=Kind.ID),
        *SERVICE_SCOPE,
        col("endpoint", STR, "the call that probed, e.g. services.list", kind=Kind.TOOLKIT),
        col("expected_visible", BOOL, "inside the claimed scope; null when it cannot be told"),
        col("observed_visible", BOOL, "the key saw it; null when the probe failed"),
        col("status", STR, "match, mismatch, unknown or error", kind=Kind.TOOLKIT),
        col("http_status", INT, "status of a failed probe"),
        col("error_type", STR, "error type of a failed probe", kind=Kind.ENUM),
    ],
    keys=("credential_name", "resource_type", "resource_id"),
)

COLLECTION_ERRORS = declare(
    "collection_errors",
    "What could not be collected, as data: one row per failed request.",
    [
        required("endpoint", STR, kind=Kind.TOOLKIT),
        col("method", STR, kind=Kind.TOOLKIT),
        *SERVICE_SCOPE,
        col("status", INT, "HTTP status; null for network errors"),
        col("error_type", STR, kind=Kind.ENUM),
        col("request_id", STR, kind=Kind.REQUEST_ID),
        col("attempts", INT),
        text("message"),
        col("not_visible", BOOL, "404: outside the credential's limits, not a failure"),
        col(
            "table_name",
            STR,
            "schema_drift, duplicate_id: the table of the record",
            kind=Kind.TOOLKIT,
        ),
        col(
            "column_name",
            STR,
            "schema_drift: the column that did not fit; duplicate_id: the key's columns",
            kind=Kind.TOOLKIT,
        ),
        col("occurred_at", TS),
    ],
    keys=(
        "endpoint",
        "team_id",
        "project_id",
        "environment_id",
        "service_id",
        "request_id",
        "error_type",
        "table_name",
        "column_name",
    ),
)
