"""A store keeps each finding's marks (``finding_marks``), and an audit of a new snapshot
reads them instead of every alarm of the history: it must find exactly what the rows say.

Each test audits a store (kept marks) and the same store through a caller's connection
(``store.duckdb()``: no kept marks, every alarm read from the findings history), and
requires the same findings, resolve times, episodes and rows.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pytest
from engine_world import ENGINE_CHECKS, failed_call
from typer.testing import CliRunner

from toolkit.audit import Catalogue, run_audit
from toolkit.audit import engine as audit_engine
from toolkit.audit.lifecycle import marks_disagreeing
from toolkit.cli.store import store_app
from toolkit.snapshot import RetentionPolicy, Store

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from toolkit.audit import AuditResult
    from toolkit.audit.lifecycle import Marks

runner = CliRunner()

# A check of our own whose findings have an unknown row and an ok row in one snapshot:
# unknown where replicas are not reported, and a second row, ok where the memory limit is
# 256 MB and unknown otherwise.
_MIXED = """-- id: TST009
-- title: Replicas not reported (marks tests)
-- severity: low
-- area: replicas
-- risk: r
-- remediation: r
select snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when replicas is null then 'unknown' when replicas < 2 then 'alarm' else 'ok' end
        as status,
    'replicas' as reason, '{}' as evidence
from services
union all
select snapshot_id, 'service', id, name, team_id, project_id, environment_id, id,
    if(memory_limits_megabytes = 256, 'ok', 'unknown'), 'memory', '{}'
from services
"""

# Per service and snapshot: (memory limit, replicas); None: absent from that snapshot.
_WORLD: dict[str, list[tuple[int, int | None] | None]] = {
    "open": [(-1, 1), (-1, 1), (-1, 1), (-1, 1), (-1, 1), (-1, 1), (-1, 1)],
    "flaky": [(512, 2), (-1, 1), (512, 2), (-1, 1), (512, 2), (-1, 1), (512, 2)],
    "mixed": [(512, 1), (256, None), (512, None), (512, 1), (256, None), (512, 1), (256, None)],
    "late": [(512, 2), (512, 2), (512, 2), (512, 2), (512, 2), (-1, 1), (-1, 1)],
    "gone": [(-1, 1), (-1, 1), (-1, 1), None, None, None, None],
    "back": [(-1, 1), None, None, None, (-1, 1), (512, 2), (-1, 1)],
}
# Snapshot 3 is partial (the services listing failed; "open" is missing from it); 4 and 5
# are taken the same day, so daily retention prunes 4 once it is old enough.
_TIMES = [
    "2026-01-01T00:00:00Z",
    "2026-01-02T00:00:00Z",
    "2026-01-03T00:00:00Z",
    "2026-01-04T00:00:00Z",
    "2026-01-04T12:00:00Z",
    "2026-01-05T00:00:00Z",
    "2026-01-06T00:00:00Z",
]


def _entry(n: int) -> dict[str, Any]:
    services = [
        {
            "id": f"svc-{name}",
            "name": name,
            "team_id": "t-pay",
            "project_id": "p-shop",
            "environment_id": "e-prod",
            "memory_limits_megabytes": day[0],
            "replicas": day[1],
        }
        for name, days in _WORLD.items()
        if (day := days[n]) is not None and not (n == 2 and name == "open")
    ]
    tables: dict[str, Any] = {
        "teams": [{"id": "t-pay", "name": "payments"}],
        "projects": [{"id": "p-shop", "team_id": "t-pay", "name": "shop"}],
        "environments": [{"id": "e-prod", "project_id": "p-shop", "name": "production"}],
        "services": services,
    }
    if n == 2:
        tables["collection_errors"] = [failed_call("services.list")]
    return {"at": _TIMES[n], "tables": tables, "status": "partial" if n == 2 else "complete"}


def _commit(store: Store, entry: Mapping[str, Any]) -> None:
    at = datetime.fromisoformat(entry["at"].replace("Z", "+00:00")).astimezone(UTC)
    writer = store.begin(snapshot_at=at)
    for name, rows in entry["tables"].items():
        writer.write(name, rows)
    writer.commit(status=entry["status"])


@pytest.fixture
def catalogue(tmp_path: Path) -> Catalogue:
    folder = tmp_path / "checks"
    folder.mkdir()
    (folder / "TST009.sql").write_text(_MIXED, encoding="utf-8")
    return Catalogue.load([ENGINE_CHECKS, folder], builtin=False)


@pytest.fixture
def marks_read(monkeypatch: pytest.MonkeyPatch) -> list[Marks]:
    """What each audit's marks were built from, from now on."""
    found: list[Marks] = []
    real = audit_engine.build_marks

    def recorded(*args: Any) -> Marks:
        marks = real(*args)
        found.append(marks)
        return marks

    monkeypatch.setattr(audit_engine, "build_marks", recorded)
    return found


