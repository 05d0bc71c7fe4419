"""The report's numbers over time, and the judged snapshot's key reach, as SQL over the views.

Per committed snapshot: alarms per severity (from the audit's history), crashing replicas,
services OOM-killed in the day before the snapshot, the share of services with both CPU
and memory limits, and how many services each audited key can read. ``key_reach`` is the
credential x project grid of the judged snapshot, from the ``credential_reach`` view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from toolkit.audit import SEVERITIES, ensure_views
from toolkit.audit.lifecycle import query_frame

if TYPE_CHECKING:
    from datetime import datetime

    import duckdb

    from toolkit.audit import AuditResult

__all__ = ["ACCESS_LEVELS", "Trends", "key_reach", "load_trends"]

ACCESS_LEVELS = (
    "no access",
    "sees that it exists",
    "reads configuration",
    "reads secret values and changes",
    "reads, changes and deletes",
)
"""What a key may do in a project, by level (the heatmap's value): the most it may do."""

_COMMITTED = """
select snapshot_id, snapshot_at, seq from snapshots
where status in ('complete', 'partial') and ($since::timestamptz is null or snapshot_at >= $since)
"""

_RUNTIME = f"""
with chosen as ({_COMMITTED}),
crashing as (
    select snapshot_id, count(*) as n from replicas where status = 'crashing' group by all
),
oom as (
    select e.snapshot_id, count(distinct e.service_id) as n
    from replica_events e join chosen c using (snapshot_id)
    where e.type = 'oom_killed'
        and coalesce(e.last_seen, e.timestamp, e.first_seen) >= c.snapshot_at - interval 1 day
    group by all
),
limits as (
    select snapshot_id, count(*) as services,
        count(*) filter (where cpu_limits_millicores > 0 and memory_limits_megabytes > 0)
            as limited
    from services group by all
)
select c.snapshot_id, c.snapshot_at,
    coalesce(crashing.n, 0) as crashing_replicas,
    coalesce(oom.n, 0) as oom_killed_services,
    coalesce(limits.services, 0) as services,
    if(limits.services > 0, 100.0 * limits.limited / limits.services, null) as limits_share
from chosen c
left join crashing using (snapshot_id)
left join oom using (snapshot_id)
left join limits using (snapshot_id)
order by c.seq
"""  # noqa: S608 - constant text

_REACH_TREND = f"""
select c.snapshot_id, any_value(c.snapshot_at) as snapshot_at, r.credential_name,
    count(*) filter (where r.resource_type = 'service' and r.can_read_config) as services
from credential_reach r join ({_COMMITTED}) c using (snapshot_id)
group by c.snapshot_id, r.credential_name
order by any_value(c.seq), r.credential_name
"""  # noqa: S608 - constant text

_KEY_REACH = """
with keys as (
    select name as credential_name, any_value(role) as role, any_value(access) as access
    from credentials where snapshot_id = $snapshot group by name
),
grid as (
    select k.*, p.id as project_id, p.name as project_name
    from keys k cross join (select id, name from projects where snapshot_id = $snapshot) p
),
reach as (
    select credential_name, project_id,
        max(case when can_delete then 4 when can_change then 3 when can_read_config then 2
            else 1 end) as level,
        count(*) filter (where can_read_config) as resources
    from credential_reach
    where snapshot_id = $snapshot and project_id is not null
    group by all
)
select g.credential_name, g.role, g.access, g.project_id, g.project_name,
    coalesce(r.level, 0) as level, coalesce(r.resources, 0) as resources
from grid g left join reach r using (credential_name, project_id)
order by g.credential_name, g.project_name, g.project_id
"""


@dataclass(frozen=True, eq=False)
class Trends:
    """Per-snapshot series (oldest first) for the report's charts.

    ``severity``: snapshot_id, snapshot_at, severity, alarms (one row per severity and
    snapshot, zeros included); ``runtime``: snapshot_id, snapshot_at, crashing_replicas,
    oom_killed_services, services, limits_share (percent); ``reach``: snapshot_id,
    snapshot_at, credential_name, services (services the key can read).
    """

    severity: pd.DataFrame
    runtime: pd.DataFrame
    reach: pd.DataFrame

    @property
    def empty(self) -> bool:
        return self.runtime.empty


def load_trends(
    con: duckdb.DuckDBPyConnection, result: AuditResult, since: datetime | None
) -> Trends:
    """The series over the snapshots of ``con`` taken at or after ``since`` (all if None)."""
    ensure_views(con)
    params = {"since": since}
    runtime = query_frame(con, _RUNTIME, params)
    return Trends(
        severity=_severity_series(result, runtime),
        runtime=runtime,
        reach=query_frame(con, _REACH_TREND, params),
    )


def _severity_series(result: AuditResult, runtime: pd.DataFrame) -> pd.DataFrame:
    """Alarms per severity and snapshot, as the checks raised them (waivers not applied)."""
    history = result.history
    alarms = history[history.status == "alarm"]
    counts = alarms.groupby(["snapshot_id", "severity"]).size()
    rows = [
        (sid, at, severity, int(counts.get((sid, severity), 0)))
        for sid, at in zip(runtime.snapshot_id, runtime.snapshot_at, strict=True)
        for severity in SEVERITIES
    ]
    return pd.DataFrame(rows, columns=["snapshot_id", "snapshot_at", "severity", "alarms"])


def key_reach(con: duckdb.DuckDBPyConnection, snapshot_id: str) -> pd.DataFrame:
    """Each configured credential x each project of the snapshot, with the access level.

    ``level`` indexes :data:`ACCESS_LEVELS`; ``resources`` counts the project's resources
    (the project, its environments and services) whose configuration the key can read.
    A key whose role or access is unknown (revoked, expired, a user's session) reaches
    nothing here, as in ``credential_reach``.
    """
    ensure_views(con)
    return query_frame(con, _KEY_REACH, {"snapshot": snapshot_id})
