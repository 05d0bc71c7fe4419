-- Each service of each snapshot with a current or a last successful deployment: both ids
-- and statuses as the service reports them, whether the two differ (differs; false where
-- either is missing), and where they differ, both deployments looked up in deployments:
-- when each was created (current_created_at, successful_created_at: null when that
-- deployment was not collected) and deployment_status, the current one's status as
-- deployments holds it, else as the service reports it. Only differing services (few)
-- look theirs up. DEP002 reads it.
create or replace view service_deployments as
with judged as (
    select
        *,
        coalesce(current_deployment_id <> last_successful_deployment_id, false) as differs
    from services
    where current_deployment_id is not null or last_successful_deployment_id is not null
),
wanted as (  -- only services whose two deployments differ (few) look them up; not from
    -- judged, which read twice would be materialized with every column of services
    select snapshot_id, id as service_id,
        unnest([current_deployment_id, last_successful_deployment_id]) as id
    from services
    where current_deployment_id <> last_successful_deployment_id
),
found as (  -- a deployment listed twice (history and current) counts once
    select snapshot_id, service_id, id, any_value(created_at) as created_at,
        any_value(status) as status
    from deployments
    semi join wanted using (snapshot_id, service_id, id)
    group by all
),
pairs as (  -- the few services whose two deployments differ, with both looked up
    select s.snapshot_id, s.id, c.created_at as current_created_at,
        l.created_at as successful_created_at, c.status as found_status
    from services as s
    left join found as c on c.snapshot_id = s.snapshot_id and c.service_id = s.id
        and c.id = s.current_deployment_id
    left join found as l on l.snapshot_id = s.snapshot_id and l.service_id = s.id
        and l.id = s.last_successful_deployment_id
    where s.current_deployment_id <> s.last_successful_deployment_id
)
select j.snapshot_id, j.id, j.name, j.team_id, j.project_id, j.environment_id,
    j.current_deployment_id, j.current_deployment_status, j.last_successful_deployment_id,
    j.last_successful_deployment_status, j.differs, p.current_created_at,
    p.successful_created_at,
    coalesce(p.found_status, j.current_deployment_status) as deployment_status
from judged as j
left join pairs as p using (snapshot_id, id)
