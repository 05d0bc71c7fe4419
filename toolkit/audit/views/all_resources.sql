-- The inventory of every snapshot: one row per team, project, environment and service,
-- with its owner ids and whether it is (in) a production environment. credential_reach
-- expands keys over it; checks use it to name resources.
create or replace view all_resources as
with env as (
    select
        snapshot_id, id, name, team_id, project_id,
        -- "prod" or "production" as a word of the name (prod-eu, prod_eu, prod2: every run
        -- of non-letters is a space), never pre-prod, non-prod or not-prod; REP004's default.
        -- Null for an environment without a name: nothing tells (the platform may leave names
        -- out), so VAR007 does not count it as non-production
        regexp_matches(regexp_replace(regexp_replace(lower(name),
            '(pre|non|not)[^a-z]?prod', ' ', 'g'), '[^a-z]+', ' ', 'g'),
            '\bprod(uction)?\b') as is_production
    from environments
)
select snapshot_id, 'team' as resource_type, id as resource_id, name as resource_name,
    id as team_id, null::varchar as project_id, null::varchar as environment_id,
    null::varchar as service_id, false as is_production
from teams
union all
select snapshot_id, 'project', id, name, team_id, id, null, null, false
from projects
union all
select snapshot_id, 'environment', id, name, team_id, project_id, id, null, is_production
from env
union all
select s.snapshot_id, 'service', s.id, s.name, s.team_id, s.project_id, s.environment_id, s.id,
    coalesce(env.is_production, false)
from services s left join env on env.snapshot_id = s.snapshot_id and env.id = s.environment_id
