"""Hand-run check: time appending a 10,000-service snapshot (not collected by pytest).

    .venv/bin/python tests/snapshot/perf_write_10k.py [services] [store_dir]

Builds synthetic rows first (not timed), then times ``begin`` + every ``write`` +
``commit`` into a fresh local store, and prints rows per table and the seconds taken.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from toolkit.snapshot import Store


def synthetic_rows(services: int) -> dict[str, list[dict[str, Any]]]:
    """Rows shaped like a real crawl: ~10 deployments and ~4 variables per service."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    envs = max(1, services // 30)
    tables: dict[str, list[dict[str, Any]]] = {
        name: []
        for name in (
            "teams",
            "projects",
            "environments",
            "services",
            "service_ports",
            "service_hosts",
            "service_volumes",
            "deployments",
            "replica_events",
            "replica_health",
            "replicas",
            "volumes",
            "variables",
            "variable_references",
            "webhooks",
            "webhook_events",
        )
    }
    tables["teams"] = [
        {"id": f"team-{t}", "name": f"Team {t}", "created_at": now} for t in range(10)
    ]
    tables["projects"] = [
        {"id": f"proj-{p}", "team_id": f"team-{p % 10}", "name": f"p{p}", "created_at": now}
        for p in range(max(1, envs // 3))
    ]
    tables["environments"] = [
        {"id": f"env-{e}", "team_id": "team-0", "project_id": f"proj-{e // 3}", "name": "prod"}
        for e in range(envs)
    ]
    for s in range(services):
        scope = {
            "team_id": f"team-{s % 10}",
            "project_id": f"proj-{s % max(1, envs // 3)}",
            "environment_id": f"env-{s % envs}",
            "service_id": f"svc-{s}",
        }
        owner = {k: v for k, v in scope.items() if k != "service_id"}
        tables["services"].append(
            {
                "id": f"svc-{s}",
                **owner,
                "name": f"service {s}",
                "type": "gitprovider",
                "created_at": now,
                "updated_at": now,
                "git_repository": f"org/repo-{s}",
                "git_branch": "main",
                "builder": "buildpack",
                "replicas": 1 + s % 3,
                "cpu_limits_millicores": -1 if s % 17 == 0 else 1000,
                "memory_limits_megabytes": 512,
                "cpu_requests_millicores": 100,
                "memory_requests_megabytes": 256,
                "health_check_type": "http",
                "health_check_path": "/health",
                "health_check_port": 8080,
                "privileged": s % 50 == 0,
                "capabilities_add": ["NET_ADMIN"] if s % 40 == 0 else [],
                "capabilities_drop": ["ALL"],
                "protected_variables": ["DATABASE_URL"] if s % 9 == 0 else [],
                "current_deployment_id": f"dep-{s}-0",
                "current_deployment_status": "active",
                "extra": '{"new_field":1}' if s % 100 == 0 else None,
            }
        )
        tables["service_ports"].append(
            {**scope, "source": "config", "port": 8080, "protocol": "TCP"}
        )
        if s % 2 == 0:
            tables["service_ports"].append(
                {**scope, "source": "detected", "port": 8080, "protocol": "TCP"}
            )
        tables["service_hosts"].append(
            {**scope, "host": f"s{s}.example.app", "path": "/", "target_port": 8080}
        )
        tables["replica_health"].append(
            {**scope, "expected_replicas": 2, "health": "active", "replica_count": 2}
        )
        for r in range(2):
            tables["replicas"].append(
                {
                    **scope,
                    "runtime_name": f"svc-{s}-{r}",
                    "status": "running",
                    "restart_count": (s + r) % 5,
                    "pod_created_at": now,
                }
            )
        for d in range(10):
            tables["deployments"].append(
                {
                    "id": f"dep-{s}-{d}",
                    **scope,
                    "status": "active" if d == 0 else "removed",
                    "builder": "buildpack",
                    "commit_sha": f"{s:08x}{d:032x}",
                    "commit_message": "Fix the thing",
                    "commit_author_name": "Dev",
                    "created_at": now - timedelta(days=d),
                    "started_at": now,
                    "completed_at": now,
                    "updated_at": now,
                    "crashing_reasons": ["oom"] if (s + d) % 23 == 0 else [],
                    "replica_restarts": d % 4,
                    "history_rank": d,
                    "is_current": d == 0,
                    "is_last": d == 0,
                    "is_last_successful": d == 0,
                }
            )
        for _e in range(3):
            tables["replica_events"].append(
                {
                    **scope,
                    "source": "deployment",
                    "deployment_id": f"dep-{s}-0",
                    "type": "container_started",
                    "reason": "Started",
                    "count": 1,
                    "first_seen": now,
                    "last_seen": now,
                }
            )
        for v in range(4):
            tables["variables"].append(
                {
                    "name": f"VAR_{v}",
                    "level": "service",
                    **scope,
                    "is_reference": v == 0,
                    "reference_count": 1 if v == 0 else 0,
                    "is_protected": False,
                    "provided": True,
                    "values_redacted": False,
                    "value_length": 20 + v,
                    "fingerprint": f"{s:032x}{v:032x}",
                }
            )
        tables["variable_references"].append(
            {
                "variable_name": "VAR_0",
                "level": "service",
                **scope,
                "key": "DB",
                "token": "${{project.DB}}",
                "resolved": True,
                "source_type": "project",
                "source_id": scope["project_id"],
            }
        )
        if s % 3 == 0:
            tables["volumes"].append(
                {
                    "id": f"vol-{s}",
                    **owner,
                    "name": "data",
                    "capacity_gb": 10.0,
                    "used_gb": 1.5 * (s % 7),
                    "mounted_on_service_id": f"svc-{s}",
                }
            )
            tables["service_volumes"].append(
                {
                    **scope,
                    "volume_id": f"vol-{s}",
                    "name": "data",
                    "mount_path": "/data",
                    "capacity_gb": 10.0,
                }
            )
    for w in range(50):
        tables["webhooks"].append(
            {
                "id": f"wh-{w}",
                "team_id": "team-0",
                "type": "team",
                "url": "https://hooks.example/x?token=***",
                "url_scheme": "https",
                "url_host": "hooks.example",
                "events": ["project.created"],
            }
        )
        tables["webhook_events"].append(
            {"webhook_id": f"wh-{w}", "team_id": "team-0", "event": "project.created"}
        )
    return tables


def main() -> None:
    services = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    root = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="perf-store-")
    tables = synthetic_rows(services)
    store = Store.open(root)
    started = time.perf_counter()
    writer = store.begin(meta={"base_url": "http://perf.invalid", "credential_name": "perf"})
    for name, rows in tables.items():
        writer.write(name, rows)
    info = writer.commit(status="complete")
    elapsed = time.perf_counter() - started
    total = sum(info.row_counts.values())
    print(
        f"{services} services, {total} rows: "
        + ", ".join(f"{k}={v}" for k, v in info.row_counts.items() if v)
    )
    print(f"write + commit: {elapsed:.2f} s  (store {root})")


if __name__ == "__main__":
    main()
