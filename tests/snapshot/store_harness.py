"""Fixtures for the store tests: a fresh local store and a small, realistic snapshot."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.snapshot import SnapshotInfo, Store

if TYPE_CHECKING:
    from pathlib import Path

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

Rows = dict[str, list[dict[str, Any]]]


def sample_rows(version: int = 0) -> Rows:
    """A tiny but complete snapshot; ``version`` changes a few values between snapshots."""
    scope = {"team_id": "team-1", "project_id": "proj-1", "environment_id": "env-1"}
    return {
        "teams": [{"id": "team-1", "name": "Core", "created_at": T0 - timedelta(days=400)}],
        "projects": [{"id": "proj-1", "team_id": "team-1", "name": "shop"}],
        "environments": [
            {"id": "env-1", "team_id": "team-1", "project_id": "proj-1", "name": "prod"}
        ],
        "services": [
            {
                "id": f"svc-{i}",
                **scope,
                "name": f"api-{i}",
                "type": "gitprovider",
                "replicas": 1 + version,
                "memory_limits_megabytes": -1 if i == 0 else 512,
                "capabilities_add": ["NET_ADMIN"] if i == 1 else [],
                "protected_variables": ["DATABASE_URL"],
                "extra": '{"future_field": true}',
            }
            for i in range(3)
        ],
        "service_ports": [
            {**scope, "service_id": "svc-0", "source": "config", "port": 8080, "protocol": "TCP"}
        ],
        "deployments": [
            {
                "id": f"dep-{i}-{version}",
                **scope,
                "service_id": f"svc-{i}",
                "status": "active",
                "created_at": T0 + timedelta(minutes=version),
                "crashing_reasons": ["oom_killed"] if i == 2 else [],
                "history_rank": 0,
                "is_current": True,
            }
            for i in range(3)
        ],
        "variables": [
            {
                "name": "DATABASE_URL",
                "level": "service",
                **scope,
                "service_id": "svc-0",
                "is_protected": True,
                "value_length": 40 + version,
                "fingerprint": f"{version:064x}",
            }
        ],
        "volumes": [
            {"id": "vol-1", **scope, "name": "data", "capacity_gb": 10.0, "used_gb": 2.5 + version}
        ],
    }


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "store")


WriteSnapshot = Callable[..., SnapshotInfo]


@pytest.fixture
def write_snapshot() -> WriteSnapshot:
    """Write and commit one snapshot: ``write_snapshot(store, at=..., status=..., rows=...)``."""

    def write(
        store: Store,
        *,
        at: datetime = T0,
        status: str = "complete",
        rows: Mapping[str, list[dict[str, Any]]] | None = None,
        version: int = 0,
    ) -> SnapshotInfo:
        writer = store.begin(
            snapshot_at=at, meta={"base_url": "http://sim.invalid", "credential_name": "ci"}
        )
        for name, table_rows in (rows if rows is not None else sample_rows(version)).items():
            writer.write(name, table_rows)
        return writer.commit(status=status)  # type: ignore[arg-type]

    return write


def fetch(store: Store, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """Rows of a DuckDB query over the store's views, as dicts (through Arrow, no pytz)."""
    result = store.duckdb().sql(query, params=params or [])
    return result.to_arrow_table().to_pylist()  # type: ignore[no-any-return]
