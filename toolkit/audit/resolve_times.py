"""Mean time to resolve: the alarm episodes of each finding, from the lifecycle's
``audit_summary`` (a bit per snapshot read, set where the finding was in alarm) and
``audit_unobserved`` (:mod:`toolkit.audit.lifecycle`).

An episode is a run of consecutive snapshots read in alarm; a snapshot that did not observe
the finding neither ends nor starts one. An episode followed by a snapshot read (observing
the finding not in alarm) was resolved then; its time to resolve runs from its first alarm
to that snapshot. The runs are found per finding in its row of marks, one character per
snapshot read, so the work grows with the findings, not with their rows in the history.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pyarrow as pa

from toolkit.audit.lifecycle import position_count, query_frame

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

__all__ = ["mean_time_to_resolve"]

# The resolved episodes (:func:`_episodes`: positions of the first alarm and of the snapshot
# that resolved it), with the snapshots' times.
_MTTR_SQL = """
with resolved as (
    select e.check_id, epoch(fixed.snapshot_at) - epoch(first.snapshot_at) as seconds
    from audit_episodes e
    join audit_positions first on first.pos = e.started
    join audit_positions fixed on fixed.pos = e.resolved
)
select
    c.check_id,
    c.severity,
    count(r.seconds) as resolved_count,
    avg(r.seconds) / 3600.0 as mttr_hours
from audit_checks c
left join resolved r on r.check_id = c.check_id
group by c.check_id, c.severity, c.severity_rank
order by c.severity_rank, c.check_id
"""

# A run of snapshots in alarm ('1') or not observing the finding ('u'), holding an alarm:
# an unobserved snapshot neither ends nor starts an episode.
_EPISODE = re.compile("[1u]*1[1u]*")
_EPISODES_SCHEMA = pa.schema(
    [("check_id", pa.string()), ("started", pa.int64()), ("resolved", pa.int64())]
)


def mean_time_to_resolve(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per check: ``check_id, severity, resolved_count, mttr_hours`` over the snapshots read
    up to T (:func:`~toolkit.audit.lifecycle.build_positions`).

    ``mttr_hours`` is null for a check none of whose alarms has been resolved yet.
    """
    con.register("audit_episodes", _episodes(con))
    return query_frame(con, _MTTR_SQL)


def _episodes(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """``check_id, started, resolved``: the positions of the first alarm of each resolved
    episode and of the snapshot that resolved it, from each finding's ``alarms`` (one
    character a snapshot read) with its unobserved snapshots marked."""
    count = position_count(con)
    unobserved: dict[tuple[str, str], list[int]] = {}
    for check_id, resource_id, pos in con.execute(
        "select check_id, resource_id, pos from audit_unobserved"
    ).fetchall():
        unobserved.setdefault((check_id, resource_id), []).append(pos)
    found: dict[str, list[object]] = {name: [] for name in _EPISODES_SCHEMA.names}
    marked = con.execute("select check_id, resource_id, alarms::varchar from audit_summary")
    for check_id, resource_id, alarms in marked.fetchall():
        marks = list(alarms)
        for pos in unobserved.get((check_id, resource_id), ()):
            marks[pos - 1] = "u"
        for run in _EPISODE.finditer("".join(marks)):
            if run.end() < count:  # the snapshot after it observed the finding, not in alarm
                found["check_id"].append(check_id)
                found["started"].append(run.group().index("1") + run.start() + 1)
                found["resolved"].append(run.end() + 1)
    return pa.table(found, schema=_EPISODES_SCHEMA)
