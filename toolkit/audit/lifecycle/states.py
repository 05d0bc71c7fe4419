"""Findings over time, in DuckDB SQL over the union of every check's rows.

A finding is a check id plus a resource id. Between a target snapshot T and the snapshot it
is compared with, C (older), its state is:

* ``new``       in alarm at T, not at C, and never in alarm at or before C;
* ``open``      in alarm at T and at C;
* ``regressed`` in alarm at T, not at C, but in alarm at some snapshot before C;
* ``resolved``  in alarm at C, and ok or absent (the resource is gone) at T.

A partial snapshot may have failed to collect what a check reads (``audit_blind``): a
finding of that check with no row there was not observed (``audit_unobserved``), and is
taken to be as it was when last observed. Such a snapshot neither ends nor starts an
episode, and a finding not observed at T has status ``unobserved``. So does a finding whose
check could not judge it there (its rows there say ``unknown``), with that row's reason.

With C the snapshot just before T (the default) "before C" is simply "ever before". With
no C (T is the first snapshot) every alarm is new. ``first_seen`` and ``last_seen`` are the
first and last snapshot, up to T, in which the finding was in alarm. The engine registers
the check rows as ``audit_results`` (the findings history's rows of the audit's check
versions: see :mod:`toolkit.audit.judge`), the snapshots it read (:func:`build_positions`:
all of them, or the few of a latest-only audit), the partial snapshots' blind checks as
``audit_blind`` and the check metadata as ``audit_checks`` before calling the others. Only
the snapshots read are numbered: one left unread would look like a fix.

The described snapshots' rows are read once (``audit_text``); every other snapshot is known
by each finding's marks (both: :mod:`toolkit.audit.lifecycle.marks`), folded into a row per finding
ever in alarm (:func:`build_summary`), which the states and the episodes read: the work
grows with the findings, not with the rows of the snapshots they span.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.audit.lifecycle.marks import resolved_episodes

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import duckdb
    import pandas as pd

__all__ = [
    "STATES",
    "build_names",
    "build_positions",
    "build_summary",
    "build_unobserved",
    "findings_table",
    "mean_time_to_resolve",
    "query_frame",
]

STATES = ("new", "regressed", "open", "resolved")

# One row per finding ever in alarm in the snapshots read, from its marks (a character per
# snapshot read, by position, oldest first: toolkit.audit.lifecycle.marks) and its rows in
# T and C. ``alarms``: a bit per snapshot read, set where in alarm.
# {first_last}: when the finding was first and last in alarm (by position when the snapshots
# read are in time order, else over every alarm).
_SUMMARY_SQL = """
create or replace temp table audit_summary as
with marked as (
    select check_id, resource_id, replace(marks, 'u', '0') as alarms
    from audit_marks where contains(marks, '1')
),
spans as (
    select *,
        instr(alarms, '1') as first_pos,
        length(alarms) + 1 - instr(reverse(alarms), '1') as last_pos,
        -- its last alarm before C (where it was last observed, when neither T nor C did)
        nullif($cpos - instr(reverse(left(alarms, $cpos - 1)), '1'), $cpos) as before_pos
    from marked
),
kept as (  -- its rows in T and C: audit_text holds them whole
    select check_id, resource_id,
        bool_or(p.seq = $target) as row_now,
        bool_or(p.seq = $target and t.status <> 'unknown') as judged_now,
        max(p.pos) as described_pos
    from audit_text t
    join audit_positions p using (snapshot_id)
    where p.seq = $target or p.seq = $compare
    group by all
)
select s.check_id, s.resource_id,
    s.alarms::bit as alarms,
    substr(s.alarms, $tpos, 1) = '1' as alarm_at_target,
    coalesce(substr(s.alarms, $cpos, 1) = '1', false) as alarm_at_compare,
    s.before_pos is not null as alarmed_before,
    coalesce(k.judged_now, false) as present_now,
    coalesce(k.row_now and not k.judged_now, false) as unknown_at_target,  -- none judged it
    {first_last},
    coalesce(k.described_pos, s.before_pos) as described_pos
