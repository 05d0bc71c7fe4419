-- id: REP004
-- title: Production service runs a single replica
-- severity: medium
-- area: replicas
-- risk: With one replica every deployment, restart or node failure takes the production service down.
-- remediation: Run at least two replicas of every production service (databases aside).
-- history: snapshot
with production as materialized (  -- filtered first: only these services need their health
    -- production as KEY003 and VAR007 read it: [audit] production_pattern (all_resources)
    select s.snapshot_id, s.id, s.name, s.team_id, s.project_id, s.environment_id, s.replicas,
        e.resource_name as environment_name
    from services as s
    join all_resources as e on e.snapshot_id = s.snapshot_id and e.resource_id = s.environment_id
    where e.resource_type = 'environment' and e.is_production
        and coalesce(s.type, '') <> 'database' and nullif(s.database_type, '') is null
),
judged as (
    select s.*, coalesce(s.replicas, h.expected_replicas) as wanted
    from production as s
    left join replica_health as h on h.snapshot_id = s.snapshot_id and h.service_id = s.id
)
select
    snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,
    team_id, project_id, environment_id, id as service_id,
    case when wanted is null then 'unknown' when wanted = 1 then 'alarm' else 'ok' end as status,
    format('Service {} in production environment {} {}.', coalesce(name, id), environment_name,
        case when wanted is null then 'does not report its replica count: not judged'
            when wanted = 0 then 'is scaled to zero'
            when wanted = 1 then 'runs a single replica'
            else 'runs ' || wanted || ' replicas' end
    ) as reason,
    to_json(struct_pack(replicas, wanted, environment_name)) as evidence
from judged
