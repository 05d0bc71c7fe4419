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
from enum import StrEnum
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "SCHEMA_VERSION",
    "SNAPSHOT_AT",
    "SNAPSHOT_ID",
    "Column",
    "Kind",
    "Table",
    "UnknownTableError",
    "holds_text",
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


class Kind(StrEnum):
    """What a column's text is, which decides how collection masks it before it is stored
    (the rules: :mod:`toolkit.snapshot.column_masking`). Every column whose type holds
    strings declares one; a declaration without it is refused.
    """

    ID = "id"
    """An identifier the platform issued: a UUID, a runtime name, a key id, a commit SHA."""
    ENUM = "enum"
    """A value of the platform's vocabulary: a status, a type, a role, a protocol."""
    NAME = "name"
    """A name people gave: a service, a branch, a commit author, a bucket, a host."""
    FILE_PATH = "file_path"
    """A path or glob inside a container or repository: a mount path, watch paths."""
    TEXT = "text"
    """Free text the platform's users or its runtime wrote (messages, commands,
    descriptions), which may quote a connection string or ``password=...``."""
    URL = "url"
    """An absolute URL: a repository, an endpoint, a webhook, the API's base URL."""
    IMAGE = "image"
    """A container image reference (``registry/name:tag@digest``), or a URL given as one."""
    URL_PATH = "url_path"
    """The path (and query) part of a URL: a route, a health check path."""
    REQUEST_ID = "request_id"
    """A request id a server sent back (a header or an error body)."""
    JSON = "json"
    """A JSON object built by ``toolkit.collect.conform.extra_json``, masked member by member."""
    TOOLKIT = "toolkit"
    """Written by the toolkit itself (hashes, fingerprints, endpoint and table names), never
    a server's text."""


def holds_text(type_: pa.DataType) -> bool:
    """Whether values of ``type_`` hold strings: a string, a list of them, a map keyed by them.

    >>> holds_text(pa.list_(pa.string())), holds_text(pa.int64())
    (True, False)
    """
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return True
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return holds_text(type_.value_type)
    if pa.types.is_map(type_):
        return holds_text(type_.key_type) or holds_text(type_.item_type)
    return False


@dataclass(frozen=True, slots=True)
class Column:
    """One column: name, Arrow type, nullability, a one-line description, and for a column
    of strings its :class:`Kind` (how collection masks it)."""

    name: str
    type: pa.DataType
    nullable: bool = True
    doc: str = ""
    kind: Kind | None = None

    def __post_init__(self) -> None:
        if holds_text(self.type) and self.kind is None:
            raise ValueError(f"column {self.name} holds strings: declare its kind (Kind)")
        if self.kind is not None and not holds_text(self.type):
            raise ValueError(f"column {self.name} is {self.type}: only strings have a kind")

    @property
    def free_text(self) -> bool:
        """Free text, scrubbed of credentials at collection (``Kind.TEXT``)."""
        return self.kind is Kind.TEXT

    @property
    def arrow_field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


def col(
    name: str,
    type_: pa.DataType,
    doc: str = "",
    *,
    nullable: bool = True,
    kind: Kind | None = None,
) -> Column:
    """Declare a column (nullable unless said otherwise; see :class:`Column`)."""
    return Column(name, type_, nullable, doc, kind)


def text(name: str, doc: str = "") -> Column:
    """Declare a nullable string column of free text, scrubbed at collection."""
    return Column(name, STR, True, doc, Kind.TEXT)


def required(name: str, type_: pa.DataType, doc: str = "", *, kind: Kind | None = None) -> Column:
    """Declare a column that may never be null."""
    return Column(name, type_, False, doc, kind)


_SNAPSHOT_COLUMNS = (
    required(
        SNAPSHOT_ID, STR, "sortable id of the snapshot this row belongs to", kind=Kind.TOOLKIT
    ),
    required(SNAPSHOT_AT, TS, "when the snapshot was taken (UTC)"),
)
# The Delta log keeps each file's minimum and maximum of these columns only, for data
# skipping: numbers, booleans, timestamps and the snapshot id. No string a server wrote is
# copied there, where it would outlive the rows a gc or retention removes.
_STATISTICS_TYPES = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)


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

    @property
    def statistics_columns(self) -> tuple[str, ...]:
        """The columns whose minimum and maximum the Delta log may keep per file: the
        snapshot columns, numbers, booleans and timestamps; never a column of strings."""
        return tuple(
            f.name
            for f in self.arrow_schema
            if f.name == SNAPSHOT_ID
            or pa.types.is_timestamp(f.type)
            or any(test(f.type) for test in _STATISTICS_TYPES)
        )

    def column(self, name: str) -> Column:
        for c in (*_SNAPSHOT_COLUMNS, *self.columns):
            if c.name == name:
                return c
        raise KeyError(f"table {self.name} has no column {name!r}")


# Shared pieces of declarations.
EXTRA = col("extra", STR, "unknown fields of the record, as a JSON object", kind=Kind.JSON)
ID = required("id", STR, "the record's id", kind=Kind.ID)


def _scope(*levels: str) -> tuple[Column, ...]:
    return tuple(
        col(f"{level}_id", STR, f"id of the owning {level}", kind=Kind.ID) for level in levels
    )


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
