"""The findings history is a table of the store: each snapshot judged once per version of
each check, invisible until committed, verified, kept by gc, compaction and retention."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import TYPE_CHECKING

import pyarrow.compute as pc
from audit_fixtures import fixture_connection
from engine_world import engine_catalogue, history, record_connections, write_store

from toolkit.audit import Catalogue, run_audit
from toolkit.snapshot import Store
from toolkit.snapshot.retention import RetentionPolicy

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pandas as pd
    import pytest

_SHOWN = ["check_id", "resource_id", "state", "status", "reason", "first_seen", "last_seen"]


def _findings(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    rows = frame[_SHOWN].astype(str).sort_values(_SHOWN).itertuples(index=False)
    return [tuple(row) for row in rows]


def _runs(store: Store) -> int:
    return int(store.duckdb().sql("select count(*) from check_runs").fetchall()[0][0])


def _three_days(tmp_path: Path) -> tuple[Store, dict[str, object]]:
    fixture = history()
    day4 = fixture["snapshots"].pop()
    return write_store(tmp_path / "store", fixture), day4


def test_each_snapshot_is_judged_once_and_a_new_one_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = history()
    store = write_store(tmp_path / "store", fixture)
    checks = Catalogue.load()  # the built-in checks: most judge a snapshot alone
    first = run_audit(store, checks=checks)
    assert first.judged == {spec.id: 4 for spec in checks.specs}
    assert _runs(store) == 4 * len(checks.specs)
    again = run_audit(store, checks=checks)
    assert again.judged == {} and _runs(store) == 4 * len(checks.specs)
    assert _findings(again.findings) == _findings(first.findings)
    day5 = {**fixture["snapshots"][-1], "at": "2026-01-05T00:00:00Z"}
    write_store(tmp_path / "store", {"snapshots": [day5]})
    opened = record_connections(monkeypatch)
    latest = run_audit(store, checks=checks)
    assert latest.judged == {spec.id: 1 for spec in checks.specs}
    newest = [s.snapshot_id for s in store.snapshots()][-2:]
    # the new snapshot's files alone for the checks judging a snapshot alone, and with the
    # one before's for the one comparing with it (REP003); those reading the whole history
    # read it on the store's connection
    assert sorted((ids for ids, _ in opened), key=lambda ids: -1 if ids is None else len(ids)) == [
        None,
        newest[-1:],
        sorted(newest),
    ]
    # the same findings as judging the whole history at once, in memory
    fixture["snapshots"].append(day5)
    whole = run_audit(fixture_connection(fixture), checks=checks)
    assert _findings(latest.findings) == _findings(whole.findings)


def test_a_changed_check_rejudges_its_own_history_only(tmp_path: Path) -> None:
    store, _ = _three_days(tmp_path)
    checks = engine_catalogue()
    run_audit(store, checks=checks)
    changed = [
        dataclasses.replace(s, sql=s.sql + "\n-- edited") if s.id == "TST001" else s
        for s in checks.specs
    ]
    result = run_audit(store, checks=Catalogue(tuple(changed), {}))
    assert result.judged == {"TST001": 3}
    versions = store.duckdb().sql(
        "select count(distinct check_version) from check_runs where check_id = 'TST001'"
    )
    assert versions.fetchall()[0][0] == 2  # both versions kept; each audit reads its own


def test_a_judging_that_never_commits_is_invisible_and_gc_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = _three_days(tmp_path)
    real = Store._append

    def crash(self: Store, name: str, data: object, snapshot_id: str) -> None:
        if name == "check_runs":
            raise OSError("disk full")
        real(self, name, data, snapshot_id)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "_append", crash)
    result = run_audit(store, checks=engine_catalogue())
    assert any("could not be written" in w for w in result.warnings)
    assert not result.findings.empty  # audited all the same, in memory
    monkeypatch.setattr(Store, "_append", real)
    con = store.duckdb()
    assert con.sql("select count(*) from check_results").fetchall() == [(0,)]
    assert con.sql("select count(*) from _raw_check_results").fetchall()[0][0] > 0
    assert store.verify().ok
    report = store.gc(min_age=timedelta(0))
    assert report.removed_rows.get("check_results", 0) > 0
    assert store.duckdb().sql("select count(*) from _raw_check_results").fetchall() == [(0,)]


def test_verify_finds_an_altered_findings_history(tmp_path: Path) -> None:
    store, _ = _three_days(tmp_path)
    run_audit(store, checks=engine_catalogue())
    assert store.verify().ok
    rows = store._read("check_results")
    alarm = pc.equal(rows.column("status"), "alarm")
    hidden = rows.set_column(
        rows.schema.get_field_index("status"),
        rows.schema.field("status"),
        pc.if_else(alarm, "ok", rows.column("status")),
    )
    store._overwrite("check_results", hidden)  # someone hides the alarms
    report = store.verify()
    assert not report.ok and report.findings
    assert "findings history was altered" in report.summary()


def test_compaction_keeps_and_retention_prunes_the_history(tmp_path: Path) -> None:
    store, _ = _three_days(tmp_path)
    checks = engine_catalogue()
    before = run_audit(store, checks=checks)
    store.compact()
    store.vacuum(retention_hours=0)
    after = run_audit(store, checks=checks)
    assert after.judged == {} and _findings(after.findings) == _findings(before.findings)
    oldest = store.snapshots()[0]
    policy = RetentionPolicy(keep_all_for=timedelta(0), hourly_for=timedelta(0))
    pruned = store.apply_retention(policy, now=oldest.snapshot_at + timedelta(days=400))
    assert oldest.snapshot_id in pruned.pruned
    left = store._read("check_results").column("snapshot_id").to_pylist()
    assert oldest.snapshot_id not in left
    assert store.verify().ok


def test_notebook_views_show_findings_over_time(tmp_path: Path) -> None:
    store, _ = _three_days(tmp_path)
    run_audit(store, checks=engine_catalogue())
    over_time = store.duckdb().sql(
        "select snapshot_at, count(*) as alarms from findings group by all order by 1"
    )
    counts = [n for _, n in over_time.fetchall()]
    assert len(counts) == 3 and all(n > 0 for n in counts)


def test_a_judgement_is_hashed_by_columns_not_row_by_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashing each row's JSON cost more than judging a new snapshot: the writer hashes
    columns, in any row order, and still sees one changed value."""
    import toolkit.snapshot.findings_history as history_table

    def per_row(*_: object) -> bytes:
        raise AssertionError("a judgement was hashed row by row")

    monkeypatch.setattr(history_table, "row_digests", per_row)
    store, _ = _three_days(tmp_path)
    run_audit(store, checks=engine_catalogue())
    rows = store._read("check_results").slice(0, 5).drop_columns(["snapshot_at"])
    at = store.snapshots()[0].snapshot_at
    written = history_table.judgement_hash(rows, "s", at)
    assert written.startswith(history_table.HASH_TAG)
    assert history_table.judgement_hash(rows.take([4, 3, 2, 1, 0]), "s", at) == written
    changed = rows.set_column(
        rows.schema.get_field_index("reason"), "reason", pc.utf8_upper(rows.column("reason"))
    )
    assert history_table.judgement_hash(changed, "s", at) != written