from spans s
left join kept k using (check_id, resource_id)
"""
_BY_POSITION = """
    (select snapshot_at from audit_positions where pos = s.first_pos) as first_seen,
    (select snapshot_at from audit_positions where pos = s.last_pos) as last_seen"""
_OVER_ALARMS = """
    (select min(snapshot_at) from audit_positions where substr(s.alarms, pos, 1) = '1')
        as first_seen,
    (select max(snapshot_at) from audit_positions where substr(s.alarms, pos, 1) = '1')
        as last_seen"""

# The committed snapshots the checks read, up to T, numbered in order (pos): a snapshot
# outside the list (not read in a latest-only audit) is no observation at all.
_POSITIONS_SQL = """
create or replace temp table audit_positions as
select snapshot_id, seq, snapshot_at, row_number() over (order by seq) as pos
from snapshots
where status in ('complete', 'partial') and seq <= $target
    and ($ids is null or list_contains($ids, snapshot_id))
"""

_FINDINGS_SQL = """
create or replace temp table audit_findings as
with stated_pairs as (  -- only a finding in alarm at T or C (or, not observed there, when
    -- last observed) has a state: the others (most rows of a latest-only audit) are left out
    select check_id, resource_id from audit_summary where alarm_at_target or alarm_at_compare
    union
    select check_id, resource_id from audit_unobserved where seq = $target or seq = $compare
),
marks as (  -- the alarms and unobserved snapshots of findings some snapshot did not observe
    select *, pos - row_number() over (partition by check_id, resource_id order by pos) as island
    from (  -- the alarms from the summary's bits (get_bit counts from 0, positions from 1)
        select a.check_id, a.resource_id, p.pos, p.seq, true as alarm
        from audit_summary a
        semi join (select distinct check_id, resource_id from audit_unobserved) u
            using (check_id, resource_id)
        join audit_positions p on get_bit(a.alarms, (p.pos - 1)::integer) = 1
        union all
        select check_id, resource_id, pos, seq, false from audit_unobserved
    )
),
carried as (  -- in alarm at T (or C), or not observed there and in alarm when last observed
    select m.check_id, m.resource_id,
        coalesce(bool_or(m.alarm and m.island = a.island_now), false) as alarm_now,
        coalesce(bool_or(m.alarm and m.island = a.island_then and m.seq <= $compare), false)
            as alarm_then,
        coalesce(bool_or(not m.alarm and m.seq = $target), false) as unobserved_now
    from marks m
    join (
        select check_id, resource_id,
            any_value(island) filter (where seq = $target) as island_now,
            any_value(island) filter (where seq = $compare) as island_then
        from marks group by check_id, resource_id
    ) a using (check_id, resource_id)
    group by m.check_id, m.resource_id
),
per_finding as (
    select
        o.* exclude (alarms, alarm_at_compare, described_pos),
        d.snapshot_id,
        coalesce(k.alarm_now, o.alarm_at_target) as alarm_now,
        coalesce(k.alarm_then, o.alarm_at_compare) as alarm_then,
        coalesce(k.unobserved_now, false) as unobserved_now
    from (select * from audit_summary semi join stated_pairs using (check_id, resource_id)) o
    left join audit_positions d on d.pos = o.described_pos
    left join carried k using (check_id, resource_id)
),
stated as (  -- the findings with a state
    select
        f.*,
        case
            when alarm_now and alarm_then then 'open'
            when alarm_now and alarmed_before then 'regressed'
            when alarm_now then 'new'
            when alarm_then then 'resolved'
        end as state
    from per_finding f
    where alarm_now or alarm_then
),
described as (  -- the finding's alarming row (else an ok one) in its snapshot
    select f.*, d.resource_type, d.resource_name, d.team_id, d.project_id, d.environment_id,
        d.service_id, d.reason, d.evidence
    from stated f
    join audit_text d using (check_id, resource_id, snapshot_id)
    qualify row_number() over (
        partition by f.check_id, f.resource_id
        order by (d.status = 'alarm') desc, d.reason, d.evidence
    ) = 1
)
select
    f.check_id,
    c.title,
    c.severity,
    c.area,
    f.resource_type,
    f.resource_id,
    f.resource_name,
    f.team_id,
    tm.name as team_name,
    f.project_id,
    pj.name as project_name,
    f.environment_id,
    en.name as environment_name,
    f.service_id,
    sv.name as service_name,
    case
        when f.alarm_at_target then 'alarm'
        when f.present_now then 'ok'
        when f.unobserved_now then 'unobserved'
        else 'absent'
    end as status,
    f.state,
    case  -- the text is the compared snapshot's when the judged one has no row
        when f.alarm_at_target or f.present_now then f.reason
        when f.unobserved_now and f.unknown_at_target then f.reason  -- the check says why not
        when f.unobserved_now then concat('not collected: ', f.reason)
        else concat('gone: ', f.reason)  -- no row, in a snapshot that saw all it reads
    end as reason,
    f.evidence,
    f.first_seen,
    f.last_seen,
    f.snapshot_id,
    c.severity_rank
