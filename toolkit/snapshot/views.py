"""DuckDB views over the store.

For every declared table ``t`` of a snapshot:

* ``t`` shows rows of every COMMITTED snapshot that still has data (status ``complete`` or
  ``partial``): rows whose snapshot never committed, or was pruned, are not shown.
* ``t_latest`` shows the rows of the newest ``complete`` snapshot (a ``partial`` one never
  becomes "latest").

``snapshots`` shows every snapshot row, pruned ones included. Tables that were never
written appear as empty views with their declared columns, so queries never fail on a
young store. The findings history has the views ``check_runs``, ``check_results`` (its committed
rows) and ``findings`` (the alarms of each check's newest version judging each snapshot: "findings
over time" is one ``group by``). ``service_limits`` and ``service_limits_latest`` read the
platform's ``-1`` limits as NULL (:mod:`toolkit.snapshot.analyst_views`). No DuckDB extension
is needed, locally or on S3. ``_table_readers`` says how each table is read.

How the rows are read:

* a local store's tables are read by DuckDB's own Parquet reader over the Delta table's
  active files (``DeltaTable.file_uris()``, nothing else in the folder). It reads in
  parallel, skips row groups by their statistics (a latest-only audit opens only the files
  of its snapshots) and never converts to Arrow; it is several times faster than a scan of
  the Arrow dataset over the same files. Columns a newer declaration added read as null
  from older files, with their declared types;
* a table on S3, or one using a Delta reader feature the plain files cannot express
  (deletion vectors, column mapping), is read through ``DeltaTable.to_pyarrow_dataset()``,
  which needs no DuckDB extension.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

from toolkit.errors import StoreUnavailable, storage_message
from toolkit.snapshot.analyst_views import create_analyst_views
from toolkit.snapshot.schema_tables import DECLARED, FINDINGS_TABLES, SNAPSHOT_TABLES
from toolkit.snapshot.snapshot_ids import id_list_literal
from toolkit.snapshot.store_tables import ParquetFiles

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from deltalake import DeltaTable

    from toolkit.snapshot.store_tables import StoreTables

__all__ = [
    "ParquetFiles",
    "attach_findings",
    "connect",
    "connect_arrow",
    "open_tables",
    "store_read_failure",
    "store_unreadable",
]

VISIBLE_STATUSES = ("complete", "partial")
_OPENERS = 4
"""Tables opened at once by :func:`open_tables` (reading Delta logs: I/O, not CPU)."""
_TABLES = (*SNAPSHOT_TABLES, *FINDINGS_TABLES)


def open_tables(store: StoreTables) -> dict[str, DeltaTable | None]:
    """Every table of ``store`` opened (its Delta log read; a table never written: None),
    by name: what :func:`connect` reads, and any later connection of the same moment can
    be made from without reading a log again."""
    # Opening a Delta table reads its log, mostly outside the GIL: the 25 tables open side
    # by side (a 90-snapshot store: 0.10 s one after another, 0.05-0.07 s side by side).
    with ThreadPoolExecutor(_OPENERS, thread_name_prefix="store-open") as pool:
        return dict(zip(_TABLES, pool.map(store._delta, _TABLES), strict=True))


def connect(
    store: StoreTables,
    snapshot_ids: Collection[str] | None = None,
    snapshot_rows: pa.Table | None = None,
    tables: Mapping[str, DeltaTable | None] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with the store's views (of ``snapshot_ids`` only,
    when given: see :meth:`Store.duckdb`). ``snapshot_rows`` is the ``snapshots`` table if
    the caller has just read it; ``tables`` the store's tables if it has opened them
    (:func:`open_tables`): the views then show them as they were when opened."""
    opened = open_tables(store) if tables is None else tables
    sources = {name: store._source(name, snapshot_ids, opened) for name in _TABLES}
    # The snapshots table is small (a row per snapshot): it is read whole, so DuckDB never
    # pushes filters into files that Delta updates rewrote with string_view columns.
    rows = store._snapshot_rows() if snapshot_rows is None else snapshot_rows
    return connect_arrow(sources, rows, snapshot_ids)


