"""The Delta log keeps statistics of no column of strings: what a row said leaves with it.

Delta copies each file's minimum and maximum per column into its log as plain JSON (and
into checkpoints), which stay after gc, retention and vacuum removed the rows and files.
Strings there would be a server's text (messages, names, URLs) beyond the scrubbers' reach.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake
from store_harness import T0

from toolkit.snapshot import TABLES, Store
from toolkit.snapshot.schema import holds_text
from toolkit.snapshot.validation import to_arrow

if TYPE_CHECKING:
    from pathlib import Path

MARK = "MARKunscrubbed0text0kept"


def _marked(table: str) -> dict[str, object]:
    """A row of ``table`` with MARK in every column of strings (lists too)."""
    row: dict[str, object] = {}
    for column in TABLES[table].columns:
        if holds_text(column.type) and column.name != "row_counts":
            is_list = str(column.type).startswith("list")
            row[column.name] = [MARK] if is_list else MARK
        elif column.name in ("position", "seq"):
            row[column.name] = 0
    return row


def _log_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "_delta_log" in p.parts
    }


def test_no_string_reaches_the_delta_log(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store")
    writer = store.begin(snapshot_at=T0)
    tables = [name for name in TABLES if name != "snapshots"]
    for name in tables:
        writer.write(name, [_marked(name)])
    writer.commit()
    store.compact()  # a rewrite and a checkpoint of every table
    data = [p for p in (tmp_path / "store").rglob("*.parquet") if "_delta_log" not in p.parts]
    stored = json.dumps([pq.read_table(p).to_pylist() for p in data], default=str)
    assert MARK in stored  # the rows hold it: the writer does not mask, collection does
    leaked = [
        name for name, data in _log_bytes(tmp_path / "store").items() if MARK.encode() in data
    ]
    assert leaked == []
    services = DeltaTable(store.table_uri("services"))
    stats = services.get_add_actions(flatten=True).column_names
    assert "min.snapshot_id" in stats and "max.memory_limits_megabytes" in stats
    assert "min.name" not in stats and "min.image" not in stats


def test_rows_removed_by_gc_leave_nothing_behind(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store")
    writer = store.begin(snapshot_at=T0)
    writer.write("deployments", [_marked("deployments")])  # never committed: gc removes it
    store.gc(min_age=timedelta(0))
    store.vacuum(retention_hours=0)
    files = [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
    assert files
    assert [p for p in files if MARK.encode() in p.read_bytes()] == []


def test_a_table_written_before_gets_the_properties_on_its_next_write(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store")
    uri = store.table_uri("teams")
    first = to_arrow(TABLES["teams"], [{"id": "t0", "name": "old"}], "s0", T0)
    write_deltalake(uri, first, configuration={"delta.checkpointInterval": "10"})
    assert "min.name" in DeltaTable(uri).get_add_actions(flatten=True).column_names

    writer = Store.open(tmp_path / "store").begin(snapshot_at=T0 + timedelta(days=1))
    writer.write("teams", [{"id": "t1", "name": MARK}])
    writer.commit()
    table = DeltaTable(uri)
    assert (
        table.metadata()
        .configuration["delta.dataSkippingStatsColumns"]
        .startswith("snapshot_id,snapshot_at")
    )
    newest = sorted((tmp_path / "store" / "teams" / "_delta_log").glob("*.json"))[-1]
    assert MARK.encode() not in newest.read_bytes()
