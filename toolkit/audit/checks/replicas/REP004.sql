-- id: REP004
-- title: Production service runs a single replica
-- severity: medium
-- area: replicas
-- risk: With one replica every deployment, restart or node failure takes the production service down.
-- remediation: Run at least two replicas of every production service (databases aside).
-- history: snapshot
-- param: env_pattern = \bprod(uction)?\b | a regular expression that marks production, on the environment's name lower-cased, with pre-prod, non-prod and not-prod removed and every run of other characters than letters made one space (so prod-eu, prod_eu and prod2 read 'prod eu', 'prod eu', 'prod ')
with environment_words as (  -- the name as all_resources reads it (see the param)
    select snapshot_id, id, name, regexp_replace(regexp_replace(lower(name),
        '(pre|non|not)[^a-z]?prod', ' ', 'g'), '[^a-z]+', ' ', 'g') as words
    from environments
),
production as materialized (  -- filtered first: only these services need their health
    select s.snapshot_id, s.id, s.name, s.team_id, s.project_id, s.environment_id, s.replicas,
        e.name as environment_name
    from services as s
    join environment_words as e on e.snapshot_id = s.snapshot_id and e.id = s.environment_id
    where regexp_matches(e.words, $env_pattern)
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
