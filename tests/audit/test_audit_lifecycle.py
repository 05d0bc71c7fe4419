"""Finding states, first/last seen, resolve times and the three modes, on a known history."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest
from audit_fixtures import fixture_connection, fixture_snapshot_ids
from engine_world import engine_catalogue, history, service_id

from toolkit.audit import AuditError, Catalogue, run_audit

IDS = fixture_snapshot_ids(4)


def day(n: int) -> pd.Timestamp:
    return pd.Timestamp(datetime(2026, 1, n, tzinfo=UTC))


def states(frame: pd.DataFrame, check: str = "TST001") -> dict[str, str]:
    rows = frame[frame.check_id == check]
    return {str(r.resource_id): str(r.state) for r in rows.itertuples()}


def test_states_between_the_two_newest_snapshots() -> None:
    result = run_audit(fixture_connection(history()), checks=engine_catalogue())
    assert result.target.snapshot_id == IDS[3]
    assert result.compare is not None and result.compare.snapshot_id == IDS[2]
    assert states(result.findings) == {
        service_id("open"): "open",
        service_id("new"): "new",
        service_id("resolved"): "resolved",
        service_id("regressed"): "regressed",
        service_id("gone"): "resolved",
    }
    by_id = result.findings[result.findings.check_id == "TST001"].set_index("resource_id")
    assert by_id.loc[service_id("gone"), "status"] == "absent"
    gone = by_id.loc[service_id("gone"), "reason"]  # the old alarm's text, saying it is gone
    assert gone == "gone: Service gone memory limit -1 MB."
    assert not by_id.loc[service_id("resolved"), "reason"].startswith("gone")
    assert by_id.loc[service_id("resolved"), "status"] == "ok"
    assert by_id.loc[service_id("new"), "status"] == "alarm"
    seen = {
        name: (by_id.loc[service_id(name), "first_seen"], by_id.loc[service_id(name), "last_seen"])
        for name in ("open", "new", "resolved", "regressed", "gone")
    }
    assert seen == {
        "open": (day(1), day(4)),
        "new": (day(4), day(4)),
        "resolved": (day(2), day(3)),
        "regressed": (day(1), day(4)),
        "gone": (day(1), day(3)),
    }
    assert by_id.loc[service_id("open"), "team_name"] == "payments"
    assert by_id.loc[service_id("open"), "environment_name"] == "production"
    assert by_id.loc[service_id("open"), "severity"] == "high"


def test_other_checks_and_summary() -> None:
    result = run_audit(fixture_connection(history()), checks=engine_catalogue())
    assert states(result.findings, "TST002") == {
        service_id("open"): "new",
        service_id("new"): "open",
    }
    assert states(result.findings, "TST003") == {service_id("open"): "new"}
    summary = result.summary()
    assert summary.loc["high"].to_dict() == {
        "new": 1,
        "regressed": 1,
        "open": 1,
        "resolved": 2,
        "waived": 0,
    }
    assert summary.loc["medium", "new"] == 1 and summary.loc["low", "new"] == 1
    assert len(result.failing("high")) == 3
    assert len(result.failing("low")) == 6


def test_mean_time_to_resolve() -> None:
    result = run_audit(fixture_connection(history()), checks=engine_catalogue())
    mttr = result.mttr().set_index("check_id")
    assert list(mttr.columns) == ["severity", "resolved_count", "mttr_hours"]
    assert mttr.loc["TST001", "resolved_count"] == 4
    assert mttr.loc["TST001", "mttr_hours"] == pytest.approx(42.0)
    assert mttr.loc["TST001", "severity"] == "high"
    assert mttr.loc["TST002", "resolved_count"] == 0
    assert pd.isna(mttr.loc["TST002", "mttr_hours"])


def test_per_check_counts_and_resolve_times() -> None:
    # TST002 with min_replicas 0 never alarms: its row says it ran and found nothing.
    catalogue = engine_catalogue({"TST002": {"min_replicas": 0}})
    result = run_audit(fixture_connection(history()), checks=catalogue)
    rows = result.per_check().set_index("check_id")
    assert list(rows.index) == ["TST001", "TST002", "TST003"]  # high, medium, low
    counts = ["new", "regressed", "open", "resolved", "waived", "alarming", "resolved_count"]
    assert rows.loc["TST001", counts].to_dict() == {
        "new": 1, "regressed": 1, "open": 1, "resolved": 2, "waived": 0, "alarming": 3,
        "resolved_count": 4,
    }  # fmt: skip
    assert rows.loc["TST001", "mttr_hours"] == pytest.approx(42.0)
    assert rows.loc["TST002", counts].sum() == 0 and pd.isna(rows.loc["TST002", "mttr_hours"])
    assert rows.loc["TST003", ["new", "alarming"]].tolist() == [1, 1]
    assert rows.loc["TST001", "title"] == catalogue.specs[0].title
    per_severity = rows.groupby("severity")[["new", "regressed", "open", "resolved", "waived"]]
    summary = result.summary()
    assert (per_severity.sum() == summary.loc[per_severity.sum().index]).all().all()


def test_judge_an_older_snapshot_against_a_chosen_one() -> None:
    con = fixture_connection(history())
    result = run_audit(con, checks=engine_catalogue(), snapshot=IDS[2], compare_to=IDS[0])
    assert states(result.findings) == {
        service_id("open"): "open",
        service_id("resolved"): "new",  # in alarm since day 2, after the compared day 1
        service_id("regressed"): "resolved",
        service_id("gone"): "open",
        service_id("once"): "resolved",
    }
    later = result.findings.set_index("resource_id")
    assert later.loc[service_id("open"), "last_seen"] == day(3)  # nothing after the target


def test_default_compare_is_the_complete_snapshot_before() -> None:
    con = fixture_connection(history())
    result = run_audit(con, checks=engine_catalogue(), snapshot=IDS[1])
    assert result.target.snapshot_id == IDS[1]
    assert result.compare is not None and result.compare.snapshot_id == IDS[0]
    assert states(result.findings)[service_id("regressed")] == "resolved"
    first = run_audit(con, checks=engine_catalogue(), snapshot=IDS[0])
    assert first.compare is None
    assert set(states(first.findings).values()) == {"new"}


def test_latest_only_judges_the_last_snapshot_like_the_full_run() -> None:
    con = fixture_connection(history())
    full = run_audit(con, checks=engine_catalogue())
    fast = run_audit(con, checks=engine_catalogue(), latest_only=True)
    assert fast.latest_only and fast.target == full.target

    def last(table: pd.DataFrame) -> set[tuple[str, ...]]:
        rows = table[table.snapshot_id == full.target.snapshot_id]
        return {tuple(map(str, r)) for r in rows.drop(columns=["snapshot_at", "seq"]).values}

    assert last(fast.history) == last(full.history)
    # the judged and compared snapshots and the one before each
    assert set(fast.rows.column("snapshot_id").to_pylist()) == {IDS[1], IDS[2], IDS[3]}
    # TST003 compares with the previous snapshot: it must be read too, or lag() sees nothing.
    assert states(fast.findings, "TST003") == {service_id("open"): "new"}
    # Only the window is known: an alarm seen before it looks new, not regressed.
    assert states(fast.findings)[service_id("regressed")] == "new"
    assert con.execute("select count(*) from services").fetchall() == [(27,)]  # views restored


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"snapshot": "ffffffff"}, "--snapshot 'ffffffff' is not a committed snapshot"),
        (
            {"snapshot": "00000000-0000-7000-8000-00000000000"},
            r"--snapshot '0.*' matches 4 snapshots "
            r"\(00000000-0000-7000-8000-000000000001, .*, \.\.\.\): give more",
        ),
        ({"compare_to": "ffffffff"}, "--compare-to 'ffffffff' is not a committed snapshot"),
        ({"snapshot": IDS[0], "compare_to": IDS[1]}, "is not older"),
    ],
)
def test_bad_snapshot_choices_say_what_to_do(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(AuditError, match=message):
        run_audit(fixture_connection(history()), checks=engine_catalogue(), **kwargs)


def test_only_partial_snapshots_are_still_judged_and_said_partial() -> None:
    # The newest snapshot is judged even when partial (never skipped in silence); with no
    # complete snapshot before it there is nothing to compare it with.
    fixture = history()
    for entry in fixture["snapshots"]:
        entry["status"] = "partial"
    result = run_audit(fixture_connection(fixture), checks=engine_catalogue())
    assert result.target.snapshot_id == IDS[-1] and result.compare is None
    assert result.partial == (result.target,)


def test_latest_only_counts_no_fix_in_a_snapshot_it_did_not_read() -> None:
    # Judged on day 4 against day 1: a latest-only audit reads days 1, 3 and 4 only. Day 2,
    # unread, must not end the episodes of the findings in alarm on day 1 (open throughout).
    con = fixture_connection(history())
    full = run_audit(con, checks=engine_catalogue(), compare_to=IDS[0])
    fast = run_audit(con, checks=engine_catalogue(), compare_to=IDS[0], latest_only=True)
    assert fast.read == (IDS[0], IDS[2], IDS[3]) and full.read == tuple(IDS)
    assert states(fast.findings) == states(full.findings)
    for result in (full, fast):
        episodes = result.episodes("TST001", service_id("open"))
        assert len(episodes) == 1 and pd.isna(episodes.fixed_at[0])
    # Over days 1, 3, 4: resolved after 24 h (o A o), 48 h (A o A), 72 h (A A -), 48 h (A o o).
    mttr = fast.mttr().set_index("check_id")
    assert mttr.loc["TST001", "resolved_count"] == 4
    assert mttr.loc["TST001", "mttr_hours"] == pytest.approx(48.0)


def test_a_row_the_check_could_not_judge_neither_fixes_nor_starts_a_finding() -> None:
    """DEP003 does not judge a deployment status it does not know ('unknown'): the finding
    keeps its state there, its episode goes on, and nothing counts as resolved."""

    def snapshot(n: int, status: str) -> dict[str, object]:
        service = {"id": "s-api", "name": "api", "team_id": "t1", "last_deployment_id": "d1",
                   "last_deployment_status": status}  # fmt: skip
        return {"at": f"2026-01-0{n}T00:00:00Z", "tables": {"services": [service]}}

    fixture = {"snapshots": [snapshot(1, "build-failed"), snapshot(2, "build-exploded"),
                             snapshot(3, "build-failed")]}  # fmt: skip
    checks = [spec for spec in Catalogue.load().specs if spec.id == "DEP003"]
    ids = fixture_snapshot_ids(3)
    con = fixture_connection(fixture)
    middle = run_audit(con, checks=checks, snapshot=ids[1]).findings.iloc[0]
    assert (middle.state, middle.status) == ("open", "unobserved")
    assert "unknown state build-exploded" in middle.reason
    last = run_audit(con, checks=checks, snapshot=ids[2])
    assert last.findings.iloc[0].state == "open"  # not regressed: never fixed
    assert last.findings.iloc[0].first_seen == day(1)
    assert last.mttr().resolved_count.sum() == 0
    assert len(last.episodes("DEP003", "s-api")) == 1


def test_a_row_the_check_could_not_judge_is_no_finding_of_its_own() -> None:
    service = {"id": "s-api", "name": "api", "team_id": "t1", "last_deployment_id": "d1",
               "last_deployment_status": "build-exploded"}  # fmt: skip
    fixture = {"snapshots": [{"at": "2026-01-01T00:00:00Z", "tables": {"services": [service]}}]}
    checks = [spec for spec in Catalogue.load().specs if spec.id == "DEP003"]
    assert run_audit(fixture_connection(fixture), checks=checks).findings.empty
