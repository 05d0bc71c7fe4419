-- id: REP003
-- title: Replica restarts keep rising
-- severity: medium
-- area: replicas
-- risk: Replicas that keep restarting drop requests on every restart and hide a crash or an OOM that will get worse under load.
-- remediation: Read the replica events and logs for why the containers exit, and fix the cause.
-- param: min_increase = 5 | restarts added since the previous snapshot that raise an alarm
with restarts as (
    select
        snapshot_id, service_id, any_value(team_id) as team_id,
        any_value(project_id) as project_id, any_value(environment_id) as environment_id,
        count(*) as pods, sum(coalesce(restart_count, 0)) as restarts
    from replicas
    group by snapshot_id, service_id
),
history as (
    select r.*, lag(r.restarts) over w as previous, lag(n.snapshot_at) over w as previous_at
    from restarts as r join snapshots as n using (snapshot_id)
    window w as (partition by r.service_id order by n.seq)
)
select
    h.snapshot_id, 'service' as resource_type, h.service_id as resource_id,
    s.name as resource_name, h.team_id, h.project_id, h.environment_id, h.service_id,
    case when h.restarts - h.previous >= $min_increase then 'alarm' else 'ok' end as status,
    format('Service {} has {} restarts (replicas: {}), {}.',
        coalesce(s.name, h.service_id), h.restarts, h.pods,
        case
            when h.previous is null then 'its first count'
            when h.restarts < h.previous then 'reset from ' || h.previous
            else (h.restarts - h.previous) || ' more than at the previous snapshot ('
                || strftime(h.previous_at, '%Y-%m-%d %H:%M UTC') || ')'
        end) as reason,
    to_json(struct_pack(h.restarts, h.previous, h.previous_at, h.pods,
        min_increase := $min_increase)) as evidence
from history as h
left join services as s on s.snapshot_id = h.snapshot_id and s.id = h.service_id
