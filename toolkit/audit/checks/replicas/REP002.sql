-- id: REP002
-- title: Service was OOM-killed recently
-- severity: medium
-- area: replicas
-- risk: A replica killed for running out of memory drops its in-flight requests and work, and it will be killed again under the same load.
-- remediation: Raise the memory limit above the service's peak usage, or find and fix the leak.
-- history: snapshot
-- param: window_days = 7 | OOM kills seen within this many days before a snapshot count
with oom as (select * from oom_kills($window_days)),  -- see views/oom_kills.sql
uncollected as (select * from replica_events_uncollected)  -- see its view
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
