"""``SnapshotInfo``: one row of the ``snapshots`` table as a typed, read-only record."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.snapshot.coverage import recorded_not_collected

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

__all__ = ["SnapshotInfo"]


@dataclass(frozen=True, kw_only=True)
class SnapshotInfo:
    """A committed snapshot: identity, status, provenance, row counts and hashes."""

    snapshot_id: str
    snapshot_at: datetime
    seq: int
    status: str
    started_at: datetime | None
    finished_at: datetime | None
    base_url: str | None
    toolkit_version: str | None
    schema_version: int | None
    credential_name: str | None
    credential_role: str | None
    row_counts: Mapping[str, int]
    request_stats: Mapping[str, Any] | None
    content_hash: str
    content_hash_version: int  # 1 for snapshots written before the version was recorded
    prev_hash: str | None
    chain_hash: str
    pruned_at: datetime | None
    fingerprint_key: str | None = None
    """The id of the HMAC key its fingerprints are under (``Fingerprinter.key_id``); None
    when not recorded (a snapshot taken before the toolkit recorded it)."""
    not_collected: tuple[str, ...] | None = None
    """Tables with no row that failed calls left short (:mod:`toolkit.snapshot.coverage`):
    their 0 says nothing of the platform. None when not recorded (an older snapshot)."""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> SnapshotInfo:
        """Build from a ``snapshots`` row as ``pyarrow.Table.to_pylist()`` gives it."""
        counts = row.get("row_counts") or []
        stats = row.get("request_stats")
        return cls(
            snapshot_id=row["snapshot_id"],
            snapshot_at=row["snapshot_at"],
            seq=row["seq"],
            status=row["status"],
            started_at=row.get("started_at"),
            finished_at=row.get("finished_at"),
            base_url=row.get("base_url"),
            toolkit_version=row.get("toolkit_version"),
            schema_version=row.get("schema_version"),
            credential_name=row.get("credential_name"),
            credential_role=row.get("credential_role"),
            row_counts=dict(counts),
            request_stats=json.loads(stats) if stats else None,
            content_hash=row["content_hash"],
            content_hash_version=row.get("content_hash_version") or 1,
            prev_hash=row.get("prev_hash"),
            chain_hash=row["chain_hash"],
            pruned_at=row.get("pruned_at"),
            fingerprint_key=_extra(row).get("fingerprint_key"),
            not_collected=recorded_not_collected(_extra(row)),
        )


def _extra(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's ``extra`` JSON object ({} when there is none or it is not an object)."""
    try:
        found = json.loads(row.get("extra") or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
