"""Wire shapes of a service and what hangs off it: config, deployments, replicas.

Spec parts 2.1-2.4 and 2.9.

Built on demand from the lean `Service` record, so the world stays small and every response
carries the full field set of the spec.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from toolkit.sim.history import deployments
from toolkit.sim.resource_shapes import group_json, template_summary, volume_json
from toolkit.sim.world import Deployment, Port, Service, World, iso

__all__ = ["deployment_json", "replica_health_json", "replica_items", "service_json"]

_DONE = frozenset({"active", "crashing", "removed", "build-failed", "build-cancelled"})
_DONE |= {"launch-error", "build-succeeded"}


def service_json(world: World, service: Service, role: str) -> dict[str, Any]:
    """The service list item of spec 2.1."""
    history = deployments(service)
    live = next((d for d in history if d.status in {"active", "crashing"}), None)
    succeeded = next((d for d in history if d.status in {"active", "crashing", "removed"}), None)
    group = world.groups.get(service.group_id or "")
    template = world.templates.get(service.template_id or "")
    return {
        "id": service.id,
        "name": service.name,
        "description": service.description,
        "type": service.kind,
        "created_at": iso(service.created_at),
        "updated_at": iso(service.updated_at),
        "environment_id": service.environment_id,
        "git_repository": service.git_repository,
        "git_repository_owner": service.git_owner,
        "gitprovider_installation_id": 4242 if service.kind == "gitprovider" else None,
        "runtime_name": _runtime_name(service),
        "database_type": service.database_type,
        "database_version": service.database_version,
        "template_instance_id": service.template_instance_id,
        "permissions": [role],
        "detected_ports": [_port(p) for p in service.ports],
        "config": _config(world, service),
        "current_deployment": deployment_json(service, live, live=True) if live else None,
        "last_deployment": deployment_json(service, history[0], live=history[0] is live)
        if history
        else None,
        "last_successful_deployment": deployment_json(service, succeeded, live=succeeded is live)
        if succeeded
        else None,
        "service_group": group_json(group) if group else None,
        "template": template_summary(template, service.template_version) if template else None,
    }


def _runtime_name(service: Service) -> str:
    return f"{service.name[:20].lower()}-{service.id[:8]}".replace(" ", "-")


def _port(port: Port) -> dict[str, Any]:
    return {
        "is_nodeport": port.node_port > 0,
        "node_port": port.node_port or None,
        "port": port.port,
        "protocol": port.protocol,
    }


def _config(world: World, service: Service) -> dict[str, Any]:
    is_container = service.builder == "container"
    return {
        "auto_deploy": service.auto_deploy,
        "backup_retention_count": service.backup_retention,
        "backup_schedule": service.backup_schedule,
        "builder": service.builder,
        "database_config": _database_config(service) if service.database_type else None,
        "container_builder_build_context": "." if is_container else "",
        "container_builder_dockerfile_path": "Dockerfile" if is_container else "",
        "buildpack_builder_build_command": "npm run build" if service.kind == "gitprovider" else "",
        "buildpack_builder_install_command": "npm ci" if service.kind == "gitprovider" else "",
        "git_branch": service.git_branch,
        "git_tag": "",
        "health_check": _health_check(service),
        "hosts": [_host(service, host) for host in service.hosts],
        "icon": "",
        "image": service.image,
        "run_command": service.run_command,
        "init_containers": [],
        "is_public": service.is_public,
        "ports": [_port(p) for p in service.ports],
        "protected_variables": list(service.protected),
        "replicas": service.replicas,
        "resources": {
            "cpu_requests_millicores": service.cpu[0],
            "cpu_limits_millicores": service.cpu[1],
            "memory_requests_megabytes": service.memory[0],
            "memory_limits_megabytes": service.memory[1],
        },
        "s3_backup_bucket_id": service.backup_bucket_id,
        "security_context": {
            "capabilities": {"add": list(service.capabilities), "drop": []},
            "privileged": service.privileged,
        },
        "variable_mounts": [],
        "volumes": [volume_json(v) for v in world.volumes_on(service)],
        "watch_paths": [],
    }


def _database_config(service: Service) -> dict[str, Any]:
    return {
        "default_database_name": "app",
        "innodb_buffer_pool_size_mb": 128 if service.database_type == "mysql" else None,
        "max_replication_slots": 10,
        "max_slot_wal_keep_size_mb": 1024,
        "max_wal_senders": 10,
        "shared_buffers_mb": 128,
        "storage": "10Gi",
        "version": service.database_version,
        "wal_level": "replica",
    }


def _health_check(service: Service) -> dict[str, Any] | None:
    if not service.health_path and service.kind != "database":
        return None
    port = service.ports[0].port if service.ports else 8080
    return {
        "command": "" if service.health_path else "pg_isready",
        "health_failure_threshold": 3,
        "health_period_seconds": 10,
        "health_timeout_seconds": 5,
        "path": service.health_path,
        "port": port,
        "startup_failure_threshold": 30,
        "startup_period_seconds": 5,
        "startup_timeout_seconds": 5,
        "type": "http" if service.health_path else "command",
    }


def _host(service: Service, host: str) -> dict[str, Any]:
    return {
        "description": "",
        "display_name": host,
        "host": host,
        "path": "/",
        "prev_host": "",
        "protocol": "https",
        "template_input_id": "",
        "target_port": service.ports[0].port if service.ports else 8080,
    }


def deployment_json(service: Service, deployment: Deployment, live: bool) -> dict[str, Any]:
    """Spec 2.4; only the live deployment carries crash reasons, events and restarts."""
    created = deployment.created_at
    done = deployment.status in _DONE
    return {
        "id": deployment.id,
        "service_id": service.id,
        "attempts": deployment.attempts,
        "builder": service.builder,
        "commit_author": {
            "avatar_url": "https://avatars.example.com/u/1",
            "name": deployment.author,
        },
        "commit_message": deployment.commit_message,
        "commit_sha": deployment.commit_sha,
        "created_at": iso(created),
        "queued_at": iso(created),
        "started_at": iso(created + timedelta(seconds=20)),
        "completed_at": iso(created + timedelta(minutes=3)) if done else None,
        "updated_at": iso(created + timedelta(minutes=3 if done else 1)),
        "crashing_reasons": list(service.crash_reasons) if live and service.crashing else [],
        "container_builder_build_context": "." if service.builder == "container" else "",
        "container_builder_dockerfile_path": "Dockerfile" if service.builder == "container" else "",
        "buildpack_builder_build_command": "",
        "buildpack_builder_install_command": "",
        "error": deployment.error,
        "status_message": deployment.error or "",
        "git_branch": service.git_branch,
        "image": service.image,
        "job_name": f"build-{deployment.id[:8]}",
        "run_command": service.run_command,
        "replica_events": _events(service) if live else [],
        "replica_restarts": service.restart_count if live else 0,
        "status": deployment.status,
    }


def _events(service: Service) -> list[dict[str, Any]]:
    events = []
    anchor = service.pods_started_at or service.updated_at
    if service.oom_kills:
        last = service.last_oom_at or anchor
        events.append(
            {
                "count": service.oom_kills,
                "first_seen": iso(min(anchor, last)),
                "last_seen": iso(last),
                "message": f"Container was OOM-killed (memory limit {service.memory[1]} MB)",
                "reason": "OOMKilled",
                "timestamp": iso(last),
                "type": "oom_killed",
            }
        )
    if service.crashing:
        latest = max(anchor, service.updated_at)
        events.append(
            {
                "count": max(service.restart_count, 1),
                "first_seen": iso(anchor),
                "last_seen": iso(latest),
                "message": service.crash_reasons[-1] if service.crash_reasons else "",
                "reason": "BackOff",
                "timestamp": iso(latest),
                "type": "crash_loop_back_off",
            }
        )
    return events


def replica_health_json(service: Service) -> dict[str, Any]:
    """Spec 2.9: expected count, aggregate health, one entry per replica."""
    history = deployments(service)
    pending = bool(history) and history[0].status.startswith("build-") and not history[0].error
    health = "crashing" if service.crashing else "pending" if pending else "active"
    return {"expected_replicas": service.replicas, "health": health, "replicas": _pods(service)}


def _pods(service: Service) -> list[dict[str, Any]]:
    started = service.pods_started_at or service.updated_at
    events = _events(service)
    share, extra = divmod(service.restart_count, max(service.replicas, 1))
    return [
        {
            "events": events if index == 0 else [],
            "runtime_name": f"{_runtime_name(service)}-{index}",
            "pod_created_at": iso(started),
            "restart_count": share + (extra if index == 0 else 0),
            "status": "crashing" if service.crashing else "running",
        }
        for index in range(service.replicas)
    ]


def replica_items(service: Service) -> list[dict[str, Any]]:
    """Items of /replicas/list: each pod plus the ids of its service and ancestors."""
    ids = {
        "team_id": service.team_id,
        "project_id": service.project_id,
        "environment_id": service.environment_id,
        "service_id": service.id,
    }
    return [{**pod, **ids} for pod in _pods(service)]
