-- The inventory of every snapshot: one row per team, project, environment and service,
-- with its owner ids and whether it is (in) a production environment. credential_reach
-- expands keys over it; checks use it to name resources.
create or replace view all_resources as
with env as (
    select
        snapshot_id, id, name, team_id, project_id,
        -- The name lower-cased, without pre-prod, non-prod or not-prod, every run of other
        -- characters than letters one space (prod-eu, prod_eu, prod2: 'prod eu', 'prod eu',
        -- 'prod '), matched by [audit] production_pattern (set_production in check_run.py),
        -- by default "prod" or "production" as a word. Null for an environment without a
        -- name: nothing tells (the platform may leave names out), so VAR007 does not count it
        -- as non-production, nor KEY003 a key that may change it (or a service in it, whose
        -- flag is its environment's: null too where the environment is not in the snapshot).
        -- REP004, KEY003 and VAR007 all judge production by this column.
        regexp_matches(regexp_replace(regexp_replace(lower(name),
            '(pre|non|not)[^a-z]?prod', ' ', 'g'), '[^a-z]+', ' ', 'g'),
            coalesce(getvariable('production_pattern'), '\bprod(uction)?\b')) as is_production
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
    env.is_production
from services s left join env on env.snapshot_id = s.snapshot_id and env.id = s.environment_id
