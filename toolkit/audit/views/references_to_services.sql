-- References from variables to services (${{service.<id>.KEY}}: variable_references rows
-- of source_type 'service'), in the snapshots that can tell a deleted service from a hidden
-- one: those whose collecting credential sees every service (an access token, or an API key
-- whose access is 'all'; any snapshot without a credentials row). Each with source_found:
-- the service is in the snapshot, or the platform resolved the reference; unlisted: a
-- listing failed in the snapshot (collection_coverage), so an absent service may exist;
-- failing: the referencing variable (its level, name and owner ids, compared null-safe) has
-- a reference to a service absent from a complete listing: deleted. VAR006 reads it.
create or replace view references_to_services as
with checked as (
    -- only snapshots whose collecting credential sees everything can tell deleted from hidden
    -- (views/absence_known.sql); a reference the platform resolves has its service, listed
    -- or not (a failed listing leaves services out: absent is not deleted there)
    select r.*, not a.inventory_complete as unlisted,
        coalesce(r.resolved, false) or exists (select 1 from services s
            where s.snapshot_id = r.snapshot_id and s.id = r.source_id) as source_found
    from variable_references r
    join absence_known a on a.snapshot_id = r.snapshot_id
    where r.source_type = 'service' and r.source_id is not null and a.sees_all
),
failing as (  -- the few variables referencing a service absent from a complete listing
    select distinct snapshot_id, level, variable_name, team_id, project_id, environment_id,
        service_id
    from checked
    where not source_found and not unlisted
)
select r.*, f.snapshot_id is not null as failing
from checked r
left join failing f  -- null-safe, like VAR006's grouping on these columns
    on f.snapshot_id = r.snapshot_id and f.level is not distinct from r.level
    and f.variable_name is not distinct from r.variable_name
    and f.team_id is not distinct from r.team_id
    and f.project_id is not distinct from r.project_id
    and f.environment_id is not distinct from r.environment_id
    and f.service_id is not distinct from r.service_id
