"""Declared tables of the platform's configuration: hierarchy, services, volumes, webhooks.

Records follow part 2 of ``spec/platform-api.md`` and the assumed shapes of
``spec/api-facts.md``. Nested lists that audits query are child tables (ports, hosts,
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
    [ID, col("name", STR), text("description"), col("created_at", TS), EXTRA],
)

PROJECTS = declare(
    "projects",
    "Projects of each team.",
    [ID, *TEAM_SCOPE, col("name", STR), text("description"), col("created_at", TS), EXTRA],
)

ENVIRONMENTS = declare(
    "environments",
    "Environments of each project.",
    [ID, *PROJECT_SCOPE, col("name", STR), text("description"), col("created_at", TS), EXTRA],
)

_HEALTH = [
    col("health_check_type", STR),
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
    col(f"{which}_deployment_{part}", STR)
    for which in ("current", "last", "last_successful")
    for part in ("id", "status")
]

SERVICES = declare(
    "services",
    "Services with their configuration flattened into columns.",
    [
        ID,
        *ENV_SCOPE,
        col("name", STR),
        text("description"),
        col("type", STR, "gitprovider, container-image, database, or another string"),
        col("created_at", TS),
        col("updated_at", TS),
        col("runtime_name", STR),
        col("permissions", STRS),
        col("git_repository", STR),
        col("git_repository_owner", STR),
        col("gitprovider_installation_id", INT),
        col("git_branch", STR),
        col("git_tag", STR),
        col("builder", STR),
        col("image", STR),
        text("run_command"),
        col("auto_deploy", BOOL),
        col("is_public", BOOL),
        col("replicas", INT),
        col("cpu_limits_millicores", INT, "-1 occurs: treat as no limit"),
        col("cpu_requests_millicores", INT),
        col("memory_limits_megabytes", INT, "-1 occurs: treat as no limit"),
        col("memory_requests_megabytes", INT),
        *_HEALTH,
        col("privileged", BOOL),
        col("capabilities_add", STRS),
        col("capabilities_drop", STRS),
        col("backup_schedule", STR),
        col("backup_retention_count", INT),
        col("s3_backup_bucket_id", STR),
        col("database_type", STR),
        col("database_version", STR),
        col("database_config_version", STR),
        col("database_config_storage", STR),
        col("template_instance_id", STR),
        col("template_id", STR),
        col("template_name", STR),
        col("template_version", INT),
        col("service_group_id", STR),
        *_DEPLOYMENT_REFS,
        col("protected_variables", STRS, "names of variables the service manages"),
        col("watch_paths", STRS),
        col("init_container_images", STRS),
        col("variable_mount_names", STRS),
        EXTRA,
    ],
)

SERVICE_PORTS = declare(
    "service_ports",
    "Ports of each service: configured (config.ports) and detected (detected_ports).",
    [
        *SERVICE_SCOPE,
        required("source", STR, "config or detected"),
        col("port", INT),
        col("protocol", STR),
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
        col("host", STR),
        col("path", STR),
        col("target_port", INT),
        col("protocol", STR),
        col("display_name", STR),
        text("description"),
        col("prev_host", STR),
        col("template_input_id", STR),
    ],
    keys=("service_id", "host", "path"),
)

_VOLUME_COMMON = [
    col("name", STR),
    col("mount_path", STR),
    col("capacity_gb", FLOAT),
    col("requested_gb", FLOAT),
    col("used_gb", FLOAT),
    col("type", STR, "team, project or environment"),
    col("status", STR),
    col("mount_status", STR),
    col("is_database", BOOL),
]

SERVICE_VOLUMES = declare(
    "service_volumes",
    "Volumes as listed in each service's configuration (config.volumes).",
    [*SERVICE_SCOPE, col("volume_id", STR), *_VOLUME_COMMON],
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
        col("mounted_on_service_id", STR),
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
        col("type", STR, "team or project"),
        col(
            "url",
            STR,
            "redacted URL: no userinfo, query values, path parameters and path tokens masked; "
            "*** for a URL that could not be parsed",
        ),
        col("url_scheme", STR),
        col("url_host", STR),
        col("url_port", INT, "explicit or scheme default port"),
        col(
            "url_address",
            STR,
            "IP address the host is or names with no DNS lookup (IPv4 if embedded)",
        ),
        col(
            "url_address_kind",
            STR,
            "public, or what makes the host private: its range (loopback (127/8), private "
            "(10/8)...) or name (private name (.svc)); see toolkit.collect.webhook_address",
        ),
        col(
            "has_credentials_in_url",
            BOOL,
            "the URL carried userinfo, a token-like path segment, or a query value or path "
            "parameter (;name=value) named like a credential (token, key, code, sig, password...); "
            "null where the URL could not be parsed and showed no userinfo (unknown)",
        ),
        col("events", STRS),
        col("created_at", TS),
        EXTRA,
    ],
)

WEBHOOK_EVENTS = declare(
    "webhook_events",
    "One row per (webhook, event name).",
    [required("webhook_id", STR), *PROJECT_SCOPE, required("event", STR)],
    keys=("webhook_id", "event"),
)

S3_BUCKETS = declare(
    "s3_buckets",
    "S3-compatible buckets of each team (the secret key is never returned nor stored).",
    [
        ID,
        *TEAM_SCOPE,
        col("name", STR),
        col("endpoint", STR),
        col("region", STR),
        col("bucket", STR),
        col("access_key_id", STR),
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
        col("name", STR),
        text("description"),
        col("version", INT),
        col("immutable", BOOL),
        col("display_rank", INT),
        col("keywords", STRS),
        col("required_capabilities", STRS),
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
        col("name", STR),
        text("description"),
        col("icon", STR),
        col("template_id", STR),
        col("created_at", TS),
        EXTRA,
    ],
)
