"""The writer that adds one snapshot to a store, visible only once it commits.

Each ``write`` validates rows against the declared schema, reduces them to their row
digests for the content hash (32 bytes a row, see :mod:`toolkit.snapshot.content_hash`)
and appends them to that table's Delta table at once (one Delta commit each); nothing of
the rows is kept once ``write`` returns. ``commit`` appends the ``snapshots`` row LAST;
the views join on it, so a writer that never commits (a crash, an exception, a
``kill -9``) leaves rows that no view shows, and ``store gc`` removes them later.

>>> writer = store.begin(snapshot_at=now, meta=SnapshotMeta(base_url="https://api.example"))
>>> writer.write("teams", [{"id": "t1", "name": "core"}])
1
>>> info = writer.commit(status="complete")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from toolkit._version import __version__
from toolkit.errors import WriterStateError
from toolkit.snapshot.column_masking import mask_row
from toolkit.snapshot.content_hash import (
    CONTENT_HASH_VERSION,
    chain_hash,
    content_hash_of_digests,
    row_digests,
)
from toolkit.snapshot.schema import SCHEMA_VERSION
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES, TABLES, table
from toolkit.snapshot.snapshot_info import SnapshotInfo
from toolkit.snapshot.validation import Rows, to_arrow

if TYPE_CHECKING:
    from toolkit.snapshot.store_tables import StoreTables

__all__ = ["FaultHook", "SnapshotMeta", "SnapshotWriter"]

# Called with the name of the table about to be appended ("snapshots" last); a test's hook
# raises to simulate a crash between tables.
FaultHook = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class SnapshotMeta:
    """What the ``snapshots`` row records besides content; every field is optional."""

    base_url: str | None = None
    credential_name: str | None = None
    credential_role: str | None = None
    started_at: datetime | None = None
    request_stats: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, meta: SnapshotMeta | Mapping[str, Any] | None) -> SnapshotMeta:
        if meta is None:
            return cls()
        return meta if isinstance(meta, SnapshotMeta) else cls(**meta)

    def merged(self, later: SnapshotMeta) -> SnapshotMeta:
        """This meta with every field that ``later`` sets taken from ``later``."""
        changes = {k: v for k, v in vars(later).items() if v not in (None, {})}
        return replace(self, **changes)


class SnapshotWriter:
    """Writes the tables of one snapshot; obtain one from :meth:`Store.begin`."""

    def __init__(
        self,
        store: StoreTables,
        snapshot_id: str,
        snapshot_at: datetime,
        meta: SnapshotMeta,
        fault_hook: FaultHook | None = None,
    ) -> None:
        if snapshot_at.tzinfo is None:
            raise ValueError("snapshot_at must be timezone-aware (UTC)")
        self._store = store
        self.snapshot_id = snapshot_id
        self.snapshot_at = snapshot_at.astimezone(UTC)
        self._meta = meta
        self._started_at = meta.started_at or datetime.now(UTC)
        self._fault_hook = fault_hook
        self._digests: dict[str, list[bytes]] = {}
        self._counts: dict[str, int] = dict.fromkeys(SNAPSHOT_TABLES, 0)
        self._committed: SnapshotInfo | None = None

    @property
    def row_counts(self) -> Mapping[str, int]:
        return dict(self._counts)

    def write(self, table_name: str, rows: Rows) -> int:
        """Validate ``rows`` against ``table_name``'s schema and append them; returns the count.

        A table may be written several times (in batches). Raises ``SchemaMismatchError``
        naming the table and column when a row does not fit.
        """
        self._require_open()
        if table_name == "snapshots":
            raise WriterStateError("the snapshots row is written by commit(), not write()")
        declared = table(table_name)
        data = to_arrow(declared, rows, self.snapshot_id, self.snapshot_at)
        if data.num_rows == 0:
            return 0
        # On this thread, not a worker: Arrow's default allocator (mimalloc) keeps what a
        # thread frees in that thread's heap, and a hashing thread held some 100 MB of the
        # batches it digested at 10,000 services.
        self._digests.setdefault(table_name, []).append(row_digests(data))
        if self._fault_hook is not None:
            self._fault_hook(table_name)
        self._store._append(table_name, data, self.snapshot_id)
        self._counts[table_name] += data.num_rows
        return int(data.num_rows)

    def commit(
        self,
        status: Literal["complete", "partial"] = "complete",
        meta: SnapshotMeta | Mapping[str, Any] | None = None,
    ) -> SnapshotInfo:
        """Append the ``snapshots`` row, making the snapshot visible; returns its record."""
        self._require_open()
        if status not in ("complete", "partial"):
            raise ValueError(f"status must be 'complete' or 'partial', not {status!r}")
        final = self._meta.merged(SnapshotMeta.of(meta))
        digest = content_hash_of_digests(self.snapshot_id, self.snapshot_at, self._digests)
        if self._fault_hook is not None:
            self._fault_hook("snapshots")
        previous = self._store._last_link()
        prev_hash = previous[1] if previous else None
        row = {
            "seq": (previous[0] if previous else 0) + 1,
            "status": status,
            "started_at": self._started_at,
            "finished_at": datetime.now(UTC),
            "base_url": final.base_url,
            "toolkit_version": __version__,
            "schema_version": SCHEMA_VERSION,
            "credential_name": final.credential_name,
            "credential_role": final.credential_role,
            "row_counts": sorted(self._counts.items()),
            "request_stats": _json_or_none(final.request_stats),
            "content_hash": digest,
            "content_hash_version": CONTENT_HASH_VERSION,
            "prev_hash": prev_hash,
            "chain_hash": chain_hash(prev_hash, digest),
            "pruned_at": None,
            "extra": _json_or_none(final.extra),
        }
        row = mask_row(TABLES["snapshots"], row)  # base_url and names, by their kinds
        data = to_arrow(TABLES["snapshots"], [row], self.snapshot_id, self.snapshot_at)
        self._store._append("snapshots", data, self.snapshot_id)
        self._committed = SnapshotInfo.from_row(data.to_pylist()[0])
        return self._committed

    def _require_open(self) -> None:
        if self._committed is not None:
            raise WriterStateError(
                f"snapshot {self.snapshot_id} is already committed; "
                "call store.begin() for a new one"
            )


def _json_or_none(value: Mapping[str, Any] | None) -> str | None:
    if not value:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
