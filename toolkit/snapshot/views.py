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

from typing import TYPE_CHECKING

import duckdb

from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES, TABLES

if TYPE_CHECKING:
    from toolkit.snapshot.store import Store

__all__ = ["connect"]

VISIBLE_STATUSES = ("complete", "partial")


def connect(store: Store) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with the store's views."""
    con = duckdb.connect()
    # Names below come from the declared registry, never from user input.
    for name in SNAPSHOT_TABLES:
        dataset = store._dataset(name)
        source = TABLES[name].arrow_schema.empty_table() if dataset is None else dataset
        con.register(f"_raw_{name}", source)
    # The snapshots table is small (a row per snapshot): it is read whole, so DuckDB never
    # pushes filters into files that Delta updates rewrote with string_view columns.
    con.register("_raw_snapshots", store._snapshot_rows())
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
