"""Declared tables of the platform's configuration: hierarchy, services, volumes, webhooks.

Records follow part 2 of ``docs/spec/platform-api.md`` and the assumed shapes of
``docs/spec/api-facts.md``. Nested lists that audits query are child tables (ports, hosts,
config volumes, webhook events), not JSON strings.
"""

from __future__ import annotations

from toolkit.snapshot.schema import (
    BOOL,
    ENV_SCOPE,
    EXTRA,
    FLOAT,
    ID,
    INT,
    PROJECT_SCOPE,
    SERVICE_SCOPE,
    STR,
    STRS,
    TEAM_SCOPE,
    TS,
    Kind,
    col,
    declare,
    required,
    text,
)

__all__ = [
    "ENVIRONMENTS",
    "PROJECTS",
    "S3_BUCKETS",
    "SERVICES",
    "SERVICE_GROUPS",
    "SERVICE_HOSTS",
    "SERVICE_PORTS",
    "SERVICE_VOLUMES",
    "TEAMS",
    "TEMPLATES",
    "VOLUMES",
    "WEBHOOKS",
    "WEBHOOK_EVENTS",
]

TEAMS = declare(
    "teams",
    "Teams the credential can see.",
    [ID, col("name", STR, kind=Kind.NAME), text("description"), col("created_at", TS), EXTRA],
)

PROJECTS = declare(
    "projects",
    "Projects of each team.",
    [
        ID,
        *TEAM_SCOPE,
        col("name", STR, kind=Kind.NAME),
        text("description"),
        col("created_at", TS),
        EXTRA,
    ],
)

ENVIRONMENTS = declare(
    "environments",
    "Environments of each project.",
    [
        ID,
        *PROJECT_SCOPE,
        col("name", STR, kind=Kind.NAME),
        text("description"),
        col("created_at", TS),
        EXTRA,
    ],
)

_HEALTH = [
    col("health_check_type", STR, kind=Kind.ENUM),
    text("health_check_path"),
    col("health_check_port", INT),
    text("health_check_command"),
    col("health_period_seconds", INT),
    col("health_timeout_seconds", INT),
    col("health_failure_threshold", INT),
    col("startup_period_seconds", INT),
    col("startup_timeout_seconds", INT),
    col("startup_failure_threshold", INT),
]

_DEPLOYMENT_REFS = [
    col(f"{which}_deployment_{part}", STR, kind=Kind.ID if part == "id" else Kind.ENUM)
    for which in ("current", "last", "last_successful")
    for part in ("id", "status")
]

SERVICES = declare(
    "services",
    "Services with their configuration flattened into columns.",
    [
        ID,
        *ENV_SCOPE,
        col("name", STR, kind=Kind.NAME),
        text("description"),
        col(
            "type", STR, "gitprovider, container-image, database, or another string", kind=Kind.ENUM
        ),
        col("created_at", TS),
        col("updated_at", TS),
        col("runtime_name", STR, kind=Kind.ID),
        col("permissions", STRS, kind=Kind.ENUM),
        col("git_repository", STR, kind=Kind.URL),
        col("git_repository_owner", STR, kind=Kind.NAME),
        col("gitprovider_installation_id", INT),
        col("git_branch", STR, kind=Kind.NAME),
        col("git_tag", STR, kind=Kind.NAME),
        col("builder", STR, kind=Kind.ENUM),
        col("image", STR, kind=Kind.IMAGE),
        text("run_command"),
        col("auto_deploy", BOOL),
        col("is_public", BOOL),
        col("replicas", INT),
        col("cpu_limits_millicores", INT, "-1: not set (service_limits.cpu_limit_mcpu is NULL)"),
        col(
            "cpu_requests_millicores", INT, "-1: not set (service_limits.cpu_request_mcpu is NULL)"
        ),
        col("memory_limits_megabytes", INT, "-1: not set (service_limits.memory_limit_mb is NULL)"),
        col(
            "memory_requests_megabytes",
            INT,
            "-1: not set (service_limits.memory_request_mb is NULL)",
        ),
        *_HEALTH,
        col("privileged", BOOL),
        col("capabilities_add", STRS, kind=Kind.ENUM),
        col("capabilities_drop", STRS, kind=Kind.ENUM),
        col("backup_schedule", STR, kind=Kind.NAME),
        col("backup_retention_count", INT),
        col("s3_backup_bucket_id", STR, kind=Kind.ID),
        col("database_type", STR, kind=Kind.ENUM),
        col("database_version", STR, kind=Kind.NAME),
        col("database_config_version", STR, kind=Kind.NAME),
        col("database_config_storage", STR, kind=Kind.NAME),
        col("template_instance_id", STR, kind=Kind.ID),
        col("template_id", STR, kind=Kind.ID),
        col("template_name", STR, kind=Kind.NAME),
        col("template_version", INT),
        col("service_group_id", STR, kind=Kind.ID),
        *_DEPLOYMENT_REFS,
        col("protected_variables", STRS, "names of variables the service manages", kind=Kind.NAME),
        col("watch_paths", STRS, kind=Kind.FILE_PATH),
        col("init_container_images", STRS, kind=Kind.IMAGE),
        col("variable_mount_names", STRS, kind=Kind.NAME),
        EXTRA,
    ],
)

