-- id: REP001
-- title: Service is crashing
-- severity: high
-- area: replicas
-- risk: A crashing service restarts in a loop and serves errors or nothing at all to its users.
-- remediation: Read the crash reasons and the replica logs, fix the cause, or roll back to the last successful deployment.
-- history: snapshot
with pods as (
    select snapshot_id, service_id, count(*) as pods,
        count(*) filter (where status = 'crashing') as crashing_pods
    from replicas
    group by snapshot_id, service_id
),
judged as (
    select
        s.*, h.health, coalesce(p.pods, 0) as pods, coalesce(p.crashing_pods, 0) as crashing_pods,
        coalesce(array_to_string(d.crashing_reasons, '; '), '') as reasons,
        -- null (not judged) when nothing shows a crash and the health was not read (the
        -- call failed: no row) or is a value outside the spec's set: no evidence of health
        case
            when h.health = 'crashing' or p.crashing_pods > 0
                or s.current_deployment_status = 'crashing' then true
            when h.health in ('pending', 'active', 'terminating') then false
        end as crashing
    from services as s
    left join replica_health as h on h.snapshot_id = s.snapshot_id and h.service_id = s.id
    left join pods as p on p.snapshot_id = s.snapshot_id and p.service_id = s.id
    -- only deployments with crash reasons change the text: join those few, not all history
    left join (select snapshot_id, id, crashing_reasons from deployments
               where len(crashing_reasons) > 0) as d
        on d.snapshot_id = s.snapshot_id and d.id = s.current_deployment_id
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when crashing then 'alarm' when not crashing then 'ok' else 'unknown' end as status,
    format('Service {} {} (health {}, {} of {} replicas crashing, current deployment {}){}',
        coalesce(name, id),
        case when crashing then 'is crashing' when not crashing then 'is not crashing'
            else 'shows no crash, but its health is unknown: not judged' end,
        case when health is null then 'not reported'
            when health in ('pending', 'crashing', 'active', 'terminating') then health
            else 'unknown state ' || health end,
        crashing_pods, pods, coalesce(current_deployment_status, 'not reported'),
        if(coalesce(crashing, false) and reasons <> '', ': ' || reasons || '.', '.')
    ) as reason,
    to_json(struct_pack(health, pods, crashing_pods, current_deployment_id,
        current_deployment_status, crashing_reasons := reasons)) as evidence
-- text of older stores, collected before scrubbing: credentials out (views/scrubbed.sql)
from (select * replace (scrubbed(reasons) as reasons) from judged)