def _same(kept: AuditResult, read: AuditResult) -> None:
    """The two audits found the same: findings, resolve times, episodes and rows."""
    order = ["check_id", "resource_id"]
    pd.testing.assert_frame_equal(
        kept.findings.sort_values(order).reset_index(drop=True),
        read.findings.sort_values(order).reset_index(drop=True),
    )
    pd.testing.assert_frame_equal(kept.mttr(), read.mttr())
    rows = read.rows.to_pandas()
    pd.testing.assert_frame_equal(
        kept.rows.to_pandas().sort_values([*order, "snapshot_id", "status"], ignore_index=True),
        rows.sort_values([*order, "snapshot_id", "status"], ignore_index=True),
    )
    alarmed = rows[rows.status == "alarm"][order].drop_duplicates().itertuples(index=False)
    for check_id, resource_id in alarmed:
        pd.testing.assert_frame_equal(
            kept.episodes(check_id, resource_id), read.episodes(check_id, resource_id)
        )


def test_each_new_snapshot_reads_the_marks_and_finds_what_the_rows_say(
    tmp_path: Path, catalogue: Catalogue, marks_read: list[Marks]
) -> None:
    store = Store.open(tmp_path / "store")
    states = []
    for n in range(len(_TIMES)):
        _commit(store, _entry(n))
        kept = run_audit(store, checks=catalogue)
        read = run_audit(store.duckdb(), checks=catalogue)
        _same(kept, read)
        states.append(set(kept.findings.state))
        # the store's audit read the marks of every snapshot but the new one
        assert (marks_read[-2].read, marks_read[-2].kept) == (n + 1, n)
        assert marks_read[-2].every_check == (n > 0)
        assert marks_read[-1].kept == 0  # the caller's connection keeps no marks
    assert {"new", "open", "resolved", "regressed"} <= set().union(*states)
    # an older snapshot, against each one before it, from the marks of the newest
    ids = [s.snapshot_id for s in store.snapshots()]
    statuses = set()
    for n in range(1, len(ids)):
        for before in ids[:n]:
            kept = run_audit(store, checks=catalogue, snapshot=ids[n], compare_to=before)
            _same(
                kept,
                run_audit(store.duckdb(), checks=catalogue, snapshot=ids[n], compare_to=before),
            )
            assert marks_read[-2].kept == marks_read[-2].read == n + 1
            statuses |= set(kept.findings.status)
    assert {"alarm", "ok", "absent", "unobserved"} <= statuses


def _store(root: Path, catalogue: Catalogue, count: int) -> Store:
    """A store of the first ``count`` snapshots, each audited as it came."""
    store = Store.open(root)
    for n in range(count):
        _commit(store, _entry(n))
        run_audit(store, checks=catalogue)
    return store


def test_snapshots_pruned_from_the_middle_are_skipped_in_the_marks(
    tmp_path: Path, catalogue: Catalogue, marks_read: list[Marks]
) -> None:
    store = _store(tmp_path / "store", catalogue, 6)
    policy = RetentionPolicy(hourly_for=timedelta(0), daily_for=timedelta(days=365))
    report = store.apply_retention(policy, now=datetime(2026, 1, 10, tzinfo=UTC))
    assert len(report.pruned) == 1  # the morning snapshot of 4 January
    _same(run_audit(store, checks=catalogue), run_audit(store.duckdb(), checks=catalogue))
    assert (marks_read[-2].read, marks_read[-2].kept) == (5, 5)
    _commit(store, _entry(6))
    _same(run_audit(store, checks=catalogue), run_audit(store.duckdb(), checks=catalogue))
    assert (marks_read[-2].read, marks_read[-2].kept) == (6, 5)