def test_runs_hashed_row_by_row_by_an_older_toolkit_still_verify(tmp_path: Path) -> None:
    import toolkit.snapshot.findings_history as history_table

    store, _ = _three_days(tmp_path)
    run_audit(store, checks=engine_catalogue())
    runs, results = store._read("check_runs"), store._read("check_results")
    older = []
    for run in runs.to_pylist():
        mine = results.filter(history_table._run_filter(run))
        older.append(history_table._row_json_hash(mine, run["snapshot_id"], run["snapshot_at"]))
    index = runs.schema.get_field_index("content_hash")
    store._overwrite("check_runs", runs.set_column(index, runs.schema.field(index), [older]))
    assert store.verify().ok
    status = results.schema.get_field_index("status")
    hidden = pc.if_else(pc.equal(results.column("status"), "alarm"), "ok", results.column(status))
    store._overwrite("check_results", results.set_column(status, "status", hidden))
    assert not store.verify().ok


def test_a_new_snapshot_makes_views_only_for_the_checks_on_each_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Making a derived view binds it: the store's connection, where only the checks that
    read the whole history run once the rest is judged, gets only their views."""
    from toolkit.audit.check_run import DerivedViews, schema_views

    fixture = history()
    store = write_store(tmp_path / "store", fixture)
    checks = Catalogue.load()
    run_audit(store, checks=checks)
    write_store(
        tmp_path / "store",
        {"snapshots": [{**fixture["snapshots"][-1], "at": "2026-01-05T00:00:00Z"}]},
    )
    opened = record_connections(monkeypatch)
    run_audit(store, checks=checks)
    main = opened[0][1]  # the other one is closed: its checks ran, and found as before
    derived = DerivedViews()
    whole = [s.sql for s in checks.specs if s.history == "all"]
    alone = [s.sql for s in checks.specs if s.history != "all"]
    names = lambda sqls: {n for v in derived.files_read(sqls) for n in v.created}  # noqa: E731
    assert schema_views(main) & names(alone + whole) == names(whole)


def test_an_audit_of_a_new_snapshot_reads_each_tables_delta_log_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_delta_opens: Callable[[], list[str]]
) -> None:
    """The connections of the new snapshot's files (the checks judging a snapshot alone, and
    the one judging it with the one before) pick their files from the tables the audit's
    connection opened: no log is read again."""
    from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES

    fixture = history()
    store = write_store(tmp_path / "store", fixture)
    checks = Catalogue.load()
    run_audit(store, checks=checks)
    day5 = {**fixture["snapshots"][-1], "at": "2026-01-05T00:00:00Z"}
    write_store(tmp_path / "store", {"snapshots": [day5]})
    opens = record_delta_opens()
    opened = record_connections(monkeypatch)
    result = run_audit(store, checks=checks)
    assert result.judged == {spec.id: 1 for spec in checks.specs}
    assert [ids is None for ids, _ in opened] == [True, False, False]  # all three made
    assert {name: opens.count(name) for name in SNAPSHOT_TABLES} == dict.fromkeys(
        SNAPSHOT_TABLES, 1
    )
    monkeypatch.undo()
    assert _findings(run_audit(store, checks=checks).findings) == _findings(result.findings)


def test_the_rows_just_appended_are_read_from_memory_not_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, day4 = _three_days(tmp_path)
    checks = engine_catalogue()
    run_audit(store, checks=checks)
    write_store(tmp_path / "store", {"snapshots": [day4]})
    opened: list[str] = []
    real = Store._source

    def source(
        self: Store, name: str, snapshot_ids: object = None, tables: object = None
    ) -> object:
        if name == "check_results" and snapshot_ids is None:
            opened.append(name)
        return real(self, name, snapshot_ids, tables)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "_source", source)
    result = run_audit(store, checks=checks)
    assert result.judged and opened == ["check_results"]  # once, before the judging
    monkeypatch.undo()
    assert _findings(run_audit(store, checks=checks).findings) == _findings(result.findings)


def _row_groups_read(store: Store, snapshot_id: str) -> tuple[int, int, int, set[str]]:
    """Of ``check_results``' row groups: how many pyarrow reads for ``snapshot_id``'s rows
    (those its snapshot_id statistics cannot rule out), how many there are, the rows of
    that snapshot, and the files' compression codecs."""
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    files = DeltaTable(store.table_uri("check_results")).file_uris()
    dataset = pads.dataset(files, format="parquet")
    wanted = pc.field("snapshot_id") == snapshot_id
    read = [g for f in dataset.get_fragments() for g in f.split_by_row_group(filter=wanted)]
    every = [g for f in dataset.get_fragments() for g in f.split_by_row_group()]
    codecs = {
        meta.row_group(g).column(c).compression
        for meta in (pq.ParquetFile(f).metadata for f in files)
        for g in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    }
    return len(read), len(every), int(dataset.count_rows(filter=wanted)), codecs


