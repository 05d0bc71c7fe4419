"""Retention: keep recent history dense and old history sparse, without breaking the chain.

A policy keeps every snapshot younger than ``keep_all_for``, the newest snapshot of each
UTC hour younger than ``hourly_for``, the newest of each UTC day younger than
``daily_for``, and none older. Within an hour or a day a ``complete`` snapshot wins over
a ``partial`` one. The newest complete snapshot is always kept.

A pruned snapshot keeps its ``snapshots`` row, with status ``pruned``, ``pruned_at`` and
all its hashes, so the chain still verifies; only its data rows are deleted. The row is
marked first and the data deleted after, so a crash in between leaves invisible rows that
``gc`` removes, never a visible snapshot with missing data.

>>> week_then_daily = RetentionPolicy(
...     keep_all_for=timedelta(days=7), hourly_for=timedelta(0), daily_for=timedelta(days=365)
... )
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.snapshot.findings_history import remove_findings
from toolkit.snapshot.maintenance import delete_snapshots
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES
from toolkit.snapshot.snapshot_ids import require_id
from toolkit.snapshot.views import VISIBLE_STATUSES

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from toolkit.snapshot.store_tables import StoreTables

__all__ = ["RetentionPolicy", "RetentionReport", "apply_retention", "select_pruned"]


@dataclass(frozen=True, kw_only=True)
class RetentionPolicy:
    """How long to keep snapshots; the default keeps hourly for 7 days and daily for a year."""

    keep_all_for: timedelta = timedelta(0)
    hourly_for: timedelta = timedelta(days=7)
    daily_for: timedelta = timedelta(days=365)

    def __post_init__(self) -> None:
        if min(self.keep_all_for, self.hourly_for, self.daily_for) < timedelta(0):
            raise ValueError("retention periods must not be negative")


@dataclass(frozen=True)
class RetentionReport:
    """Snapshots kept and pruned by one run, and data rows deleted per table."""

    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    deleted_rows: Mapping[str, int]


def select_pruned(
    rows: Sequence[Mapping[str, Any]], policy: RetentionPolicy, now: datetime
) -> tuple[list[str], list[str]]:
    """Split visible snapshot rows into (kept, pruned) ids; a pure function of its inputs."""
    live = [r for r in rows if r["status"] in VISIBLE_STATUSES]
    # Best first: complete before partial, then newest.
    ranked = sorted(
        live, key=lambda r: (r["status"] == "complete", r["snapshot_at"], r["seq"]), reverse=True
    )
    newest_complete = next((r["snapshot_id"] for r in ranked if r["status"] == "complete"), None)
    kept: list[str] = []
    pruned: list[str] = []
    seen_buckets: set[tuple[str, datetime]] = set()
    for row in ranked:
        age = now - row["snapshot_at"]
        bucket = _bucket(row["snapshot_at"], age, policy)
        protected = row["snapshot_id"] == newest_complete or age <= policy.keep_all_for
        if protected or (bucket is not None and bucket not in seen_buckets):
            kept.append(row["snapshot_id"])
            if bucket is not None:
                seen_buckets.add(bucket)
        else:
            pruned.append(row["snapshot_id"])
    return kept, pruned


def _bucket(at: datetime, age: timedelta, policy: RetentionPolicy) -> tuple[str, datetime] | None:
    at = at.astimezone(UTC)
    if age <= policy.hourly_for:
        return ("hour", at.replace(minute=0, second=0, microsecond=0))
    if age <= policy.daily_for:
        return ("day", at.replace(hour=0, minute=0, second=0, microsecond=0))
    return None


def apply_retention(
    store: StoreTables, policy: RetentionPolicy, *, now: datetime | None = None
) -> RetentionReport:
    """Prune what ``policy`` does not keep: mark the rows, then delete their data."""
    moment = now or datetime.now(UTC)
    rows = store._snapshot_rows().to_pylist()
    kept, pruned = select_pruned(rows, policy, moment)
    deleted: dict[str, int] = {}
    if pruned:
        _mark_pruned(store, pruned, moment)
        for name in SNAPSHOT_TABLES:
            deleted[name] = delete_snapshots(store, name, pruned)
        deleted.update(remove_findings(store, pruned))  # what the checks said of them
    return RetentionReport(tuple(kept), tuple(sorted(pruned)), deleted)


def _mark_pruned(store: StoreTables, snapshot_ids: Sequence[str], moment: datetime) -> None:
    """Set status ``pruned`` and ``pruned_at`` on these rows, rewriting the (small) table."""
    rows = store._snapshot_rows()
    hit = pc.is_in(rows.column("snapshot_id"), pa.array([require_id(s) for s in snapshot_ids]))
    status = pc.if_else(hit, "pruned", rows.column("status"))
    pruned_at = pc.if_else(
        hit, pa.scalar(moment, rows.schema.field("pruned_at").type), rows.column("pruned_at")
    )
    rows = rows.set_column(
        rows.schema.get_field_index("status"), rows.schema.field("status"), status
    )
    rows = rows.set_column(
        rows.schema.get_field_index("pruned_at"), rows.schema.field("pruned_at"), pruned_at
    )
    store._overwrite("snapshots", rows)