def connect_arrow(
    sources: Mapping[str, Any],
    snapshots: pa.Table,
    snapshot_ids: Collection[str] | None = None,
) -> duckdb.DuckDBPyConnection:
    """The same views over Arrow tables or datasets, or :class:`ParquetFiles` (a table
    missing from ``sources``, or None, is empty); with ``snapshot_ids``, the table views
    show those snapshots' rows only. Every view is visible to the connection's cursors
    (``con.cursor()``), so queries can run side by side.

    The store uses it with its files or Delta datasets; audit fixtures with in-memory tables.
    """
    con = duckdb.connect()
    # Delta never rewrites a file in place, so a file's footer can be kept between queries.
    con.execute("SET GLOBAL parquet_metadata_cache = true")  # cursors (worker threads) too
    # Times are stored in UTC and shown as UTC: without this, DuckDB formats, casts and
    # counts calendar days in the machine's zone (a check's "00:00 UTC" read "19:00 UTC"
    # under TZ=America/New_York, and offset-less text parsed as local time).
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    # The database lives in memory and goes with the connection: checkpointing it only
    # compresses temporary tables about to be dropped (an audit's pass the 16 MiB default
    # at 10,000 services, and the checkpoint would cost it about 0.6 s).
    con.execute("SET GLOBAL checkpoint_threshold = '1TB'")
    # Names below come from the declared registry, never from user input.
    readers = [(name, _register(con, name, sources.get(name))) for name in SNAPSHOT_TABLES]
    con.execute("CREATE TABLE _table_readers (table_name VARCHAR, reader VARCHAR)")
    con.executemany("INSERT INTO _table_readers VALUES (?, ?)", readers)
    con.from_arrow(snapshots).create_view("_raw_snapshots")
    con.execute("CREATE VIEW snapshots AS SELECT * FROM _raw_snapshots")
    visible = "SELECT snapshot_id FROM snapshots WHERE status IN ('complete', 'partial')"
    if snapshot_ids is not None:
        ids = pa.table({"snapshot_id": pa.array(sorted(snapshot_ids), pa.string())})
        con.from_arrow(ids).create_view("_selected_snapshots")
        visible += " AND snapshot_id IN (SELECT snapshot_id FROM _selected_snapshots)"
    con.execute(f"CREATE VIEW _visible_snapshots AS {visible}")
    con.execute(
        "CREATE VIEW snapshots_latest AS SELECT * FROM snapshots WHERE status = 'complete' "
        "ORDER BY snapshot_at DESC, seq DESC LIMIT 1"
    )
    shown = _visible_filter(snapshots, snapshot_ids)
    # Declared names, and ids that matched the strict snapshot-id pattern; one script, so
    # the 46 views cost one call.
    con.execute(
        "".join(
            f"CREATE VIEW {name} AS SELECT * FROM _raw_{name} WHERE {shown};\n"  # noqa: S608
            f"CREATE VIEW {name}_latest AS SELECT * FROM _raw_{name} "
            "WHERE snapshot_id IN (SELECT snapshot_id FROM snapshots_latest);\n"
            for name in SNAPSHOT_TABLES
        )
    )
    for name in FINDINGS_TABLES:
        _register(con, name, sources.get(name))
    con.execute(_FINDINGS_VIEWS)
    create_analyst_views(con)  # service_limits: -1 read as "not set"
    return con


def attach_findings(con: duckdb.DuckDBPyConnection, store: StoreTables) -> None:
    """Point ``con``'s findings history views (made by :func:`connect`) at the store's
    tables as they are now: after a judging appended to them."""
    for name in FINDINGS_TABLES:
        _register(con, name, store._source(name))


# The findings history (toolkit.snapshot.findings_history): a result is shown through its
# committed run, of a visible snapshot; the first run of a check version and snapshot wins
# (two audits judging at once write the same rows twice). ``findings``: the alarms of the
# newest version of each check that judged each snapshot.
_FINDINGS_VIEWS = """
CREATE VIEW check_runs AS SELECT * FROM _raw_check_runs
WHERE snapshot_id IN (SELECT snapshot_id FROM _visible_snapshots)
QUALIFY row_number() OVER (
    PARTITION BY check_id, check_version, snapshot_id ORDER BY judged_at, run_id) = 1;
CREATE VIEW check_results AS SELECT r.* FROM _raw_check_results r
SEMI JOIN check_runs USING (run_id, check_id, check_version, snapshot_id);
CREATE VIEW findings AS
WITH newest AS (
    SELECT * FROM check_runs QUALIFY row_number() OVER (
        PARTITION BY check_id, snapshot_id ORDER BY judged_at DESC, run_id DESC) = 1
)
SELECT r.snapshot_id, r.snapshot_at, r.check_id, r.severity, r.resource_type,
    r.resource_id, r.resource_name, r.team_id, r.project_id, r.environment_id,
    r.service_id, r.reason, r.evidence, r.check_version
FROM _raw_check_results r
SEMI JOIN newest USING (run_id, check_id, check_version, snapshot_id)
WHERE r.status = 'alarm';
"""


def _visible_filter(snapshots: pa.Table, snapshot_ids: Collection[str] | None) -> str:
    """The table views' row filter: their snapshot is visible (and selected, when
    ``snapshot_ids`` is given).

    A few ids are written out as literals: DuckDB then plans no join against the snapshots
    per table scan, which is most of the cost of a check over a few snapshots. Many ids, or
    ids not matching the strict snapshot-id pattern, are read from ``_visible_snapshots``
    (a long literal list is slower to scan with than that join).
    """
    wanted = None if snapshot_ids is None else set(snapshot_ids)
    ids = sorted(
        str(i)
        for i, status in zip(
            snapshots.column("snapshot_id").to_pylist(),
            snapshots.column("status").to_pylist(),
            strict=True,
        )
        if status in VISIBLE_STATUSES and (wanted is None or i in wanted)
    )
    literals = id_list_literal(ids) if len(ids) <= _MAX_LITERAL_IDS else None
    if literals is None:
        return "snapshot_id IN (SELECT snapshot_id FROM _visible_snapshots)"
    return f"snapshot_id IN ({literals})"


