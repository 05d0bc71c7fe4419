-- id: RES006
-- title: Memory limit not raised after OOM kills
-- severity: high
-- area: resource-limits
-- risk: The service was killed for running out of memory and still has the same limit, so it will be killed again under the same load.
-- remediation: Raise memory_limits_megabytes above the service's peak usage, or find and fix the leak.
-- history: all
-- param: window_days = 7 | OOM kills seen within this many days before a snapshot count
with oom as (  -- see views/oom_kills.sql; a kill is never later than the snapshot reporting it
    select * exclude (last_oom), least(last_oom, snapshot_at) as oom_at
    from oom_kills($window_days)
),
uncollected as (select * from replica_events_uncollected),  -- see its view
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
),
judged as (
    select
        v.*, o.oom_at, o.kills,
        -- an event counts its kills since it was first seen, which may be before the window
        concat(o.kills, if(o.kills = 1, ' time', ' times'), ' since ',
            strftime(o.first_oom, '%Y-%m-%d %H:%M UTC')) as times,
        strftime(o.oom_at, '%Y-%m-%d %H:%M UTC') as last_at,
        if(not o.changed_after, o.limit_after,
            coalesce(o.limit_then, o.limit_after, v.memory_limits_megabytes)) as limit_at_oom,
        case when not o.changed_after and o.limit_then <> o.limit_after
                then 'at the kill (the service was last changed before it)'
            when o.limit_then is null then 'in the first snapshot read after the kill'
            else 'then' end as known,
        o.limit_then is null and coalesce(o.changed_after, false) as unknown,
        -- killed, and no limit reported now (null, not unset): whether it rose is not known
        o.kills > 0 and v.memory_limits_megabytes is null as unreported,
        -- no kill found where a failed call may have left the kills out (see above)
        o.oom_at is null and u.id is not null as uncollected, u.failed,
        coalesce(o.kills > 0 and v.memory_limits_megabytes > 0 and not unknown
            and v.memory_limits_megabytes <= limit_at_oom, false) as not_raised
    from services as v
    left join limits as o on o.snapshot_id = v.snapshot_id and o.service_id = v.id
    left join uncollected as u on u.snapshot_id = v.snapshot_id and u.id = v.id
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when not_raised then 'alarm' when unknown or uncollected or unreported then 'unknown'
        else 'ok' end as status,
    case
        when uncollected then format('Service {} shows no OOM kill in the last {} days, but its '
            || 'replica events were not all collected ({} failed): not judged.',
            coalesce(name, id), $window_days, failed)
        when oom_at is null then format(
            'Service {} was not OOM-killed in the last {} days.', coalesce(name, id), $window_days)
        when unreported then format('Service {} was OOM-killed {} (last at {}), but its memory '
            || 'limit is not reported: not judged.', coalesce(name, id), times, last_at)
        when memory_limits_megabytes <= 0 then format(
            'Service {} was OOM-killed {} but has no memory limit to raise (see RES002).',
            coalesce(name, id), times)
        when unknown then format('Service {} was OOM-killed {} (last at {}); its memory '
            || 'limit then was not read and the service changed after it, so whether the '
            || 'limit of {} MB was raised is unknown: not judged.',
            coalesce(name, id), times, last_at, memory_limits_megabytes)
        when not_raised then format('Service {} was OOM-killed {} (last at {}) and its memory '
            || 'limit of {} MB is no higher than the {} MB it had {}.',
            coalesce(name, id), times, last_at, memory_limits_megabytes, limit_at_oom, known)
        else format('Service {} was OOM-killed {} (last at {}); its memory limit has risen '
            || 'from {} MB to {} MB.',
            coalesce(name, id), times, last_at, limit_at_oom, memory_limits_megabytes)
    end as reason,
    to_json(struct_pack(kills, oom_at, limit_at_oom, memory_limits_megabytes,
        window_days := $window_days)) as evidence
from judged