def test_a_snapshots_results_are_read_from_its_own_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole store judged at once is written snapshot by snapshot: the lifecycle's read of
    the judged and compared snapshots skips the row groups of the others, by their
    statistics, after the judgement and after a rewrite (retention, gc); compressed, in
    either case."""
    import math

    from deltalake import WriterProperties

    import toolkit.snapshot.store_tables as store_tables
    from toolkit.snapshot.findings_history import remove_findings

    size = 5  # rows per row group: a snapshot's results fill several
    small = WriterProperties(max_row_group_size=size, compression="ZSTD")
    monkeypatch.setattr(store_tables, "HISTORY_WRITTEN", small, raising=False)
    store = write_store(tmp_path / "store", history())
    run_audit(store, checks=engine_catalogue())  # the four snapshots, one append
    oldest, *_, newest = (s.snapshot_id for s in store.snapshots())
    for rewritten in (False, True):
        if rewritten:
            remove_findings(store, [oldest])  # rewrites the table without the oldest
        read, groups, rows, codecs = _row_groups_read(store, newest)
        assert rows > size, "the fixture's snapshot must span row groups"
        assert read <= math.ceil(rows / size) + 1 < groups, (read, groups, rewritten)
        assert "UNCOMPRESSED" not in codecs, (codecs, rewritten)
