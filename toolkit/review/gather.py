"""Gather a review of a period from a store: the audit brings the findings history up to
date, then every figure is computed over its rows (:mod:`toolkit.review.timeline`).

The audit judges the newest snapshot taken before the period's end, so the waiver report
is the one of that time; ``today`` (which waivers have expired) is the period's last day.
Example::

    data = gather_review(Store.open("data/store"), Period.parse("2026-01-01", "2026-01-14"))
    data.checks, data.breaches, data.evidence.gaps
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING

from toolkit._version import __version__
from toolkit.audit import SEVERITIES, AuditRequest, ensure_views, run_audit
from toolkit.errors import AuditError
from toolkit.review.check_figures import check_figures, requirement_figures, service_levels
from toolkit.review.figures import (
    Breach,
    CheckFigures,
    Evidence,
    KeyExposure,
    ReviewData,
    ServiceLevel,
    SnapshotLine,
    WaiverLine,
)
from toolkit.review.key_exposure import key_exposure
from toolkit.review.observations import finding_timelines, resource_names
from toolkit.review.period import coverage_gaps
from toolkit.review.settings import ReviewSettings

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pandas as pd

    from toolkit.audit import AuditResult
    from toolkit.audit.frameworks import Framework
    from toolkit.review.observations import Moment
    from toolkit.review.period import Period
    from toolkit.review.timeline import Timeline
    from toolkit.snapshot import SnapshotInfo, Store

__all__ = ["gather_review"]


def gather_review(
    store: Store,
    period: Period,
    request: AuditRequest | None = None,
    *,
    framework: Framework | None = None,
    settings: ReviewSettings | None = None,
    now: datetime | None = None,
) -> ReviewData:
    """The review of ``period`` (:class:`~toolkit.review.ReviewData`); ``request`` says which
    checks, waivers and settings the audit uses, ``framework`` adds per-requirement figures.
    Raises :class:`~toolkit.errors.AuditError` when no snapshot was taken before the
    period's end."""
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    committed = [s for s in store.snapshots() if s.status in ("complete", "partial")]
    ends_at = period.end_by(_horizon(now, committed))
    before_end = [s for s in committed if s.snapshot_at < ends_at]
    if not before_end:
        raise AuditError(
            f"no snapshot was taken before the end of the period {period}: choose a later "
            "--to, or take a snapshot first (`platform-audit snapshot`)"
        )
    asked = (request or AuditRequest()).but(
        snapshot=before_end[-1].snapshot_id, compare_to=None, today=period.last
    )
    result = run_audit(store, asked)
    moments, lines = finding_timelines(result)
    names = resource_names(store.duckdb())
    production = asked.options.production_pattern if asked.options else None
    allowed = (settings or ReviewSettings()).time_to_fix_days
    allowed = {s: allowed[s] for s in SEVERITIES if s in allowed}
    per_check = _per_check(result, lines, moments, period, ends_at)
    breaches, levels = _service_levels(result, lines, names, allowed, (period.start, ends_at))
    evidence = _evidence(store, moments, period, ends_at)
    return ReviewData(
        period=period,
        ends_at=ends_at,
        generated_at=now,
        store_url=store.url,
        toolkit_version=__version__,
        framework=(framework.id, framework.title, framework.version) if framework else None,
        time_to_fix_days=allowed,
        checks=tuple(_with_requirements(per_check, framework)),
        requirements=requirement_figures(framework, per_check) if framework else (),
        breaches=tuple(breaches),
        service_levels=tuple(levels),
        waivers=tuple(_waiver_lines(result.waiver_report, period)),
        keys=tuple(_keys(store, moments, production, period.start, ends_at)),
        evidence=evidence,
        notes=tuple(_notes(evidence, result, moments, period, ends_at)),
    )


def _per_check(
    result: AuditResult,
    lines: Mapping[tuple[str, str], Timeline],
    moments: Sequence[Moment],
    period: Period,
    ends_at: datetime,
) -> dict[str, CheckFigures]:
    """Each check of the audit with its figures, in the audit's order."""
    known = any(m.snapshot_at < period.start for m in moments)
    by_check: dict[str, list[Timeline]] = {}
    for (check, _), line in lines.items():
        by_check.setdefault(check, []).append(line)
    return {
        spec.id: check_figures(
            (spec.id, spec.title, spec.severity),
            by_check.get(spec.id, []),
            period,
            ends_at,
            previous_known=known,
        )
        for spec in result.checks
    }


def _service_levels(
    result: AuditResult,
    lines: Mapping[tuple[str, str], Timeline],
    names: Mapping[tuple[str, str], str],
    allowed: Mapping[str, int],
    span: tuple[datetime, datetime],
) -> tuple[list[Breach], list[ServiceLevel]]:
    """The breaches (a still open one with the waiver holding it) and service levels."""
    severity = {spec.id: spec.severity for spec in result.checks}
    findings = [
        (check, severity[check], resource, names.get((check, resource)), line)
        for (check, resource), line in lines.items()
        if check in severity
    ]
    breaches, levels = service_levels(findings, allowed, *span)
    waived = _waived(result)
    breaches = [
        replace(b, waiver=waived.get((b.check_id, b.resource_id))) if b.fixed is None else b
        for b in breaches
    ]
    return breaches, levels


