"""What a crawl returns: rows per table, and a `CrawlResult` describing how it went."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.collect.conform import merge_rows
from toolkit.collect.duplicate_keys import drop_duplicates
from toolkit.collect.row_buffer import merge_table
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from toolkit.api import CallStats
    from toolkit.collect.calls import Call
    from toolkit.collect.conform import Row, Rows
    from toolkit.collect.row_buffer import RowBuffer, TableData

__all__ = ["CrawlOutput", "CrawlResult", "finish_tables"]

# Tables whose records reach a crawl more than once (see `merge_rows`); in any other, a
# repeated key is an error (see `drop_duplicates`).
_MERGED = ("deployments", "replica_events", "replicas")
_ERRORS = "collection_errors"
_FLAGS = ("is_current", "is_last", "is_last_successful")


@dataclass(frozen=True, kw_only=True)
class CrawlResult:
    """How a crawl went.

    `status` is `partial` when any call failed for a reason other than "not visible to
    this credential" (404), a field drifted, or a record's key came twice (`duplicate_id`).
    `calls` counts the requests sent (retries included); `planned` lists the distinct
    calls, so `min_calls` is what the hierarchy needed. `critical_path` is the longest
    chain of calls that had to wait for each other.
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
            "extra": dict(self.extra),
        }


@dataclass(frozen=True, repr=False)
class CrawlOutput:
    """Every snapshot table's rows and the `CrawlResult`.

    `tables` is what the snapshot writer takes: per table a list of dicts, or an Arrow
    table when the crawl was large enough to keep its rows as columns (see `RowBuffer`).
    `rows` gives every table as dicts, converting on first use.

    Its repr counts rows instead of showing them: a notebook cell, or asyncio formatting
    the finished task of `asyncio.run` (which it does on the way out), would otherwise
    build a string of every row of the crawl.

    >>> output = crawl(config, fingerprints=fingerprints)          # doctest: +SKIP
    >>> rows, result = output                                     # doctest: +SKIP
    """

    tables: Mapping[str, TableData]
    result: CrawlResult

    @functools.cached_property
    def rows(self) -> Rows:
        """Every table as a list of dicts."""
        return {n: d if isinstance(d, list) else d.to_pylist() for n, d in self.tables.items()}

    def __iter__(self) -> Any:
        return iter((self.rows, self.result))

    def __repr__(self) -> str:
        counts = {table: len(found) for table, found in self.tables.items() if len(found)}
        result = self.result
        return (
            f"CrawlOutput(status={result.status!r}, calls={result.calls}, "
            f"errors={len(result.errors)}, rows={counts})"
        )


def finish_tables(collected: RowBuffer) -> tuple[dict[str, TableData], list[Row]]:
    """Every snapshot table, with records seen twice merged or dropped, and unknown flags
    settled; and the `duplicate_id` errors of the records dropped (`drop_duplicates`), which
    are also added to `collection_errors` and make the snapshot partial."""
    tables: dict[str, TableData] = {}
    duplicates: list[Row] = []
    for name in SNAPSHOT_TABLES:
        if name == _ERRORS:
            continue  # last: it receives the duplicates found in every other table
        data = collected.pop_table(name) if name in collected else []
        if name in _MERGED:
            data = merge_rows(name, data) if isinstance(data, list) else merge_table(name, data)
        else:
            data, found = drop_duplicates(name, data, collected.sources(name))
            duplicates.extend(found)
        tables[name] = data
    collected.extend(_ERRORS, duplicates)
    tables[_ERRORS] = collected.pop_table(_ERRORS)
    services = tables["services"]
    ids = {row["id"] for row in services} if isinstance(services, list) else services["id"]
    tables["deployments"] = _settle_flags(tables["deployments"], ids)
    return {name: tables[name] for name in SNAPSHOT_TABLES}, duplicates


def _settle_flags(deployments: TableData, services: set[str] | pa.ChunkedArray) -> TableData:
    """A deployment of a collected service whose flags the API left unknown is not current,
    last or last successful: its service's record would have named it."""
    if isinstance(deployments, list):
        for row in deployments:
            if row["service_id"] in services:
                for flag in _FLAGS:
                    if row[flag] is None:
                        row[flag] = False
        return deployments
    data = deployments
    ids = services.combine_chunks() if isinstance(services, pa.ChunkedArray) else services
    value_set = ids if isinstance(ids, pa.Array) else pa.array(sorted(ids), pa.string())
    known = pc.is_in(data["service_id"], value_set=value_set)
    for flag in _FLAGS:
        index = data.schema.get_field_index(flag)
        column = data.column(index)
        settled = pc.if_else(pc.and_(known, pc.is_null(column)), False, column)
        data = data.set_column(index, data.schema.field(index), settled)
    return data
