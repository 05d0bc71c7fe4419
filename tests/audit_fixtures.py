"""Audit fixtures: a few rows per table in JSON, loaded into DuckDB views with the declared schemas.

The tests of every floor load them so (``docs/checks.md``, "Fixtures"): ``pass_*.json`` and
``fail_*.json`` beside each other in a folder named for the check. Example::

    con = fixture_connection(json.loads(path.read_text()), [spec])
    alarms = alarmed_in_last_snapshot(run_check(con, spec, fixture.get("params")))
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit.audit.check_run import install_views, set_production
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES, TABLES
from toolkit.snapshot.validation import to_arrow
from toolkit.snapshot.views import connect_arrow

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    import duckdb

    from toolkit.audit.check_file import CheckSpec

__all__ = ["alarmed_in_last_snapshot", "fixture_connection", "fixture_snapshot_ids"]

_ZERO_HASH = "0" * 64


def fixture_snapshot_ids(count: int) -> list[str]:
    """Deterministic, time-sortable ids for a fixture's snapshots (UUIDv7 layout)."""
    return [
        str(uuid.UUID(f"00000000-0000-7000-8000-{index:012x}")) for index in range(1, count + 1)
    ]


def fixture_connection(
    fixture: Mapping[str, Any],
    checks: Iterable[CheckSpec] | None = None,
    snapshot_ids: Collection[str] | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the store's views over the fixture's rows, plus derived views
    (with ``checks``, only those they read: quicker to make, the same rows).

    Undeclared tables or columns are refused (the same validation as the snapshot writer);
    columns a fixture leaves out are null. A fixture's ``production_pattern`` is what
    ``[audit] production_pattern`` would set (see :func:`set_production`). With
    ``snapshot_ids``, the table views show those snapshots' rows only, as a store's
    connection of a few snapshots does (``store.duckdb(ids)``: how the engine judges new
    snapshots with the checks that say ``-- history: snapshot`` or ``previous``).
    """
    snapshots = fixture.get("snapshots")
    if not isinstance(snapshots, list) or not snapshots:
        raise ValueError("a fixture needs a non-empty 'snapshots' list")
    ids = fixture_snapshot_ids(len(snapshots))
    parts: dict[str, list[pa.Table]] = {}
    snapshot_rows: list[dict[str, Any]] = []
    for seq, (snapshot_id, entry) in enumerate(zip(ids, snapshots, strict=True), start=1):
        at = _time(entry["at"])
        for name, rows in (entry.get("tables") or {}).items():
            if name not in SNAPSHOT_TABLES:
                raise ValueError(f"fixture names table {name!r}, which is not declared")
            parts.setdefault(name, []).append(to_arrow(TABLES[name], rows, snapshot_id, at))
        snapshot_rows.append(
            {
                "snapshot_id": snapshot_id,
                "snapshot_at": at,
                "seq": seq,
                "status": entry.get("status", "complete"),
                "credential_name": entry.get("credential_name"),
                "started_at": _time(entry["started_at"]) if "started_at" in entry else None,
                "finished_at": _time(entry["finished_at"]) if "finished_at" in entry else None,
                "content_hash": _ZERO_HASH,
                "chain_hash": _ZERO_HASH,
                # the HMAC key's id, as the collector records it (SnapshotInfo.fingerprint_key)
                "extra": json.dumps({"fingerprint_key": entry["fingerprint_key"]})
                if "fingerprint_key" in entry
                else None,
            }
        )
    sources = {name: pa.concat_tables(tables) for name, tables in parts.items()}
    schema = TABLES["snapshots"].arrow_schema
    snapshot_table = pa.Table.from_pylist(snapshot_rows, schema=schema)
    con = connect_arrow(sources, snapshot_table, snapshot_ids)
    install_views(con, checks=checks)
    set_production(con, fixture.get("production_pattern"))
    return con


def _time(text: object) -> datetime:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).astimezone(UTC)


def alarmed_in_last_snapshot(result: pa.Table) -> set[str]:
    """Resource ids in alarm in the newest snapshot the result speaks of."""
    rows = result.to_pylist()
    if not rows:
        return set()
    last = max(str(r["snapshot_id"]) for r in rows)
    return {
        str(r["resource_id"]) for r in rows if r["snapshot_id"] == last and r["status"] == "alarm"
    }
