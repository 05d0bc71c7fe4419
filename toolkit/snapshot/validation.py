"""Turn rows into an Arrow table of exactly the declared schema, or say precisely why not.

Rows come as a list of dicts (missing keys are null; keys the table does not declare are
a programming error) or as an Arrow table (cast safely to the declared types). Timestamp
columns also accept ISO 8601 strings with an offset, as the API sends them. The two
snapshot columns are filled in here; rows that carry them must agree with the writer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.errors import SchemaMismatchError
from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID, Table

__all__ = ["Rows", "to_arrow"]

Rows: TypeAlias = Sequence[Mapping[str, Any]] | pa.Table

_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError)


def to_arrow(table: Table, rows: Rows, snapshot_id: str, snapshot_at: datetime) -> pa.Table:
    """Validate ``rows`` against ``table`` and return them with the snapshot columns set."""
    data_schema = pa.schema(
        [f for f in table.arrow_schema if f.name not in (SNAPSHOT_ID, SNAPSHOT_AT)]
    )
    if isinstance(rows, pa.Table):
        data = _from_arrow(table, data_schema, rows, snapshot_id, snapshot_at)
    else:
        data = _from_dicts(table, data_schema, rows, snapshot_id, snapshot_at)
    for field in data_schema:
        if not field.nullable and data.column(field.name).null_count:
            count = data.column(field.name).null_count
            raise SchemaMismatchError(
                table.name, field.name, f"{count} row(s) have no value, but it is required"
            )
    n = data.num_rows
    columns = [
        pa.array([snapshot_id] * n, pa.string()) if n else pa.array([], pa.string()),
        pa.array([snapshot_at] * n, table.arrow_schema.field(SNAPSHOT_AT).type),
        *(data.column(f.name) for f in data_schema),
    ]
    return pa.Table.from_arrays(columns, schema=table.arrow_schema)


def _from_dicts(
    table: Table, schema: pa.Schema, rows: Sequence[Mapping[str, Any]], sid: str, at: datetime
) -> pa.Table:
    keys: set[str] = set()
    for row in rows:
        keys.update(row.keys())
    unknown = keys - set(table.column_names)
    if unknown:
        raise SchemaMismatchError(
            table.name,
            sorted(unknown)[0],
            f"undeclared key(s) {sorted(unknown)}: declare them in "
            "toolkit/snapshot/schema_tables.py "
            "or keep them in the record's 'extra' JSON",
        )
    if SNAPSHOT_ID in keys or SNAPSHOT_AT in keys:
        _check_own_columns(table, [(r.get(SNAPSHOT_ID), r.get(SNAPSHOT_AT)) for r in rows], sid, at)
    try:
        return pa.Table.from_pylist(list(rows), schema=schema)
    except _CONVERSION_ERRORS:
        return _columnwise(table, schema, rows)


def _columnwise(table: Table, schema: pa.Schema, rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """The slow path: convert column by column, parsing ISO timestamps, naming any culprit."""
    arrays = []
    for field in schema:
        values = [row.get(field.name) for row in rows]
        if pa.types.is_timestamp(field.type):
            values = [_parse_timestamp(table, field.name, v) for v in values]
        try:
            arrays.append(pa.array(values, field.type))
        except _CONVERSION_ERRORS:
            raise _culprit(table, field, values) from None
    return pa.Table.from_arrays(arrays, schema=schema)


def _parse_timestamp(table: Table, column: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise SchemaMismatchError(
            table.name, column, "a value is not an ISO 8601 timestamp"
        ) from None
    if parsed.tzinfo is None:
        raise SchemaMismatchError(
            table.name, column, "a timestamp has no UTC offset; add one (e.g. Z)"
        )
    return parsed


def _culprit(table: Table, field: pa.Field, values: list[Any]) -> SchemaMismatchError:
    for index, value in enumerate(values):
        try:
            pa.array([value], field.type)
        except _CONVERSION_ERRORS:
            # The value itself is not shown: it might be something that must not be logged.
            return SchemaMismatchError(
                table.name,
                field.name,
                f"row {index} holds a {type(value).__name__}, but the column is {field.type}",
            )
    return SchemaMismatchError(table.name, field.name, f"values do not convert to {field.type}")


def _from_arrow(
    table: Table, schema: pa.Schema, rows: pa.Table, sid: str, at: datetime
) -> pa.Table:
    unknown = set(rows.column_names) - set(table.column_names)
    if unknown:
        raise SchemaMismatchError(
            table.name, sorted(unknown)[0], f"undeclared column(s) {sorted(unknown)}"
        )
    if SNAPSHOT_ID in rows.column_names or SNAPSHOT_AT in rows.column_names:
        ids = rows.column(SNAPSHOT_ID).to_pylist() if SNAPSHOT_ID in rows.column_names else []
        ats = rows.column(SNAPSHOT_AT).to_pylist() if SNAPSHOT_AT in rows.column_names else []
        _check_own_columns(
            table,
            list(zip(ids or [None] * len(ats), ats or [None] * len(ids), strict=True)),
            sid,
            at,
        )
    arrays = []
    for field in schema:
        if field.name not in rows.column_names:
            arrays.append(pa.nulls(rows.num_rows, field.type))
            continue
        column = rows.column(field.name)
        try:
            arrays.append(
                column if column.type.equals(field.type) else column.cast(field.type, safe=True)
            )
        except _CONVERSION_ERRORS as exc:
            raise SchemaMismatchError(
                table.name, field.name, f"is {column.type}, does not cast to {field.type} ({exc})"
            ) from None
    return pa.Table.from_arrays(arrays, schema=schema)


def _check_own_columns(table: Table, pairs: list[tuple[Any, Any]], sid: str, at: datetime) -> None:
    for row_id, row_at in pairs:
        if row_id is not None and row_id != sid:
            raise SchemaMismatchError(
                table.name, SNAPSHOT_ID, "differs from the writer's; leave it out"
            )
        if row_at is not None and row_at != at:
            raise SchemaMismatchError(
                table.name, SNAPSHOT_AT, "differs from the writer's; leave it out"
            )


def column_equals(data: pa.Table, column: str, value: Any) -> bool:
    """Whether every value of ``column`` equals ``value`` (used by verification)."""
    if data.num_rows == 0:
        return True
    return bool(
        pc.all(
            pc.equal(data.column(column), pa.scalar(value, data.schema.field(column).type))
        ).as_py()
    )
