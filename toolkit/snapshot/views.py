"""DuckDB views over the store, read through ``DeltaTable.to_pyarrow_dataset()``.

For every declared table ``t``:

* ``t`` shows rows of every COMMITTED snapshot that still has data (status ``complete`` or
  ``partial``): rows whose snapshot never committed, or was pruned, are not shown.
* ``t_latest`` shows the rows of the newest ``complete`` snapshot (a ``partial`` one never
  becomes "latest").

``snapshots`` shows every snapshot row, pruned ones included. Tables that were never
written appear as empty views with their declared columns, so queries never fail on a
young store. No DuckDB extension is needed, locally or on S3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb

from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES, TABLES

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pyarrow as pa

    from toolkit.snapshot.store import Store

__all__ = ["connect", "connect_arrow"]

VISIBLE_STATUSES = ("complete", "partial")


def connect(store: Store) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with the store's views."""
    sources: dict[str, Any] = {}
    for name in SNAPSHOT_TABLES:
        dataset = store._dataset(name)
        sources[name] = TABLES[name].arrow_schema.empty_table() if dataset is None else dataset
    # The snapshots table is small (a row per snapshot): it is read whole, so DuckDB never
    # pushes filters into files that Delta updates rewrote with string_view columns.
    return connect_arrow(sources, store._snapshot_rows())


def connect_arrow(sources: Mapping[str, Any], snapshots: pa.Table) -> duckdb.DuckDBPyConnection:
    """The same views over Arrow tables or datasets (a table missing from ``sources`` is empty).

    The store uses it with its Delta datasets; audit fixtures with in-memory tables.
    """
    con = duckdb.connect()
    # Names below come from the declared registry, never from user input.
    for name in SNAPSHOT_TABLES:
        source = sources.get(name)
        con.register(
            f"_raw_{name}", TABLES[name].arrow_schema.empty_table() if source is None else source
        )
    con.register("_raw_snapshots", snapshots)
    con.execute("CREATE VIEW snapshots AS SELECT * FROM _raw_snapshots")
    con.execute(
        "CREATE VIEW _visible_snapshots AS SELECT snapshot_id FROM snapshots "
        "WHERE status IN ('complete', 'partial')"
    )
    con.execute(
        "CREATE VIEW snapshots_latest AS SELECT * FROM snapshots WHERE status = 'complete' "
        "ORDER BY snapshot_at DESC, seq DESC LIMIT 1"
    )
    for name in SNAPSHOT_TABLES:
        con.execute(
            f"CREATE VIEW {name} AS SELECT * FROM _raw_{name} "  # noqa: S608 - declared names only
            "WHERE snapshot_id IN (SELECT snapshot_id FROM _visible_snapshots)"
        )
        con.execute(
            f"CREATE VIEW {name}_latest AS SELECT * FROM _raw_{name} "  # noqa: S608 - declared names only
            "WHERE snapshot_id IN (SELECT snapshot_id FROM snapshots_latest)"
        )
    return con
