-- What each audited credential may do where, per snapshot: its role and scope expanded
-- over the inventory (all_resources). access = 'all' reaches every resource of the
-- snapshot; access = 'limited' reaches the listed resources and everything below them,
-- and their ancestors for navigation only (navigable_only: listed, nothing more). A
-- credential whose role or scope is unknown reaches nothing here (credential_roles).
-- credential_reach_in(ids): the same, of the snapshots a list of ids names alone (null:
-- of all), for a view that needs a few snapshots' reach out of the whole history (views/
-- credential_reach_growth.sql).
create or replace macro credential_reach_in(ids) as table
with known as (
    select snapshot_id, snapshot_at, name as credential_name, key_id, role, access
    from credential_roles where known and (ids is null or list_contains(ids, snapshot_id))
),
inventory as materialized (  -- every branch below reads it: computed once
    select * from all_resources where ids is null or list_contains(ids, snapshot_id)
),
listed as (
    select k.snapshot_id, k.credential_name, r.resource_type, r.team_id, r.project_id,
        r.environment_id, r.service_id
    from known k
    join credential_resources cr
        on cr.snapshot_id = k.snapshot_id and cr.credential_name = k.credential_name
    join inventory r
        on r.snapshot_id = cr.snapshot_id and r.resource_type = cr.resource_type
        and r.resource_id = cr.resource_id
    where k.access = 'limited'
),
scoped as (  -- the inventory of the snapshots that have a limited key (often none)
    select r.* from (select distinct snapshot_id from listed) l join inventory r using (snapshot_id)
),
limited as (  -- few rows: a resource listed twice (or also an ancestor) is merged here
    select snapshot_id, credential_name, resource_type, resource_id,
        bool_and(navigable_only) as navigable_only
    from (
        select l.snapshot_id, l.credential_name, r.resource_type, r.resource_id,
            false as navigable_only
        from listed l join scoped r on r.snapshot_id = l.snapshot_id
            and case l.resource_type
                when 'team' then r.team_id = l.team_id
                when 'project' then r.project_id = l.project_id
                when 'environment' then r.environment_id = l.environment_id
                else r.service_id = l.service_id
            end
        union all
        select l.snapshot_id, l.credential_name, r.resource_type, r.resource_id, true
        from listed l join scoped r on r.snapshot_id = l.snapshot_id
            and ((r.resource_type = 'team' and l.resource_type <> 'team' and r.team_id = l.team_id)
            or (r.resource_type = 'project' and l.resource_type in ('environment', 'service')
                and r.project_id = l.project_id)
            or (r.resource_type = 'environment' and l.resource_type = 'service'
                and r.environment_id = l.environment_id))
    )
    group by all
),
reached as (
    -- access = 'all' reaches each resource once: expanded with its names in one join,
    -- not merged and joined back like the limited keys (millions of rows on big stores)
    select k.*, r.resource_type, r.resource_id, r.resource_name, r.team_id, r.project_id,
        r.environment_id, r.service_id, r.is_production, false as navigable_only
    from known k join inventory r on r.snapshot_id = k.snapshot_id
    where k.access = 'all'
    union all
    select k.*, r.resource_type, r.resource_id, r.resource_name, r.team_id, r.project_id,
        r.environment_id, r.service_id, r.is_production, m.navigable_only
    from limited m
    join known k using (snapshot_id, credential_name)
    join scoped r using (snapshot_id, resource_type, resource_id)
)
select
    snapshot_id, snapshot_at, credential_name, key_id, role, access,
    resource_type, resource_id, resource_name, team_id, project_id,
    environment_id, service_id, is_production, navigable_only,
    not navigable_only as can_read_config,
    not navigable_only and role in ('editor', 'admin') as can_read_values,
    not navigable_only and role in ('editor', 'admin') as can_change,
    not navigable_only and role = 'admin' as can_delete
from reached;
create or replace view credential_reach as select * from credential_reach_in(null)
