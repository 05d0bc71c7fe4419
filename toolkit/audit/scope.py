"""What the checks read: the store's views, limited to some snapshots, hot tables cached.

Checks are never rewritten. A schema (``audit_scope``) shadows every table view through
DuckDB's search path, and the derived views are created again inside it so they read the
shadows too:

* the latest-only fast path limits each shadow to a few snapshot ids (the judged one and
  the one before it, which checks comparing with ``lag()`` need). Ids that match the strict
  snapshot-id pattern are written as literals, because DuckDB pushes a constant ``IN`` list
  into the Arrow dataset scan and reads only those snapshots' files; anything else goes
  through a table of ids;
* tables that several checks read and that are not too large are copied once into DuckDB
  (columnar and compressed), instead of every check scanning the Parquet files again.

Example::

    with scoped(con, [previous_id, latest_id], cache={"services"}):
        table = run_check(con, spec)          # rows of those two snapshots only
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import TYPE_CHECKING

from toolkit.audit.check_run import VIEWS, install_views
from toolkit.snapshot import SNAPSHOT_TABLES, is_snapshot_id

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path

    import duckdb

    from toolkit.audit.check_file import CheckSpec

__all__ = ["CACHE_MAX_ROWS", "SCOPE_SCHEMA", "hot_tables", "scoped"]

SCOPE_SCHEMA = "audit_scope"
CACHE_MAX_ROWS = 5_000_000
"""A table with more rows than this in scope is scanned by each check rather than copied."""
_IDS = f"{SCOPE_SCHEMA}.selected_snapshots"


@contextmanager
def scoped(
    con: duckdb.DuckDBPyConnection,
    snapshot_ids: Sequence[str] | None = None,
    cache: Collection[str] = (),
    views: Path = VIEWS,
) -> Iterator[None]:
    """Within the block, table names resolve to the scope: limited to ``snapshot_ids`` (all
    when None), with the tables of ``cache`` copied into DuckDB."""
    row = con.execute("select current_setting('search_path')").fetchone()
    previous = str(row[0]) if row and row[0] else "main"
    con.execute(f"drop schema if exists {SCOPE_SCHEMA} cascade")  # an earlier scope's
    con.execute(f"create schema {SCOPE_SCHEMA}")
    where = _filter(con, snapshot_ids)
    # Names below come from the declared registry and constants, never from user input;
    # the only values are snapshot ids that matched the strict pattern (see _filter).
    for name in ("snapshots", *SNAPSHOT_TABLES):
        kind = "table" if name in cache else "view"
        con.execute(
            f"create {kind} {SCOPE_SCHEMA}.{name} as select * from main.{name} {where}"  # noqa: S608 - see above
        )
        con.execute(
            f"create view {SCOPE_SCHEMA}.{name}_latest as "  # noqa: S608 - declared names
            f"select * from main.{name}_latest"
        )
    con.execute(f"set search_path = '{SCOPE_SCHEMA},main'")
    try:
        install_views(con, views)  # created in the scope, reading its tables
        yield
    finally:
        # SET takes no parameters; the value is DuckDB's own setting, quoted.
        con.execute(f"set search_path = '{_quote(previous)}'")
        con.execute(f"drop schema if exists {SCOPE_SCHEMA} cascade")  # frees cached tables


def hot_tables(
    specs: Iterable[CheckSpec],
    row_counts: Mapping[str, int | None],
    views: Path = VIEWS,
    max_rows: int = CACHE_MAX_ROWS,
) -> set[str]:
    """Tables worth copying: read by two or more checks (directly or through a derived
    view) and holding at most ``max_rows`` rows in scope (unknown counts count as small)."""
    derived = {p.stem: p.read_text(encoding="utf-8") for p in sorted(views.glob("*.sql"))}
    reads: dict[str, int] = dict.fromkeys(SNAPSHOT_TABLES, 0)
    for spec in specs:
        text = spec.sql + "".join(sql for name, sql in derived.items() if _mentions(spec.sql, name))
        for name in SNAPSHOT_TABLES:
            reads[name] += _mentions(text, name)
    return {
        name
        for name, count in reads.items()
        if count >= 2 and (row_counts.get(name) or 0) <= max_rows
    }


def _mentions(sql: str, name: str) -> bool:
    return re.search(rf"\b{name}\b", sql) is not None


def _filter(con: duckdb.DuckDBPyConnection, snapshot_ids: Sequence[str] | None) -> str:
    if snapshot_ids is None:
        return ""
    if all(is_snapshot_id(i) for i in snapshot_ids):
        literals = ", ".join(f"'{i}'" for i in snapshot_ids) or "null"
        return f"where snapshot_id in ({literals})"
    con.execute(f"create or replace table {_IDS} (snapshot_id varchar)")
    con.executemany(f"insert into {_IDS} values (?)", [[i] for i in snapshot_ids])  # noqa: S608 - constant name
    return f"where snapshot_id in (select snapshot_id from {_IDS})"  # noqa: S608 - constant name


def _quote(text: str) -> str:
    return text.replace("'", "''")
