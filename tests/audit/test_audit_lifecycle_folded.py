"""The lifecycle folds the history's rows into a row per finding: on a seeded history with
partial snapshots (blind checks, missing resources) and rows a check could not judge, its
states, first and last seen, status and resolve times are those an independent reading of
the check rows gives (:func:`_expected`), and no table it keeps has a row per finding and
snapshot."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest
from audit_fixtures import fixture_connection
from engine_world import DAYS, engine_catalogue, failed_call, history, service_id

from toolkit.audit import AuditResult, Catalogue, run_audit

if TYPE_CHECKING:
    from collections.abc import Sequence

_Finding = tuple[str, str, pd.Timestamp, pd.Timestamp]  # state, status, first and last seen
_Hours = dict[str, list[float]]  # per check id, the hours of each resolved episode
_SNAPSHOTS = 12
_DEPLOYS = ("build-failed", "active", "build-exploded")  # alarm, ok, unknown to DEP003


def _seeded(seed: int) -> dict[str, Any]:
    """Twelve daily snapshots of eight services, some partial (the production services
    listing failed and some of those services are missing), each service's memory limit
    and last deployment drawn at random."""
    draw = random.Random(seed)
    owners = history()["snapshots"][0]["tables"]
    snapshots = []
    for day in range(_SNAPSHOTS):
        partial = day > 0 and draw.random() < 0.3
        services = []
        for n in range(8):
            production = n % 2 == 0
            if draw.random() < 0.1 or (partial and production and draw.random() < 0.6):
                continue
            services.append(
                {
                    "id": f"svc-{n}",
                    "name": f"service-{n}",
                    "team_id": "t-pay" if production else "t-core",
                    "project_id": "p-shop",
                    "environment_id": "e-prod" if production else "e-stage",
                    "memory_limits_megabytes": draw.choice((-1, 512, 512)),
                    "replicas": 2,
                    "last_deployment_id": f"d-{n}-{day}",
                    "last_deployment_status": draw.choice(_DEPLOYS),
                }
            )
        tables = {name: owners[name] for name in ("teams", "projects", "environments")}
        tables["services"] = services
        entry: dict[str, Any] = {"at": f"2026-01-{day + 1:02d}T00:00:00Z", "tables": tables}
        if partial:
            entry["status"] = "partial"
            tables["collection_errors"] = [failed_call("services.list")]
        snapshots.append(entry)
    return {"snapshots": snapshots}


def _catalogue() -> Catalogue:
    specs = [s for s in engine_catalogue().specs if s.id == "TST001"]
    specs += [s for s in Catalogue.load().specs if s.id == "DEP003"]
    return Catalogue(tuple(specs), {})


def _marks(result: AuditResult, check_id: str, resource_id: str, read: Sequence[str]) -> str:
    """One mark per snapshot read: A in alarm, U not observed (blind with no row, or every
    row unknown), O otherwise."""
    rows = result.rows.to_pandas()
    mine = rows[(rows.check_id == check_id) & (rows.resource_id == resource_id)]
    blind = set(result.blind.snapshot_id[result.blind.check_id == check_id])
    marks = ""
    for snapshot_id in read:
        statuses = set(mine.status[mine.snapshot_id == snapshot_id])
        if "alarm" in statuses:
            marks += "A"
        elif statuses == {"unknown"} or (not statuses and snapshot_id in blind):
            marks += "U"
        else:
            marks += "O"
    return marks


def _alarm_when_last_observed(marks: str, at: int) -> bool:
    """Whether the run of A and U marks holding position ``at`` (0-based) holds an alarm at
    or before it."""
    start = at
    while start > 0 and marks[start - 1] in "AU" and marks[start] in "AU":
        start -= 1
    return marks[at] in "AU" and "A" in marks[start : at + 1]


def _expected(
    result: AuditResult,
) -> tuple[dict[tuple[str, str], _Finding], _Hours]:
    """Per finding with a state: (state, status, first_seen, last_seen); per check: the
    hours of each resolved episode. From the check rows alone."""
    read = list(result.read or ())
    times = result.snapshot_times.set_index("snapshot_id").snapshot_at
    at = [times[i] for i in read]
    target = len(read) - 1
    compare = read.index(result.compare.snapshot_id) if result.compare else None
    rows = result.rows.to_pandas()
    alarmed = rows[(rows.status == "alarm") & rows.snapshot_id.isin(read)]
    states: dict[tuple[str, str], _Finding] = {}
    hours: _Hours = {}
    for check_id, resource_id in sorted(
        set(zip(alarmed.check_id, alarmed.resource_id, strict=True))
    ):
        marks = _marks(result, check_id, resource_id, read)
        for run in _runs(marks):
            first, end = run
            if end + 1 < len(read):
                hours.setdefault(check_id, []).append(
                    (at[end + 1] - at[first]).total_seconds() / 3600.0
                )
        now = _alarm_when_last_observed(marks, target)
        then = compare is not None and _alarm_when_last_observed(marks, compare)
        before = compare is not None and "A" in marks[:compare]
        if not (now or then):
            continue
        state = "open" if now and then else "regressed" if now and before else "new"
        state = state if now else "resolved"
        there = rows[(rows.check_id == check_id) & (rows.resource_id == resource_id)]
        there = there[there.snapshot_id == read[target]]
        status = (
            "alarm" if marks[target] == "A"
            else "ok" if (there.status != "unknown").any()
            else "unobserved" if marks[target] == "U"
            else "absent"
        )  # fmt: skip
        alarms = [n for n, mark in enumerate(marks) if mark == "A"]
        states[(check_id, resource_id)] = (state, status, at[alarms[0]], at[alarms[-1]])
    return states, hours


def _runs(marks: str) -> list[tuple[int, int]]:
    """(first alarm, last mark) of each run of A and U marks holding an alarm."""
    found: list[tuple[int, int]] = []
    start = None
    for n, mark in enumerate(marks + "O"):
        if mark in "AU" and start is None:
            start = n
        elif mark not in "AU" and start is not None:
            run = marks[start:n]
            if "A" in run:
                found.append((start + run.index("A"), n - 1))
            start = None
    return found


def _cases() -> list[tuple[int, dict[str, Any]]]:
    return [
        (seed, choice)
        for seed in (3, 11, 29)
        for choice in ({}, {"snapshot": 9, "compare_to": 5}, {"latest_only": True})
    ]


@pytest.mark.parametrize(("seed", "choice"), _cases())
def test_states_and_resolve_times_match_a_reading_of_the_rows(
    seed: int, choice: dict[str, Any]
) -> None:
    fixture = _seeded(seed)
    con = fixture_connection(fixture)
    ids = [s for (s,) in con.execute("select snapshot_id from snapshots order by seq").fetchall()]
    asked = {k: ids[v] if k in ("snapshot", "compare_to") else v for k, v in choice.items()}
    result = run_audit(con, checks=_catalogue(), **asked)
    states, hours = _expected(result)
    if not result.latest_only:  # the history has blind checks and rows not judged
        assert len(result.blind) and "unknown" in result.rows.column("status").to_pylist()
    got = {
        (r.check_id, r.resource_id): (r.state, r.status, r.first_seen, r.last_seen)
        for r in result.findings.itertuples()
    }
    assert got == states
    mttr = result.mttr().set_index("check_id")
    for check_id in ("TST001", "DEP003"):
        expected = hours.get(check_id, [])
        assert mttr.loc[check_id, "resolved_count"] == len(expected)
        if expected:
            assert mttr.loc[check_id, "mttr_hours"] == pytest.approx(sum(expected) / len(expected))
        else:
            assert pd.isna(mttr.loc[check_id, "mttr_hours"])


def test_the_lifecycle_keeps_a_row_per_finding_not_per_finding_and_snapshot() -> None:
    """Past the rows it reads (``audit_text``), every table the lifecycle keeps has at most
    a row per finding ever in alarm, per snapshot, or (``audit_unobserved``) per finding and
    snapshot that did not observe it: its work past the marks does not grow with the
    snapshots in which a finding was observed."""
    con = fixture_connection(_seeded(3))
    result = run_audit(con, checks=_catalogue())
    rows = result.rows.to_pandas()
    alarms = rows[rows.status == "alarm"]
    findings = len(alarms.groupby(["check_id", "resource_id"]))
    assert len(alarms.groupby(["check_id", "resource_id", "snapshot_id"])) > 2 * findings
    kept = con.execute("select table_name from duckdb_tables() where temporary").fetchall()
    sizes = {
        name: con.execute(f'select count(*) from "{name}"').fetchone()[0]  # noqa: S608 - a catalog name
        for (name,) in kept
        if name not in ("audit_text", "audit_positions", "audit_names")
        and name != "audit_unobserved"
    }
    assert sizes and all(size <= findings for size in sizes.values()), sizes


def test_past_the_marks_the_lifecycle_reads_no_row_of_the_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once each finding's marks are built, the summary, the unobserved snapshots, the
    findings and the resolve times read no row of the findings history again: with its rows
    gone by then (``audit_results`` empty), they are the same."""
    import toolkit.audit.engine as engine

    fixture = _seeded(11)  # blind checks and rows not judged: unobserved findings
    expected = run_audit(fixture_connection(fixture), checks=_catalogue())
    real = engine.build_summary

    def without_rows(con: Any, *args: Any) -> None:
        con.execute("create or replace temp view audit_results as from audit_text where false")
        real(con, *args)

    assert (expected.findings.status == "unobserved").any()
    monkeypatch.setattr(engine, "build_summary", without_rows)
    result = run_audit(fixture_connection(fixture), checks=_catalogue())
    pd.testing.assert_frame_equal(result.mttr(), expected.mttr())
    pd.testing.assert_frame_equal(result.findings, expected.findings)


def test_first_and_last_seen_are_the_earliest_and_latest_alarms_in_any_clock_order() -> None:
    """Snapshots are numbered in the order they commit, but each one's time is its
    collector's clock: with times out of that order, first and last seen are still the
    earliest and latest time the finding was in alarm, not those of its first and last
    snapshot in alarm."""
    fixture = history()
    for snapshot, at in zip(
        fixture["snapshots"], [DAYS[3], DAYS[0], DAYS[1], DAYS[2]], strict=True
    ):
        snapshot["at"] = at
    result = run_audit(fixture_connection(fixture), checks=engine_catalogue())
    row = result.findings.set_index(["check_id", "resource_id"]).loc[("TST001", service_id("open"))]
    assert (row.first_seen, row.last_seen) == (
        pd.Timestamp(DAYS[0]),
        pd.Timestamp(DAYS[3]),
    )