from described f
join audit_checks c on c.check_id = f.check_id
left join audit_names tm
    on tm.kind = 'team' and tm.snapshot_id = f.snapshot_id and tm.id = f.team_id
left join audit_names pj
    on pj.kind = 'project' and pj.snapshot_id = f.snapshot_id and pj.id = f.project_id
left join audit_names en
    on en.kind = 'environment' and en.snapshot_id = f.snapshot_id and en.id = f.environment_id
left join audit_names sv
    on sv.kind = 'service' and sv.snapshot_id = f.snapshot_id and sv.id = f.service_id
"""

# The owners' names in the snapshots that describe findings, for reports and waiver globs.
# The snapshot ids are parameters ({ids}: $s0, $s1, ...), so DuckDB reads only those
# snapshots from the store.
_NAMES_SQL = """
create or replace temp table audit_names as
select 'team' as kind, snapshot_id, id, name from teams where snapshot_id in ({ids})
union all
select 'project', snapshot_id, id, name from projects where snapshot_id in ({ids})
union all
select 'environment', snapshot_id, id, name from environments where snapshot_id in ({ids})
union all
select 'service', snapshot_id, id, name from services where snapshot_id in ({ids})
"""

# Alarm episodes (toolkit.audit.lifecycle.marks.resolved_episodes) followed by a snapshot
# read, not in alarm: resolved then, their time to resolve runs from their first alarm to
# that snapshot.
_MTTR_SQL = """
with resolved as (
    select e.check_id, epoch(fixed.snapshot_at) - epoch(first.snapshot_at) as seconds
    from audit_episodes e
    join audit_positions first on first.pos = e.started
    join audit_positions fixed on fixed.pos = e.resolved
)
select c.check_id, c.severity, count(r.seconds) as resolved_count,
    avg(r.seconds) / 3600.0 as mttr_hours
from audit_checks c
left join resolved r on r.check_id = c.check_id
group by c.check_id, c.severity, c.severity_rank
order by c.severity_rank, c.check_id
"""

# A finding (ever in alarm) not observed in a snapshot: its check reads a table that a failed
# call left short there (audit_blind, from collection_errors), and it has no row there. Only
# partial snapshots can be blind, and audit_text holds their rows whole, so "no row" is
# known. Or its check could not judge it there: marked u (its rows there not ok are all
# unknown), and, in a snapshot whose ok rows say something ($observed), none of them ok.
_UNOBSERVED_SQL = """
create or replace temp table audit_unobserved as
with blind as (
    select b.check_id, b.snapshot_id, p.pos, p.seq, p.snapshot_at
    from audit_blind b
    join audit_positions p using (snapshot_id)
),
seen as (  -- the rows of the blind checks in the snapshots they are blind in
    select distinct check_id, resource_id, snapshot_id from audit_text
    semi join blind using (check_id, snapshot_id)
),
marked as (
    select check_id, resource_id,
        unnest(list_filter(range(1, length(marks) + 1), lambda i: substr(marks, i, 1) = 'u')) as pos
    from audit_marks semi join audit_summary using (check_id, resource_id)
    where contains(marks, 'u')
)
select a.check_id, a.resource_id, b.pos, b.seq, b.snapshot_at
from audit_summary a
join blind b on b.check_id = a.check_id
anti join seen s on s.check_id = a.check_id and s.resource_id = a.resource_id
    and s.snapshot_id = b.snapshot_id
