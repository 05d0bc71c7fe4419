"""What a crawl returns: rows per table, and a `CrawlResult` describing how it went."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolkit.collect.conform import merge_rows
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES

if TYPE_CHECKING:
    from datetime import datetime

    from toolkit.api import CallStats
    from toolkit.collect.calls import Call
    from toolkit.collect.conform import Row, Rows

__all__ = ["CrawlOutput", "CrawlResult", "finish_rows"]

# Tables whose records reach a crawl more than once (see `merge_rows`).
_MERGED = ("deployments", "replica_events", "replicas")
_FLAGS = ("is_current", "is_last", "is_last_successful")


@dataclass(frozen=True, kw_only=True)
class CrawlResult:
    """How a crawl went.

    `status` is `partial` when any call failed for a reason other than "not visible to
    this credential" (404), or a field drifted. `calls` counts the requests sent (retries
    included); `planned` lists the distinct calls, so `min_calls` is what the hierarchy
    needed. `critical_path` is the longest chain of calls that had to wait for each other.
    """

    status: Literal["complete", "partial"]
    credential: str
    role: str | None
    started_at: datetime
    finished_at: datetime
    duration_s: float
    calls: int
    planned: tuple[Call, ...]
    critical_path: int
    errors: tuple[Row, ...]
    stats: CallStats
    retries: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def min_calls(self) -> int:
        """Distinct calls the discovered hierarchy needed (each GET once, no retries)."""
        return len(self.planned)

    def snapshot_meta(self) -> dict[str, Any]:
        """What the `snapshots` row records about this crawl (`SnapshotMeta` fields)."""
        return {
            "credential_name": self.credential,
            "credential_role": self.role,
            "started_at": self.started_at,
            "request_stats": {
                **self.stats.as_dict(),
                "calls": self.calls,
                "min_calls": self.min_calls,
                "critical_path": self.critical_path,
                "duration_s": round(self.duration_s, 3),
            },
        }


@dataclass(frozen=True)
class CrawlOutput:
    """Rows per table (every snapshot table present, maybe empty) and the `CrawlResult`.

    >>> output = crawl(config, fingerprints=fingerprints)          # doctest: +SKIP
    >>> rows, result = output                                     # doctest: +SKIP
    """

    rows: Rows
    result: CrawlResult

    def __iter__(self) -> Any:
        return iter((self.rows, self.result))


def finish_rows(collected: dict[str, list[Row]]) -> Rows:
    """Every snapshot table, with records seen twice merged and unknown flags settled."""
    rows: Rows = {name: list(collected.get(name, [])) for name in SNAPSHOT_TABLES}
    for name in _MERGED:
        rows[name] = merge_rows(name, rows[name])
    services = {row["id"] for row in rows["services"]}
    for row in rows["deployments"]:
        if row["service_id"] in services:
            for flag in _FLAGS:
                if row[flag] is None:
                    row[flag] = False
    return rows
