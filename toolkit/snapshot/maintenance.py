"""Keeping a store small and tidy: ``gc`` (orphan rows), ``compact`` and ``vacuum`` (files).

Rows are deleted by rewriting the affected table in one atomic Delta commit, streaming
the surviving rows through an Arrow filter expression (no SQL string is ever built).
Delta's own ``delete``/``update`` are not used: in deltalake 1.6.6 they rewrite files with
``string_view`` columns, and pyarrow 26 then fails DuckDB's pushed-down filters on them
("no kernel matching input types (string, string_view)"). Only snapshot ids that match
the strict UUIDv7 pattern are deleted; anything else is reported and left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from toolkit.snapshot.findings_history import remove_findings
from toolkit.snapshot.schema import SNAPSHOT_ID
from toolkit.snapshot.schema_tables import DECLARED, SNAPSHOT_TABLES
from toolkit.snapshot.snapshot_ids import id_created_at, is_snapshot_id
from toolkit.snapshot.store_tables import written_as
from toolkit.snapshot.verify import find_orphans
from toolkit.snapshot.views import VISIBLE_STATUSES

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from toolkit.snapshot.store_tables import StoreTables

__all__ = [
    "CompactReport",
    "GcReport",
    "VacuumReport",
    "compact",
    "delete_snapshots",
    "gc",
    "vacuum",
]


def delete_snapshots(store: StoreTables, name: str, snapshot_ids: Iterable[str]) -> int:
    """Remove every row of ``snapshot_ids`` from table ``name``; returns the rows removed."""
    return store._delete_rows(name, SNAPSHOT_ID, snapshot_ids)


@dataclass(frozen=True)
class GcReport:
    """What ``gc`` removed (rows per table and snapshot ids) and what it left alone."""

    removed_rows: Mapping[str, int] = field(default_factory=dict)
    removed_snapshot_ids: tuple[str, ...] = ()
    kept_recent: tuple[str, ...] = ()  # may still be being written: younger than min_age
    unsafe_ids: tuple[str, ...] = ()  # not well-formed, so never put into a predicate

    @property
    def total_rows(self) -> int:
        return sum(self.removed_rows.values())


def gc(store: StoreTables, *, min_age: timedelta, now: datetime | None = None) -> GcReport:
    """Delete data rows whose snapshot never committed or was pruned, their findings
    history, and ``check_results`` rows of judgings that never committed.

    Rows of a snapshot younger than ``min_age`` (by the time in its id) are kept: a
    writer may still be working on it. Pass ``timedelta(0)`` right after a known crash.
    """
    moment = now or datetime.now(UTC)
    snapshot_rows = store._snapshot_rows().to_pylist()
    visible = {r["snapshot_id"] for r in snapshot_rows if r["status"] in VISIBLE_STATUSES}
    datasets = {name: store._dataset(name) for name in SNAPSHOT_TABLES}
    orphans = find_orphans(datasets, visible)
    all_ids = {sid for ids in orphans.values() for sid in ids}
    unsafe = sorted(sid for sid in all_ids if not is_snapshot_id(sid))
    recent = sorted(
        sid for sid in all_ids if is_snapshot_id(sid) and id_created_at(sid) > moment - min_age
    )
    removable = all_ids - set(unsafe) - set(recent)
    removed: dict[str, int] = {}
    for name, ids in orphans.items():
        targets = [sid for sid in ids if sid in removable]
        if targets:
            removed[name] = delete_snapshots(store, name, targets)
    # The findings history of those snapshots, of pruned ones, and unfinished judgings.
    gone = {r["snapshot_id"] for r in snapshot_rows if r["status"] not in VISIBLE_STATUSES}
    removed.update(remove_findings(store, sorted(gone | removable), min_age=min_age, now=moment))
    return GcReport(removed, tuple(sorted(removable)), tuple(recent), tuple(unsafe))


@dataclass(frozen=True)
class CompactReport:
    """Data files per table before and after compaction."""

    files_before: Mapping[str, int]
    files_after: Mapping[str, int]


def compact(store: StoreTables) -> CompactReport:
    """Delta ``optimize.compact`` on every table: few large files instead of many small,
    compressed, in row groups a query of a few snapshots can skip (see
    :func:`~toolkit.snapshot.store_tables.written_as`).

    A table older than this toolkit's properties first gets them (a checkpoint every 10
    commits; Delta statistics on no column of strings, so the rewritten files' statistics
    hold no server text). Each table then gets a Delta checkpoint, so opening it replays
    few log files.
    """
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    for name in DECLARED:
        delta = store._delta(name)
        if delta is None:
            continue
        before[name] = len(delta.file_uris())
        store._ensure_properties(name, delta)  # before the rewrite: its files follow them
        delta.optimize.compact(writer_properties=written_as(name))
        delta.create_checkpoint()
        after[name] = len(delta.file_uris())
    return CompactReport(before, after)


@dataclass(frozen=True)
class VacuumReport:
    """Files removed per table, and those no version needs that were kept because they
    are younger than the retention window (``kept``: what a shorter window would remove)."""

    removed: Mapping[str, int]
    kept: Mapping[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.removed.values())

    @property
    def total_kept(self) -> int:
        return sum(self.kept.values())


def vacuum(store: StoreTables, *, retention_hours: int) -> VacuumReport:
    """Remove files no transaction needs any more, older than ``retention_hours``.

    Below Delta's 168-hour safety default, time travel to older versions stops working;
    0 is accepted (tests, or right after a ``compact``) and is the caller's choice.
    """
    if retention_hours < 0:
        raise ValueError("retention_hours must be 0 or more")
    removed: dict[str, int] = {}
    kept: dict[str, int] = {}
    for name in DECLARED:
        delta = store._delta(name)
        if delta is None:
            continue
        # Every file no version needs (a dry run: nothing touched), then those older than
        # the window removed: the rest were kept because they are younger than it.
        unneeded = delta.vacuum(retention_hours=0, dry_run=True, enforce_retention_duration=False)
        files = delta.vacuum(
            retention_hours=retention_hours, dry_run=False, enforce_retention_duration=False
        )
        removed[name] = len(files)
        kept[name] = len(set(unneeded) - set(files))
    return VacuumReport(removed, kept)
