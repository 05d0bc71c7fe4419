"""Rows that fit the declared schema, whatever the server sends.

Every collector builds plain dicts and hands them to a `Conformer`, which checks each
value against its column's Arrow type (`toolkit.snapshot.schema_tables`). A value of the
wrong type becomes null and is reported once per (table, column, type) as a
`collection_errors` row of type `schema_drift`, naming the type but never the value.
A required column (an id, a name) that a record lacks drops the record and is reported
once per (table, column) as a `missing_field` row naming the endpoint and the
`[fields.KIND]` setting that maps a differently named field (see `toolkit.collect.aliases`).
Unknown enum values are plain strings and pass untouched; unknown fields are kept by the
collectors in `extra` (see `extra_json`). Every string goes through the masking rule of its
column's declared kind (`toolkit.snapshot.column_masking`): free text is scrubbed of URL
userinfo and credential values (a crash message may quote a connection string) and cut to
`FREE_TEXT_LIMIT` characters with the original length noted (`stored_text`); URLs and image
references lose userinfo and query values; a request id that is not a plain identifier is
masked.

>>> conformer = Conformer("teams.list", Owner())
>>> conformer.row("teams", {"id": "t1", "name": 42})["name"] is None
True
>>> conformer.drift_rows()[0]["message"]
'schema drift: teams.name should be string, got int (value not shown)'
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolkit.collect.aliases import kind_of_table
from toolkit.collect.row_plan import WRONG, fast_row
from toolkit.collect.row_plan import columns as _columns
from toolkit.snapshot.free_text import stored_text
from toolkit.snapshot.schema import SNAPSHOT_ID
from toolkit.snapshot.schema_tables import TABLES
from toolkit.snapshot.secret_names import SECRET_NAME, secret_name
from toolkit.snapshot.text_scrub import MASK

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "PENDING_COLUMNS",
    "Conformer",
    "Owner",
    "Rows",
    "extra_json",
    "merge_rows",
    "unknown_fields",
]

Row = dict[str, Any]
Rows = dict[str, list[Row]]
"""Rows per table name, as every collector returns them."""

# Columns the collectors may fill before the declared schema has them (none today): they are
# dropped until declared; any other undeclared key is a bug.
PENDING_COLUMNS: dict[str, frozenset[str]] = {}
_OWNER_COLUMNS = ("team_id", "project_id", "environment_id", "service_id")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")


@dataclass(frozen=True, slots=True)
class Owner:
    """The ids that locate a record in the hierarchy (team > project > environment > service)."""

    team_id: str | None = None
    project_id: str | None = None
    environment_id: str | None = None
    service_id: str | None = None

    def columns(self) -> dict[str, str | None]:
        """All four owner columns, None where unknown."""
        return {
            "team_id": self.team_id,
            "project_id": self.project_id,
            "environment_id": self.environment_id,
            "service_id": self.service_id,
        }


class Conformer:
    """Builds rows for one API answer (`endpoint`, `owner`) and remembers schema drift."""

    def __init__(self, endpoint: str, owner: Owner) -> None:
        self.endpoint = endpoint
        self.owner = owner
        self._drift: Counter[tuple[str, str, str]] = Counter()

    def rows(self, table: str, records: Iterable[Mapping[str, Any]]) -> list[Row]:
        """`row()` of each record, leaving out those that lack a required column."""
        return [row for row in map(functools.partial(self.row, table), records) if row is not None]

    def row(self, table: str, values: Mapping[str, Any]) -> Row | None:
        """`values` with every declared column present and of its declared type.

        None when a required column (an id, a name) is missing or unusable: such a record
        cannot be stored, and the drift report names the column.
        """
        _, names = _columns(table)
        if not names.issuperset(values):
            undeclared = set(values) - names - PENDING_COLUMNS.get(table, frozenset())
            if undeclared:
                raise KeyError(f"{table} does not declare {sorted(undeclared)}")
        row = fast_row(table, values)
        if row is not None:
            return row
        return self._row_by_column(table, values)

    def _row_by_column(self, table: str, values: Mapping[str, Any]) -> Row | None:
        """`row()` one column at a time, noting each column that drifts."""
        columns, _ = _columns(table)
        out: Row = {}
        for name, exact, convert, nullable in columns:
            value = values.get(name)
            if value is not None and type(value) is not exact:
                converted = convert(value)
                if converted is WRONG:
                    self.note(table, name, value)
                    converted = None
                value = converted
            if value is None and not nullable:
                self._drift[(table, name, _MISSING)] += 1
                return None
            out[name] = value
        return out

    def obj(self, record: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
        """`record[key]` when it is an object; {} when absent, null, or of another type."""
        value = record.get(key)
        if isinstance(value, dict):
            return value
        if value is not None:
            self.note(where, key, value)
        return {}

    def objs(self, record: Mapping[str, Any], key: str, where: str) -> list[dict[str, Any]]:
        """The objects of list `record[key]`; anything else is drift and skipped."""
        value = record.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.note(where, key, value)
            return []
        found = []
        for item in value:
            if isinstance(item, dict):
                found.append(item)
            else:
                self.note(where, f"{key}[]", item)
        return found

    def note(self, table: str, column: str, value: object) -> None:
        """Record that `table.column` held a value of the wrong type (the type only)."""
        self._drift[(table, column, type(value).__name__)] += 1

    def drift_rows(self) -> list[Row]:
        """One `collection_errors` row per (table, column, type) that drifted."""
        rows = []
        for (table, column, kind), count in sorted(self._drift.items()):
            if kind == _MISSING:
                error_type, message = "missing_field", self._missing(table, column, count)
            else:
                times = f" (seen {count} times)" if count > 1 else ""
                error_type = "schema_drift"
                message = (
                    f"schema drift: {table}.{column} should be {_expected(table, column)}, "
                    f"got {kind} (value not shown){times}"
                )
            rows.append(
                error_row(
                    self.endpoint,
                    self.owner,
                    error_type=error_type,
                    message=message,
                    table_name=table,
                    column_name=column,
                )
            )
        return rows

    def _missing(self, table: str, column: str, count: int) -> str:
        """What a required column that no answer filled means, and the setting that fixes it."""
        records = "1 record" if count == 1 else f"{count} records"
        kind = kind_of_table(table)
        fix = (
            f"if the server names this field differently, map it: [fields.{kind}] "
            f'<its name> = "{column}"'
            if kind
            else "the server's records lack it"
        )
        return (
            f"{self.endpoint}: {records} without `{column}`, which {table}.{column} requires, "
            f"left out; {fix}"
        )


_MISSING = "missing"


def _expected(table: str, column: str) -> str:
    declared = TABLES.get(table)
    if declared is not None and column in declared.arrow_schema.names:
        return str(declared.arrow_schema.field(column).type)
    return "an object" if not column.endswith("[]") else "a list of objects"


def error_row(
    endpoint: str,
    owner: Owner,
    *,
    error_type: str,
    message: str,
    status: int | None = None,
    request_id: str | None = None,
    attempts: int | None = None,
    not_visible: bool = False,
    table_name: str | None = None,
    column_name: str | None = None,
) -> Row:
    """A `collection_errors` row (method is always GET: the crawl only reads)."""
    values = {
        "endpoint": endpoint,
        "method": "GET",
        **owner.columns(),
        "status": status,
        "error_type": error_type,
        "request_id": request_id,
        "attempts": attempts,
        "message": message[:500],
        "occurred_at": datetime.now(UTC),
        "not_visible": not_visible,
        "table_name": table_name,
        "column_name": column_name,
    }
    row = Conformer(endpoint, owner).row("collection_errors", values)
    assert row is not None, "collection_errors rows always carry their endpoint"
    return row


def unknown_fields(record: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    """The members of `record` whose names are not in `known`."""
    known_set = set(known)
    return {key: value for key, value in record.items() if key not in known_set}


def extra_json(fields: Mapping[str, Any]) -> str | None:
    """Unknown fields as a JSON object with sorted keys; None when there are none.

    Members whose names suggest a credential (`secret`, `token`, `password`...) or are a
    secret's name as the variable checks judge it (`app_key`) keep their name but lose
    their value, at any depth: an unknown field is unreviewed by definition.
    Other strings are scrubbed and capped like free text (`stored_text`). Empty nested
    objects are left out.
    """
    cleaned = {k: v for k, v in fields.items() if not (isinstance(v, dict) and not v)}
    if not cleaned:
        return None
    return json.dumps(_mask(cleaned), sort_keys=True, separators=(",", ":"), default=str)


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            _key(str(k)): MASK if _secret_member(str(k)) else _mask(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return stored_text(value) if isinstance(value, str) else value


def _secret_member(name: str) -> bool:
    """A member name that suggests a credential, read broadly, or a secret's name as the
    variable checks read it (``app_key``, ``DBPASSWORD``)."""
    return bool(SECRET_NAME.search(name)) or secret_name(name)


def _key(name: str) -> str:
    return name if _IDENTIFIER.fullmatch(name) else MASK


def merge_rows(table: str, rows: Iterable[Row]) -> list[Row]:
    """Merge rows that share the table's key: the first non-null value of each column wins,
    and a boolean is true when any row says so. Order of first appearance is kept.

    Deployments reach a snapshot twice (the three records of a service and its history);
    replica events and replicas too (deployments, `/replicas/list`, `/replicas/health`).
    """
    keys = [k for k in TABLES[table].keys if k != SNAPSHOT_ID]
    merged: dict[tuple[Any, ...], Row] = {}
    for row in rows:
        key = tuple(row.get(k) for k in keys)
        seen = merged.get(key)
        if seen is None:
            merged[key] = dict(row)
            continue
        for column, value in row.items():
            if value is None:
                continue
            if seen.get(column) is None or (isinstance(value, bool) and value):
                seen[column] = value
    return list(merged.values())
