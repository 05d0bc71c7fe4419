"""A small history for the engine tests: four daily snapshots with known finding states.

`TST001` (memory limit, high) alarms on a limit <= 0. Per service, over days 1 to 4
(`A` alarm, `o` ok, `-` absent), judged on day 4 against day 3:

    open        A A A A     first_seen d1, last_seen d4
    new         o o o A     first_seen d4
    resolved    o A A o     first_seen d2, last_seen d3; resolved after 48 h
    regressed   A o o A     first alarm resolved after 24 h
    gone        A A A -     resolved by absence after 72 h
    fine        o o o o     never a finding
    once        A o o o     resolved after 24 h, not a finding on day 4

So TST001's mean time to resolve is (48 + 24 + 72 + 24) / 4 = 42 hours. `TST002` (replicas
below `$min_replicas`, medium) and `TST003` (replicas lower than in the previous snapshot,
low, uses lag()) read the replica counts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.audit import Catalogue
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    import duckdb
    import pytest

ENGINE_CHECKS = Path(__file__).with_name("engine_checks")
DAYS = [f"2026-01-0{day}T00:00:00Z" for day in (1, 2, 3, 4)]
HOSTILE = "web|`rm -rf`|<img src=x onerror=alert(1)> [bold]x[/bold] *y* _z_\nsecond line"

_MEMORY = {  # service -> limit per day (None: absent that day)
    "open": [-1, -1, -1, -1],
    "new": [512, 512, 512, -1],
    "resolved": [512, -1, -1, 512],
    "regressed": [-1, 512, 512, -1],
    "gone": [-1, -1, -1, None],
    "fine": [512, 512, 512, 512],
    "once": [-1, 512, 512, 512],
}
_REPLICAS = {"open": [3, 3, 3, 1], "new": [1, 1, 1, 1], "fine": [2, 2, 2, 2]}
_TEAM = {"open": "t-pay", "new": "t-pay", "resolved": "t-core", "regressed": "t-core"}
_ENV = {"open": "e-prod", "new": "e-stage", "resolved": "e-prod", "regressed": "e-prod"}


def service_id(name: str) -> str:
    return f"svc-{name}"


def failed_call(endpoint: str) -> dict[str, Any]:
    """A ``collection_errors`` row: a call of ``endpoint`` for the production environment
    (the world's owners) that the platform answered 503."""
    return {
        "endpoint": endpoint,
        "method": "GET",
        "team_id": "t-pay",
        "project_id": "p-shop",
        "environment_id": "e-prod",
        "status": 503,
        "error_type": "unavailable",
        "not_visible": False,
    }


def history(hostile: bool = False) -> dict[str, Any]:
    """The fixture (docs/checks.md shape): four snapshots with teams, envs and services."""
    snapshots = []
    for day, at in enumerate(DAYS):
        services = []
        for name, limits in _MEMORY.items():
            if limits[day] is None:
                continue
            shown = HOSTILE if hostile and name == "open" else name
            services.append(
                {
                    "id": service_id(name),
                    "name": shown,
                    "team_id": _TEAM.get(name, "t-core"),
                    "project_id": "p-shop",
                    "environment_id": _ENV.get(name, "e-stage"),
                    "memory_limits_megabytes": limits[day],
                    "replicas": _REPLICAS.get(name, [2, 2, 2, 2])[day],
                }
            )
        snapshots.append(
            {
                "at": at,
                "tables": {
                    "teams": [
                        {"id": "t-pay", "name": "payments"},
                        {"id": "t-core", "name": "core-platform"},
                    ],
                    "projects": [{"id": "p-shop", "team_id": "t-pay", "name": "shop"}],
                    "environments": [
                        {"id": "e-prod", "project_id": "p-shop", "name": "production"},
                        {"id": "e-stage", "project_id": "p-shop", "name": "staging"},
                    ],
                    "services": services,
                },
            }
        )
    return {"snapshots": snapshots}


def engine_catalogue(overrides: Mapping[str, Mapping[str, object]] | None = None) -> Catalogue:
    """Only the engine test checks (the built-in catalogue grows while others work)."""
    return Catalogue.load([ENGINE_CHECKS], overrides, builtin=False)


def write_store(root: Path, fixture: Mapping[str, Any]) -> Store:
    """The fixture's snapshots committed to a real store on disk, in order."""
    store = Store.open(root)
    for entry in fixture["snapshots"]:
        at = datetime.fromisoformat(entry["at"].replace("Z", "+00:00")).astimezone(UTC)
        writer = store.begin(snapshot_at=at)
        for name, rows in entry["tables"].items():
            writer.write(name, rows)
        writer.commit(status=entry.get("status", "complete"))
    return store


def config_file(root: Path, extra: str = "") -> Path:
    """A TOML config that runs only the engine test checks."""
    path = root / "platform-audit.toml"
    path.write_text(
        f'[audit]\nchecks = ["{ENGINE_CHECKS}"]\nbuiltin_checks = false\n{extra}', encoding="utf-8"
    )
    return path


def record_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> list[tuple[list[str] | None, duckdb.DuckDBPyConnection]]:
    """From now on, each connection the audit engine opens on a store, with the snapshot
    ids it shows (sorted; None: every snapshot), in the order they were opened."""
    from toolkit.audit import history as store_connections

    opened: list[tuple[list[str] | None, duckdb.DuckDBPyConnection]] = []
    real = store_connections.connect

    def connect(
        store: Store, ids: Collection[str] | None = None, rows: Any = None, tables: Any = None
    ) -> duckdb.DuckDBPyConnection:
        con = real(store, ids, rows, *([] if tables is None else [tables]))
        opened.append((None if ids is None else sorted(ids), con))
        return con

    monkeypatch.setattr(store_connections, "connect", connect)
    return opened