SERVICE_PORTS = declare(
    "service_ports",
    "Ports of each service: configured (config.ports) and detected (detected_ports).",
    [
        *SERVICE_SCOPE,
        required("source", STR, "config or detected", kind=Kind.TOOLKIT),
        col("port", INT),
        col("protocol", STR, kind=Kind.ENUM),
        col("is_nodeport", BOOL),
        col("node_port", INT),
    ],
    keys=("service_id", "source", "port", "protocol"),
)

SERVICE_HOSTS = declare(
    "service_hosts",
    "Public hosts of each service (config.hosts).",
    [
        *SERVICE_SCOPE,
        col("host", STR, kind=Kind.NAME),
        col("path", STR, kind=Kind.URL_PATH),
        col("target_port", INT),
        col("protocol", STR, kind=Kind.ENUM),
        col("display_name", STR, kind=Kind.NAME),
        text("description"),
        col("prev_host", STR, kind=Kind.NAME),
        col("template_input_id", STR, kind=Kind.ID),
    ],
    keys=("service_id", "host", "path"),
)

_VOLUME_COMMON = [
    col("name", STR, kind=Kind.NAME),
    col("mount_path", STR, kind=Kind.FILE_PATH),
    col("capacity_gb", FLOAT),
    col("requested_gb", FLOAT),
    col("used_gb", FLOAT),
    col("type", STR, "team, project or environment", kind=Kind.ENUM),
    col("status", STR, kind=Kind.ENUM),
    col("mount_status", STR, kind=Kind.ENUM),
    col("is_database", BOOL),
]

SERVICE_VOLUMES = declare(
    "service_volumes",
    "Volumes as listed in each service's configuration (config.volumes).",
    [*SERVICE_SCOPE, col("volume_id", STR, kind=Kind.ID), *_VOLUME_COMMON],
    keys=("service_id", "volume_id"),
)

VOLUMES = declare(
    "volumes",
    "Volumes listed per team, project or environment.",
    [
        ID,
        *ENV_SCOPE,
        *_VOLUME_COMMON,
        text("description"),
        col("mounted_on_service_id", STR, kind=Kind.ID),
        col("can_delete", BOOL),
        col("is_available", BOOL),
        col("is_deleting", BOOL),
        col("is_pending_resize", BOOL),
        col("created_at", TS),
        EXTRA,
    ],
)

WEBHOOKS = declare(
    "webhooks",
    "Webhooks of teams and projects; url without userinfo, with query values, path "
    "parameters and token-like path segments masked.",
    [
        ID,
        *PROJECT_SCOPE,
        col("type", STR, "team or project", kind=Kind.ENUM),
        col(
            "url",
            STR,
            "redacted URL: no userinfo, query values, path parameters and path tokens masked; "
            "*** for a URL that could not be parsed",
            kind=Kind.URL,
        ),
        col("url_scheme", STR, kind=Kind.ENUM),
        col("url_host", STR, kind=Kind.NAME),
        col("url_port", INT, "explicit or scheme default port"),
        col(
            "url_address",
            STR,
            "IP address the host is or names with no DNS lookup (IPv4 if embedded)",
            kind=Kind.TOOLKIT,
        ),
        col(
            "url_address_kind",
            STR,
            "public, or what makes the host private: its range (loopback (127/8), private "
            "(10/8)...) or name (private name (.svc)); see toolkit.collect.webhook_address",
            kind=Kind.TOOLKIT,
        ),
        col(
            "has_credentials_in_url",
            BOOL,
            "the URL carried userinfo, a token-like path segment, or a query value or path "
            "parameter (;name=value) named like a credential (token, key, code, sig, password...); "
            "null where the URL could not be parsed and showed no userinfo (unknown)",
        ),
        col("events", STRS, kind=Kind.ENUM),
        col("created_at", TS),
        EXTRA,
    ],
)

WEBHOOK_EVENTS = declare(
    "webhook_events",
    "One row per (webhook, event name).",
    [
        required("webhook_id", STR, kind=Kind.ID),
        *PROJECT_SCOPE,
        required("event", STR, kind=Kind.ENUM),
    ],
    keys=("webhook_id", "event"),
)

S3_BUCKETS = declare(
    "s3_buckets",
    "S3-compatible buckets of each team (the secret key is never returned nor stored).",
    [
        ID,
        *TEAM_SCOPE,
        col("name", STR, kind=Kind.NAME),
        col("endpoint", STR, kind=Kind.URL),
        col("region", STR, kind=Kind.NAME),
        col("bucket", STR, kind=Kind.NAME),
        col("access_key_id", STR, kind=Kind.ID),
        col("created_at", TS),
        col("updated_at", TS),
        EXTRA,
    ],
)

TEMPLATES = declare(
    "templates",
    "Deployable templates (summary of the definition; no variable values).",
    [
        ID,
        col("name", STR, kind=Kind.NAME),
        text("description"),
        col("version", INT),
        col("immutable", BOOL),
        col("display_rank", INT),
        col("keywords", STRS, kind=Kind.NAME),
        col("required_capabilities", STRS, kind=Kind.ENUM),
        col("service_count", INT),
        col("minimum_recommended_cpu", FLOAT),
        col("minimum_recommended_ram_gb", FLOAT),
        col("created_at", TS),
        EXTRA,
    ],
)

SERVICE_GROUPS = declare(
    "service_groups",
    "Service groups of each environment.",
    [
        ID,
        *ENV_SCOPE,
        col("name", STR, kind=Kind.NAME),
        text("description"),
        col("icon", STR, kind=Kind.URL),
        col("template_id", STR, kind=Kind.ID),
        col("created_at", TS),
        EXTRA,
    ],
)
