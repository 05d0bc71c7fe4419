"""The writer: validation errors name table and column; commit makes a snapshot visible."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest
from store_harness import T0, WriteSnapshot, fetch, sample_rows

from toolkit.snapshot import (
    CONTENT_HASH_VERSION,
    SCHEMA_VERSION,
    TABLES,
    SchemaMismatchError,
    Store,
    WriterStateError,
    canonical_rows,
    content_hash,
    is_snapshot_id,
)
from toolkit.snapshot.validation import to_arrow


def test_an_undeclared_key_is_a_programming_error(store: Store) -> None:
    writer = store.begin()
    with pytest.raises(
        SchemaMismatchError, match=r"table services, column memory_limit:.*undeclared"
    ):
        writer.write("services", [{"id": "s1", "memory_limit": 5}])


def test_a_wrong_type_names_table_column_and_row(store: Store) -> None:
    writer = store.begin()
    rows = [{"id": "s1", "replicas": 1}, {"id": "s2", "replicas": "three"}]
    with pytest.raises(
        SchemaMismatchError, match=r"table services, column replicas: row 1 holds a str"
    ):
        writer.write("services", rows)


def test_a_missing_required_value_is_refused(store: Store) -> None:
    writer = store.begin()
    with pytest.raises(
        SchemaMismatchError, match=r"table teams, column id: 1 row\(s\) have no value"
    ):
        writer.write("teams", [{"name": "no id"}])


def test_timestamps_accept_iso_strings_with_offset_only(store: Store) -> None:
    writer = store.begin()
    writer.write("teams", [{"id": "t1", "created_at": "2025-05-01T10:00:00+02:00"}])
    with pytest.raises(
        SchemaMismatchError, match="column created_at: a timestamp has no UTC offset"
    ):
        writer.write("teams", [{"id": "t2", "created_at": "2025-05-01T10:00:00"}])
    with pytest.raises(SchemaMismatchError, match="column created_at: a value is not an ISO 8601"):
        writer.write("teams", [{"id": "t3", "created_at": "yesterday"}])
    writer.commit()
    [row] = fetch(store, "select created_at from teams_latest")
    assert row["created_at"] == datetime(2025, 5, 1, 8, 0, tzinfo=UTC)


def test_arrow_tables_are_cast_safely_and_checked(store: Store) -> None:
    writer = store.begin()
    ok = pa.table({"id": pa.array(["t1"], pa.large_string()), "name": ["Core"]})
    assert writer.write("teams", ok) == 1
    with pytest.raises(SchemaMismatchError, match="table teams, column colour: undeclared"):
        writer.write("teams", pa.table({"id": ["t2"], "colour": ["red"]}))
    with pytest.raises(SchemaMismatchError, match="table services, column replicas: is string"):
        writer.write("services", pa.table({"id": ["s"], "replicas": ["many"]}))


def test_rows_may_not_claim_another_snapshot(store: Store) -> None:
    writer = store.begin()
    with pytest.raises(SchemaMismatchError, match="column snapshot_id: differs"):
        writer.write("teams", [{"id": "t1", "snapshot_id": "someone-else"}])


def test_unknown_table_and_snapshots_table_are_refused(store: Store) -> None:
    writer = store.begin()
    with pytest.raises(KeyError, match="no table named 'servces'"):
        writer.write("servces", [])
    with pytest.raises(WriterStateError, match="written by commit"):
        writer.write("snapshots", [])


def test_a_committed_writer_cannot_write_again(store: Store) -> None:
    writer = store.begin()
    writer.commit()
    with pytest.raises(WriterStateError, match="already committed"):
        writer.write("teams", [{"id": "t1"}])
    with pytest.raises(WriterStateError):
        writer.commit()


def test_snapshot_at_must_be_timezone_aware(store: Store) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        store.begin(snapshot_at=datetime(2026, 1, 1))


def test_commit_records_provenance_counts_and_hashes(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    writer = store.begin(
        snapshot_at=T0, meta={"base_url": "http://sim.invalid", "credential_name": "ci"}
    )
    for name, rows in sample_rows().items():
        writer.write(name, rows)
    info = writer.commit(
        status="partial", meta={"credential_role": "viewer", "request_stats": {"calls": 7}}
    )
    assert is_snapshot_id(info.snapshot_id)
    assert (info.seq, info.status, info.snapshot_at) == (1, "partial", T0)
    assert (info.base_url, info.credential_name, info.credential_role) == (
        "http://sim.invalid",
        "ci",
        "viewer",
    )
    assert info.request_stats == {"calls": 7}
    assert info.row_counts["services"] == 3 and info.row_counts["webhooks"] == 0
    assert info.toolkit_version and info.schema_version == SCHEMA_VERSION == 5
    assert info.content_hash_version == CONTENT_HASH_VERSION == 2
    assert info.prev_hash is None and len(info.content_hash) == 64 and len(info.chain_hash) == 64
    second = write_snapshot(store, at=T0 + timedelta(hours=1))
    assert second.seq == 2 and second.prev_hash == info.chain_hash
    assert [s.snapshot_id for s in store.snapshots()] == [info.snapshot_id, second.snapshot_id]


def test_batches_in_any_order_hash_like_one_write(store: Store) -> None:
    rows = sample_rows()
    writer = store.begin(snapshot_at=T0)
    for name, table_rows in rows.items():
        for row in reversed(table_rows):  # other order, one row per batch
            writer.write(name, [row])
    info = writer.commit()
    whole = {
        name: [canonical_rows(to_arrow(TABLES[name], r, info.snapshot_id, T0))]
        for name, r in rows.items()
    }
    assert content_hash(info.snapshot_id, T0, whole) == info.content_hash
    assert store.verify().ok
