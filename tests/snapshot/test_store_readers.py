"""How the views read a local store: DuckDB's Parquet reader, pruned files, older schemas."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import write_deltalake
from store_harness import T0, WriteSnapshot, fetch

from toolkit.snapshot import SNAPSHOT_TABLES, TABLES, Store, views

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest


def _readers(store: Store) -> dict[str, str]:
    rows = store.duckdb().execute("select table_name, reader from _table_readers").fetchall()
    return dict(rows)


def test_written_tables_are_read_from_their_parquet_files(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    write_snapshot(store)
    readers = _readers(store)
    assert set(readers) == set(SNAPSHOT_TABLES)
    assert readers["services"] == readers["deployments"] == "parquet"
    assert readers["webhook_events"] == "memory"  # never written: an empty declared table
    con = store.duckdb()
    declared = TABLES["services"].arrow_schema
    view = con.sql("select * from services").to_arrow_table()
    assert view.schema.names == declared.names
    moment = view.schema.field("snapshot_at").type
    assert pa.types.is_timestamp(moment) and moment.tz is not None  # UTC, as declared
    assert view.schema.field("replicas").type == declared.field("replicas").type


def test_a_connection_for_some_snapshots_opens_only_their_files(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    infos = [write_snapshot(store, at=T0 + timedelta(hours=i), version=i) for i in range(3)]
    middle = infos[1].snapshot_id
    con = store.duckdb(snapshot_ids=[middle])
    # The raw scan sees one snapshot's file: the others were never handed to DuckDB.
    raw = con.execute("select distinct snapshot_id from _raw_services").fetchall()
    assert raw == [(middle,)]
    assert con.execute("select count(*) from snapshots").fetchall() == [(3,)]
    rows = con.execute("select distinct snapshot_id, replicas from services").fetchall()
    assert rows == [(middle, 2)]
    assert con.execute("select count(*) from services_latest").fetchall() == [(0,)]

    store.compact()  # one file now holds every snapshot: the view still filters rows
    con = store.duckdb(snapshot_ids=[middle])
    assert con.execute("select count(distinct snapshot_id) from _raw_services").fetchall() == [(3,)]
    assert con.execute("select distinct snapshot_id from services").fetchall() == [(middle,)]


def test_files_written_before_a_column_was_declared_read_it_as_null(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    old = write_snapshot(store, at=T0, version=0)
    uri = store.table_uri("services")
    # Rewrite the table as an older toolkit would have written it: without `extra`.
    before = store._read("services").drop_columns(["extra"])
    write_deltalake(uri, before, mode="overwrite", schema_mode="overwrite")
    assert fetch(store, "select count(*) as n from services where extra is null") == [{"n": 3}]

    new = write_snapshot(store, at=T0 + timedelta(hours=1), version=1)  # merges `extra` back
    con = store.duckdb()
    rows = con.execute(
        "select snapshot_id, count(extra) from services group by all order by all"
    ).fetchall()
    assert rows == sorted([(old.snapshot_id, 0), (new.snapshot_id, 3)])
    view = con.sql("select * from services").to_arrow_table()
    assert view.schema.names == TABLES["services"].arrow_schema.names
    assert pc.all(pc.is_valid(view.column("name"))).as_py()


def test_a_new_connection_reads_only_the_footers_of_files_it_has_not_seen(
    store: Store, write_snapshot: WriteSnapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_snapshot(store, at=T0, version=0)
    store.duckdb()  # the column names of every file are known from here on
    seen = {key[0] for key in views._FILE_NAMES}
    read: list[str] = []
    remember = views._remember

    def counted(key: tuple[str, int, int] | None, names: frozenset[str]) -> frozenset[str]:
        read.append(key[0] if key else "?")
        return remember(key, names)

    monkeypatch.setattr(views, "_remember", counted)
    store.duckdb()
    assert read == []
    write_snapshot(store, at=T0 + timedelta(hours=1), version=1)
    con = store.duckdb()
    assert read and not set(read) & seen  # only the new snapshot's files
    assert con.execute("select count(distinct snapshot_id) from services").fetchall() == [(2,)]


def test_connections_made_from_opened_tables_read_no_log_and_show_them_as_opened(
    store: Store, write_snapshot: WriteSnapshot, record_delta_opens: Callable[[], list[str]]
) -> None:
    write_snapshot(store, at=T0, version=0)
    tables = views.open_tables(store)
    first = store.snapshots()[0].snapshot_id
    write_snapshot(store, at=T0 + timedelta(hours=1), version=1)
    opened = record_delta_opens()
    rows = store._snapshot_rows()
    every = views.connect(store, None, rows, tables)
    some = views.connect(store, [first], rows, tables)
    assert opened == ["snapshots"]  # the snapshots' rows alone were read here
    query = "select count(distinct snapshot_id) from services"
    assert every.execute(query).fetchall() == some.execute(query).fetchall() == [(1,)]
    assert views.connect(store, None, rows).execute(query).fetchall() == [(2,)]


def test_new_tables_checkpoint_every_ten_commits_and_compact_checkpoints_old_ones(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    write_snapshot(store)
    delta = store._delta("services")
    assert delta is not None
    assert delta.metadata().configuration["delta.checkpointInterval"] == "10"

    uri = store.table_uri("teams")  # a table created without the setting, as before
    old = store._read("teams")
    write_deltalake(uri, old, mode="overwrite", configuration={"delta.checkpointInterval": "100"})
    log = Path(uri) / "_delta_log"
    assert not (log / "_last_checkpoint").exists()
    store.compact()
    teams = store._delta("teams")
    assert teams is not None
    assert teams.metadata().configuration["delta.checkpointInterval"] == "10"
    assert (log / "_last_checkpoint").exists()
    assert fetch(store, "select count(*) as n from teams") == [{"n": 1}]


def test_tables_of_an_arrow_source_keep_their_declared_columns() -> None:
    from toolkit.snapshot.views import connect_arrow

    services = TABLES["services"].arrow_schema.empty_table()
    snapshots = TABLES["snapshots"].arrow_schema.empty_table()
    con = connect_arrow({"services": services}, snapshots)
    readers = dict(con.execute("select table_name, reader from _table_readers").fetchall())
    assert readers["services"] == readers["teams"] == "memory"
    assert con.sql("select * from services").to_arrow_table().schema.names == services.schema.names
    assert isinstance(services, pa.Table)


def test_a_connection_never_checkpoints_the_memory_it_drops_with_it() -> None:
    """A connection's database lives in memory and goes with it: a checkpoint would only
    compress its temporary tables (an audit's: hundreds of megabytes at 10,000 services),
    so none is due before they hold far more than any audit's (DuckDB's default: 16 MiB)."""
    from toolkit.snapshot.views import connect_arrow

    con = connect_arrow({}, TABLES["snapshots"].arrow_schema.empty_table())
    ((value,),) = con.execute("select current_setting('checkpoint_threshold')").fetchall()
    number, unit = str(value).split()
    units = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
    assert float(number) * units[unit] >= 100 * 2**30, value


def test_every_view_is_visible_to_the_connections_cursors(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    info = write_snapshot(store)
    con = store.duckdb(snapshot_ids=[info.snapshot_id])
    cursor = con.cursor()  # a second session on the same database, as a worker thread uses
    assert cursor.execute("select count(*) from services").fetchall() == [(3,)]
    # footers are cached for the cursors' queries too (a session setting would not be)
    setting = "select current_setting('parquet_metadata_cache')"
    assert cursor.execute(setting).fetchall() == [(True,)]
    assert cursor.execute("select count(*) from webhook_events").fetchall() == [(0,)]
    assert cursor.execute("select count(*) from snapshots_latest").fetchall() == [(1,)]


def _views_over(ids: list[str], statuses: list[str], selected: list[str] | None) -> set[str]:
    """Snapshot ids the ``services`` view of a connection shows (one service per snapshot)."""
    from toolkit.snapshot.views import connect_arrow

    declared = TABLES["snapshots"].arrow_schema
    snapshots = pa.table(
        {
            name: (
                pa.array(ids, field.type)
                if name == "snapshot_id"
                else pa.array(statuses, field.type)
                if name == "status"
                else pa.array(range(1, len(ids) + 1), field.type)
                if name == "seq"
                else pa.nulls(len(ids), field.type)
            )
            for name, field in zip(declared.names, declared, strict=True)
        },
        schema=declared,
    )
    services = TABLES["services"].arrow_schema
    rows = pa.table(
        {
            name: pa.array(ids, field.type)
            if name in ("snapshot_id", "id")
            else pa.nulls(len(ids), field.type)
            for name, field in zip(services.names, services, strict=True)
        },
        schema=services,
    )
    con = connect_arrow({"services": rows}, snapshots, selected)
    return {r[0] for r in con.execute("select snapshot_id from services").fetchall()}


def test_table_views_show_visible_selected_snapshots_whatever_their_number_and_ids() -> None:
    from toolkit.snapshot import new_snapshot_id

    for count in (7, 40):  # a few ids are written as literals, many go through a join
        ids = [new_snapshot_id() for _ in range(count)]
        statuses = ["complete", "partial", "pending", "pruned"] * (count // 4) + ["complete"] * (
            count % 4
        )
        visible = {i for i, s in zip(ids, statuses, strict=True) if s in ("complete", "partial")}
        assert _views_over(ids, statuses, None) == visible
        chosen = ids[: count // 2 + 1]
        assert _views_over(ids, statuses, chosen) == visible & set(chosen)
    odd = ["snap-a", "snap-b'; drop table x; --", "snap-c"]  # not the strict id pattern
    assert _views_over(odd, ["complete", "complete", "failed"], None) == set(odd[:2])


def test_only_strict_snapshot_ids_become_sql_literals() -> None:
    from toolkit.snapshot import id_list_literal, new_snapshot_id

    a, b = new_snapshot_id(), new_snapshot_id()
    assert id_list_literal([a, b]) == f"'{a}', '{b}'"
    assert id_list_literal([]) == "null"
    assert id_list_literal([a, "x'); drop table services; --"]) is None
    assert id_list_literal([a.upper()]) is None  # the store writes lower case only
