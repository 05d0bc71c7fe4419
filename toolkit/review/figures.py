"""What a review shows, as plain values: one record per check, requirement, breach,
service level, waiver, key and snapshot, gathered by :func:`~toolkit.review.gather_review`
and written by every format (HTML, Markdown, JSON, CSV).

Counts are findings (a check and a resource); times are in days (86 400 s). See
:mod:`toolkit.review.timeline` for time in violation and episodes, and
:mod:`toolkit.review.service_levels` for breaches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import date, datetime

    from toolkit.review.period import Period

__all__ = [
    "Breach",
    "CheckFigures",
    "Evidence",
    "KeyExposure",
    "ReviewData",
    "ServiceLevel",
    "SnapshotLine",
    "WaiverLine",
    "coverage_sentence",
]


@dataclass(frozen=True)
class CheckFigures:
    """One check (or, with ``checks``, one requirement: the sums of its checks' figures).

    ``open_at_start``: in alarm just before the period; ``opened``: episodes that started
    in it, of which ``regressions`` after an earlier one; ``resolved``: episodes a snapshot
    in it saw fixed; ``open_at_end``: in alarm at its end (so ``open_at_start + opened -
    resolved == open_at_end``). ``violation_days``: resource-days in alarm in the period,
    ``previous_days`` in the previous period of the same length (None when no snapshot was
    taken before the period: nothing is known of the previous one).
    """

    id: str
    title: str
    severity: str
    open_at_start: int
    opened: int
    resolved: int
    open_at_end: int
    regressions: int
    violation_days: float
    previous_days: float | None
    checks: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()

    @property
    def trend_days(self) -> float | None:
        """Time in violation against the previous period (positive: worse; None: unknown)."""
        if self.previous_days is None:
            return None
        return self.violation_days - self.previous_days


@dataclass(frozen=True)
class Breach:
    """A finding kept in alarm past its time to fix: ``fixed`` late, or still open (None)
    at the period's end; ``overdue_days`` past its ``deadline`` (then, or at that end).
    ``waiver``: who waived a finding still open, and until when (the waiver holding it at
    the period's end), else None: a waived breach is an accepted risk, still a breach."""

    check_id: str
    severity: str
    resource_id: str
    resource_name: str | None
    started: datetime
    deadline: datetime
    fixed: datetime | None
    allowed_days: int
    overdue_days: float
    waiver: str | None = None

    @property
    def kind(self) -> str:
        return "open past deadline" if self.fixed is None else "resolved late"


@dataclass(frozen=True)
class ServiceLevel:
    """One severity's service level in the period. ``due``: episodes fixed in the period
    plus those still open past their deadline at its end; ``in_time``: fixed within the
    allowed days; ``share``: ``in_time / due`` (None when nothing was due)."""

    severity: str
    allowed_days: int
    due: int
    in_time: int
    resolved_late: int
    open_overdue: int

    @property
    def share(self) -> float | None:
        return self.in_time / self.due if self.due else None


@dataclass(frozen=True)
class WaiverLine:
    """A waiver of the file, as the period saw it. A waiver records no start, so it counts as
    in force from before the period until its ``expires`` day (included): ``active`` when
    that is on or after the period's first day, ``ended`` when it falls in the period, and
    ``unrenewed`` when it has passed by the period's end and the entry is still in the file:
    its owner neither renewed it (a later ``expires``) nor removed it. ``status`` and
    ``matched`` are the audit's waiver report at the period's end."""

    entry: int
    check_id: str
    selector: str
    owner: str
    reason: str
    expires: date
    status: str
    matched: int
    active: bool
    ended: bool
    unrenewed: bool


@dataclass(frozen=True)
class KeyExposure:
    """One audited credential over the period. ``largest_reach``: the most services it could
    read the configuration of in a snapshot whose state holds in the period;
    ``exposed_days``: days it had the admin role or was an API key that never expires;
    ``exceeded_days``: days a verified-mode probe saw it reach what its claimed scope
    excludes (None: no snapshot in force in the period probed it)."""

    credential: str
    key_name: str | None
    role: str | None
    largest_reach: int
    admin_days: float
    never_expiring_days: float
    exposed_days: float
    exceeded_days: float | None


@dataclass(frozen=True)
class SnapshotLine:
    """A snapshot taken in the period: when, complete or partial, its content hash."""

    snapshot_id: str
    snapshot_at: datetime
    status: str
    content_hash: str


@dataclass(frozen=True)
class Evidence:
    """The period's snapshots, its coverage gaps (days without a complete snapshot) and
    ``store verify`` (the chain whole, the content of the period's snapshots)."""

    snapshots: tuple[SnapshotLine, ...]
    gaps: tuple[date, ...]
    verify_ok: bool
    verify_summary: str
    verify_problems: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class ReviewData:
    """One review's content (:func:`~toolkit.review.gather_review`)."""

    period: Period
    ends_at: datetime
    """The period's end, or the time the review was made when that came first."""
    generated_at: datetime
    store_url: str
    toolkit_version: str
    framework: tuple[str, str, str] | None
    """(id, title, version) of the framework the requirements come from."""
    time_to_fix_days: dict[str, int]
    checks: tuple[CheckFigures, ...]
    requirements: tuple[CheckFigures, ...]
    breaches: tuple[Breach, ...]
    service_levels: tuple[ServiceLevel, ...]
    waivers: tuple[WaiverLine, ...]
    keys: tuple[KeyExposure, ...]
    evidence: Evidence
    notes: tuple[str, ...] = ()
    """What else weakens the review's conclusions: partial snapshots, a failed `store verify`,
    a period not over yet (the coverage gaps are ``evidence.gaps``)."""


def coverage_sentence(gaps: tuple[date, ...], days: int) -> str:
    """The coverage gaps in one sentence, for every format to say first."""
    from toolkit.review.period import gap_runs

    if not gaps:
        return "Every day of the period has a complete snapshot."
    runs = ", ".join(a.isoformat() if a == b else f"{a} to {b}" for a, b in gap_runs(gaps))
    return (
        f"{len(gaps)} of the period's {days} day(s) had no complete snapshot ({runs}): states "
        "there are carried from the snapshot before, which weakens every figure below."
    )
