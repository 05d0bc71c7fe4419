-- id: REP002
-- title: Service was OOM-killed recently
-- severity: medium
-- area: replicas
-- risk: A replica killed for running out of memory drops its in-flight requests and work, and it will be killed again under the same load.
-- remediation: Raise the memory limit above the service's peak usage, or find and fix the leak.
-- history: snapshot
-- param: window_days = 7 | OOM kills seen within this many days before a snapshot count
with oom as (select * from oom_kills($window_days)),  -- see views/oom_kills.sql
uncollected as (
    -- Services whose replica events a failed call may have left out (the tables of
    -- replicas.list, replicas.health and deployments.list: scope.ENDPOINT_TABLES): an error
    -- whose ids cover the service's (an id it lacks covers every child). A 404 is what the
    -- key may not see, no failure. No kill found there is no evidence of none: not judged.
    select s.snapshot_id, s.id, string_agg(distinct e.endpoint, ', ' order by e.endpoint) as failed
    from services as s
    join collection_errors as e on e.snapshot_id = s.snapshot_id
        and coalesce(e.team_id = s.team_id, true) and coalesce(e.project_id = s.project_id, true)
        and coalesce(e.environment_id = s.environment_id, true)
        and coalesce(e.service_id = s.id, true)
    where e.endpoint in ('replicas.list', 'replicas.health', 'deployments.list')
        and not coalesce(e.not_visible, false)
    group by all
)
select
    s.snapshot_id, 'service' as resource_type, s.id as resource_id, s.name as resource_name,
    s.team_id, s.project_id, s.environment_id, s.id as service_id,
    case when o.kills > 0 then 'alarm' when u.id is not null then 'unknown' else 'ok' end
        as status,
    case
        -- an event counts its kills since it was first seen, which may be before the window
        when o.kills > 0 then format(
            'Service {} was OOM-killed {} {} since {}, last at {}, within the last {} days.',
            coalesce(s.name, s.id), o.kills, if(o.kills = 1, 'time', 'times'),
            strftime(o.first_oom, '%Y-%m-%d %H:%M UTC'),
            strftime(o.last_oom, '%Y-%m-%d %H:%M UTC'), $window_days)
        when u.id is not null then format('Service {} shows no OOM kill in the last {} days, '
            || 'but its replica events were not all collected ({} failed): not judged.',
            coalesce(s.name, s.id), $window_days, u.failed)
        else format('Service {} was not OOM-killed in the last {} days.',
            coalesce(s.name, s.id), $window_days)
    end as reason,
    to_json(struct_pack(kills := o.kills, first_oom := o.first_oom, last_oom := o.last_oom, s.memory_limits_megabytes,
        window_days := $window_days)) as evidence
from services as s
left join oom as o on o.snapshot_id = s.snapshot_id and o.service_id = s.id
left join uncollected as u on u.snapshot_id = s.snapshot_id and u.id = s.id
