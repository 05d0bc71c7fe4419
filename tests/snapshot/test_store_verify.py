"""Verification: content hashes are stable, the chain holds, tampering is named."""

from __future__ import annotations

from datetime import timedelta

import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake
from store_harness import T0, WriteSnapshot

from toolkit.snapshot import Store, canonical_rows, chain_hash, content_hash


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
