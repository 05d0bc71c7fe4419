"""Every finding's timeline, from the rows an audit read out of the findings history.

:func:`~toolkit.audit.run_audit` returns every alarm and ``unknown`` row of the history
(``AuditResult.rows``, with every row of the partial snapshots) and, per partial snapshot,
the checks blind there (``AuditResult.blind``). Per finding ever in alarm and committed
snapshot, the observation is ``alarm`` (any of its rows there alarms), ``unobserved`` (its
rows there all say ``unknown``, or it has none in a snapshot where its check is blind) or
``ok`` (see :mod:`toolkit.review.timeline`). Example::

    moments, lines = finding_timelines(result)
    lines[("RES001", "svc-1")].episodes()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb

from toolkit.review.timeline import Timeline

if TYPE_CHECKING:
    from datetime import datetime

    from toolkit.audit import AuditResult

__all__ = ["Moment", "finding_timelines", "resource_names"]

_GROUPED = """
with grouped as (
    select check_id, resource_id, snapshot_id, bool_or(status = 'alarm') as alarm,
        bool_and(status = 'unknown') as unknown
    from review_rows group by all
)
select g.* from grouped g
semi join (select distinct check_id, resource_id from grouped where alarm) a
    using (check_id, resource_id)
order by check_id, resource_id
"""


@dataclass(frozen=True)
class Moment:
    """A committed snapshot (complete or partial), in chain order."""

    snapshot_id: str
    snapshot_at: datetime
    status: str


def finding_timelines(
    result: AuditResult,
) -> tuple[list[Moment], dict[tuple[str, str], Timeline]]:
    """The committed snapshots, oldest first, and the timeline of each finding ever in
    alarm, by ``(check_id, resource_id)``."""
    times = result.snapshot_times.sort_values("seq")
    moments = [
        Moment(str(i), at.to_pydatetime(), str(status))
        for i, at, status in zip(
            times.snapshot_id, times.snapshot_at, times.snapshot_status, strict=True
        )
        if status in ("complete", "partial")
    ]
    blind = set(zip(result.blind.check_id, result.blind.snapshot_id, strict=True))
    seen: dict[tuple[str, str], dict[str, str]] = {}
    con = duckdb.connect()
    try:
        con.register("review_rows", result.rows)
        for check, resource, snapshot, alarm, unknown in con.execute(_GROUPED).fetchall():
            observed = "alarm" if alarm else "unobserved" if unknown else "ok"
            seen.setdefault((check, resource), {})[snapshot] = observed
    finally:
        con.close()
    at = [m.snapshot_at for m in moments]
    lines = {}
    for (check, resource), rows in seen.items():
        observations = [
            rows.get(m.snapshot_id, "unobserved" if (check, m.snapshot_id) in blind else "ok")
            for m in moments
        ]
        lines[(check, resource)] = Timeline.observe(at, observations)
    return moments, lines


_NAMES = """
select check_id, resource_id, arg_max(resource_name, snapshot_at) as resource_name
from check_results
where status = 'alarm' and resource_name is not null
group by all
"""


def resource_names(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], str]:
    """The newest name each finding's resource had in alarm, from the findings history."""
    return {(c, r): str(n) for c, r, n in con.execute(_NAMES).fetchall()}
