"""Views: only committed snapshots are visible; *_latest is the newest complete one."""

from __future__ import annotations

from datetime import timedelta

from store_harness import T0, WriteSnapshot, fetch, sample_rows

from toolkit.snapshot import SNAPSHOT_TABLES, Store


def test_nothing_is_visible_before_commit(store: Store) -> None:
    writer = store.begin(snapshot_at=T0)
    for name, rows in sample_rows().items():
        writer.write(name, rows)
    assert fetch(store, "select count(*) as n from services") == [{"n": 0}]
    assert fetch(store, "select count(*) as n from snapshots") == [{"n": 0}]
    writer.commit()
    assert fetch(store, "select count(*) as n from services") == [{"n": 3}]
    assert fetch(store, "select count(*) as n from services_latest") == [{"n": 3}]


def test_every_table_has_both_views_even_when_never_written(store: Store) -> None:
    con = store.duckdb()
    for name in SNAPSHOT_TABLES:
        assert con.execute(f"select count(*) from {name}").fetchone() == (0,)  # noqa: S608
        assert con.execute(f"select count(*) from {name}_latest").fetchone() == (0,)  # noqa: S608


def test_latest_is_the_newest_complete_snapshot_not_a_partial_one(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    old = write_snapshot(store, at=T0, version=1)
    newest_complete = write_snapshot(store, at=T0 + timedelta(hours=1), version=2)
    write_snapshot(store, at=T0 + timedelta(hours=2), status="partial", version=3)
    rows = fetch(store, "select distinct snapshot_id, replicas from services_latest")
    assert rows == [{"snapshot_id": newest_complete.snapshot_id, "replicas": 3}]
    history = fetch(store, "select count(distinct snapshot_id) as n from services")
    assert history == [{"n": 3}]  # partial snapshots are part of history
    latest = fetch(store, "select snapshot_id from snapshots_latest")
    assert latest == [{"snapshot_id": newest_complete.snapshot_id}]
    assert old.snapshot_id != newest_complete.snapshot_id


def test_views_take_parameters_and_keep_unknown_fields(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    write_snapshot(store)
    rows = fetch(
        store,
        "select name, json_extract(extra, '$.future_field') as f from services_latest "
        "where memory_limits_megabytes = ? order by name",
        [-1],
    )
    assert [r["name"] for r in rows] == ["api-0"]
    caps = fetch(
        store, "select id from services where list_contains(capabilities_add, 'NET_ADMIN')"
    )
    assert caps == [{"id": "svc-1"}]
    counts = fetch(store, "select row_counts['services'] as n from snapshots")
    assert counts == [{"n": 3}]
