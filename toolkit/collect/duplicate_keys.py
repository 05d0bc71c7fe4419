"""Records that repeat their table's key within one snapshot: one is kept, the rest reported.

Every snapshot table declares its key (`toolkit.snapshot.schema_tables`). Deployments,
replicas and replica events reach a crawl more than once by design (a service record and
its history, `/replicas/list` and `/replicas/health`) and are merged (`merge_rows`). No
other table receives a key twice in a normal crawl, so a repeat there means the server
listed a record twice, with the same content or not. `drop_duplicates` keeps the first row
received (within one answer, the first listed; across answers, the answer that arrived
first), drops the others, and returns one `collection_errors` row of type `duplicate_id`
per repeated key: the table, the key, how many copies came, which was kept, and the columns
in which the copies differ (never their values). The crawl then calls the snapshot partial:
a list that repeats a record is not the list the specification describes, and it may have
left another record out.

Merged tables are checked within one answer instead, where a record comes once: a page of
`/deployments/list` (`map_deployment_page`) and a replicas answer (`replicas`) call
`drop_duplicates` on their own rows. `collection_errors` is not checked: two failures of
one endpoint for one owner are two rows.

>>> rows = [{"id": "s1", "name": "api"}, {"id": "s1", "name": "web"}]
>>> kept, errors = drop_duplicates("teams", rows, ("teams.list",))
>>> [row["name"] for row in kept], errors[0]["error_type"]
(['api'], 'duplicate_id')
>>> errors[0]["message"]
'teams: 2 rows share the key id=s1; kept the first received, dropped 1 (they differ in name)'
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, overload

import pyarrow as pa

from toolkit.collect.conform import Owner, error_row
from toolkit.snapshot.schema import SNAPSHOT_ID
from toolkit.snapshot.schema_tables import TABLES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Row
    from toolkit.collect.row_buffer import TableData

__all__ = ["DUPLICATE_ID", "drop_duplicates"]

DUPLICATE_ID = "duplicate_id"
"""The `collection_errors.error_type` of a key that came more than once."""

# Tables whose own id is an owner level: a repeated service names itself as the owner.
_OWN_LEVEL = {
    "teams": "team_id",
    "projects": "project_id",
    "environments": "environment_id",
    "services": "service_id",
}
_OWNER_COLUMNS = ("team_id", "project_id", "environment_id", "service_id")


@overload
def drop_duplicates(
    table: str, data: list[Row], sources: Sequence[str] = ()
) -> tuple[list[Row], list[Row]]: ...


@overload
def drop_duplicates(
    table: str, data: pa.Table, sources: Sequence[str] = ()
) -> tuple[pa.Table, list[Row]]: ...


def drop_duplicates(
    table: str, data: TableData, sources: Sequence[str] = ()
) -> tuple[TableData, list[Row]]:
    """`data` with only the first row of each key, and a `duplicate_id` error per repeat.

    `sources` are the endpoints whose answers filled the table; the errors name them.
    Rows keep their order; data without a repeated key comes back as it was.
    """
    keys = [k for k in TABLES[table].keys if k != SNAPSHOT_ID]
    if isinstance(data, list):
        key_of = [tuple(row.get(k) for k in keys) for row in data]
    else:
        key_of = list(zip(*(data.column(k).to_pylist() for k in keys), strict=True))
    positions: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, key in enumerate(key_of):
        positions[key].append(i)
    if len(positions) == len(key_of):
        return data, []
    endpoint = ", ".join(sources) or table
    errors = []
    for key, found in positions.items():
        if len(found) > 1:
            copies = [data[i] for i in found] if isinstance(data, list) else _rows(data, found)
            errors.append(_error(table, endpoint, dict(zip(keys, key, strict=True)), copies))
    first = sorted(found[0] for found in positions.values())
    if isinstance(data, list):
        return [data[i] for i in first], errors
    return data.take(pa.array(first, pa.int64())), errors


def _rows(data: pa.Table, positions: list[int]) -> list[Row]:
    rows: list[Row] = data.take(pa.array(positions, pa.int64())).to_pylist()
    return rows


def _error(table: str, endpoint: str, key: dict[str, Any], copies: list[Row]) -> Row:
    """The `collection_errors` row for one key that came `len(copies)` times."""
    kept = copies[0]
    differ = sorted({c for row in copies[1:] for c in row if row[c] != kept.get(c)})
    how = f"they differ in {', '.join(differ)}" if differ else "identical copies"
    shown = ", ".join(f"{k}={v}" for k, v in key.items() if v is not None)
    message = (
        f"{table}: {len(copies)} rows share the key {shown}; kept the first received, "
        f"dropped {len(copies) - 1} ({how})"
    )
    owner = {c: kept.get(c) for c in _OWNER_COLUMNS}
    if table in _OWN_LEVEL:
        owner[_OWN_LEVEL[table]] = kept.get("id")
    return error_row(
        endpoint,
        Owner(**owner),
        error_type=DUPLICATE_ID,
        message=message,
        table_name=table,
        column_name=", ".join(key),
    )
