"""Wire shapes of everything but services: hierarchy, volumes, webhooks, buckets, templates,
service groups, keys and the calling user (spec part 2 and docs/spec/api-facts.md).
"""

from __future__ import annotations

from typing import Any

from toolkit.sim.world import (
    ApiKey,
    Bucket,
    Environment,
    Project,
    ServiceGroup,
    Team,
    Template,
    Volume,
    Webhook,
    World,
    iso,
)

__all__ = [
    "bucket_json",
    "environment_json",
    "group_json",
    "key_json",
    "me_json",
    "project_json",
    "team_json",
    "template_json",
    "template_summary",
    "volume_json",
    "webhook_json",
]


def team_json(team: Team) -> dict[str, Any]:
    return {
        "id": team.id,
        "name": team.name,
        "description": team.description,
        "created_at": iso(team.created_at),
    }


def project_json(project: Project) -> dict[str, Any]:
    return {
        "id": project.id,
        "team_id": project.team_id,
        "name": project.name,
        "description": project.description,
        "created_at": iso(project.created_at),
    }


def environment_json(env: Environment) -> dict[str, Any]:
    return {
        "id": env.id,
        "team_id": env.team_id,
        "project_id": env.project_id,
        "name": env.name,
        "description": env.description,
        "created_at": iso(env.created_at),
    }


def volume_json(volume: Volume) -> dict[str, Any]:
    """Spec 2.3 Volume; `status` is `Pending` while a resize waits, else `Bound`."""
    mounted = volume.service_id is not None
    return {
        "can_delete": not mounted and not volume.is_database,
        "capacity_gb": volume.capacity_gb,
        "created_at": iso(volume.created_at),
        "description": "",
        "environment_id": volume.environment_id,
        "id": volume.id,
        "is_available": mounted,
        "is_database": volume.is_database,
        "is_deleting": False,
        "is_pending_resize": volume.pending_resize,
        "mount_path": volume.mount_path,
        "mount_status": "mounted" if mounted else "unattached",
        "mounted_on_service_id": volume.service_id,
        "name": volume.name,
        "project_id": volume.project_id,
        "requested_gb": volume.requested_gb,
        "status": "Pending" if volume.pending_resize else "Bound",
        "team_id": volume.team_id,
        "type": "environment",
        "used_gb": round(volume.used_gb, 2),
    }


def webhook_json(hook: Webhook) -> dict[str, Any]:
    return {
        "id": hook.id,
        "type": hook.type,
        "team_id": hook.team_id,
        "project_id": hook.project_id,
        "url": hook.url,
        "events": list(hook.events),
        "created_at": iso(hook.created_at),
    }


def bucket_json(bucket: Bucket) -> dict[str, Any]:
    """Spec 2.7; the secret key is never part of it."""
    return {
        "id": bucket.id,
        "name": bucket.name,
        "endpoint": bucket.endpoint,
        "region": bucket.region,
        "bucket": bucket.bucket,
        "access_key": bucket.access_key,
        "created_at": iso(bucket.created_at),
        "updated_at": iso(bucket.updated_at),
    }


def group_json(group: ServiceGroup) -> dict[str, Any]:
    return {
        "created_at": iso(group.created_at),
        "description": group.description,
        "environment_id": group.environment_id,
        "icon": group.icon,
        "id": group.id,
        "name": group.name,
        "template_id": group.template_id,
    }


def template_summary(template: Template, version: int | None = None) -> dict[str, Any]:
    """Spec 2.5; `version` is the one a service was created from (may be outdated)."""
    return {
        "created_at": iso(template.created_at),
        "description": template.description,
        "display_rank": template.display_rank,
        "icon": template.icon,
        "id": template.id,
        "immutable": False,
        "keywords": list(template.keywords),
        "name": template.name,
        "resource_recommendations": {
            "minimum_recommended_cpu": template.min_cpu,
            "minimum_recommended_ram_gb": template.min_ram_gb,
        },
        "version": template.version if version is None else version,
    }


def template_json(template: Template) -> dict[str, Any]:
    """Spec 2.6: the summary plus a one-service `definition`."""
    summary = template_summary(template)
    definition = {
        key: summary[key]
        for key in ("description", "icon", "name", "display_rank", "version", "keywords")
    }
    definition["resource_recommendations"] = summary["resource_recommendations"]
    definition["required_capabilities"] = []
    definition["inputs"] = [_template_input(template)]
    definition["services"] = [_template_service(template)]
    return {**summary, "definition": definition}


def _template_input(template: Template) -> dict[str, Any]:
    return {
        "collapsed": False,
        "default": "",
        "description": f"Public domain for {template.name}",
        "hidden": False,
        "id": "domain",
        "name": "Domain",
        "port_protocol": "TCP",
        "required": False,
        "target_port": 8080,
        "type": "domain",
        "volume": None,
    }


def _template_service(template: Template) -> dict[str, Any]:
    is_db = bool(template.database_type)
    return {
        "builder": "database" if is_db else "container",
        "database_type": template.database_type,
        "icon": template.icon,
        "id": "main",
        "image": template.image,
        "name": template.name,
        "run_command": "",
        "type": "database" if is_db else "container-image",
        "database_config": None,
        "depends_on": [],
        "display_rank": 1,
        "health_check": None,
        "init_containers": [],
        "init_db_replacers": {},
        "input_ids": ["domain"],
        "ports": [{"is_nodeport": False, "node_port": None, "port": 8080, "protocol": "TCP"}],
        "protected_variables": ["DATABASE_URL"] if is_db else [],
        "resources": {
            "cpu_requests_millicores": 250,
            "cpu_limits_millicores": 1000,
            "memory_requests_megabytes": 256,
            "memory_limits_megabytes": 1024,
        },
        "security_context": {"capabilities": {"add": [], "drop": []}, "privileged": False},
        "variable_displays": [],
        "variable_references": [],
        "variables": [{"name": "SECRET_KEY", "value": "", "generator": {"type": "password"}}],
        "variables_mounts": [],
        "volumes": [{"capacity_gb": "5", "mountPath": "/data", "name": "data"}],
    }


def key_json(key: ApiKey, world: World, with_state: bool = False) -> dict[str, Any]:
    """An API key record (docs/spec/api-facts.md); `with_state` adds revocation for
    /api_keys/list."""
    record: dict[str, Any] = {
        "id": key.id,
        "name": key.name,
        "role": key.role,
        "access": key.access,
        "resources": [{"type": level, "id": rid} for level, rid in key.resources],
        "created_at": iso(key.created_at),
        "expires_at": iso(key.expires_at),
        "last_used_at": iso(key.last_used_at),
    }
    if with_state:
        record["revoked_at"] = iso(key.revoked_at)
        expired = key.expires_at is not None and key.expires_at <= world.now
        record["status"] = "revoked" if key.revoked_at else "expired" if expired else "active"
    return record


def me_json(world: World, key: ApiKey) -> dict[str, Any]:
    """`/users/me` as docs/spec/api-facts.md assumes; `api_key` is null for an access token."""
    return {
        "id": world.user_id,
        "email": world.user_email,
        "name": world.user_name,
        "created_at": iso(world.user_created_at),
        "api_key": None if key.session else key_json(key, world),
    }