def _keys(
    store: Store, moments: Sequence[Moment], production: str | None, start: datetime, end: datetime
) -> list[KeyExposure]:
    """Key exposure over ``[start, end)``, reading only the snapshots whose state holds in it
    (and the one before the first, which a partial one carries): expanding every key's reach
    over a whole store's history costs far more."""
    times = [m.snapshot_at for m in moments]
    last = len(times) - 1
    first = next((i for i in range(last + 1) if i == last or times[i + 1] > start), 0)
    window = [m for m in moments[max(first - 1, 0) :] if m.snapshot_at < end]
    con = store.duckdb([m.snapshot_id for m in window])
    ensure_views(con, production=production)
    return key_exposure(con, window, start, end)


def _waived(result: AuditResult) -> dict[tuple[str, str], str]:
    """Who waived each finding in alarm at the audited snapshot, and until when."""
    rows = result.findings[result.findings.waived]
    return {
        (str(c), str(r)): f"{owner} until {_day(expires)}"
        for c, r, owner, expires in zip(
            rows.check_id, rows.resource_id, rows.waiver_owner, rows.waiver_expires, strict=True
        )
    }


def _with_requirements(
    per_check: Mapping[str, CheckFigures], framework: Framework | None
) -> list[CheckFigures]:
    """Each check's figures with the requirements of ``framework`` it is evidence for."""
    if framework is None:
        return list(per_check.values())
    return [replace(f, requirements=framework.requirements_of(c)) for c, f in per_check.items()]


def _waiver_lines(report: pd.DataFrame, period: Period) -> list[WaiverLine]:
    lines = []
    for row in report.to_dict("records"):
        expires = _day(row["expires"])
        lines.append(
            WaiverLine(
                entry=int(row["entry"]),
                check_id=str(row["check_id"]),
                selector=str(row["selector"]),
                owner=str(row["owner"]),
                reason=str(row["reason"]),
                expires=expires,
                status=str(row["status"]),
                matched=int(row["matched"]),
                active=expires >= period.first,
                ended=period.first <= expires <= period.last,
                unrenewed=expires <= period.last,
            )
        )
    return lines


def _day(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def _horizon(now: datetime, committed: Sequence[SnapshotInfo]) -> datetime:
    """How far a review can see: now, or the end of the newest snapshot's day when the
    store's clock runs ahead (the demo's simulated days)."""
    if not committed:
        return now
    newest = max(s.snapshot_at for s in committed).astimezone(UTC)
    return max(now, datetime.combine(newest.date() + timedelta(days=1), time(), tzinfo=UTC))


def _evidence(
    store: Store, moments: Sequence[Moment], period: Period, ends_at: datetime
) -> Evidence:
    hashes = {s.snapshot_id: s.content_hash for s in store.snapshots()}
    inside = [m for m in moments if period.start <= m.snapshot_at < ends_at]
    report = store.verify(content=[m.snapshot_id for m in inside])
    return Evidence(
        snapshots=tuple(
            SnapshotLine(m.snapshot_id, m.snapshot_at, m.status, hashes[m.snapshot_id])
            for m in inside
        ),
        gaps=tuple(coverage_gaps(period, [(m.snapshot_at, m.status) for m in moments], ends_at)),
        verify_ok=report.ok,
        verify_summary=report.summary(),
        verify_problems=tuple([str(b) for b in report.breaks[:20]] + list(report.findings[:20])),
    )


def _notes(
    evidence: Evidence,
    result: AuditResult,
    moments: Sequence[Moment],
    period: Period,
    ends_at: datetime,
) -> list[str]:
    """What else weakens the review's conclusions (the coverage gaps are said apart)."""
    notes = []
    partial = [s for s in evidence.snapshots if s.status == "partial"]
    if partial:
        notes.append(
            f"{len(partial)} snapshot(s) of the period are partial: a finding they could not "
            "collect keeps the state it had before"
        )
    if not evidence.verify_ok:
        notes.append(f"store verify failed: {evidence.verify_summary}")
    previous = period.previous()
    before = [(m.snapshot_at, m.status) for m in moments]
    if not any(at < period.start for at, _ in before):
        notes.append(
            f"no snapshot was taken before the period: nothing is known of the previous one "
            f"({previous}), so no trend is given"
        )
    elif gaps := coverage_gaps(previous, before, period.start):
        notes.append(
            f"{len(gaps)} of the previous period's {previous.days} day(s) had no complete "
            "snapshot: the trend against it is weaker"
        )
    if ends_at < period.end:
        notes.append(
            "the period ends after this review was made: its figures stop at "
            f"{ends_at:%Y-%m-%d %H:%M} UTC"
        )
    notes.extend(result.warnings)
    return notes
