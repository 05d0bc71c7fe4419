-- id: REP002
-- title: Service was OOM-killed recently
-- severity: medium
-- area: replicas
-- risk: A replica killed for running out of memory drops its in-flight requests and work, and it will be killed again under the same load.
-- remediation: Raise the memory limit above the service's peak usage, or find and fix the leak.
-- history: snapshot
-- param: window_days = 7 | OOM kills seen within this many days before a snapshot count
with seen as (  -- each replica's (or deployment's) own kills: its events' largest count
    select e.snapshot_id, e.service_id, e.source, coalesce(e.count, 1) as count,
        coalesce(e.replica_name, e.deployment_id, '') as place,
        coalesce(e.last_seen, e.timestamp, e.first_seen) as seen_at
    from replica_events as e join snapshots as s using (snapshot_id)
    where e.type = 'oom_killed'
        and coalesce(e.last_seen, e.timestamp, e.first_seen)
            >= s.snapshot_at - $window_days * interval 1 day
),
places as (
    select snapshot_id, service_id, source, place, max(count) as kills, max(seen_at) as last_oom
    from seen group by all
),
oom as (  -- summed over the replicas; the deployments' copies of them only when none show
    select snapshot_id, service_id, max(last_oom) as last_oom,
        coalesce(sum(kills) filter (where source = 'replica'), sum(kills)) as kills
    from places group by snapshot_id, service_id
)
select
    s.snapshot_id, 'service' as resource_type, s.id as resource_id, s.name as resource_name,
    s.team_id, s.project_id, s.environment_id, s.id as service_id,
    case when o.kills > 0 then 'alarm' else 'ok' end as status,
    case
        when o.kills > 0 then format(
            'Service {} was OOM-killed {} {}, last at {}, within the last {} days.',
            coalesce(s.name, s.id), o.kills, if(o.kills = 1, 'time', 'times'),
            strftime(o.last_oom, '%Y-%m-%d %H:%M UTC'), $window_days)
        else format('Service {} was not OOM-killed in the last {} days.',
            coalesce(s.name, s.id), $window_days)
    end as reason,
    to_json(struct_pack(kills := o.kills, last_oom := o.last_oom, s.memory_limits_megabytes,
        window_days := $window_days)) as evidence
from services as s
left join oom as o on o.snapshot_id = s.snapshot_id and o.service_id = s.id