_MAX_LITERAL_IDS = 16


def _register(con: duckdb.DuckDBPyConnection, name: str, source: Any) -> str:
    """``_raw_<name>``: the table's rows with exactly its declared columns, in order.

    Returns how they are read (recorded in ``_table_readers``): ``parquet`` (DuckDB's
    reader over the files), ``dataset`` (an Arrow dataset) or ``memory`` (Arrow in memory).
    """
    declared = DECLARED[name].arrow_schema
    if isinstance(source, ParquetFiles) and source.paths:
        _register_files(con, name, list(source.paths), declared, source.columns)
        return "parquet"
    if source is None or isinstance(source, ParquetFiles):
        source = declared.empty_table()
    con.from_arrow(source).create_view(f"_raw_{name}")
    return "dataset" if isinstance(source, ds.Dataset) else "memory"


def _register_files(
    con: duckdb.DuckDBPyConnection,
    name: str,
    paths: list[str],
    declared: pa.Schema,
    delta_columns: frozenset[str],
) -> None:
    if set(declared.names) <= delta_columns and _have_columns(con, paths, declared.names):
        # Every file has every column: read them as they are (matching files by column
        # name costs a schema merge at every query).
        expressions = (duckdb.ColumnExpression(c) for c in declared.names)
        con.read_parquet(paths).select(*expressions).create_view(f"_raw_{name}")
        return
    # Older files lack columns a newer declaration added: the union with an empty table of
    # the declared schema gives them their declared types, null in those files.
    con.from_arrow(declared.empty_table()).create_view(f"_declared_{name}")
    con.read_parquet(paths, union_by_name=True).create_view(f"_files_{name}")
    columns = ", ".join(f'"{c}"' for c in declared.names)
    con.execute(
        f"CREATE OR REPLACE VIEW _raw_{name} AS SELECT {columns} FROM ("  # noqa: S608 - declared names only
        f"SELECT * FROM _declared_{name} UNION ALL BY NAME SELECT * FROM _files_{name})"
    )


def _have_columns(con: duckdb.DuckDBPyConnection, paths: list[str], names: list[str]) -> bool:
    """Whether each file has each of ``names``. A file's footer is read once per process
    (and DuckDB keeps it for the connection's queries): see :data:`_FILE_NAMES`."""
    keys = {path: _file_key(path) for path in paths}
    known = {path: None if key is None else _FILE_NAMES.get(key) for path, key in keys.items()}
    unknown = [path for path, listed in known.items() if listed is None]
    if unknown:
        try:
            rows = con.execute(
                "SELECT file_name, list(DISTINCT name) FROM parquet_schema($paths) "
                "GROUP BY file_name",
                {"paths": unknown},
            ).fetchall()
        except duckdb.Error as exc:  # deleted by hand, or a vacuum that kept too little
            if store_read_failure(exc):
                raise store_unreadable("the store's views", exc) from None
            raise
        for path, listed in rows:
            known[str(path)] = _remember(keys.get(str(path)), frozenset(str(n) for n in listed))
    wanted = set(names)
    return all(listed is not None and wanted <= listed for listed in known.values())


def store_read_failure(exc: BaseException) -> bool:
    """Whether a DuckDB error is the store's files failing to read, not a mistake in SQL:
    an I/O error of DuckDB's Parquet reader (a local store), or an Arrow source (an S3
    store's datasets) failing with an IOError, which DuckDB 2.0 reports as invalid input."""
    if isinstance(exc, duckdb.IOException):
        return True
    return isinstance(exc, duckdb.InvalidInputException) and (
        "reading the Arrow source failed: IOError" in str(exc)
    )


def store_unreadable(reader: str, exc: BaseException) -> StoreUnavailable:
    """The error for a read failure ``reader`` (the views, a check id or a view name) met:
    a data file the Delta log lists is missing or unreadable, not a mistake in the SQL."""
    return StoreUnavailable(
        f"{reader} could not read the store ({storage_message(exc)}); `platform-audit store "
        "verify` checks every snapshot"
    )


_FILE_NAMES: dict[tuple[str, int, int], frozenset[str]] = {}
"""The names in each Parquet file's schema, by path, size and modification time. Delta
never rewrites a file in place, so a new connection to the same store (each audit opens
one) reads no footer again: 0.4 s for the 1,800 files of a 90-snapshot store."""
_MAX_KNOWN_FILES = 200_000


def _remember(key: tuple[str, int, int] | None, names: frozenset[str]) -> frozenset[str]:
    if key is not None:
        if len(_FILE_NAMES) >= _MAX_KNOWN_FILES:  # a long session over many stores
            _FILE_NAMES.clear()
        _FILE_NAMES[key] = names
    return names


def _file_key(path: str) -> tuple[str, int, int] | None:
    try:
        stat = Path(path).stat()
    except OSError:  # DuckDB says what is wrong when it reads the file
        return None
    return (path, stat.st_size, stat.st_mtime_ns)
