"""The review of the hand-built history (review_world.py): every figure computed by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import pytest
from review_world import NOW, PERIOD, SHORT, review_catalogue

from toolkit.audit import AuditRequest
from toolkit.audit.frameworks import Framework, Mapping, Requirement
from toolkit.review import Period, Timeline, gather_review

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.review import ReviewData
    from toolkit.snapshot import Store


def at(day: int, hour: int = 0, month: int = 1) -> datetime:
    return datetime(2026, month, day, hour, tzinfo=UTC)


def test_per_check_counts_and_time_in_violation(review: ReviewData) -> None:
    checks = {f.id: f for f in review.checks}
    high = checks["RVW001"]
    # open at the start (state before 01-05 00:00, S1's): a and d.
    # opened in the period: b (01-06 12:00), d again (01-06 12:00, a regression), c (01-10).
    # resolved: d at S2 (01-05 00:00), a at S5 (01-09 06:00; S4 did not observe it), b at S6.
    # open at the end (S6's state): c and d.
    assert (high.open_at_start, high.opened, high.regressions, high.resolved,
            high.open_at_end) == (2, 3, 1, 3, 2)  # fmt: skip
    # In [01-05, 01-11): a 01-05 00:00..01-09 06:00 = 4.25 d (carried over the partial S4);
    # b 01-06 12:00..01-10 00:00 = 3.5 d; c 01-10 00:00..01-11 00:00 (clipped; S7 is
    # 01-12) = 1 d; d 01-06 12:00..01-11 00:00 = 4.5 d. Total 13.25 resource-days.
    assert high.violation_days == pytest.approx(13.25, abs=1e-9)
    # Previous period [2025-12-30, 01-05): a and d, 01-02 00:00..01-05 00:00 = 3 d each.
    assert high.previous_days == pytest.approx(6.0, abs=1e-9)
    assert high.trend_days == pytest.approx(7.25, abs=1e-9)
    critical = checks["RVW002"]
    # e in alarm from S2 (01-05 00:00) to the period's end: 6 d; never before.
    assert (critical.open_at_start, critical.opened, critical.resolved,
            critical.open_at_end) == (0, 1, 0, 1)  # fmt: skip
    assert critical.violation_days == pytest.approx(6.0, abs=1e-9)
    assert critical.previous_days == 0.0


def test_service_level_breaches(review: ReviewData) -> None:
    # Times to fix: critical 2 days, high 5.
    # e (critical) started 01-05 00:00, deadline 01-07 00:00, still open at 01-11 00:00: 4 d over.
    # a (high) started 01-02 00:00, deadline 01-07 00:00, fixed 01-09 06:00: 2.25 d late.
    # b (high) fixed after 3.5 d and d's first episode (fixed 01-05 00:00) after 3 d: in time.
    # c (deadline 01-15) and d's second episode (deadline 01-11 12:00) are not due yet.
    found = [(b.check_id, b.resource_id, b.kind, b.deadline, b.fixed) for b in review.breaches]
    assert found == [
        ("RVW002", "svc-e", "open past deadline", at(7), None),
        ("RVW001", "svc-a", "resolved late", at(7), at(9, 6)),
    ]
    assert [b.overdue_days for b in review.breaches] == pytest.approx([4.0, 2.25])
    # dave's waiver holds e at the period's end (carol's expired before it); a is resolved.
    assert [b.waiver for b in review.breaches] == ["dave until 2026-02-15", None]
    levels = {s.severity: s for s in review.service_levels}
    high, critical = levels["high"], levels["critical"]
    assert (high.due, high.in_time, high.resolved_late, high.open_overdue) == (3, 2, 1, 0)
    assert high.share == pytest.approx(2 / 3)
    assert (critical.due, critical.in_time, critical.open_overdue) == (1, 0, 1)
    assert critical.share == 0.0
    assert levels["medium"].due == 0 and levels["medium"].share is None


def test_coverage_gaps_and_evidence(review: ReviewData) -> None:
    # 01-07 has only the partial S4, 01-08 no snapshot at all.
    assert review.evidence.gaps == (date(2026, 1, 7), date(2026, 1, 8))
    taken = [(s.snapshot_at, s.status) for s in review.evidence.snapshots]
    assert taken == [(at(5), "complete"), (at(6, 12), "complete"), (at(7, 12), "partial"),
                     (at(9, 6), "complete"), (at(10), "complete")]  # fmt: skip
    assert all(len(s.content_hash) == 64 for s in review.evidence.snapshots)
    assert review.evidence.verify_ok, review.evidence.verify_summary
    assert any("partial" in note for note in review.notes)


def test_waivers_over_the_period(review: ReviewData) -> None:
    lines = {w.owner: w for w in review.waivers}
    # alice's ends 01-08, inside the period, and was not renewed; bob's runs to March;
    # carol's ended before the period and is still in the file.
    assert (lines["alice"].active, lines["alice"].ended, lines["alice"].unrenewed) == (
        True, True, True)  # fmt: skip
    assert (lines["bob"].active, lines["bob"].ended, lines["bob"].unrenewed) == (
        True, False, False)  # fmt: skip
    assert (lines["carol"].active, lines["carol"].ended, lines["carol"].unrenewed) == (
        False, False, True)  # fmt: skip
    assert (lines["dave"].active, lines["dave"].ended, lines["dave"].unrenewed) == (
        True, False, False)  # fmt: skip
    assert lines["alice"].expires == date(2026, 1, 8) and lines["bob"].matched == 1
    assert (lines["alice"].status, lines["carol"].status, lines["dave"].status) == (
        "expired", "expired", "active")  # fmt: skip


def test_key_scope_exposure(review: ReviewData) -> None:
    keys = {k.credential: k for k in review.keys}
    ci, ro = keys["ci"], keys["ro"]
    # ci: admin at S1-S3, so from 01-05 00:00 to S4 (01-07 12:00): 2.5 d; never expires at
    # S1-S5, so until S6 (01-10 00:00): 5 d; either: 5 d. Beyond its claimed scope at S5,
    # until S6: 0.75 d. Largest reach: all five services (access all) in S2, S3, S5, S6.
    assert ci.admin_days == pytest.approx(2.5)
    assert ci.never_expiring_days == pytest.approx(5.0)
    assert ci.exposed_days == pytest.approx(5.0)
    assert ci.exceeded_days == pytest.approx(0.75)
    assert ci.largest_reach == 5 and ci.role == "editor"
    assert (ro.exposed_days, ro.exceeded_days, ro.largest_reach) == (0.0, None, 5)


def test_requirements_sum_their_checks(world: tuple[Store, Path]) -> None:
    store, waivers = world
    framework = Framework(
        id="test",
        title="Test framework",
        version="1",
        requirements=(
            Requirement("R1", "Limits", (Mapping("RVW001", "memory limits"),)),
            Requirement("R2", "Both", (Mapping("RVW001", "x"), Mapping("RVW002", "y"))),
        ),
    )
    request = AuditRequest(checks=review_catalogue(), waivers=waivers)
    data = gather_review(store, PERIOD, request, framework=framework, settings=SHORT, now=NOW)
    both = {r.id: r for r in data.requirements}["R2"]
    assert both.violation_days == pytest.approx(13.25 + 6.0)
    assert (both.opened, both.resolved, both.open_at_end, both.severity) == (4, 3, 3, "critical")
    assert {f.id: f.requirements for f in data.checks} == {"RVW001": ("R1", "R2"),
                                                           "RVW002": ("R2",)}  # fmt: skip


def test_a_period_not_over_stops_at_the_newest_snapshots_day(world: tuple[Store, Path]) -> None:
    store, waivers = world
    request = AuditRequest(checks=review_catalogue(), waivers=waivers)
    # Made on 01-09 12:00 of a period running to 01-31, over a store whose newest snapshot
    # (S7) is stamped 01-12: the review sees to the end of that day, 01-13 00:00, and no
    # further. Days without a complete snapshot up to then: 01-07, 01-08 and 01-11.
    data = gather_review(store, Period.parse("2026-01-05", "2026-01-31"), request,
                         settings=SHORT, now=at(9, 12))  # fmt: skip
    assert data.ends_at == at(13)
    assert data.evidence.gaps == (date(2026, 1, 7), date(2026, 1, 8), date(2026, 1, 11))
    # Over [01-05, 01-13): a 4.25 d; b 3.5 d, then again from S7 (01-12) 1 d; c 01-10..01-13
    # 3 d; d 01-06 12:00..01-13 6.5 d. Total 18.25 resource-days.
    assert {f.id: f for f in data.checks}["RVW001"].violation_days == pytest.approx(18.25)
    assert any("ends after this review" in note for note in data.notes)


def test_timeline_carries_unobserved_snapshots() -> None:
    line = Timeline.observe([at(1), at(2), at(3), at(4)], ["alarm", "unobserved", "ok", "alarm"])
    assert line.alarm == (True, True, False, True)
    episodes = line.episodes()
    assert [(e.started, e.fixed, e.regression) for e in episodes] == [
        (at(1), at(3), False), (at(4), None, True)]  # fmt: skip
    assert line.seconds_in_alarm(at(1), at(5)) == 3 * 86400


def test_without_a_snapshot_before_the_period_no_trend_is_given(
    world: tuple[Store, Path], review: ReviewData
) -> None:
    store, waivers = world
    request = AuditRequest(checks=review_catalogue(), waivers=waivers)
    data = gather_review(store, Period.parse("2026-01-01", "2026-01-03"), request,
                         settings=SHORT, now=NOW)  # fmt: skip
    high = {f.id: f for f in data.checks}["RVW001"]
    # a and d from S1 (01-02 00:00) to 01-04 00:00: 2 d each; before 01-01 nothing is known.
    assert high.violation_days == pytest.approx(4.0)
    assert (high.previous_days, high.trend_days) == (None, None)
    assert any("no trend is given" in note for note in data.notes)
    # The main period's previous one (12-30 to 01-04) has a complete snapshot on 01-02 only.
    assert "5 of the previous period's 6 day(s) had no complete snapshot" in " ".join(review.notes)


def test_key_exposure_reads_only_the_snapshots_in_force(world: tuple[Store, Path]) -> None:
    store, waivers = world
    request = AuditRequest(checks=review_catalogue(), waivers=waivers)
    data = gather_review(store, Period.parse("2026-01-09", "2026-01-10"), request,
                         settings=SHORT, now=NOW)  # fmt: skip
    ci = {k.credential: k for k in data.keys}["ci"]
    # In force over [01-09, 01-11): S4 (01-07 12:00, an editor by then) until S5 01-09 06:00,
    # S5 until S6 01-10 00:00, S6 to the end. Never expiring at S4 and S5: 0.25 + 0.75 d;
    # admin never (S3, the last admin one, is no longer in force); beyond scope at S5: 0.75 d.
    assert (ci.admin_days, ci.exposed_days) == (0.0, pytest.approx(1.0))
    assert ci.exceeded_days == pytest.approx(0.75)
    assert ci.largest_reach == 5  # S5 and S6 (S4, partial, lacks a)
