-- Each service of each snapshot with its OOM kills within window_days before it
-- (views/oom_kills.sql) and the memory limit it had at the last kill: kills, first_oom,
-- oom_at (the last kill, never later than the snapshot reporting it), memory_limits_megabytes
-- (now), limit_at_oom, and how that limit is known (known: a phrase for the text; unknown:
-- not known, as the service changed after a kill no earlier snapshot shows, or does not
-- report when it last changed). unreported: killed
-- with no limit reported now; uncollected: no kill found where a failed call may have left the
-- kills out (views/replica_events_uncollected.sql; failed names the calls). A table macro, as
-- the window is the calling check's parameter: from memory_at_oom($window_days). RES006 reads it.
-- Only the snapshots judged have rows (views/judging.sql); the limits read the killed
-- services' whole history.
create or replace macro memory_at_oom(window_days) as table
with oom as (  -- a kill is never later than the snapshot reporting it
    select * exclude (last_oom), least(last_oom, snapshot_at) as oom_at
    from oom_kills(window_days)
    where judging(snapshot_id)  -- views/judging.sql: the history is read for the limits
),
uncollected as (select * from replica_events_uncollected where judging(snapshot_id)),
killed as (  -- only the killed services' history can matter: the joins sort that, not all
    select id, snapshot_at, memory_limits_megabytes, updated_at from services
    semi join (select service_id as id from oom) as k using (id)
),
limits as (
    -- The limit at each OOM kill. When no snapshot before it shows one (the kill came before
    -- the store began or a latest-only window, or the limit was not read), the first limit
    -- read after it, never one from before; but only if the service was not changed between
    -- the kill and that snapshot (updated_at): else the limit may have been raised, unseen.
    -- When it was not changed (updated_at at or before the kill), that limit is the one at
    -- the kill even if a snapshot before shows another: it was changed before the kill.
    select o.*, b.memory_limits_megabytes as limit_then, a.memory_limits_megabytes as limit_after,
        a.updated_at > o.oom_at as changed_after
    from oom as o
    asof left join killed as b on b.id = o.service_id and o.oom_at >= b.snapshot_at
    asof left join (select * from killed where memory_limits_megabytes is not null) as a
        on a.id = o.service_id and a.snapshot_at >= o.oom_at
)
select
    v.snapshot_id, v.id, v.name, v.team_id, v.project_id, v.environment_id,
    v.memory_limits_megabytes, o.oom_at, o.kills, o.first_oom,
    if(not o.changed_after, o.limit_after,
        coalesce(o.limit_then, o.limit_after, v.memory_limits_megabytes)) as limit_at_oom,
    case when not o.changed_after and o.limit_then <> o.limit_after
            then 'at the kill (the service was last changed before it)'
        when o.limit_then is null then 'in the first snapshot read after the kill'
        else 'then' end as known,
    -- changed after the kill, or when it last changed is not reported: maybe raised unseen
    o.oom_at is not null and o.limit_then is null and coalesce(o.changed_after, true)
        as unknown,
    -- killed, and no limit reported now (null, not unset): whether it rose is not known
    o.kills > 0 and v.memory_limits_megabytes is null as unreported,
    -- no kill found where a failed call may have left the kills out (see above)
    o.oom_at is null and u.id is not null as uncollected, u.failed
from services as v
left join limits as o on o.snapshot_id = v.snapshot_id and o.service_id = v.id
left join uncollected as u on u.snapshot_id = v.snapshot_id and u.id = v.id
where judging(v.snapshot_id)
