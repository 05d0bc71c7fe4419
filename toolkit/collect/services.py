"""Services: the configuration flattened into columns, with ports, hosts, volumes, deployments.

One `/services/list` answer per environment gives each service's configuration, its
detected ports, and its three deployment records (current, last, last successful); they
become `services`, `service_ports`, `service_hosts`, `service_volumes`, `deployments` and
`replica_events` rows. Init-container commands are not stored (they may hold secrets):
only their images are.

>>> rows = map_services(client.list_services(t, p, e),                 # doctest: +SKIP
...                     team_id=t, project_id=p, environment_id=e)
>>> {table: len(found) for table, found in rows.items()}               # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields
from toolkit.collect.deployments import deployment_rows

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Rows

__all__ = ["ENDPOINT", "map_services"]

ENDPOINT = "services.list"
_REFS = ("current", "last", "last_successful")
_TOP: tuple[str, ...] = (
    "id",
    "name",
    "description",
    "type",
    "created_at",
    "updated_at",
    "environment_id",
    "git_repository",
    "git_repository_owner",
    "gitprovider_installation_id",
    "runtime_name",
    "database_type",
    "database_version",
    "template_instance_id",
    "permissions",
    "detected_ports",
    "config",
    "current_deployment",
    "last_deployment",
    "last_successful_deployment",
    "service_group",
    "template",
)
_CONFIG: tuple[str, ...] = (
    "auto_deploy",
    "backup_retention_count",
    "backup_schedule",
    "builder",
    "database_config",
    "container_builder_build_context",
    "container_builder_dockerfile_path",
    "buildpack_builder_build_command",
    "buildpack_builder_install_command",
    "git_branch",
    "git_tag",
    "health_check",
    "hosts",
    "icon",
    "image",
    "run_command",
    "init_containers",
    "is_public",
    "ports",
    "protected_variables",
    "replicas",
    "resources",
    "s3_backup_bucket_id",
    "security_context",
    "variable_mounts",
    "volumes",
    "watch_paths",
)
_DIRECT: tuple[str, ...] = (
    "id",
    "name",
    "description",
    "type",
    "created_at",
    "updated_at",
    "runtime_name",
    "permissions",
    "git_repository_owner",
    "gitprovider_installation_id",
    "database_type",
    "database_version",
    "template_instance_id",
)
_FROM_CONFIG: tuple[str, ...] = (
    "git_branch",
    "git_tag",
    "builder",
    "image",
    "run_command",
    "auto_deploy",
    "is_public",
    "replicas",
    "backup_schedule",
    "backup_retention_count",
    "s3_backup_bucket_id",
    "protected_variables",
    "watch_paths",
)
_RESOURCES: tuple[str, ...] = (
    "cpu_limits_millicores",
    "cpu_requests_millicores",
    "memory_limits_megabytes",
    "memory_requests_megabytes",
)
_HEALTH: tuple[str, ...] = (
    "health_period_seconds",
    "health_timeout_seconds",
    "health_failure_threshold",
    "startup_period_seconds",
    "startup_timeout_seconds",
    "startup_failure_threshold",
)
_HOST: tuple[str, ...] = (
    "host",
    "path",
    "target_port",
    "protocol",
    "display_name",
    "description",
    "prev_host",
    "template_input_id",
)
_VOLUME: tuple[str, ...] = (
    "name",
    "mount_path",
    "capacity_gb",
    "requested_gb",
    "used_gb",
    "type",
    "status",
    "mount_status",
    "is_database",
)


def map_services(
    payload: Sequence[dict[str, Any]], *, team_id: str, project_id: str, environment_id: str
) -> Rows:
    """`/services/list` of one environment -> rows of every service table."""
    env = Owner(team_id=team_id, project_id=project_id, environment_id=environment_id)
    conformer = Conformer(ENDPOINT, env)
    out: Rows = {
        table: [] for table in ("services", "service_ports", "service_hosts", "service_volumes")
    }
    out |= {"deployments": [], "replica_events": []}
    for item in payload:
        row = conformer.row("services", _service_values(conformer, item, env))
        if row is None:
            continue
        out["services"].append(row)
        owner = Owner(team_id, project_id, environment_id, row["id"])
        config = item["config"] if isinstance(item.get("config"), dict) else {}
        for table, found in _children(conformer, item, config, owner).items():
            out[table].extend(found)
    out["collection_errors"] = conformer.drift_rows()
    return out


def _service_values(conformer: Conformer, item: dict[str, Any], env: Owner) -> dict[str, Any]:
    config = conformer.obj(item, "config", "services")
    resources = conformer.obj(config, "resources", "services.config")
    health = conformer.obj(config, "health_check", "services.config")
    security = conformer.obj(config, "security_context", "services.config")
    capabilities = conformer.obj(security, "capabilities", "services.config.security_context")
    database = conformer.obj(config, "database_config", "services.config")
    template = conformer.obj(item, "template", "services")
    group = conformer.obj(item, "service_group", "services")
    values: dict[str, Any] = {key: item.get(key) for key in _DIRECT}
    values |= {key: config.get(key) for key in _FROM_CONFIG}
    values |= {key: resources.get(key) for key in _RESOURCES}
    values |= {key: health.get(key) for key in _HEALTH}
    values |= {
        **env.columns(),
        "git_repository": item.get("git_repository"),  # a URL: the Conformer masks it
        "health_check_type": health.get("type"),
        "health_check_path": health.get("path"),
        "health_check_port": health.get("port"),
        "health_check_command": health.get("command"),
        "privileged": security.get("privileged"),
        "capabilities_add": capabilities.get("add"),
        "capabilities_drop": capabilities.get("drop"),
        "database_config_version": database.get("version"),
        "database_config_storage": database.get("storage"),
        "template_id": template.get("id"),
        "template_name": template.get("name"),
        "template_version": template.get("version"),
        "service_group_id": group.get("id"),
        "init_container_images": _names(conformer, config, "init_containers", "image"),
        "variable_mount_names": _names(conformer, config, "variable_mounts", "name"),
    }
    values.pop("service_id", None)
    for which in _REFS:
        record = conformer.obj(item, f"{which}_deployment", "services")
        values[f"{which}_deployment_id"] = record.get("id")
        values[f"{which}_deployment_status"] = record.get("status")
    extra = unknown_fields(item, _TOP)
    extra["config"] = unknown_fields(config, _CONFIG)
    values["extra"] = extra_json(extra)
    return values


def _names(conformer: Conformer, config: dict[str, Any], key: str, member: str) -> list[Any]:
    return [item.get(member) for item in conformer.objs(config, key, "services.config")]


def _children(
    conformer: Conformer, item: dict[str, Any], config: dict[str, Any], owner: Owner
) -> Rows:
    ids = owner.columns()
    ports = [
        {**ids, "source": source, **{k: p.get(k) for k in ("port", "protocol", "is_nodeport")}}
        | {"node_port": p.get("node_port")}
        for source, found in (
            ("config", conformer.objs(config, "ports", "services.config")),
            ("detected", conformer.objs(item, "detected_ports", "services")),
        )
        for p in found
    ]
    hosts = [
        {**ids, **{k: h.get(k) for k in _HOST}}
        for h in conformer.objs(config, "hosts", "services.config")
    ]
    volumes = [
        {**ids, "volume_id": v.get("id"), **{k: v.get(k) for k in _VOLUME}}
        for v in conformer.objs(config, "volumes", "services.config")
    ]
    out: Rows = {
        "service_ports": conformer.rows("service_ports", ports),
        "service_hosts": conformer.rows("service_hosts", hosts),
        "service_volumes": conformer.rows("service_volumes", volumes),
        "deployments": [],
        "replica_events": [],
    }
    for rows in _deployment_refs(conformer, item, owner):
        for table in ("deployments", "replica_events"):
            out[table].extend(rows[table])
    return out


def _deployment_refs(conformer: Conformer, item: dict[str, Any], owner: Owner) -> list[Rows]:
    """Rows of the current, last and last successful deployments, flagged as such."""
    records = {which: conformer.obj(item, f"{which}_deployment", "services") for which in _REFS}
    ids = {which: record.get("id") for which, record in records.items()}
    found: list[Rows] = []
    seen: set[object] = set()
    for record in records.values():
        if not record or record.get("id") in seen:
            continue
        seen.add(record.get("id"))
        flags: dict[str, bool | None] = {
            f"is_{which}": record.get("id") == ids[which] for which in _REFS
        }
        found.append(deployment_rows(conformer, record, owner, flags=flags))
    return found