def test_a_changed_check_reads_its_own_rows_and_the_others_their_marks(
    tmp_path: Path, catalogue: Catalogue, marks_read: list[Marks]
) -> None:
    store = _store(tmp_path / "store", catalogue, 7)
    changed = Catalogue(catalogue.specs, {"TST002": {"min_replicas": 3}})
    _same(run_audit(store, checks=changed), run_audit(store.duckdb(), checks=changed))
    assert not marks_read[-2].every_check and marks_read[-2].kept == 7
    # kept again for the changed version: the next audit reads no row of the past
    run_audit(store, checks=changed)
    assert marks_read[-1].every_check and marks_read[-1].kept == marks_read[-1].read == 7


def test_the_marks_are_what_a_new_snapshot_reads_of_the_past(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    """Kept marks that say "late" was in alarm in the first snapshot make its alarm on the
    new one regressed, not new: the audit read the marks, not the rows."""
    store = _store(tmp_path / "store", catalogue, 5)
    _commit(store, _entry(5))
    assert _state(run_audit(store.duckdb(), checks=catalogue), "svc-late") == "new"
    _forge(store)
    assert _state(run_audit(store, checks=catalogue), "svc-late") == "regressed"


def test_marks_are_kept_again_only_when_they_lack_something(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    store = _store(tmp_path / "store", catalogue, 3)
    version = store._delta("finding_marks").version()  # type: ignore[union-attr]
    run_audit(store, checks=catalogue)
    run_audit(store, checks=catalogue, snapshot=store.snapshots()[0].snapshot_id)
    assert store._delta("finding_marks").version() == version  # type: ignore[union-attr]
    _commit(store, _entry(3))
    run_audit(store, checks=catalogue, latest_only=True)  # reads and keeps no marks
    assert store._delta("finding_marks").version() == version  # type: ignore[union-attr]
    run_audit(store, checks=catalogue)
    assert store._delta("finding_marks").version() == version + 1  # type: ignore[union-attr]


def test_store_verify_finds_marks_that_say_otherwise_than_the_history(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    store = _store(tmp_path / "store", catalogue, 4)
    assert marks_disagreeing(store) == []
    assert runner.invoke(store_app, ["verify", "--store", store.url]).exit_code == 0
    version = _forge(store)
    assert marks_disagreeing(store) == [f"TST001 {version[:12]}"]
    verified = runner.invoke(store_app, ["verify", "--store", store.url])
    assert verified.exit_code == 1, verified.output
    assert f"finding_marks) of TST001 {version[:12]} differ" in verified.output


def _forge(store: Store) -> str:
    """Mark "late" in alarm in the first snapshot the kept marks cover (it never was);
    returns TST001's version."""
    marks = store._read("finding_marks")
    rows = marks.to_pylist()
    (covering,) = [r for r in rows if r["check_id"] == "TST001" and r["resource_id"] is None]
    forged = {**covering, "resource_id": "svc-late"}
    forged["marks"] = "1" + "0" * (len(covering["marks"]) - 1)
    store._overwrite(
        "finding_marks", pa.concat_tables([marks, pa.Table.from_pylist([forged], marks.schema)])
    )
    return str(covering["check_version"])


def _state(result: AuditResult, resource_id: str) -> str:
    rows = result.findings[
        (result.findings.check_id == "TST001") & (result.findings.resource_id == resource_id)
    ]
    return str(rows.state.iloc[0])


def test_every_alarm_of_the_history_is_read_only_when_the_rows_are_asked(
    tmp_path: Path, catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "store", catalogue, 3)
    calls: list[int] = []
    real = audit_engine.read_rows

    def counted(*args: Any) -> pa.Table:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(audit_engine, "read_rows", counted)
    result = run_audit(store, checks=catalogue)
    assert calls == []  # the findings, resolve times and waivers came from the marks
    assert not result.episodes("TST001", "svc-open").empty
    assert set(result.history.snapshot_id) == {s.snapshot_id for s in store.snapshots()}
    assert calls == [1]
