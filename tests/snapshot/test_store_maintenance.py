"""gc, compact, vacuum and retention keep history intact and the chain verifiable."""

from __future__ import annotations

from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from store_harness import T0, WriteSnapshot, fetch, sample_rows

from toolkit.snapshot import RetentionPolicy, Store, UnsafeIdError, select_pruned
from toolkit.snapshot.maintenance import delete_snapshots


def _abandoned(store: Store) -> str:
    writer = store.begin(snapshot_at=T0 + timedelta(days=1))
    for name, rows in sample_rows(9).items():
        writer.write(name, rows)
    return writer.snapshot_id  # never committed


def test_gc_removes_rows_of_uncommitted_snapshots_only(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    kept = write_snapshot(store)
    orphan = _abandoned(store)
    assert store.verify().orphan_snapshot_ids == (orphan,)
    young = store.gc()  # default min_age: a writer may still be busy
    assert young.total_rows == 0 and young.kept_recent == (orphan,)
    report = store.gc(min_age=timedelta(0))
    assert report.removed_snapshot_ids == (orphan,)
    assert report.removed_rows["services"] == 3 and report.total_rows == sum(
        len(r) for r in sample_rows(9).values()
    )
    after = store.verify()
    assert after.ok and not after.orphans
    assert fetch(store, "select distinct snapshot_id from services") == [
        {"snapshot_id": kept.snapshot_id}
    ]


def test_deletes_accept_only_well_formed_ids(store: Store) -> None:
    with pytest.raises(UnsafeIdError):
        delete_snapshots(store, "services", ["x' OR '1'='1"])


def test_rewrites_keep_plain_string_columns_so_filters_still_work(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    for i in range(3):
        write_snapshot(store, at=T0 + timedelta(minutes=10 * i), version=i)
    _abandoned(store)
    store.compact()
    store.gc(min_age=timedelta(0))
    store.apply_retention(RetentionPolicy(), now=T0 + timedelta(hours=1))
    for name in ("snapshots", "services", "deployments"):
        delta = store._delta(name)
        assert delta is not None
        types = {str(pq.read_schema(f).field("snapshot_id").type) for f in delta.file_uris()}
        assert types == {"string"}, (name, types)
    latest = store.snapshots()[-1].snapshot_id
    rows = fetch(
        store,
        "select count(*) as n from services where snapshot_id = ? and name = ?",
        [latest, "api-1"],
    )
    assert rows == [{"n": 1}]


def test_compact_reduces_files_and_vacuum_removes_the_old_ones(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    for h in range(4):
        write_snapshot(store, at=T0 + timedelta(hours=h), version=h)
    before_rows = fetch(store, "select count(*) as n from deployments")
    report = store.compact()
    assert report.files_before["deployments"] == 4 and report.files_after["deployments"] == 1
    assert report.files_after["snapshots"] < report.files_before["snapshots"]
    data_dir = store.table_uri("deployments")
    from pathlib import Path

    parquet_before = len(list(Path(data_dir).glob("*.parquet")))
    vacuumed = store.vacuum(retention_hours=0)
    assert vacuumed.removed["deployments"] == 4 and vacuumed.total >= 4
    assert len(list(Path(data_dir).glob("*.parquet"))) == parquet_before - 4 == 1
    assert fetch(store, "select count(*) as n from deployments") == before_rows
    assert store.verify().ok


def test_vacuum_refuses_negative_retention(store: Store) -> None:
    with pytest.raises(ValueError, match="0 or more"):
        store.vacuum(retention_hours=-1)


def test_retention_selection_is_hourly_then_daily_then_none() -> None:
    now = T0
    rows = []
    ages = {
        "a": timedelta(minutes=10),  # newest: kept
        "b": timedelta(minutes=20),  # same hour as a: pruned
        "c": timedelta(hours=3),  # its own hour within 7 days: kept
        "d": timedelta(days=3, minutes=5),
        "e": timedelta(days=3, minutes=6),  # same hour as d, older: pruned
        "f": timedelta(days=30, hours=1),
        "g": timedelta(days=30, hours=2),  # same day as f, older: pruned
        "h": timedelta(days=400),  # beyond a year: pruned
    }
    for seq, (sid, age) in enumerate(ages.items(), start=1):
        rows.append(
            {"snapshot_id": sid, "snapshot_at": now - age, "seq": seq, "status": "complete"}
        )
    kept, pruned = select_pruned(rows, RetentionPolicy(), now)
    assert sorted(kept) == ["a", "c", "d", "f"]
    assert sorted(pruned) == ["b", "e", "g", "h"]


def test_retention_prefers_complete_and_never_prunes_the_newest_complete() -> None:
    rows = [
        {
            "snapshot_id": "p",
            "snapshot_at": T0 - timedelta(days=2, minutes=1),
            "seq": 2,
            "status": "partial",
        },
        {
            "snapshot_id": "c",
            "snapshot_at": T0 - timedelta(days=2, minutes=2),
            "seq": 1,
            "status": "complete",
        },
        {
            "snapshot_id": "old",
            "snapshot_at": T0 - timedelta(days=900),
            "seq": 0,
            "status": "complete",
        },
    ]
    kept, pruned = select_pruned(rows[:2], RetentionPolicy(), T0)
    assert (kept, pruned) == (["c"], ["p"])
    kept, _ = select_pruned(rows[2:], RetentionPolicy(), T0)
    assert kept == ["old"]  # the only complete snapshot survives any policy


def test_apply_retention_prunes_data_keeps_rows_and_the_chain(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    infos = [write_snapshot(store, at=T0 + timedelta(minutes=10 * i), version=i) for i in range(3)]
    report = store.apply_retention(RetentionPolicy(), now=T0 + timedelta(hours=1))
    assert report.kept == (infos[2].snapshot_id,)
    assert set(report.pruned) == {infos[0].snapshot_id, infos[1].snapshot_id}
    assert report.deleted_rows["services"] == 6
    statuses = {s.snapshot_id: (s.status, s.pruned_at is not None) for s in store.snapshots()}
    assert statuses[infos[0].snapshot_id] == ("pruned", True)
    assert statuses[infos[2].snapshot_id] == ("complete", False)
    assert [s.content_hash for s in store.snapshots()] == [i.content_hash for i in infos]
    verified = store.verify()
    assert verified.ok, verified.summary()
    assert (verified.content_checked, verified.pruned) == (1, 2)
    assert fetch(store, "select count(distinct snapshot_id) as n from services") == [{"n": 1}]
    assert fetch(store, "select count(*) as n from snapshots") == [{"n": 3}]
    write_snapshot(store, at=T0 + timedelta(hours=2), version=5)  # the chain continues
    assert store.verify().ok


def test_compaction_and_rewrites_keep_row_groups_a_query_of_few_snapshots_can_skip(
    store: Store,
) -> None:
    # A compacted or rewritten file holds many snapshots. In one row group of Delta's
    # default million rows, reading the newest snapshot read them all; in row groups of
    # DuckDB's size, one of few snapshots, DuckDB skips the others by their statistics.
    ids = []
    for hour in range(4):
        writer = store.begin(snapshot_at=T0 + timedelta(hours=hour))
        writer.write("teams", [{"id": f"t-{i}", "name": f"team {i}"} for i in range(61_440)])
        ids.append(writer.snapshot_id)
        writer.commit(status="complete")

    def row_groups() -> list[int]:
        delta = store._delta("teams")
        assert delta is not None
        (path,) = delta.file_uris()
        meta = pq.ParquetFile(path.removeprefix("file://")).metadata
        return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]

    store.compact()
    assert row_groups() == [122_880, 122_880]
    delete_snapshots(store, "teams", [ids[0]])  # retention's and gc's rewrite
    assert sum(row_groups()) == 3 * 61_440 and max(row_groups()) == 122_880
    assert fetch(store, "select count(*) as n from teams_latest") == [{"n": 61_440}]


def test_compaction_and_rewrites_write_compressed_files(store: Store) -> None:
    # WriterProperties naming no codec wrote the rewritten Parquet uncompressed: a compacted
    # store took three times the room of the appended one.
    ids = []
    for hour in range(3):
        writer = store.begin(snapshot_at=T0 + timedelta(hours=hour))
        writer.write("teams", [{"id": f"t-{i}", "name": f"team {i}"} for i in range(100)])
        ids.append(writer.snapshot_id)
        writer.commit(status="complete")

    def codecs() -> set[str]:
        delta = store._delta("teams")
        assert delta is not None
        metas = [pq.ParquetFile(p.removeprefix("file://")).metadata for p in delta.file_uris()]
        return {
            meta.row_group(g).column(c).compression
            for meta in metas
            for g in range(meta.num_row_groups)
            for c in range(meta.num_columns)
        }

    assert "UNCOMPRESSED" not in codecs()
    store.compact()
    assert "UNCOMPRESSED" not in codecs()
    delete_snapshots(store, "teams", [ids[0]])  # retention's and gc's rewrite
    assert "UNCOMPRESSED" not in codecs()
    assert fetch(store, "select count(*) as n from teams_latest") == [{"n": 100}]
