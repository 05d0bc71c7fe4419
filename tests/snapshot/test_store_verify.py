"""Verification: content hashes are stable, the chain holds, tampering is named."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from deltalake import DeltaTable, write_deltalake
from store_harness import T0, WriteSnapshot

from toolkit.snapshot import TABLES, Store, canonical_rows, chain_hash, content_hash


def _three(store: Store, write_snapshot: WriteSnapshot) -> list[str]:
    return [
        write_snapshot(store, at=T0 + timedelta(hours=h), version=h).snapshot_id for h in range(3)
    ]


def _recompute(store: Store, snapshot_id: str) -> str:
    info = next(s for s in store.snapshots() if s.snapshot_id == snapshot_id)
    tables = {}
    for name in info.row_counts:
        data = store._read(name, filter=pc.field("snapshot_id") == snapshot_id)
        tables[name] = [canonical_rows(data)]
    return content_hash(snapshot_id, info.snapshot_at, tables)


def test_a_healthy_store_verifies(store: Store, write_snapshot: WriteSnapshot) -> None:
    _three(store, write_snapshot)
    report = store.verify()
    assert report.ok, report.summary()
    assert (report.snapshots, report.content_checked, report.pruned) == (3, 3, 0)
    assert report.first_break is None and not report.orphans
    assert report.summary().startswith("ok: 3 snapshot(s), chain intact")


def test_an_empty_store_verifies(store: Store) -> None:
    assert store.verify().ok


def test_content_hash_is_stable_across_rereads_and_compaction(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    ids = _three(store, write_snapshot)
    recorded = {s.snapshot_id: s.content_hash for s in store.snapshots()}
    assert _recompute(store, ids[1]) == _recompute(store, ids[1]) == recorded[ids[1]]
    store.compact()
    assert _recompute(store, ids[1]) == recorded[ids[1]]
    assert len(set(recorded.values())) == 3  # different content, different hashes


def test_the_chain_links_every_snapshot(store: Store, write_snapshot: WriteSnapshot) -> None:
    _three(store, write_snapshot)
    snaps = store.snapshots()
    assert [s.seq for s in snaps] == [1, 2, 3]
    prev = None
    for s in snaps:
        assert s.prev_hash == prev
        assert s.chain_hash == chain_hash(prev, s.content_hash)
        prev = s.chain_hash


def test_tampering_with_an_old_row_names_that_snapshot_first(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    ids = _three(store, write_snapshot)
    # Behind the store's back: raise one memory limit of the OLDEST snapshot.
    uri = store.table_uri("services")
    DeltaTable(uri).update(
        new_values={"memory_limits_megabytes": 4096},
        predicate=f"snapshot_id = '{ids[0]}' AND id = 'svc-0'",
    )
    report = store.verify()
    assert not report.ok
    first = report.first_break
    assert first is not None
    assert (first.snapshot_id, first.check, first.seq) == (ids[0], "content_hash", 1)
    assert first.expected == store.snapshots()[0].content_hash
    assert first.found != first.expected
    assert [b.snapshot_id for b in report.breaks] == [ids[0]]  # later links still hold
    assert ids[0] in report.summary()


def test_verify_can_recompute_the_content_of_chosen_snapshots_only(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    """A report re-hashes the snapshots it presents; the chain is still walked whole."""
    ids = _three(store, write_snapshot)
    DeltaTable(store.table_uri("services")).update(
        new_values={"memory_limits_megabytes": 4096},
        predicate=f"snapshot_id = '{ids[0]}' AND id = 'svc-0'",
    )
    newest = store.verify(content=ids[1:])
    assert newest.ok and (newest.content_checked, newest.content_skipped) == (2, 1)
    assert "2 content hash(es) recomputed (not those of the other 1:" in newest.summary()
    assert "store verify` recomputes them all" in newest.summary()
    oldest = store.verify(content=[ids[0]])
    assert [(b.snapshot_id, b.check) for b in oldest.breaks] == [(ids[0], "content_hash")]
    calls: list[tuple[int, int]] = []
    assert (
        store.verify(progress=lambda done, total: calls.append((done, total))).content_skipped == 0
    )
    assert calls == [(1, 3), (2, 3), (3, 3)]  # what the command's progress bar shows


def test_deleting_rows_or_a_snapshot_row_breaks_the_chain(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    ids = _three(store, write_snapshot)
    DeltaTable(store.table_uri("deployments")).delete(
        f"snapshot_id = '{ids[2]}' AND id = 'dep-0-2'"
    )
    DeltaTable(store.table_uri("snapshots")).delete(f"snapshot_id = '{ids[1]}'")
    report = store.verify()
    assert not report.ok
    first = report.first_break
    assert first is not None and first.snapshot_id == ids[2]
    assert {b.check for b in report.breaks} >= {"seq", "prev_hash", "content_hash"}
    assert report.orphans  # the removed snapshot's data rows are now orphans


def test_a_forged_snapshot_row_is_caught_by_the_chain(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    _three(store, write_snapshot)
    snaps = store._snapshot_rows().sort_by("seq")
    forged = snaps.slice(1, 1).to_pylist()[0]
    forged["content_hash"] = "0" * 64  # someone rewrites the recorded hash to match edited data
    uri = store.table_uri("snapshots")
    DeltaTable(uri).delete(f"snapshot_id = '{forged['snapshot_id']}'")
    write_deltalake(uri, snaps.from_pylist([forged], schema=snaps.schema), mode="append")
    report = store.verify()
    assert not report.ok
    first = report.first_break
    assert first is not None and first.snapshot_id == forged["snapshot_id"]
    assert first.check == "chain_hash"


def _as_written_by_v1(store: Store) -> None:
    """Rewrite the ``snapshots`` table as toolkit 0.1.0 left it: content hash v1, chained,
    and no ``content_hash_version`` column at all."""
    rows = store._snapshot_rows().sort_by("seq").to_pylist()
    prev = None
    for row in rows:
        tables = {}
        for name in dict(row["row_counts"]):
            data = store._read(name, filter=pc.field("snapshot_id") == row["snapshot_id"])
            tables[name] = [canonical_rows(data)]
        row["content_hash"] = content_hash(
            row["snapshot_id"], row["snapshot_at"], tables, version=1
        )
        row["prev_hash"], row["chain_hash"] = prev, chain_hash(prev, row["content_hash"])
        row["schema_version"] = 1
        del row["content_hash_version"]
        prev = row["chain_hash"]
    schema = TABLES["snapshots"].arrow_schema
    old = pa.schema([f for f in schema if f.name != "content_hash_version"])
    write_deltalake(
        store.table_uri("snapshots"),
        pa.Table.from_pylist(rows, schema=old),
        mode="overwrite",
        schema_mode="overwrite",
    )


def test_a_store_written_with_content_hash_v1_still_verifies(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    ids = _three(store, write_snapshot)
    _as_written_by_v1(store)
    assert (
        "content_hash_version" not in DeltaTable(store.table_uri("snapshots")).schema().to_arrow()
    )
    assert [s.content_hash_version for s in store.snapshots()] == [1, 1, 1]
    assert store.verify().ok, store.verify().summary()
    # The next snapshot is hashed with v2 and chains onto the v1 history.
    newest = write_snapshot(store, at=T0 + timedelta(hours=5), version=5)
    assert (newest.content_hash_version, newest.seq) == (2, 4)
    assert newest.prev_hash == store.snapshots()[2].chain_hash
    report = store.verify()
    assert report.ok, report.summary()
    assert report.content_checked == 4
    # And a v1 snapshot is still checked, not waved through.
    DeltaTable(store.table_uri("services")).update(
        new_values={"replicas": 9}, predicate=f"snapshot_id = '{ids[1]}' AND id = 'svc-1'"
    )
    first = store.verify().first_break
    assert first is not None and (first.snapshot_id, first.check) == (ids[1], "content_hash")


def test_v2_does_not_depend_on_how_rows_are_stored(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    _three(store, write_snapshot)
    uri = store.table_uri("deployments")
    data = store._read("deployments")
    reordered = data.take(pa.array(range(data.num_rows - 1, -1, -1)))
    write_deltalake(uri, reordered.slice(0, 4), mode="overwrite")  # other order, other files
    write_deltalake(uri, reordered.slice(4), mode="append")
    report = store.verify()
    assert report.ok, report.summary()


@pytest.mark.parametrize("change", ["changed", "dropped", "duplicated", "moved"])
def test_v2_catches_a_changed_dropped_duplicated_or_moved_row(
    store: Store, write_snapshot: WriteSnapshot, change: str
) -> None:
    ids = _three(store, write_snapshot)
    uri = store.table_uri("deployments")
    data = store._read("deployments")
    rows = data.to_pylist()
    target = next(i for i, r in enumerate(rows) if r["snapshot_id"] == ids[1])
    if change == "changed":
        rows[target]["status"] = "failed"
    elif change == "dropped":
        del rows[target]
    elif change == "duplicated":
        rows.append(rows[target])
    else:  # the row now claims to belong to the next snapshot (same time kept out of it)
        rows[target] = {**rows[target], "snapshot_id": ids[2]}
    write_deltalake(uri, pa.Table.from_pylist(rows, schema=data.schema), mode="overwrite")
    report = store.verify()
    assert not report.ok
    first = report.first_break
    assert first is not None and (first.snapshot_id, first.check) == (ids[1], "content_hash")
    if change == "moved":
        assert {(b.snapshot_id, b.check) for b in report.breaks} >= {
            (ids[2], "content_hash"),
            (ids[2], "snapshot_at"),
        }


def test_an_unknown_content_hash_version_is_named(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    _three(store, write_snapshot)
    snaps = store._snapshot_rows()
    rows = snaps.to_pylist()
    rows[0]["content_hash_version"] = 3
    write_deltalake(
        store.table_uri("snapshots"),
        pa.Table.from_pylist(rows, schema=snaps.schema),
        mode="overwrite",
    )
    first = store.verify().first_break
    assert first is not None and first.check == "content_hash_version"
    assert first.found.startswith("3 ") and "toolkit version that wrote it" in first.found
