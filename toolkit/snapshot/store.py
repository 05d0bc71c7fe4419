"""The store: one Delta Lake table per declared table, under a local folder or an S3 URL.

>>> store = Store.open("data/store")                       # or "s3://bucket/prefix"
>>> writer = store.begin(snapshot_at=datetime.now(UTC))
>>> writer.write("teams", [{"id": "t1", "name": "core"}])
>>> writer.commit(status="complete")
>>> store.duckdb().sql("select name from teams_latest").fetchall()
[('core',)]
>>> store.verify().ok
True

S3-compatible stores take ``storage_options`` (``AWS_ENDPOINT_URL``, ``AWS_REGION``,
``AWS_ALLOW_HTTP``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``...), or read the same
names from the environment. Commits on S3 use conditional writes (``If-None-Match``,
``aws_conditional_put=etag``), which AWS S3, MinIO, R2 and moto honour, so a lost race
fails instead of overwriting a commit; ``AWS_S3_ALLOW_UNSAFE_RENAME`` is never set here.

The store assumes one writer at a time (the scheduled job holds a lock); a second,
concurrent writer would fork the hash chain, which ``verify`` reports.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.errors import StoreNotFound
from toolkit.snapshot.snapshot_ids import new_snapshot_id
from toolkit.snapshot.snapshot_writer import FaultHook, SnapshotMeta, SnapshotWriter
from toolkit.snapshot.store_tables import StoreTables

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    import duckdb

    from toolkit.snapshot.maintenance import CompactReport, GcReport, VacuumReport
    from toolkit.snapshot.retention import RetentionPolicy, RetentionReport
    from toolkit.snapshot.verify import VerifyReport

__all__ = ["DEFAULT_STORE", "Store"]

DEFAULT_STORE = "data/store"
_S3_DEFAULTS = {"aws_conditional_put": "etag"}


class Store(StoreTables):
    """A snapshot store; create it with :meth:`Store.open`."""

    @classmethod
    def open(
        cls,
        url: str | Path = DEFAULT_STORE,
        *,
        storage_options: Mapping[str, str] | None = None,
        create: bool = True,
    ) -> Store:
        """Open the store at a folder or ``s3://bucket/prefix``.

        A local folder is created when missing, unless ``create`` is false: commands that
        only read pass that, so a mistyped path raises :class:`StoreNotFound` instead of
        reading as a new, empty store (S3 prefixes are not checked: listing one costs a
        request, and an empty prefix is refused later as having no snapshot).
        """
        text = os.fspath(url)
        if "://" in text and not text.startswith("file://"):
            options = dict(_S3_DEFAULTS) if text.startswith(("s3://", "s3a://")) else {}
            options.update(storage_options or {})
            return cls(text, options)
        path = Path(text.removeprefix("file://")).expanduser().resolve()
        if not create and not (path / "snapshots" / "_delta_log").is_dir():
            raise StoreNotFound(
                f"no snapshot store at {path}: give the folder a snapshot was written to "
                "(--store, $PLATFORM_AUDIT_STORE or [store] url in the config file), or take "
                "a snapshot first: platform-audit snapshot"
            )
        path.mkdir(parents=True, exist_ok=True)
        return cls(str(path), dict(storage_options or {}))

    # --- writing -------------------------------------------------------------------------
    def begin(
        self,
        *,
        snapshot_at: datetime | None = None,
        meta: SnapshotMeta | Mapping[str, Any] | None = None,
        fault_hook: FaultHook | None = None,
    ) -> SnapshotWriter:
        """Start a snapshot taken at ``snapshot_at`` (default: now, UTC)."""
        at = snapshot_at or datetime.now(UTC)
        return SnapshotWriter(self, new_snapshot_id(), at, SnapshotMeta.of(meta), fault_hook)

    def duckdb(self, snapshot_ids: Collection[str] | None = None) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with a view per table and a ``<table>_latest`` view.

        The views see the store as it is now; open a new connection to see later commits.
        ``snapshot_ids`` limits the table views to those snapshots' rows, and DuckDB then
        opens only the files that can hold them (by the Delta log's per-file statistics);
        ``snapshots`` still lists every snapshot.
        """
        from toolkit.snapshot.views import connect

        return connect(self, snapshot_ids)

    # --- verification and maintenance (see verify.py, maintenance.py, retention.py) -------
    def verify(
        self,
        *,
        content: Collection[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> VerifyReport:
        """Check the chain and recompute every retained snapshot's content hash (only those
        of the ``content`` snapshot ids, when given); ``progress(done, total)`` after each."""
        from toolkit.snapshot.verify import verify

        return verify(self, content=content, progress=progress)

    def gc(
        self, *, min_age: timedelta = timedelta(hours=1), now: datetime | None = None
    ) -> GcReport:
        """Delete rows of uncommitted (or pruned) snapshots older than ``min_age``."""
        from toolkit.snapshot.maintenance import gc

        return gc(self, min_age=min_age, now=now)

    def compact(self) -> CompactReport:
        """Rewrite each table's many small files into few large ones."""
        from toolkit.snapshot.maintenance import compact

        return compact(self)

    def vacuum(self, *, retention_hours: int = 168) -> VacuumReport:
        """Remove files no longer referenced, older than ``retention_hours`` (0 allowed)."""
        from toolkit.snapshot.maintenance import vacuum

        return vacuum(self, retention_hours=retention_hours)

    def apply_retention(
        self, policy: RetentionPolicy | None = None, *, now: datetime | None = None
    ) -> RetentionReport:
        """Prune snapshots the policy does not keep (their ``snapshots`` rows stay)."""
        from toolkit.snapshot.retention import RetentionPolicy, apply_retention

        return apply_retention(self, policy or RetentionPolicy(), now=now)