union all
select m.check_id, m.resource_id, p.pos, p.seq, p.snapshot_at
from marked m
join audit_positions p using (pos)
anti join (
    select check_id, resource_id, snapshot_id from audit_text
    where status = 'ok' and list_contains($observed, snapshot_id)
) k on k.check_id = m.check_id and k.resource_id = m.resource_id
    and k.snapshot_id = p.snapshot_id
"""


def build_positions(
    con: duckdb.DuckDBPyConnection, snapshot_ids: Sequence[str] | None, target_seq: int
) -> None:
    """``audit_positions``: the committed snapshots up to T the checks read (``snapshot_ids``;
    None: every one), numbered in order. Episodes and resolve times run over these only."""
    ids = list(snapshot_ids) if snapshot_ids is not None else None
    con.execute(_POSITIONS_SQL, {"ids": ids, "target": target_seq})


def build_summary(con: duckdb.DuckDBPyConnection, target_seq: int, compare_seq: int | None) -> None:
    """``audit_summary``: one row per finding ever in alarm in the snapshots read, from
    ``audit_marks`` (:func:`~toolkit.audit.lifecycle.build_marks`) and ``audit_text``, for the
    snapshot at ``target_seq`` judged against the one at ``compare_seq``."""
    found = con.execute(
        "select max(pos) filter (where seq = $target), max(pos) filter (where seq = $compare), "
        "coalesce(bool_and(ordered), true) from (select pos, seq, "
        "snapshot_at >= lag(snapshot_at, 1, snapshot_at) over (order by pos) as ordered "
        "from audit_positions)",
        {"target": target_seq, "compare": compare_seq},
    ).fetchall()
    tpos, cpos, ordered = found[0]
    sql = _SUMMARY_SQL.format(first_last=_BY_POSITION if ordered else _OVER_ALARMS)
    params = {"target": target_seq, "compare": compare_seq, "tpos": tpos, "cpos": cpos}
    con.execute(sql, params)


def build_unobserved(con: duckdb.DuckDBPyConnection, observed: Sequence[str]) -> None:
    """``audit_unobserved``: each finding ever in alarm and snapshot that did not observe it,
    from ``audit_blind`` (check ids and the partial snapshots in which they are blind) and
    its marks; ``observed``: the judged, compared and partial snapshots."""
    con.execute(_UNOBSERVED_SQL, {"observed": list(observed)})


def build_names(con: duckdb.DuckDBPyConnection, snapshot_ids: Sequence[str]) -> None:
    """``audit_names``: team, project, environment and service names of ``snapshot_ids``
    (the judged and compared snapshots, and any that last observed a finding)."""
    params = {f"s{n}": snapshot_id for n, snapshot_id in enumerate(snapshot_ids)}
    con.execute(_NAMES_SQL.format(ids=", ".join(f"${name}" for name in params)), params)


def findings_table(
    con: duckdb.DuckDBPyConnection, target_seq: int, compare_seq: int | None
) -> None:
    """``audit_findings``: every finding whose state between the two snapshots is one of
    :data:`STATES`, with its check's metadata and the names of its owners."""
    con.execute(_FINDINGS_SQL, {"target": target_seq, "compare": compare_seq})


def mean_time_to_resolve(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per check: ``check_id, severity, resolved_count, mttr_hours`` over the snapshots read
    up to T (:func:`build_positions`).

    ``mttr_hours`` is null for a check none of whose alarms has been resolved yet.
    """
    con.register("audit_episodes", resolved_episodes(con))
    return query_frame(con, _MTTR_SQL)


def query_frame(
    con: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, object] | None = None
) -> pd.DataFrame:
    """A query's result as a DataFrame, through Arrow (so the declared types decide)."""
    table = con.sql(sql, params=dict(params or {})).to_arrow_table()
    if table is None:
        raise ValueError("query_frame() needs a query that returns rows")
    frame: pd.DataFrame = table.to_pandas()
    return frame
