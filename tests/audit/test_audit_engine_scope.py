"""What the engine keeps of each check, what it computes once, and the store's fast path."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
import pytest
from engine_world import engine_catalogue, history, record_connections, write_store

from toolkit.audit import Catalogue, CheckDefinitionError, engine, run_audit, run_check
from toolkit.audit.check_file import parse_check
from toolkit.audit.check_run import ensure_views
from toolkit.audit.scope import plan_scope
from toolkit.audit.snapshots_chosen import committed_snapshots
from toolkit.audit.testing import fixture_connection, fixture_snapshot_ids
from toolkit.snapshot import SNAPSHOT_TABLES

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.audit import AuditResult
    from toolkit.audit.check_file import CheckSpec


def _status_rows(rows: pa.Table) -> set[tuple[str, str, str, str]]:
    return {
        (r["check_id"], r["snapshot_id"], r["resource_id"], r["status"]) for r in rows.to_pylist()
    }


def test_history_keeps_every_alarm_and_the_judged_and_compared_snapshots_whole() -> None:
    con = fixture_connection(history())
    catalogue = engine_catalogue()
    result = run_audit(con, checks=catalogue)
    assert result.compare is not None
    judged = {result.target.snapshot_id, result.compare.snapshot_id}
    expected: set[tuple[str, str, str, str]] = set()
    every_row: set[tuple[str, str, str, str]] = set()
    ensure_views(con)
    for spec in catalogue.specs:
        for row in run_check(con, spec).to_pylist():
            key = (spec.id, row["snapshot_id"], row["resource_id"], row["status"])
            every_row.add(key)
            if row["status"] == "alarm" or row["snapshot_id"] in judged:
                expected.add(key)
    assert _status_rows(result.rows) == expected
    assert expected < every_row  # ok rows of older snapshots were really left out
    details = result.details.to_pylist()
    assert {d["snapshot_id"] for d in details} == judged
    # text is built for what a finding shows: the judged rows and the compared alarms
    described = [
        d
        for d in details
        if d["snapshot_id"] == result.target.snapshot_id or d["status"] == "alarm"
    ]
    assert all(d["reason"] and d["evidence"] for d in described)
    unshown = [d for d in details if d not in described]
    assert unshown  # the compared snapshot's ok rows: their identity and owners, no text
    assert all(d["reason"] is None and d["evidence"] is None for d in unshown)
    assert all(d["resource_type"] and d["team_id"] for d in unshown)


def test_a_check_returning_nested_values_is_refused_with_its_file(tmp_path: Path) -> None:
    path = tmp_path / "TST900.sql"
    text = (
        "-- id: TST900\n-- title: t\n-- severity: low\n-- area: security\n-- risk: r\n"
        "-- remediation: m\n"
        "select snapshot_id, 'service' as resource_type, id as resource_id, name as "
        "resource_name, team_id, project_id, environment_id, id as service_id, 'ok' as status, "
        "'fine' as reason, struct_pack(id) as evidence from services\n"
    )
    path.write_text(text, encoding="utf-8")
    spec = parse_check(text, path)
    with pytest.raises(CheckDefinitionError, match=r"TST900\.sql: column evidence .* text"):
        run_audit(fixture_connection(history()), checks=[spec])


def test_shared_expensive_views_are_computed_once_and_tables_copied_only_from_datasets() -> None:
    specs = Catalogue.load().specs
    parquet = plan_scope(specs, {}, dict.fromkeys(SNAPSHOT_TABLES, "parquet"))
    assert parquet.cache == frozenset()
    assert "credential_reach" in parquet.materialize
    assert "variable_items" not in parquet.materialize  # a cheap join: left a view
    datasets = plan_scope(specs, {"deployments": 10**9}, dict.fromkeys(SNAPSHOT_TABLES, "dataset"))
    assert "services" in datasets.cache
    assert "deployments" not in datasets.cache  # too many rows to copy
    only_one = [s for s in specs if s.id == "RES001"]
    assert plan_scope(only_one, {}, dict.fromkeys(SNAPSHOT_TABLES, "dataset")).cache == set()


def test_latest_only_on_a_store_reads_fewer_files_and_finds_the_same(tmp_path: Path) -> None:
    store = write_store(tmp_path / "store", history())
    catalogue = engine_catalogue()
    fast = run_audit(store, checks=catalogue, latest_only=True)
    same = run_audit(store.duckdb(), checks=catalogue, latest_only=True)
    columns = ["check_id", "resource_id", "state", "reason", "first_seen"]
    assert fast.findings[columns].to_dict("records") == same.findings[columns].to_dict("records")
    assert len(fast.findings) > 0
    full = run_audit(store, checks=catalogue)
    assert set(fast.findings.check_id) <= set(full.findings.check_id)


def _with_history(catalogue: Catalogue, histories: dict[str, str]) -> Catalogue:
    specs = tuple(
        dataclasses.replace(s, history=histories.get(s.id, s.history)) for s in catalogue.specs
    )
    return Catalogue(specs, catalogue.overrides)


def _everything(result: AuditResult) -> tuple[object, ...]:
    rows = sorted(map(str, result.rows.to_pylist()))
    details = sorted(map(str, result.details.to_pylist()))
    findings = result.findings.sort_values(["check_id", "resource_id"]).to_dict("records")
    return rows, details, str(findings), str(result.mttr().to_dict("records"))


@pytest.mark.parametrize("compare_to", [None, 0], ids=["previous", "oldest"])
def test_checks_reading_a_short_history_read_a_window_and_give_the_same_result(
    compare_to: int | None,
) -> None:
    ids = fixture_snapshot_ids(4)
    compare = None if compare_to is None else ids[compare_to]
    whole = _with_history(engine_catalogue(), {})  # every engine check reads all history
    assert {s.history for s in whole.specs} == {"all"}
    short = _with_history(whole, {"TST001": "snapshot", "TST002": "snapshot", "TST003": "previous"})
    expected = run_audit(fixture_connection(history()), checks=whole, compare_to=compare)
    got = run_audit(fixture_connection(history()), checks=short, compare_to=compare)
    assert _everything(got) == _everything(expected)
    assert len(got.findings) > 0


@pytest.mark.parametrize("compare_to", [None, 0], ids=["previous", "oldest"])
def test_a_store_audit_reads_its_window_from_those_snapshots_files_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compare_to: int | None
) -> None:
    store = write_store(tmp_path / "store", history())
    ids = [s.snapshot_id for s in committed_snapshots(store.duckdb())]
    assert len(ids) == 4
    compare = None if compare_to is None else ids[compare_to]
    short = _with_history(
        engine_catalogue(), {"TST001": "snapshot", "TST002": "snapshot", "TST003": "previous"}
    )
    opened = record_connections(monkeypatch)
    got = run_audit(store, checks=short, compare_to=compare)
    # the whole history, then the window: the judged and compared snapshots and the one
    # before each
    window = sorted({ids[3], ids[2], *((ids[1],) if compare is None else (ids[0],))})
    assert [shown for shown, _ in opened] == [None, window]
    monkeypatch.undo()
    on_one_connection = run_audit(store.duckdb(), checks=short, compare_to=compare)
    assert _everything(got) == _everything(on_one_connection)
    assert len(got.findings) > 0


def test_an_audit_that_fails_early_closes_the_window_connection_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window's connection opens in a thread while the outer scope is built; an error
    # before the checks take it must not leave it open.
    store = write_store(tmp_path / "store", history())
    short = _with_history(engine_catalogue(), {"TST001": "snapshot"})

    def plan_fails(*args: object, **kwargs: object) -> None:
        raise RuntimeError("planned failure")

    opened = record_connections(monkeypatch)
    monkeypatch.setattr(engine, "plan_scope", plan_fails)
    with pytest.raises(RuntimeError, match="planned failure"):
        run_audit(store, checks=short)
    assert [shown is None for shown, _ in opened] == [True, False]  # the store's, the window's
    with pytest.raises(duckdb.ConnectionException):
        opened[1][1].execute("select 1")


def test_a_check_reading_more_history_than_it_says_is_refused(tmp_path: Path) -> None:
    # Against the first snapshot's limit: day 4 of "resolved" (512, -1, -1, 512) is fine
    # over the whole history, but not in the window of days 2 to 4.
    path = tmp_path / "TST901.sql"
    text = (
        "-- id: TST901\n-- title: t\n-- severity: low\n-- area: security\n-- risk: r\n"
        "-- remediation: m\n-- history: previous\n"
        "with firsts as (select s.*, first_value(s.memory_limits_megabytes) over ("
        "partition by s.id order by n.seq) as first_limit "
        "from services s join snapshots n using (snapshot_id))\n"
        "select snapshot_id, 'service' as resource_type, id as resource_id, name as "
        "resource_name, team_id, project_id, environment_id, id as service_id, "
        "if(memory_limits_megabytes = first_limit, 'ok', 'alarm') as status, "
        "'limit ' || memory_limits_megabytes as reason, '{}' as evidence from firsts\n"
    )
    path.write_text(text, encoding="utf-8")
    spec = parse_check(text, path)
    assert spec.history == "previous"
    with pytest.raises(CheckDefinitionError, match=r"TST901\.sql: says '-- history: previous'"):
        run_audit(fixture_connection(history()), checks=[spec])
    # the same check without the line reads the whole history and runs
    whole = dataclasses.replace(spec, history="all")
    assert len(run_audit(fixture_connection(history()), checks=[whole]).findings) > 0


def test_a_window_works_with_snapshot_ids_read_from_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # Ids off the strict pattern are never written into SQL: the scopes and the kept
    # snapshots read them from tables, which both scopes' queries must find.
    odd = [f"snap-{n}'odd" for n in range(1, 5)]
    monkeypatch.setattr("toolkit.audit.testing.fixture_snapshot_ids", lambda count: odd[:count])
    whole = _with_history(engine_catalogue(), {})
    short = _with_history(whole, {"TST001": "snapshot", "TST002": "snapshot", "TST003": "previous"})
    expected = run_audit(fixture_connection(history()), checks=whole)
    got = run_audit(fixture_connection(history()), checks=short)
    assert got.target.snapshot_id == odd[3]
    assert _everything(got) == _everything(expected)


def test_kept_rows_are_the_result_itself_when_it_holds_only_kept_snapshots() -> None:
    from toolkit.audit.check_rows import _rows_of

    only_kept = pa.table({"snapshot_id": ["a", "b", "a"], "resource_id": ["x", "y", "z"]})
    assert _rows_of(only_kept, ["a", "b"]) is only_kept  # no copy (a latest-only audit)
    mixed = pa.table({"snapshot_id": ["a", "c", None], "resource_id": ["x", "y", "z"]})
    assert _rows_of(mixed, ["a", "b"]).to_pylist() == [{"snapshot_id": "a", "resource_id": "x"}]
    assert _rows_of(mixed.slice(2), ["a"]).num_rows == 0  # a null snapshot id is never kept


def test_checks_reading_the_whole_history_start_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # They are the long ones of a cached audit: started in catalogue order, the last of them
    # kept one worker busy while the other sat idle. Results stay in catalogue order.
    from toolkit.audit import check_rows

    catalogue = _with_history(engine_catalogue(), {"TST001": "snapshot", "TST002": "previous"})
    assert [s.history for s in catalogue.specs] == ["snapshot", "previous", "all"]
    started: list[str] = []
    real = check_rows._check_rows

    def spy(con: duckdb.DuckDBPyConnection, spec: CheckSpec, *args: Any) -> Any:
        started.append(spec.id)
        return real(con, spec, *args)

    monkeypatch.setattr(check_rows, "_check_rows", spy)
    con = fixture_connection(history())
    ensure_views(con)
    ids = fixture_snapshot_ids(4)
    timings: dict[str, float] = {}
    rows = check_rows.run_checks(con, catalogue, [ids[3], ids[2]], timings, workers=1)
    assert started == ["TST003", "TST001", "TST002"]
    assert list(timings) == ["TST001", "TST002", "TST003"]
    in_rows = rows.status.column("check_id").to_pylist()
    assert list(dict.fromkeys(in_rows)) == ["TST001", "TST002", "TST003"]
