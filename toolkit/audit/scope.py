"""What the checks read: the store's views, limited to some snapshots, shared work done once.

Checks are never rewritten. A schema (``audit_scope``) shadows the table views it limits or
copies through DuckDB's search path, and the derived views that read them are created again
inside it so they read the shadows too (every derived view, on a connection that has none:
an audit's own):

* the latest-only fast path limits each shadow to a few snapshot ids (the judged and
  compared ones and the one before each, which checks comparing with ``lag()`` need). Ids
  that match the strict snapshot-id pattern are written as literals, because DuckDB pushes
  a constant ``IN`` list into the scans (Parquet row-group statistics, Arrow dataset
  fragments) and reads only those snapshots' files; anything else goes through a table of
  ids;
* derived views whose file says ``-- materialize: shared`` (``credential_reach``, an
  expansion that costs far more than its rows) are computed once into a table of the
  scope when two or more checks read them, instead of once per check. Cheap views are
  left as views: copying millions of rows into DuckDB costs more than joining them again;
* tables that several checks read through an Arrow dataset (a store on S3) are copied once
  into DuckDB, instead of every check fetching the files again. Tables DuckDB reads from
  local Parquet files are not copied: its own reader is faster than a scan of the copy.

Example::

    plan = plan_scope(specs, row_counts, readers)
    with scoped(con, [previous_id, latest_id], plan):
        table = run_check(con, spec)          # rows of those two snapshots only
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.audit.check_run import (
    VIEWS,
    DerivedViews,
    create_view,
    schema_views,
    views_reading,
)
from toolkit.snapshot import SNAPSHOT_TABLES, id_list_literal
from toolkit.snapshot.coverage import ENDPOINT_TABLES, tables_short

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from pathlib import Path

    import duckdb

    from toolkit.audit.check_file import CheckSpec

__all__ = [
    "CACHE_MAX_ROWS",
    "ENDPOINT_TABLES",
    "FRESH_SCHEMA",
    "SCOPE_SCHEMA",
    "WINDOW_SCHEMA",
    "Scope",
    "ScopePlan",
    "blind_checks",
    "plan_scope",
    "scoped",
    "search_path",
    "set_search_path",
    "snapshot_filter",
]

SCOPE_SCHEMA = "audit_scope"
WINDOW_SCHEMA = "audit_window"
"""A second scope, of a few snapshots, open inside the first (see ``check_rows.run_checks``)."""
FRESH_SCHEMA = "audit_fresh"
"""A third, of the snapshots a status cache holds nothing for (``AuditCache.fresh``)."""
CACHE_MAX_ROWS = 5_000_000
"""A table with more rows than this in scope is scanned by each check rather than copied."""
_SHARED = re.compile(r"^--\s*materialize:\s*shared\s*$", re.MULTILINE)
_COPIED_READERS = frozenset({"dataset"})
"""Readers (see ``toolkit.snapshot.views``) whose tables are worth copying into DuckDB."""


@dataclass(frozen=True)
class Scope:
    """Where a query runs: a connection, and the search path of a scope open on it (the
    window's and the fresh scope's may be on connections of their own: see ``run_audit``)."""

    con: duckdb.DuckDBPyConnection
    path: str


@dataclass(frozen=True)
class ScopePlan:
    """What a scope computes once: tables copied into DuckDB, derived views materialised;
    and the view files (names) its checks read, the only ones it creates (None: all)."""

    cache: frozenset[str] = frozenset()
    materialize: frozenset[str] = frozenset()
    views: frozenset[str] | None = None


@contextmanager
def scoped(
    con: duckdb.DuckDBPyConnection,
    snapshot_ids: Sequence[str] | None = None,
    plan: ScopePlan | None = None,
    views: Path = VIEWS,
    schema: str = SCOPE_SCHEMA,
    tables_limited: bool = False,
) -> Iterator[str]:
    """Within the block, table names resolve to the scope: limited to ``snapshot_ids`` (all
    when None), with the tables and derived views of ``plan`` computed once. Yields the
    scope's search path, for cursors; a scope in another ``schema`` (a name of this
    package) can be opened inside, and the path is restored when each block ends.
    ``tables_limited`` says the connection's table views already show only
    ``snapshot_ids`` (a store's connection for those snapshots): only ``snapshots`` is
    limited then."""
    plan = plan or ScopePlan()
    present = schema_views(con)
    previous = search_path(con) or "main"
    con.execute(f"drop schema if exists {schema} cascade")  # an earlier scope's
    con.execute(f"create schema {schema}")
    ids_table = f"main.{schema}_snapshots"  # in main: every scope's queries find it
    where = _filter(con, snapshot_ids, ids_table)
    # A table is shadowed only when the scope limits or copies it: a shadow that passes
    # main's rows through is one more view for each check to plan (2 ms a table read).
    names = ("snapshots", *SNAPSHOT_TABLES)
    if snapshot_ids is None:
        limited: tuple[str, ...] = ()
    elif tables_limited:
        limited = ("snapshots",)
    else:
        limited = names
    shadowed = [name for name in names if name in limited or name in plan.cache]
    # Names below come from the declared registry, the package's view files and constants,
    # never from user input; the only values are snapshot ids that matched the strict
    # pattern (see snapshot_filter).
    if shadowed:
        con.execute(  # one script: the shadows cost one call
            "".join(
                f"create {'table' if name in plan.cache else 'view'} {schema}.{name} as "  # noqa: S608 - see above
                f"select * from main.{name} {where};\n"
                for name in shadowed
            )
        )
    path = f"{schema},main"
    set_search_path(con, path)
    try:
        # The views reading a shadow, or a view computed once, are created in the scope, and
        # those main lacks (an audit's own connection has none: each is bound once, here);
        # the others read the same rows in main, with no cost of binding them again. A view
        # computed once is computed before the views reading it are bound: they then bind
        # to its table, not to its whole expansion (credential_reach_growth reads it twice).
        for view in views_reading(views, {*shadowed, *plan.materialize}, present):
            if plan.views is not None and view.stem not in plan.views:
                continue  # no check of the scope reads it
            create_view(con, view)
            if view.stem in plan.materialize:
                _materialize(con, view.stem, schema)
        yield path
    finally:
        set_search_path(con, previous)
        con.execute(f"drop schema if exists {schema} cascade")  # frees cached tables
        con.execute(f"drop table if exists {ids_table}")


def plan_scope(
    specs: Iterable[CheckSpec],
    row_counts: Mapping[str, int | None],
    readers: Mapping[str, str] | None = None,
    views: Path = VIEWS,
    max_rows: int = CACHE_MAX_ROWS,
) -> ScopePlan:
    """What to compute once for ``specs``: each derived view marked ``-- materialize:
    shared`` that two or more checks read (directly or through another derived view), and
    each table read by two or more checks
    through a reader in :data:`_COPIED_READERS` (``readers`` maps table names to readers;
    missing names count as Parquet) holding at most ``max_rows`` rows in scope; and the
    derived views ``specs`` read, so the scope binds no other."""
    derived = DerivedViews(views)
    reads: dict[str, int] = dict.fromkeys([*SNAPSHOT_TABLES, *derived.names], 0)
    for spec in specs:
        for name in derived.names_read([spec.sql]) & reads.keys():
            reads[name] += 1
    readers = readers or {}
    cache = {
        name
        for name in SNAPSHOT_TABLES
        if reads[name] >= 2
        and readers.get(name) in _COPIED_READERS
        and (row_counts.get(name) or 0) <= max_rows
    }
    files = derived.files
    shared = {v.path.stem for v in files if reads[v.path.stem] >= 2 and _SHARED.search(v.text)}
    read = {v.path.stem for v in files if reads[v.path.stem]}
    return ScopePlan(frozenset(cache), frozenset(shared), frozenset(read))


def blind_checks(
    specs: Iterable[CheckSpec],
    failures: Iterable[tuple[str, str, str | None]],
    views: Path = VIEWS,
) -> list[tuple[str, str]]:
    """``(check_id, snapshot_id)`` for each check that reads a table left short in a
    snapshot: ``failures`` are ``(snapshot_id, endpoint, table_name)`` of the
    ``collection_errors`` rows that made snapshots partial (a schema drift names its table;
    any other failure its endpoint, see :data:`ENDPOINT_TABLES`).

    A finding of such a check with no row in that snapshot was not observed there: the
    data that would show it may not have been collected.
    """
    derived = DerivedViews(views)
    known = {*SNAPSHOT_TABLES, *derived.names}
    reads = {spec.id: derived.names_read([spec.sql]) & known for spec in specs}
    short: dict[str, set[str]] = {}
    for snapshot_id, endpoint, table in failures:
        short.setdefault(snapshot_id, set()).update(tables_short(endpoint, table))
    return [
        (check_id, snapshot_id)
        for check_id, read in reads.items()
        for snapshot_id, tables in sorted(short.items())
        if read & tables
    ]


def snapshot_filter(con: duckdb.DuckDBPyConnection, snapshot_ids: Sequence[str], table: str) -> str:
    """A predicate ``snapshot_id in (...)`` for ``snapshot_ids``.

    Ids that match the strict snapshot-id pattern are written as literals, so DuckDB pushes
    the list into the scans (and skips the other snapshots' files); anything else is put in
    ``table`` (a name from this package, never user input; not temporary, so the
    connection's cursors see it too) and read from there. The caller drops it.
    """
    literals = id_list_literal(snapshot_ids)
    if literals is not None:
        return f"snapshot_id in ({literals})"
    con.execute(f"create or replace table {table} (snapshot_id varchar)")
    con.executemany(f"insert into {table} values (?)", [[i] for i in snapshot_ids])  # noqa: S608 - a constant name
    return f"snapshot_id in (select snapshot_id from {table})"  # noqa: S608 - a constant name


def _materialize(con: duckdb.DuckDBPyConnection, name: str, schema: str) -> None:
    """Replace the scope's view ``name`` (a package view file's name) by a table of its rows."""
    staged = f"{schema}._computing_{name}"
    con.execute(f"create table {staged} as select * from {schema}.{name}")  # noqa: S608 - a view file's name
    con.execute(f"drop view {schema}.{name}")
    con.execute(f"alter table {staged} rename to {name}")


def _filter(con: duckdb.DuckDBPyConnection, snapshot_ids: Sequence[str] | None, table: str) -> str:
    return "" if snapshot_ids is None else "where " + snapshot_filter(con, snapshot_ids, table)


def search_path(con: duckdb.DuckDBPyConnection) -> str:
    """The connection's DuckDB search path (empty when it has none set)."""
    rows = con.execute("select current_setting('search_path')").fetchall()
    return str(rows[0][0] or "") if rows else ""


def set_search_path(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """Set the search path (SET takes no parameters: the value is quoted here)."""
    quoted = path.replace("'", "''")
    con.execute(f"set search_path = '{quoted}'")
