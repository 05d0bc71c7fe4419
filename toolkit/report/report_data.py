"""Everything a report shows, gathered once from a store: the audit, changes, trends, reach.

The audit is :func:`toolkit.audit.run_audit` over the whole history; the service changes
are :func:`~toolkit.report.snapshot_diff.diff_snapshots` between the compared and the
judged snapshot; the trends and the key reach are SQL over the store's views
(:mod:`toolkit.report.trends`).
Every builder (HTML, Markdown, JSON, CSV) reads this one record. Example::

    data = gather_report(Store.open("data/store"), compare_to="0193e1")
    data.result.findings, data.trends.runtime, data.reach, data.verify.summary()
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from toolkit._version import __version__
from toolkit.audit import AuditRequest, Catalogue, run_audit
from toolkit.audit.findings import ALARMING
from toolkit.errors import AuditError
from toolkit.report.snapshot_diff import diff_snapshots
from toolkit.report.trends import Trends, key_reach, load_trends

if TYPE_CHECKING:
    from typing import Unpack

    import pandas as pd

    from toolkit.audit import AuditResult
    from toolkit.audit.engine import AuditFields
    from toolkit.report.snapshot_diff import SnapshotDiff
    from toolkit.snapshot import SnapshotInfo, Store, VerifyReport

__all__ = ["ReportData", "gather_report"]


@dataclass(frozen=True, eq=False)
class ReportData:
    """One report's content; ``changes`` is None when nothing older was complete."""

    store_url: str
    generated_at: datetime
    toolkit_version: str
    since: datetime | None
    result: AuditResult
    changes: SnapshotDiff | None
    trends: Trends
    reach: pd.DataFrame
    """Judged snapshot: credential, role, access, project_id, project_name, level, resources."""
    snapshots: tuple[SnapshotInfo, ...]
    """The snapshots the trends cover (all, or those since ``since``), oldest first."""
    verify: VerifyReport
    """The chain of every snapshot, and the content of ``content_verified`` only."""
    content_verified: tuple[str, ...] = ()
    """The snapshots whose content ``verify`` recomputed: the judged and the compared one."""

    @property
    def configured(self) -> tuple[str, ...]:
        """What the audit was told that changes what it finds (``AuditResult.configured``)."""
        return self.result.configured

    @property
    def open_findings(self) -> pd.DataFrame:
        """Findings in alarm in the judged snapshot (new, regressed, open), waived included."""
        findings = self.result.findings
        return findings[findings.state.isin(ALARMING)].reset_index(drop=True)

    @property
    def unwaived_open(self) -> pd.DataFrame:
        """Open findings that no active waiver hides: what the review has to act on."""
        frame = self.open_findings
        return frame[~frame.waived].reset_index(drop=True)

    def state_count(self, state: str) -> int:
        """Unwaived findings in ``state`` (new, regressed, open or resolved)."""
        findings = self.result.findings
        return int(((findings.state == state) & ~findings.waived).sum())


def gather_report(
    store: Store,
    request: AuditRequest | None = None,
    *,
    since: datetime | None = None,
    **fields: Unpack[AuditFields],
) -> ReportData:
    """Audit the newest snapshot of ``store`` (partial or not: its header then says what it
    did not collect) and gather what the report shows.

    ``request`` (:class:`~toolkit.audit.AuditRequest`, with keyword arguments changing its fields)
    is what the audit is asked: ``compare_to`` (an id or unique prefix) defaults to the complete
    snapshot before the judged one; ``since`` limits the trends and the evidence appendix to
    snapshots taken at
    or after it (naive times are UTC); ``waivers`` defaults to the configured file;
    ``checks`` to the checks ``options`` configure (``Catalogue.select`` makes a subset).
    Raises :class:`~toolkit.errors.AuditError` for a store without a snapshot, an
    unknown snapshot id, or a ``since`` after the newest snapshot. The audit brings the
    store's findings history up to date first (:func:`~toolkit.audit.run_audit`).
    """
    since = _utc(since)
    shown = [s for s in store.snapshots() if s.status in ("complete", "partial")]
    snapshots = tuple(s for s in shown if since is None or s.snapshot_at >= since)
    if since is not None and shown and not snapshots:  # none at all: the audit says so
        newest = max(shown, key=lambda s: s.snapshot_at)
        raise AuditError(_after_the_newest(since, newest))
    con = store.duckdb()
    # run_audit reads the waivers file before any check runs, and names it in its errors
    result = run_audit(store, (request or AuditRequest()).but(**fields))
    recomputed = tuple(r.snapshot_id for r in (result.target, result.compare) if r)
    changes = None
    if result.compare is not None:
        # The findings changes are the audit's own; an empty catalogue keeps this to the
        # service inventory.
        changes = diff_snapshots(
            con,
            before=result.compare.snapshot_id,
            after=result.target.snapshot_id,
            checks=Catalogue((), {}),
        )
    return ReportData(
        store_url=store.url,
        generated_at=datetime.now(UTC).replace(microsecond=0),
        toolkit_version=__version__,
        since=since,
        result=result,
        changes=changes,
        trends=load_trends(con, result, since),
        reach=key_reach(con, result.target.snapshot_id),
        snapshots=snapshots,
        # The chain whole, the content of the snapshots this report presents: recomputing
        # every snapshot's content is minutes on a large store (`store verify` does it).
        verify=store.verify(content=recomputed),
        content_verified=recomputed,
    )


def _after_the_newest(since: datetime, newest: SnapshotInfo) -> str:
    """Why a report from ``since`` on would have no trends and no evidence to show."""
    return (
        f"since {since:%Y-%m-%d %H:%M:%S} UTC is after the newest snapshot, taken "
        f"{newest.snapshot_at:%Y-%m-%d %H:%M:%S} UTC: the report would have no trends and no "
        "evidence. Give an earlier --since, or leave it out for the whole history"
    )


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
