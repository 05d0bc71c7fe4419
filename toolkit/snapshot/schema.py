"""How a snapshot table is declared: columns in Arrow types, keys, and the registry.

Every table is declared once, explicitly (in :mod:`toolkit.snapshot.schema_tables`), in the
manner of CloudQuery's plugin SDK: a name, a description, its columns with Arrow types and
nullability, and its key columns. Nothing is inferred from data; pandas never decides a
column's type. Every table starts with the two columns the writer fills in itself::

    snapshot_id  string, not null     sortable (UUIDv7-style) id of the snapshot
    snapshot_at  timestamp[us, UTC]   when the snapshot was taken

>>> from toolkit.snapshot import table
>>> table("services").arrow_schema.field("memory_limits_megabytes").type
DataType(int64)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "SCHEMA_VERSION",
    "SNAPSHOT_AT",
    "SNAPSHOT_ID",
    "Column",
    "Table",
    "UnknownTableError",
]

# Raise when a declared table changes. New nullable columns keep old content hashes valid
# (null members are left out of the canonical form), so adding one is safe.
# 2: snapshots.content_hash_version (content hash v2).
# 3: webhooks.url_address and url_address_kind (hosts classified at collection).
# 4: variables.writes_credential (credentials written into a value, judged at collection).
# 5: variables.value_kind (secrets their value gives away, recognised at collection).
SCHEMA_VERSION = 5

SNAPSHOT_ID = "snapshot_id"
SNAPSHOT_AT = "snapshot_at"

# Shorthands used by the declarations.
STR = pa.string()
INT = pa.int64()
FLOAT = pa.float64()
BOOL = pa.bool_()
TS = pa.timestamp("us", tz="UTC")
STRS = pa.list_(pa.string())


class UnknownTableError(KeyError):
    """A table name that no declaration has; the message lists the declared ones."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown table"


@dataclass(frozen=True, slots=True)
class Column:
    """One column: name, Arrow type, nullability and a one-line description.

    ``free_text``: text the platform's users or its runtime wrote (commands, messages,
    descriptions), which may quote a connection string or ``password=...``; collection
    scrubs it (:func:`toolkit.snapshot.redaction.scrub_text`) before it is stored.
    """

    name: str
    type: pa.DataType
    nullable: bool = True
    doc: str = ""
    free_text: bool = False

    @property
    def arrow_field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


def col(
    name: str, type_: pa.DataType, doc: str = "", *, nullable: bool = True, free_text: bool = False
) -> Column:
    """Declare a column (nullable unless said otherwise; see :class:`Column`)."""
    return Column(name, type_, nullable, doc, free_text)


def text(name: str, doc: str = "") -> Column:
    """Declare a nullable string column of free text, scrubbed at collection."""
    return Column(name, STR, True, doc, free_text=True)


def required(name: str, type_: pa.DataType, doc: str = "") -> Column:
    """Declare a column that may never be null."""
    return Column(name, type_, False, doc)


_SNAPSHOT_COLUMNS = (
    required(SNAPSHOT_ID, STR, "sortable id of the snapshot this row belongs to"),
    required(SNAPSHOT_AT, TS, "when the snapshot was taken (UTC)"),
)


@dataclass(frozen=True)
class Table:
    """A declared table. ``columns`` excludes the two snapshot columns, which come first."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    keys: tuple[str, ...]
    arrow_schema: pa.Schema = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        all_columns = (*_SNAPSHOT_COLUMNS, *self.columns)
        names = [c.name for c in all_columns]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name}: duplicate column names")
        missing = set(self.keys) - set(names)
        if missing:
            raise ValueError(f"table {self.name}: key columns {sorted(missing)} are not declared")
        schema = pa.schema([c.arrow_field for c in all_columns])
        object.__setattr__(self, "arrow_schema", schema)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(self.arrow_schema.names)

    def column(self, name: str) -> Column:
        for c in (*_SNAPSHOT_COLUMNS, *self.columns):
            if c.name == name:
                return c
        raise KeyError(f"table {self.name} has no column {name!r}")


# Shared pieces of declarations.
EXTRA = col("extra", STR, "unknown fields of the record, as a JSON object")
ID = required("id", STR, "the record's id")


def _scope(*levels: str) -> tuple[Column, ...]:
    return tuple(col(f"{level}_id", STR, f"id of the owning {level}") for level in levels)


TEAM_SCOPE = _scope("team")
PROJECT_SCOPE = _scope("team", "project")
ENV_SCOPE = _scope("team", "project", "environment")
SERVICE_SCOPE = _scope("team", "project", "environment", "service")


def declare(
    name: str, doc: str, columns: Iterable[Column], *, keys: Iterable[str] = ("id",)
) -> Table:
    """Declare a table; its key always starts with ``snapshot_id``."""
    return Table(name, doc, tuple(columns), (SNAPSHOT_ID, *keys))


def registry(tables: Iterable[Table]) -> Mapping[str, Table]:
    """Index declared tables by name, refusing duplicates."""
    out: dict[str, Table] = {}
    for t in tables:
        if t.name in out:
            raise ValueError(f"table {t.name} declared twice")
        out[t.name] = t
    return out
